"""The jobs `early.prepare` started for a big schedule, kept until the preview and the full load take them.

Apart from `early` so that the reader can take them without importing what starts them (which imports the
reader's decoding, in the worker).
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from explorer.file_spans import FileIdentity

# Below these sizes one process decodes faster than workers (their start and the transfers cost more than they
# save; the crossover measured in BENCHMARKS.md): on an idle machine, and on one whose CPUs are all busy now
PARALLEL_MIN_BYTES = 48 << 20
BUSY_PARALLEL_MIN_BYTES = 128 << 20
PREVIEW_MIN_BYTES = 64 << 20  # a smaller file loads whole in about a second: no preview
# A first core bigger than this (its decode takes longer than the TUI takes to start, about 0.9 s) is shown in two
# steps: its first PREFIX_BYTES of workloads (read and decoded in about 0.1 s), then all of it: on a 177 MB core the
# first timeline came at 1.0 s instead of 3.5 s, the whole core at 3.5 s as before. A smaller one is shown whole at
# once: on the 3 GB schedule's 46 MB cores two steps drew the first timeline 0.2 s sooner but the whole core 0.2 s
# later (1.2 and 1.6 s against 1.4 s), as the TUI, not the decode, was then what the screen waited for.
PREFIX_MIN_CORE_BYTES = 64 << 20
PREFIX_BYTES = 4 << 20

# The whole first core's decode (a Future of a `preview.FirstCorePart`, or of None), started early for the TUI,
# until the full load takes it: the preview and the load use the same decode
first_cores: dict[Path, Future] = {}
# What the TUI draws first (a Future of a `preview.FirstCorePart`, or of None): the first core's first workloads
# when it is bigger than PREFIX_MIN_CORE_BYTES, else the same whole core as `first_cores`
first_looks: dict[Path, Future] = {}
# Where every core lies (a Future of `layout.core_spans_at`), looked for by the other worker meanwhile, with the
# file's (size, mtime_ns) it was asked for: the TUI starts its load only after its first paint
span_searches: dict[Path, tuple[tuple[int, int], Future]] = {}


def first_core_job(path: Path) -> Future | None:
    """The first core's decode started by `prepare`, if any, for the preview; it stays for the full load."""
    return first_cores.get(path.resolve())


def take_first_look(path: Path) -> Future | None:
    """What `prepare` started for the TUI's first screen, if anything, for the preview (taken once)."""
    return first_looks.pop(path.resolve(), None)


def take_first_core(path: Path) -> Future | None:
    """The first core's decode, for the full load (taken once). The load takes its part only for a core at the
    very same bytes of the file as it is now: it was decoded by the same function from the same bytes."""
    return first_cores.pop(path.resolve(), None)


def take_spans(path: Path, stamp: FileIdentity) -> Future | None:
    """The cores' spans looked for since `prepare`, for the full load (taken once), if asked for the file as
    it is now (`stamp`)."""
    asked = span_searches.pop(path.resolve(), None)
    return asked[1] if asked is not None and asked[0] == stamp else None


def parallel_min_bytes() -> int:
    """The size from which a file is decoded by workers, chosen on what the machine gives now: when other tasks
    are running on every CPU this process may use (the kernel's count of runnable tasks, this instant), workers
    pay only on bigger files."""
    return BUSY_PARALLEL_MIN_BYTES if _cpus_busy() else PARALLEL_MIN_BYTES


def _cpus_busy() -> bool:
    from explorer.worker_pool import usable_cpus

    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            running = int(handle.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return running - 1 >= usable_cpus()  # itself is one of them
