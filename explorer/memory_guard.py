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


def available_bytes() -> int | None:
    """Memory the system can give without swapping (Linux: MemAvailable), or None when it cannot say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def ensure_fits(path: Path, size: int, bytes_per_file_byte: float, what: str) -> None:
    """Raise a LoadError when opening `size` bytes of `what` needs more memory than is available."""
    if os.environ.get("IR_EXPLORER_MEMORY_GUARD", "").lower() in ("off", "0", "no"):
        return
    estimate = int(size * bytes_per_file_byte) + BASE_BYTES
    available = available_bytes()
    if available is not None and estimate > available:
        raise LoadError(
            path,
            "",
            f"opening this {human_bytes(size)} {what} needs about {human_bytes(estimate)} of memory "
            f"({bytes_per_file_byte:g}× its size), and {human_bytes(available)} is available: refused before the "
            "machine swaps (free memory, or set IR_EXPLORER_MEMORY_GUARD=off to try anyway)",
        )
