"""Key latency from outside, as a user feels it (issue #73), a part of `make bench`: the app in a pseudo-terminal
of 160×48, each key written and timed to the last byte of its answer, with the bytes it wrote
(`../shared/tools/key_latency.py`), against the bare Textual app (`../shared/tools/textual_floor.py`) in the
same run. Inputs: the bundled planted 2×2 schedule, the 480 MB 16-core schedule when the schedule section has
made it, an 80-layer decoder and a model of ~600 MB of weights (benchmarks/latency_models.py).
Run alone: `python benchmarks/latency_bench.py [FILE...]`."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOOLS = ROOT.parent / "shared" / "tools"
PLANTED = ROOT / "sample_data" / "planted_problems_2x2_stschedule.json"
# the bare app: its tree's cursor, then its pane switch (1, 2) both ways
FLOOR_KEYS = "down*40 up*10 2 1 2 1"
# every view's cursor keys and every view switch (first, then later), on a schedule: the tree opens core 0 and
# walks its workloads
SCHEDULE_KEYS = ("down*3 enter down*12 up*8 2 .*20 ,*10 right*10 left*5 3 right*20 left*10 ]*10 [*5 7 right*15 left*5 "
                 "8 right*8 left*4 1 2 3 7 8 1")  # fmt: skip
# on a model: the tree, then the graph view's cursor (its arrows walk the boxes), then back
MODEL_KEYS = "down*12 up*6 6 down*12 up*6 right*6 left*6 1"
MODEL_QUIT_STATES = {"first draw": None, "tree": "", "graph": "6"}
TARGET_MEDIAN, TARGET_P90, TARGET_P90_MS = 1.5, 2.0, 33  # a cursor key against the bare app's cursor key
CURSOR_KEYS = {"down", "up", ".", ",", "right", "left", "]", "["}
# `q` in each state: during the first draw (q 0.1 s after the app enters the alternate screen), idle in the tree,
# then after each view was shown
QUIT_STATES = {"first draw": None, "tree": "", "timeline": "2", "buffers": "3", "memory map": "7", "mesh": "8"}
QUIT_TARGET_MS = 50
LEAVE = b"\x1b[?1049l"


def _read(fd: int, until: float, quiet: float | None = None, stop: bytes | None = None) -> tuple[bytes, float | None]:
    """Output until `until` (or `quiet` seconds of none, or EOF); with the time `stop` first appeared in it."""
    seen, found = b"", None
    while (left := until - time.perf_counter()) > 0:
        if not select.select([fd], [], [], min(left, quiet) if quiet else left)[0]:
            if quiet:
                break
            continue
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            break
        if not data:
            break
        seen += data
        if stop is not None and found is None and stop in seen:
            found = time.perf_counter()
    return seen, found


def quit_ms(command: list[str], before: str | None) -> tuple[float | None, float | None]:
    """(ms from `q` to the alternate screen left, ms to the process gone) in one state: `before` is the keys
    pressed first (None: `q` during the first draw). The whole output is searched (key_latency.py keeps only its
    last 64 bytes, where an early restore followed by more output is missed)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    app = subprocess.Popen(command, stdin=child, stdout=child, stderr=child, start_new_session=True,
                           env={**os.environ, "TERM": "xterm-256color"})  # fmt: skip
    os.close(child)
    try:
        if before is None:
            _, entered = _read(main, time.perf_counter() + 120, stop=b"\x1b[?1049h")
            time.sleep(0.1 if entered else 0)
        else:
            _read(main, time.perf_counter() + 120, quiet=1.5)
            for key in before:
                os.write(main, key.encode())
                _read(main, time.perf_counter() + 30, quiet=0.5)
        pressed = time.perf_counter()
        os.write(main, b"q")
        _, back = _read(main, pressed + 30, stop=LEAVE)
        app.wait(timeout=30)
        gone = time.perf_counter()
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        os.close(main)
    return (None if back is None else (back - pressed) * 1000), (gone - pressed) * 1000


