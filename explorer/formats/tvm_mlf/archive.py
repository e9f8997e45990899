"""Reading a TVM Model Library Format bundle (a tar, or an extracted folder) into memory, safely.

A params file is never read into memory: its arrays are indexed from their headers as the member streams by
(each array's data skipped), and a value is read from the bundle again when a user asks for it (LeftMember).
Nothing is ever extracted or written. Members that could be dangerous if someone did extract them (absolute
paths, `..`, symbolic and hard links, devices, FIFOs) are refused with an error problem; every member and the
whole bundle are capped in bytes, so a hostile tar cannot exhaust memory; a corrupt or truncated tar is a
LoadError naming the member where it broke.
"""

from __future__ import annotations

import os
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from explorer.bounded_read import opened_regular
from explorer.errors import LoadError, Problem
from explorer.file_spans import FileChanged, FileIdentity
from explorer.formats.tvm_mlf.params import ParamArray, ParamsError, index_params
from explorer.memory_guard import ensure_fits

MAX_MEMBER_BYTES = 512 * 1024 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
MAX_MEMBERS = 100_000
GUARD_EVERY_BYTES = 1 << 20  # members at least this large (and every 1,000th) ask the memory guard first
_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ")  # gzip, bzip2, xz: a member's bytes are not where its header says


@dataclass(frozen=True)
class LeftMember:
    """A params file left in the bundle: its size, its arrays (or why they could not be indexed), and where to
    read its bytes again."""

    size: int
    arrays: list[ParamArray] | ParamsError
    source: Path  # the tar, or the folder's file
    identity: FileIdentity  # the source when it was read: a later read refuses a changed file
    member: str | None  # the tar member's name; None for a folder's file
    data_offset: int | None  # where its bytes start in `source` when stored as they are (a plain tar, a file)

    def read(self, offset: int, length: int) -> bytes:
        """`length` bytes from `offset` of the member, read again from the bundle (a compressed tar decompressed
        up to there). FileChanged when the bundle is no longer what was opened."""
        offset, length = max(offset, 0), max(min(length, self.size - offset), 0)
        with opened_regular(self.source, self.member or "") as (fd, status):
            if FileIdentity.of(status) != self.identity:
                raise FileChanged(self.source, self.member or "", "the file changed since it was opened: open it again")
            if self.data_offset is not None:
                return os.pread(fd, length, self.data_offset + offset)
            with os.fdopen(os.dup(fd), "rb") as handle, tarfile.open(fileobj=handle, mode="r:*") as archive:
                member = archive.extractfile(self.member or "")
                if member is None:
                    return b""
                member.seek(offset)
                return member.read(length)


