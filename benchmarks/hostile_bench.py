"""Hostile shapes at two sizes (issue #60): each reader and check is linear in its input, so four times the input
takes about four times as long (a quadratic one took sixteen). Time and peak memory (its own high-water mark) of one
process; the files are generated here (not committed)."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINEAR_AT_MOST = 6.0  # four times the input within six times the time: linear, with this machine's spread
TURNS = 3


def _run(args: list[str]) -> tuple[float, float]:
    """(seconds, peak MiB) of `ir-explorer ARGS` in a process of its own, the median of TURNS runs; the peak is
    the process's own high-water mark (tests.hostile.explorer_peak)."""
    sys.path.insert(0, str(ROOT))
    from tests.hostile import explorer_peak

    seconds, peaks = [], []
    for _ in range(TURNS):
        began = time.perf_counter()
        _, peak = explorer_peak(args, ROOT, {**os.environ, "IR_EXPLORER_WORKERS": "0"})
        seconds.append(time.perf_counter() - began)
        peaks.append(peak / 2**20)
    return statistics.median(seconds), max(peaks)


def _overlaps(folder: Path, n: int, same: bool) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.hostile import overlapping_entries_schedule

    return overlapping_entries_schedule(folder / f"overlaps_{n}_{'same' if same else 'distinct'}_stschedule.json",
                                        n, same)  # fmt: skip


def _unresolved(folder: Path, n: int) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.schedules import two_core

    schedule = two_core()
    schedule["0"][0]["ifmap"][0]["transfer_id"] = [0, *range(100_000, 100_000 + n)]
    path = folder / f"unresolved_{n}_stschedule.json"
    path.write_text(json.dumps(schedule))
    return path


def _mil_line(folder: Path, n: int) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.hostile import mil_with_body

    made = folder / f"line_{n}.mlmodelc"
    shutil.rmtree(made, ignore_errors=True)
    return mil_with_body(made, "    tensor<fp32, [1, 4]> q = " + "[= b(" * n + "\n")


def _mil_literals(folder: Path, n: int) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.hostile import mil_with_body

    made = folder / f"literals_{n}.mlmodelc"
    shutil.rmtree(made, ignore_errors=True)
    return mil_with_body(made, '    tensor<fp32, [1, 4]> c = const()[name = string("c"), ' + "val=(" * n + "\n")


def _mil_nested(folder: Path, depth: int) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.hostile import mil_nested_blocks

    made = folder / f"nested_{depth}.mlmodelc"
    shutil.rmtree(made, ignore_errors=True)
    return mil_nested_blocks(made, depth)


def _cut_chain(folder: Path, n: int) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.hostile import cut_onnx_chain

    return cut_onnx_chain(folder / f"cut_chain_{n}.onnx", n)


CASES: list[tuple[str, str, int, Callable[[Path, int], Path], list[str]]] = [
    ("one tensor listed n times in a snapshot", "entries", 16_000, lambda f, n: _overlaps(f, n, True), ["check"]),
    ("n entries on the same bytes (n²/2 overlaps)", "entries", 16_000, lambda f, n: _overlaps(f, n, False),
     ["check"]),
    ("one workload reading n unknown transfers", "transfers", 1_500_000, _unresolved, ["check"]),
    ("a model.mil line of n `[= b(`", "repeats", 4_000, _mil_line, ["info"]),
    ("a model.mil const line of n `val=(` (issue #72)", "repeats", 10_000, _mil_literals, ["info"]),
    ("model.mil blocks nested n deep", "blocks", 750, _mil_nested, ["graph", "--json"]),
    ("an ONNX chain of n nodes cut inside its weights (issue #72)", "nodes", 5_000, _cut_chain, ["info"]),
]  # fmt: skip


def section(out: Path) -> list[str]:
    folder = out / "hostile"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        "## Hostile shapes, linear (issue #60)",
        "",
        f"Each shape at n and 4n, one process (`IR_EXPLORER_WORKERS=0`), median of {TURNS} runs; a linear reader "
        f"takes about 4× as long at 4n (met: at most {LINEAR_AT_MOST:g}×).",
        "",
        "| shape | n | time at n | time at 4n | ratio | peak at 4n | file at 4n | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for title, unit, n, make, command in CASES:
        small, large = make(folder, n), make(folder, 4 * n)
        (t1, _), (t4, peak) = _run([*command, str(small)]), _run([*command, str(large)])
        size = sum(p.stat().st_size for p in large.rglob("*")) if large.is_dir() else large.stat().st_size
        ratio = t4 / max(t1, 1e-9)
        met = "yes" if ratio <= LINEAR_AT_MOST else "no"
        lines.append(f"| {title} (`{' '.join(command)}`) | {n:,} {unit} | {t1:.2f} s | {t4:.2f} s | {ratio:.1f}× | "
                     f"{peak:.0f} MiB | {size / 1e6:.1f} MB | {met} |")  # fmt: skip
        print(lines[-1], flush=True)
    return [*lines, ""]