def measure(label: str, command: list[str], keys: str) -> tuple[dict, list[dict]]:
    """The first screen and quit line, and a line per key name, of one run of key_latency.py."""
    tool = [sys.executable, str(TOOLS / "key_latency.py"), "--size", "160x48", "--label", label, "--keys", keys]
    done = subprocess.run([*tool, "--", *command], capture_output=True, text=True, cwd=ROOT, timeout=900)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"key_latency gave nothing for {label}: {done.stderr[-400:]}")
    return lines[0], lines[1:]


def section(out: Path, files: list[Path] | None = None) -> list[str]:
    del out
    if not (TOOLS / "key_latency.py").is_file():
        return ["## Key latency, from outside (issue #73)", "", "Not measured: ../shared/tools is not there.", ""]
    explorer = str(ROOT / ".venv" / "bin" / "ir-explorer")
    floor_head, floor = measure("bare Textual app", [sys.executable, str(TOOLS / "textual_floor.py")], FLOOR_KEYS)
    bare = next(row for row in floor if row["key"] == "down")
    lines = ["## Key latency, from outside (issue #73)", "",
             "Each key written into a 160×48 pseudo-terminal and timed to the last byte of its answer (quiet 0.12 s "
             "after it), with the bytes it wrote; the bare Textual app (a header, a 2,000-node tree, a 2,000-row "
             "table, a footer) measured in the same run. A letter or digit is a view switch (the first time, then "
             "later: one row per key name, so both are in its numbers).", "",
             "| input | key | n | median | p90 | max | bytes (median) | median ÷ bare ↓ | cursor target met |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip

    def rows(label: str, found: list[dict]) -> None:
        for row in found:
            if "median_ms" not in row:
                lines.append(f"| {label} | `{row['key']}` | {row['n']} | no answer | | | | | |")
                continue
            ratio = row["median_ms"] / max(bare["median_ms"], 1)
            met = ""
            if row["key"] in CURSOR_KEYS:
                p90_ratio = row["p90_ms"] / max(bare["p90_ms"], 1)
                ok = ratio <= TARGET_MEDIAN and p90_ratio <= TARGET_P90 and row["p90_ms"] <= TARGET_P90_MS
                met = "yes" if ok else "no"
            lines.append(f"| {label} | `{row['key']}` | {row['n']} | {row['median_ms']} ms | {row['p90_ms']} ms | "
                         f"{row['max_ms']} ms | {row['median_bytes']:,} | {ratio:.1f}× | {met} |")  # fmt: skip
            print(lines[-1], flush=True)

    rows("bare Textual app", floor)
    heads = [("bare Textual app", floor_head)]
    for path in files or [PLANTED]:
        keys = MODEL_KEYS if path.suffix == ".onnx" else SCHEDULE_KEYS
        head, found = measure(path.name, [explorer, str(path)], keys)
        rows(path.name, found)
        heads.append((path.name, head))
    lines += ["", "| input | first screen |", "| --- | --- |"]
    lines += [f"| {label} | {head['first_screen_s']} s |" for label, head in heads]
    lines += ["", f"`q` in each state: the time to the terminal given back (the alternate screen left; target "
              f"≤ {QUIT_TARGET_MS} ms) and to the process gone.", "",
              "| input | state | terminal back | process gone | met |", "| --- | --- | --- | --- | --- |"]  # fmt: skip
    bare_app = [sys.executable, str(TOOLS / "textual_floor.py")]
    commands = [("bare Textual app", bare_app, {"first draw": None, "tree": ""})]
    commands += [(path.name, [explorer, str(path)], MODEL_QUIT_STATES if path.suffix == ".onnx" else QUIT_STATES)
                 for path in files or [PLANTED]]  # fmt: skip
    for label, command, states in commands:
        for state, before in states.items():
            back, gone = quit_ms(command, before)
            met = "yes" if back is not None and back <= QUIT_TARGET_MS else "no"
            shown = "never" if back is None else f"{back:.0f} ms"
            lines.append(f"| {label} | {state} | {shown} | {gone:.0f} ms | {met} |")
            print(lines[-1], flush=True)
    return [*lines, ""]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from run import splice

    chosen = [Path(arg) for arg in sys.argv[1:]] or None
    splice(ROOT / "BENCHMARKS.md", section(ROOT / "benchmarks" / "out", chosen))
