"""Writing what the user asked for (bookmarks, exports, screenshots) so that nothing is ever half written: a
temporary file beside the target, synced, then renamed over it; a file it replaces keeps its mode."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from explorer.errors import LoadError


def write_atomically(path: Path, data: bytes) -> None:
    """`data` at `path`, whole or not at all (a crash leaves the old file or none, never a part)."""
    path = Path(path)
    try:  # the mode of the file it replaces (a shared sidecar stays shared), else what the umask gives a new file
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # the rename itself is durable once the folder is synced
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _umask() -> int:
    """The process's umask, read without changing it where Linux says it (setting it, even for an instant,
    would touch files other threads create meanwhile)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: read by setting it, and put it back at once
    os.umask(mask)
    return mask


def refuse_input(target: Path, source: Path) -> None:
    """A LoadError when writing `target` would overwrite `source` (the input, also through a link): outputs
    never do."""
    try:
        same = os.path.samefile(target, source)
    except OSError:  # the target does not exist yet (or cannot be read): it is not the input
        return
    if same:
        raise LoadError(target, "", "is the input file: an output never overwrites it")