@dataclass
class Bundle:
    """The bundle's regular files by normalised name (no leading `./`), and what was refused while reading. Params
    files are `left` (indexed, not held); every other member's bytes are in `members`."""

    kind: str  # "tar" or "folder"
    members: dict[str, bytes] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    left: dict[str, LeftMember] = field(default_factory=dict)

    def names(self) -> list[str]:
        """Every member, held or left, sorted."""
        return sorted({*self.members, *self.left})

    def has(self, name: str) -> bool:
        return name in self.members or name in self.left

    def size(self, name: str) -> int:
        left = self.left.get(name)
        return left.size if left is not None else len(self.members.get(name, b""))

    def head(self, name: str, length: int) -> bytes:
        """A member's first bytes (a left one's read again from the bundle)."""
        left = self.left.get(name)
        return left.read(0, length) if left is not None else self.members.get(name, b"")[:length]

    def find(self, *names: str) -> str | None:
        """The first of `names` present in the bundle."""
        return next((name for name in names if self.has(name)), None)

    def under(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return [name for name in self.names() if name.startswith(prefix)]


def is_params(name: str) -> bool:
    """A params file by its place in the bundle: MLF keeps them under parameters/."""
    return name.startswith("parameters/") and name.endswith(".params")


def normalise(name: str) -> str | None:
    """`./a/b` → `a/b`; None for a name that escapes the bundle (absolute, `..`) or is empty."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [part for part in PurePosixPath(name.replace("\\", "/")).parts if part not in (".", "")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _refuse(bundle: Bundle, member: str, message: str) -> None:
    bundle.problems.append(Problem("error", "refused-member", message, f"tar member {member!r}", {"member": member}))


def read_tar(path: Path) -> Bundle:
    bundle = Bundle("tar")
    total = 0
    last = ""  # the last member read: where a truncated archive broke
    try:
        with opened_regular(path) as (fd, status):
            identity, stored_as_is = FileIdentity.of(status), not os.pread(fd, 6, 0).startswith(_COMPRESSED)
        with tarfile.open(path, mode="r:*") as archive:  # opened read-only; members are read, never extracted
            for count, info in enumerate(archive):
                if count >= MAX_MEMBERS:
                    _refuse(bundle, info.name, f"more than {MAX_MEMBERS:,} members: the rest is not read")
                    break
                last = info.name
                if info.isdir():
                    continue
                name = normalise(info.name)
                if name is None:
                    _refuse(bundle, info.name, "the member's path leaves the bundle (absolute or '..'): skipped")
                    continue
                if info.issym() or info.islnk():
                    _refuse(bundle, info.name, f"a link (to {info.linkname!r}): links are not followed, skipped")
                    continue
                if not info.isreg():
                    _refuse(bundle, info.name, "a device, FIFO or other special file: skipped")
                    continue
                if is_params(name):
                    bundle.left[name] = _left_in_tar(path, archive, info, stored_as_is, identity)
                    continue
                if info.size > MAX_MEMBER_BYTES:
                    _refuse(bundle, info.name, f"{info.size:,} bytes, over the {MAX_MEMBER_BYTES:,}-byte cap: skipped")
                    continue
                if total + info.size > MAX_TOTAL_BYTES:
                    _refuse(
                        bundle, info.name, f"the bundle passes the {MAX_TOTAL_BYTES:,}-byte cap: the rest is not read"
                    )
                    break
                if info.size >= GUARD_EVERY_BYTES or count % 1000 == 0:  # decompressed bytes are held in memory
                    ensure_fits(path, total + info.size, 1.0, "TVM bundle (decompressed)")
                handle = archive.extractfile(info)
                data = handle.read(info.size + 1) if handle is not None else b""
                if len(data) != info.size:
                    raise LoadError(
                        path, f"tar member {info.name!r}", "the archive ends inside this member (truncated)"
                    )
                total += info.size
                if name in bundle.members:
                    bundle.problems.append(
                        Problem("warning", "duplicate-member", "appears twice; the later copy is used",
                                f"tar member {info.name!r}", {"member": name})
                    )  # fmt: skip
                bundle.members[name] = data
    except LoadError:
        raise
    except tarfile.ReadError as error:
        where = f"tar member {last!r}" if last else "tar header"
        if last:
            message = f"the archive breaks off in or after this member: truncated or corrupt ({error})"
        else:
            message = "not a tar archive (plain, gzip, bzip2 or xz), or one cut short inside its first header"
        raise LoadError(path, where, message) from None
    except (EOFError, OSError, tarfile.TarError) as error:
        raise LoadError(path, "tar", f"the archive is corrupt or truncated ({type(error).__name__}: {error})") from None
    return bundle


def read_folder(path: Path) -> Bundle:
    """An extracted bundle. Symbolic links are not followed (reported), the same caps apply."""
    bundle = Bundle("folder")
    total = 0
    for root, dirs, files in os.walk(path, followlinks=False):
        for name in sorted(dirs):
            if (Path(root) / name).is_symlink():
                _refuse(bundle, _relative(path, Path(root) / name), "a symbolic link to a folder: not followed")
        dirs[:] = sorted(d for d in dirs if not (Path(root) / d).is_symlink())
        for name in sorted(files):
            full = Path(root) / name
            member = _relative(path, full)
            if full.is_symlink():
                _refuse(bundle, member, "a symbolic link: not followed")
                continue
            if not full.is_file():
                _refuse(bundle, member, "a device, FIFO or other special file: skipped")
                continue
            if is_params(member):
                bundle.left[member] = _left_in_file(full, member)
                continue
            size = full.stat().st_size
            if size > MAX_MEMBER_BYTES:
                _refuse(bundle, member, f"{size:,} bytes, over the {MAX_MEMBER_BYTES:,}-byte cap: skipped")
                continue
            if total + size > MAX_TOTAL_BYTES:
                _refuse(bundle, member, f"the bundle passes the {MAX_TOTAL_BYTES:,}-byte cap: the rest is not read")
                return bundle
            if size >= GUARD_EVERY_BYTES:
                ensure_fits(path, total + size, 1.0, "TVM bundle")
            with full.open("rb") as handle:
                bundle.members[member] = handle.read(MAX_MEMBER_BYTES)
            total += size
    return bundle


def _left_in_tar(path: Path, archive: tarfile.TarFile, info: tarfile.TarInfo, stored_as_is: bool,
                 identity: FileIdentity) -> LeftMember:  # fmt: skip
    """A params member indexed as it streams by; a member the archive ends inside is a LoadError, as for any."""
    handle = archive.extractfile(info)
    assert handle is not None  # a regular member

    def read_at(offset: int, length: int) -> bytes:
        if handle.tell() != offset:
            handle.seek(offset)  # forward only: the headers are read in order
        data = handle.read(length)
        if len(data) != length:
            raise LoadError(path, f"tar member {info.name!r}", "the archive ends inside this member (truncated)")
        return data

    return LeftMember(info.size, _indexed(read_at, info.size), path, identity, info.name,
                      info.offset_data if stored_as_is else None)  # fmt: skip


def _left_in_file(full: Path, member: str) -> LeftMember:
    with opened_regular(full, member) as (fd, status):
        size = status.st_size

        def read_at(offset: int, length: int) -> bytes:
            return os.pread(fd, length, offset)

        return LeftMember(size, _indexed(read_at, size), full, FileIdentity.of(status), None, 0)


def _indexed(read_at: Callable[[int, int], bytes], size: int) -> list[ParamArray] | ParamsError:
    try:
        return index_params(read_at, size)
    except ParamsError as error:
        return error


def _relative(root: Path, full: Path) -> str:
    return full.relative_to(root).as_posix()
