"""Refuse to open a file that would not fit in memory, before the machine starts to swap.

A loader estimates what a file will take from its size (measured: see BENCHMARKS.md) and calls `ensure_fits`;
when the estimate passes what the system says is available, the file is refused with a message naming both
numbers. `IR_EXPLORER_MEMORY_GUARD=off` opens it anyway (for a machine whose swap is fast, or a measurement).
"""

from __future__ import annotations

import os
from pathlib import Path

from explorer.errors import LoadError
from explorer.formatting import human_bytes

BASE_BYTES = 200 * 2**20  # the interpreter, numpy, Textual: what any document needs besides its data


UNLIMITED = 1 << 60  # cgroup v1 writes "no limit" as a huge number (9223372036854771712)


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None  # "max" (cgroup v2's "no limit") and junk are no limit


def host_available(proc: Path) -> int | None:
    """Memory the kernel can give without swapping (Linux: MemAvailable)."""
    try:
        with (proc / "meminfo").open(encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if proc != Path("/proc"):
        return None
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def cgroup_available(proc: Path, cgroup_root: Path) -> int | None:
    """What this process's cgroup (and each cgroup above it) still allows: limit minus usage, the smallest.

    A container's limit is not in MemAvailable, which reports the host: under a 500 MiB limit a 484 MB schedule
    was OOM-killed (exit 137) instead of refused. cgroup v2 (`memory.max`, `memory.current`) and v1
    (`memory.limit_in_bytes`, `memory.usage_in_bytes`) are both read.
    """
    try:
        lines = (proc / "self" / "cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    room: list[int] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, where = parts
        if controllers == "":  # v2: one unified tree
            base, limit_name, usage_name = cgroup_root, "memory.max", "memory.current"
        elif "memory" in controllers.split(","):  # v1: the memory controller's own tree
            base, limit_name, usage_name = cgroup_root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        folder = base / where.lstrip("/")
        for candidate in (folder, *folder.parents):  # a limit set on a parent holds for us too
            if candidate != base and not candidate.is_relative_to(base):
                break
            limit = _read_int(candidate / limit_name)
            usage = _read_int(candidate / usage_name)
            if limit is not None and limit < UNLIMITED and usage is not None:
                room.append(max(limit - usage, 0))
            if candidate == base:
                break
        if not folder.exists():  # inside a container the cgroup's own tree is mounted as the root
            limit, usage = _read_int(base / limit_name), _read_int(base / usage_name)
            if limit is not None and limit < UNLIMITED and usage is not None:
                room.append(max(limit - usage, 0))
    return min(room) if room else None


def address_space_available(proc: Path) -> int | None:
    """RLIMIT_AS (`ulimit -v`) minus the address space this process already has."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        for line in (proc / "self" / "status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmSize:"):
                return max(limit - int(line.split()[1]) * 1024, 0)
    except (OSError, ValueError, IndexError):
        pass
    return limit


def available_bytes(proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The least of what the host, this process's cgroup and its address-space limit allow; None when none
    of them says."""
    found = [
        value
        for value in (host_available(proc), cgroup_available(proc, cgroup_root), address_space_available(proc))
        if value is not None
    ]
    return min(found) if found else None


def guard_off() -> bool:
    return os.environ.get("IR_EXPLORER_MEMORY_GUARD", "").lower() in ("off", "0", "no")


def refusal(estimate: int, what: str, available: int | None = None) -> str | None:
    """Why `what`, estimated to need `estimate` bytes (BASE_BYTES included), cannot be opened here, or None when
    it fits (or the guard is off). `available`: what was available when the opening began (else: now)."""
    if guard_off():
        return None
    available = available_bytes() if available is None else available
    if available is None or estimate <= available:
        return None
    return (f"opening this {what} needs about {human_bytes(estimate)} of memory, and {human_bytes(available)} is "
            "available: refused before the machine swaps (free memory, or set IR_EXPLORER_MEMORY_GUARD=off to "
            "try anyway)")  # fmt: skip


def ensure_fits(path: Path, size: int, bytes_per_file_byte: float, what: str) -> None:
    """Raise a LoadError when opening `size` bytes of `what` needs more memory than is available."""
    estimate = int(size * bytes_per_file_byte) + BASE_BYTES
    said = refusal(estimate, f"{human_bytes(size)} {what} ({bytes_per_file_byte:g}× its size)")
    if said is not None:
        raise LoadError(path, "", said)


JSON_TEXT_FLOOR = 2.0  # the least a JSON file becomes: its text, and its strings decoded (judged before reading)
BYTES_PER_JSON_VALUE = 72  # a decoded empty dict (64) and the pointer to it: the largest a small value becomes


def json_value_bound(data: bytes) -> int:
    """At most how many values decoding `data` as JSON creates, counted at C speed before decoding: every value
    but the first follows a `,`, a `:` or a `[` (bytes inside strings only make the bound looser)."""
    return data.count(b",") + data.count(b":") + data.count(b"[") + 1


def json_memory_bound(data: bytes, per_object: int = 0) -> int:
    """Bytes that decoding `data` into plain Python values can take at most: its text (strings) plus the
    largest object per value, plus `per_object` for each JSON object (what a reader builds of each: a node, a
    layer; measured per reader on files of empty objects, the worst case). Real files need far less (8-10× their
    size); `[{},{},…]` needs 22× decoded, and up to 600× once a reader has built an object of each."""
    return len(data) + BYTES_PER_JSON_VALUE * json_value_bound(data) + per_object * data.count(b"{")


def ensure_json_fits(path: Path, data: bytes, what: str, per_object: int = 0) -> None:
    """`ensure_fits` for a file decoded as JSON, judged by what its content can become, not its size."""
    if data:
        ensure_fits(path, len(data), json_memory_bound(data, per_object) / len(data), what)
