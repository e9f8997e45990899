"""Writing what the user asked for (bookmarks, exports, screenshots) so that nothing is ever half written: a
temporary file beside the target, synced, then renamed over it; a file it replaces keeps its mode."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from explorer.errors import LoadError


def write_atomically(path: Path, data: bytes, force: bool = False) -> None:
    """`data` at `path`, whole or not at all (a crash leaves the old file or none, never a part). A file that is
    there and read-only is refused unless `force` (a rename would replace it where a write could not); any failure
    is a LoadError that says what failed in words (a folder, a missing folder, no permission, a full disk)."""
    path = Path(path)
    _refuse_special(path)
    if path.is_dir():
        raise LoadError(path, "", "is a folder: give a file name to write")
    if not path.parent.is_dir():
        raise LoadError(path, "", f"the folder {str(path.parent)!r} does not exist")
    if not force and path.is_file() and (not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222):
        # (the mode bits too: root may write anything, but a file nobody may write was made read-only on purpose)
        raise LoadError(path, "", "is read-only: it is not replaced (pass --force to replace it)")
    try:
        _replace_with(path, data)
    except OSError as error:
        raise LoadError(path, "", f"cannot write it: {in_words(error)}") from None


def _refuse_special(path: Path) -> None:
    """Only a regular file is ever replaced: a rename over /dev/null, a FIFO, a socket or a link would put a file
    where the system or another program expects what was there (root writing `-o /dev/null` replaced the
    device). Asked with lstat, before writing and again just before the rename."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # nothing there (or nothing we may look at: the write says why it fails)
    if stat.S_ISLNK(mode):
        raise LoadError(path, "", "is a symbolic link: it is not replaced (give the file it points to)")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise LoadError(path, "", "is not a regular file (a device, a FIFO or a socket): it is not replaced")


def in_words(error: OSError) -> str:
    """An OS error as a person says it (a full disk, no permission), else the system's own words."""
    words = {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is used up",
        errno.EACCES: "permission denied (the folder or the file is not writable)",
        errno.EPERM: "permission denied",
        errno.EROFS: "the file system is read-only",
        errno.EISDIR: "it is a folder",
        errno.ENOENT: "the folder does not exist",
        errno.ENAMETOOLONG: "the name is too long",
    }
    fallback = error.strerror or str(error)
    return words.get(error.errno, fallback) if error.errno is not None else fallback


def _replace_with(path: Path, data: bytes) -> None:
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
        _refuse_special(path)  # (something put there while the data was written)
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
    refuse_inputs(target, [source])


def refuse_inputs(target: Path, inputs: list[Path]) -> None:
    """A LoadError when writing `target` would overwrite a file the command read (the input, a companion, a
    per-node data file, a compared file, external weights; also through a link), or would write inside an input
    that is a folder (a Core ML package, a TVM bundle): outputs never change what they were made from."""
    target = Path(target)
    try:
        inside = target.parent.resolve() / target.name
    except (OSError, RuntimeError):  # a link loop: not an input either way
        inside = None
    for source in inputs:
        source = Path(source)
        try:
            same = os.path.samefile(target, source)
        except OSError:  # the target does not exist yet (or cannot be read): not this input
            same = False
        if same:
            what = "is the input file" if source == inputs[0] else f"is an input this command read ({source.name})"
            raise LoadError(target, "", f"{what}: an output never overwrites it")
        if inside is not None and source.is_dir():
            try:
                folder = source.resolve()
            except (OSError, RuntimeError):
                continue
            if inside.is_relative_to(folder):
                raise LoadError(target, "", f"is inside the input {source.name}: an output never writes into it")
