"""`make fuzz`: the long fuzz campaign. Every format gets N mutated files (default 100,000, the classes of
tests/fuzzing.py in turn, seeds 0..N-1, so a run can be repeated exactly); each must load (and survive what a user
touches) or raise a located LoadError. A file that does anything else is saved under tests/data/fuzz/, where every
`make test` loads it again, and listed in RELIABILITY.md with the counts of the run.

    python -m tests.fuzz_campaign [--per-format N] [--jobs J] [--formats onnx,ark,...]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGRESSIONS = ROOT / "tests" / "data" / "fuzz"
REPORT = ROOT / "RELIABILITY.md"
BEGIN, END = "<!-- fuzz campaign: begin (written by make fuzz) -->", "<!-- fuzz campaign: end -->"
CHUNK = 500


NODE_DATA = "node-data"  # the user's per-node data files, read against a model: a "format" of the campaign


def run_chunk(fmt: str, start: int, stop: int) -> dict:
    """Seeds start..stop-1 of one format, in this process."""
    if fmt == NODE_DATA:
        return run_node_data_chunk(start, stop)
    from explorer.api import open_document
    from explorer.errors import LoadError
    from tests.fuzzing import KINDS, SAVE_AS, SEED_FILES, exercise, mutated_bytes

    names = [str(p) for p in SEED_FILES[fmt]]
    counts: Counter = Counter()
    failures = []
    folder = Path(tempfile.mkdtemp(prefix="irx-fuzz-"))
    for seed in range(start, stop):
        kind = KINDS[seed % len(KINDS)]
        name = names[(seed // len(KINDS)) % len(names)]
        data = mutated_bytes(name, seed, kind)
        path = folder / SAVE_AS[fmt].format(kind=kind)
        path.write_bytes(data)
        counts[kind] += 1
        try:
            exercise(open_document(path), deep=kind == "graph")
            counts["loaded"] += 1
        except LoadError:
            counts["refused"] += 1
        except Exception as error:  # what the campaign is looking for
            counts["failed"] += 1
            saved = REGRESSIONS / f"{fmt}-{kind}-{seed}__{path.name}"
            REGRESSIONS.mkdir(parents=True, exist_ok=True)
            saved.write_bytes(data)
            last = traceback.extract_tb(error.__traceback__)[-1]
            where = f"{Path(last.filename).name}:{last.lineno}"
            failures.append((saved.name, f"{type(error).__name__}: {str(error)[:100]} ({where})", Path(name).name))
    return {"format": fmt, "counts": counts, "failures": failures}


def run_node_data_chunk(start: int, stop: int) -> dict:
    """Mutated per-node data files read against the bundled schedule's graph: data sets and problems, or one
    LoadError about the file, never another exception."""
    from explorer.api import open_document
    from explorer.errors import LoadError
    from explorer.graph.node_data import apply_node_data, read_node_data
    from tests.fuzzing import KINDS, NODE_DATA_SEEDS, mutated_node_data

    model = open_document(ROOT / "sample_data" / "clean_2x2_stschedule.json").view.graph_model()
    names = sorted(NODE_DATA_SEEDS)
    counts: Counter = Counter()
    failures = []
    folder = Path(tempfile.mkdtemp(prefix="irx-fuzz-"))
    for seed in range(start, stop):
        kind = KINDS[seed % len(KINDS)]
        name = names[(seed // len(KINDS)) % len(names)]
        data = mutated_node_data(name, seed, kind)
        path = folder / name
        path.write_bytes(data)
        counts[kind] += 1
        try:
            for data_set in read_node_data(path, model)[0]:
                apply_node_data(model, data_set)
            counts["loaded"] += 1
        except LoadError:
            counts["refused"] += 1
        except Exception as error:
            counts["failed"] += 1
            saved = REGRESSIONS.parent / "fuzz_node_data" / f"{kind}-{seed}__{name}"
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_bytes(data)
            failures.append((saved.name, f"{type(error).__name__}: {str(error)[:100]}", name))
    return {"format": NODE_DATA, "counts": counts, "failures": failures}


def campaign(per_format: int, jobs: int, formats: list[str]) -> dict:
    work = [(fmt, s, min(s + CHUNK, per_format)) for fmt in formats for s in range(0, per_format, CHUNK)]
    totals: dict[str, Counter] = {fmt: Counter() for fmt in formats}
    failures: dict[str, list] = {fmt: [] for fmt in formats}
    started = time.perf_counter()
    done = 0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(run_chunk, *zip(*work, strict=True)):
            totals[result["format"]].update(result["counts"])
            failures[result["format"]] += result["failures"]
            done += 1
            if done % 20 == 0 or done == len(work):
                print(f"fuzz: {done}/{len(work)} chunks, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return {"totals": totals, "failures": failures, "seconds": time.perf_counter() - started}


def report(result: dict, per_format: int, jobs: int) -> list[str]:
    from tests.fuzzing import KINDS

    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        BEGIN,
        f"## Last campaign: {when}",
        "",
        f"This run: {', '.join(sorted(result['totals']))}. "
        f"{per_format:,} mutated files per format (seeds 0..{per_format - 1:,}, the classes in turn), "
        f"{jobs} processes, {result['seconds'] / 60:.0f} minutes on {platform.machine()} ({os.cpu_count()} cores), "
        f"Python {platform.python_version()}. Seeds: "
        + "; ".join(f"{fmt}: {', '.join(_seed_names(fmt))}" for fmt in sorted(result["totals"])),
        "",
        "| format | files | " + " | ".join(KINDS) + " | loaded | refused with a located error | failed | run |",
        "| --- | --- | " + " | ".join("---" for _ in KINDS) + " | --- | --- | --- | --- |",
    ]
    rows = {fmt: _with_columns(row, len(KINDS)) for fmt, row in previous_rows().items()}  # formats this run left
    # out keep the row of their last run
    for fmt, counts in result["totals"].items():
        total = sum(counts[k] for k in KINDS)
        rows[fmt] = (
            f"| {fmt} | {total:,} | " + " | ".join(f"{counts[k]:,}" for k in KINDS)
            + f" | {counts['loaded']:,} | {counts['refused']:,} | {counts['failed']:,} | {when[:10]} |"
        )  # fmt: skip
    lines += [rows[fmt] for fmt in sorted(rows)]
    found = [(fmt, f) for fmt, items in sorted(result["failures"].items()) for f in items]
    lines += ["", f"Failures found in this run: {len(found)}."]
    if found:
        lines += ["", "| saved as (tests/data/fuzz/) | seed file | what happened |", "| --- | --- | --- |"]
        lines += [f"| {saved} | {seed_file} | {what} |" for _, (saved, what, seed_file) in found[:200]]
    lines.append(END)
    return lines


def previous_rows() -> dict[str, str]:
    """The per-format rows of the last report (format → its table row)."""
    if not REPORT.exists():
        return {}
    text = REPORT.read_text(encoding="utf-8")
    if BEGIN not in text:
        return {}
    section = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 2 and cells[1].replace(",", "").isdigit():
            rows[cells[0]] = line if line.rstrip().endswith("|") and len(cells) >= 10 else line + " earlier |"
    return rows


def splice(lines: list[str]) -> None:
    """Replace the generated section of RELIABILITY.md; what people wrote around it stays."""
    text = REPORT.read_text(encoding="utf-8") if REPORT.exists() else "# Reliability\n\n" + BEGIN + "\n" + END + "\n"
    if BEGIN not in text or END not in text:
        text = text.rstrip("\n") + "\n\n" + BEGIN + "\n" + END + "\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + "\n".join(lines) + tail
    temporary = REPORT.with_suffix(".md.tmp")
    temporary.write_text(new, encoding="utf-8")
    temporary.replace(REPORT)


def _seed_names(fmt: str) -> list[str]:
    from tests.fuzzing import NODE_DATA_SEEDS, SEED_FILES

    return sorted(NODE_DATA_SEEDS) if fmt == NODE_DATA else [p.name for p in SEED_FILES[fmt]]


def _with_columns(row: str, kinds: int) -> str:
    """A row of an earlier run, with "—" in the kind columns that did not exist then (before `loaded`)."""
    cells = row.strip().strip("|").split("|")
    missing = kinds + 6 - len(cells)  # format, files, the kinds, loaded, refused, failed, run
    if missing <= 0:
        return row
    cells[2 + kinds - missing : 2 + kinds - missing] = [" — "] * missing
    return "|" + "|".join(cells) + "|"


def main() -> int:
    from tests.fuzzing import SEED_FILES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-format", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--formats", default=",".join([*sorted(SEED_FILES), NODE_DATA]))
    parser.add_argument("--no-report", action="store_true", help="print the counts, leave RELIABILITY.md alone")
    args = parser.parse_args()
    formats = [f for f in args.formats.split(",") if f]
    result = campaign(args.per_format, args.jobs, formats)
    lines = report(result, args.per_format, args.jobs)
    print("\n".join(lines))
    if not args.no_report:
        splice(lines)
    return 1 if any(result["failures"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
