"""Jobs for the worker-pool tests: module-level, so a worker process finds them by name."""

from __future__ import annotations

KEPT: list[bytes] = []


def resident_mib() -> float:
    """This process's resident set now (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def leave_freed_heap(blocks: int = 25_000, size: int = 4000) -> float:
    """Allocate `blocks` malloc'd blocks (about 100 MB), keep only the last (so the heap's top stays in use and
    glibc cannot give the rest back by itself), free the others; returns the resident set at the peak."""
    made = [bytes(size) + bytes([k % 256]) for k in range(blocks)]
    peak = resident_mib()
    KEPT.append(made[-1])
    del made
    return peak
