"""`make bench`: generate the big inputs (not committed), measure, and write BENCHMARKS.md.

Every measurement runs in a fresh interpreter so its peak memory is its own (its worker processes' included);
times are medians of REPEATS runs without the memory sampler, and one more run measures memory. Baselines are
measured in the same run on the same file, so the ratios hold on any machine.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
PLANTED_2X2 = ROOT / "sample_data" / "planted_problems_2x2_stschedule.json"  # what the latency bench walks
REPEATS = int(os.environ.get("IR_EXPLORER_BENCH_REPEATS", "3"))
BIG_RECIPE = {"xlen": 4, "ylen": 4, "layers": int(os.environ.get("IR_EXPLORER_BENCH_LAYERS", "10500")), "prefetch": 4}

# Each probe is a snippet run as `python -c`; it prints one JSON object. Imports happen before the clock starts
# (an interactive user pays them once), and the peak memory includes them.
PROBES = {
    "baseline_orjson": """
import orjson, time
t = time.perf_counter()
with open(PATH, "rb") as f:
    value = orjson.loads(f.read())
elapsed = time.perf_counter() - t
""",
    "baseline_orjson_gc_off": """
import gc, orjson, time
gc.disable()  # the fastest a generic parse gets: no cycle collection over the millions of new dicts
t = time.perf_counter()
with open(PATH, "rb") as f:
    value = orjson.loads(f.read())
elapsed = time.perf_counter() - t
""",
    "info": """
import io, contextlib, time
from explorer.cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["info", PATH, "--json"])
elapsed = time.perf_counter() - t
assert code == 0, code
""",
    "info_one_process": """
import io, contextlib, os, time
os.environ["IR_EXPLORER_WORKERS"] = "0"  # no worker processes: what a one-CPU machine does
from explorer.cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["info", PATH, "--json"])
elapsed = time.perf_counter() - t
assert code == 0, code
""",
    "check": """
import io, contextlib, time
from explorer.cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["check", PATH, "--json"])
elapsed = time.perf_counter() - t
assert code in (0, 1), code
""",
    "check_without_room": """
import io, contextlib, time
import explorer.schedule.pressure as pressure
pressure.Pressure.explain = lambda self, incidents: {}  # check --json as it was before issue #42: no context, no room
from explorer.cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["check", PATH, "--json"])
elapsed = time.perf_counter() - t
assert code in (0, 1), code
""",
    "check_analyses_only": """
import time
from explorer.formats.scheduler_ir.reader import load_schedule
from explorer.schedule.analysis import analyze_schedule
schedule, _ = load_schedule(PATH)
schedule.l2_known = schedule.snapshots_known = None  # all of it here: not what the decode workers did per core
t = time.perf_counter()
analysis = analyze_schedule(schedule)
elapsed = time.perf_counter() - t
extra = {"buffer_entries": int(schedule.buf_tensor.size), "workloads": schedule.n_workloads,
         "problems": len(analysis.problems)}
""",
    "l2_overlap_only": """
import time
from explorer.formats.scheduler_ir.reader import load_schedule
from explorer.schedule.buffers import l2_problems, place_l2_entries
schedule, _ = load_schedule(PATH)
schedule.l2_known = None  # the whole sweep here, as for a schedule that no decode worker swept
t = time.perf_counter()
problems = l2_problems(schedule, place_l2_entries(schedule))
elapsed = time.perf_counter() - t
""",
    "tui_first_screen": """
import asyncio, time
from pathlib import Path
from explorer.cli import _prepare
from widgets.app import make_app
from widgets.loading import LoadingPanel

async def measure():
    t = time.perf_counter()
    _prepare(Path(PATH), interactive=True)  # what `ir-explorer FILE` does first: a big schedule's workers start
    app = make_app(PATH)
    async with app.run_test(size=(160, 48)) as pilot:
        first = time.perf_counter() - t  # composed, mounted and painted: the loading screen is up
        assert app.query_one(LoadingPanel) is not None
        part = None
        while (app.document is None or app.document.partial or not app.views_ready) and app.load_error is None:
            if part is None and app.document is not None and app.document.partial and app.views_ready:
                part = time.perf_counter() - t  # a big schedule's first core, with its views
            await pilot.pause(0.01)
        await pilot.pause()
        ready = time.perf_counter() - t
    return first, part, ready

first, part, ready = asyncio.run(measure())
elapsed = first
extra = {"document_shown_s": ready, "first_core_shown_s": part}
""",
    "validate_pydantic": """
import gc, time, msgspec, sys
sys.path.insert(0, "benchmarks")
from pydantic import TypeAdapter
from validation_models import Workload
with open(PATH, "rb") as f:
    core = msgspec.json.decode(f.read(), type=dict[str, msgspec.Raw])["0"]
adapter = TypeAdapter(list[Workload])
gc.disable()
t = time.perf_counter()
workloads = adapter.validate_json(bytes(core))
elapsed = time.perf_counter() - t
extra = {"core_bytes": len(bytes(core)), "workloads": len(workloads)}
""",
    "validate_msgspec": """
import gc, time, msgspec
from explorer.formats.scheduler_ir.schema import BufferEntry, Workload
with open(PATH, "rb") as f:
    core = msgspec.json.decode(f.read(), type=dict[str, msgspec.Raw])["0"]
decoder = msgspec.json.Decoder(list[Workload])
entry_decoder = msgspec.json.Decoder(list[BufferEntry])  # the loader decodes L2 entries in a second step
gc.disable()
t = time.perf_counter()
workloads = decoder.decode(core)
entries = [entry_decoder.decode(w.buffer) for w in workloads]
elapsed = time.perf_counter() - t
extra = {"core_bytes": len(bytes(core)), "workloads": len(workloads)}
""",
    "view_frames": """
import asyncio, statistics, time
from explorer.api import open_document
from widgets.app import make_app
from widgets.schedule.buffer_view import BufferView
from widgets.schedule.timeline import Timeline

document = open_document(PATH)

async def measure():
    app = make_app(PATH, document=document)
    async with app.run_test(size=(200, 60)) as pilot:
        while not app.views_ready:
            await pilot.pause(0.01)
        await pilot.press("2")
        await pilot.pause()
        timeline = app.query_one(Timeline)
        timeline.render_frame()
        whole = []
        for _ in range(10):  # the worst case: every workload of every core in view
            t = time.perf_counter(); timeline.render_frame(); whole.append(time.perf_counter() - t)
        steps = []
        for i in range(60):  # alternate zooms and pans, one redraw after each
            if i % 3 == 0:
                timeline.action_zoom(0.6)
            elif i % 3 == 1:
                timeline.action_pan(0.2)
            else:
                timeline.action_zoom(1.4)
            t = time.perf_counter(); timeline.render_frame(); steps.append(time.perf_counter() - t)
        timeline_size = (timeline.size.width, timeline.size.height)
        await pilot.press("3")
        await pilot.pause()
        buffers = app.query_one(BufferView)
        count = len(document.schedule.core_rows(buffers.core))
        frames = []
        for i in range(60):
            buffers.core_index = i % document.schedule.core_ids.size
            buffers.frame = (i * 997) % count
            t = time.perf_counter(); buffers.render_frame(); frames.append(time.perf_counter() - t)
        size = (*timeline_size, buffers.size.width, buffers.size.height)
    return statistics.median(steps), max(steps), statistics.median(whole), statistics.median(frames), max(frames), size

step, step_max, whole, frame, frame_max, size = asyncio.run(measure())
elapsed = step
extra = {"timeline_max_s": step_max, "timeline_whole_s": whole, "buffer_frame_s": frame,
         "buffer_frame_max_s": frame_max, "widget_sizes": list(size)}
""",
}

# Worker processes (explorer.worker_pool) are memory too: a thread samples every 50 ms the proportional set size
# (shared pages divided among their sharers) of the probe and all its descendants. The peak reported is the larger
# of that sum and the probe's own ru_maxrss (exact, but of one process).
HEADER = """
import os as _os, threading as _threading, time as _time
_TREE_PEAK_KIB = [0]
def _tree_pss_kib():
    total, todo = 0, [str(_os.getpid())]
    while todo:
        pid = todo.pop()
        try:
            for task in _os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += f.read().split()
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total
def _sample_tree():
    while True:
        _TREE_PEAK_KIB[0] = max(_TREE_PEAK_KIB[0], _tree_pss_kib())
        _time.sleep(0.05)
if _os.path.exists("/proc/self/smaps_rollup"):
    _threading.Thread(target=_sample_tree, daemon=True).start()
"""

FOOTER = """
import json, resource
_own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"elapsed": elapsed, "maxrss_kib": max(_own, _TREE_PEAK_KIB[0]),
                  **(extra if "extra" in globals() else {})}))
"""


def run_probe(name: str, path: Path) -> dict:
    """REPEATS timed runs without the memory sampler (reading every process's smaps 20 times a second took CPU
    from the load: `info` on the 519 MB file measured 3.2 s plain and 3.3-4.0 s sampled), then one run with it
    for the peak memory; each run's own ru_maxrss counts too."""
    body = f"PATH = {str(path)!r}\n" + PROBES[name] + FOOTER
    runs = [_probe_once(name, _UNSAMPLED + body) for _ in range(REPEATS)]
    sampled = _probe_once(name, HEADER + body)
    summary = {
        "seconds": statistics.median(r["elapsed"] for r in runs),
        "peak_mib": max(r["maxrss_kib"] for r in [*runs, sampled]) / 1024,
    }
    for key in runs[0]:
        if key not in ("elapsed", "maxrss_kib"):
            seen = [r[key] for r in runs if r.get(key) is not None]  # None: not seen in that run
            summary[key] = statistics.median(seen) if seen and isinstance(seen[0], float) else runs[0][key]
    print(f"  {name:22s} {summary['seconds']:8.3f} s  {summary['peak_mib']:8.0f} MiB", flush=True)
    return summary


def run_pair(first: str, second: str, path: Path, turns: int = 5) -> dict[str, dict]:
    """Two probes whose ratio is the target, run in turns (first, second, first, ...): on this machine the same
    command varies by ±20% from one minute to the next (the 480 MB load's workers), and three runs of one then
    three of the other measured that drift, not the difference. `turn_ratio` is the median of the turns' ratios."""
    runs = run_turns({first: (first, path), second: (second, path)}, turns)
    for name in (first, second):
        runs[name]["turn_ratio"] = runs[first]["turn_ratios"][second]
    return runs


def run_turns(probes: dict[str, tuple[str, Path]], turns: int = 5) -> dict[str, dict]:
    """Probes (a label → the probe and its file) run in turns, each turn all of them in order, so a target that
    is a ratio of two of them is measured within minutes of each other, not across the run's drift. Each
    label's summary has its median seconds, its peak (one more run, sampled) and `turn_ratios`: for every
    other label, the median of the turns' ratios of this one's seconds to that one's (`per_turn` keeps them)."""
    bodies = {label: f"PATH = {str(path)!r}\n" + PROBES[name] + FOOTER for label, (name, path) in probes.items()}
    runs: dict[str, list[dict]] = {label: [] for label in probes}
    for _ in range(max(turns, REPEATS)):
        for label, (name, _path) in probes.items():
            runs[label].append(_probe_once(name, _UNSAMPLED + bodies[label]))
    out = {}
    for label, (name, _path) in probes.items():
        sampled = _probe_once(name, HEADER + bodies[label])
        seconds = [r["elapsed"] for r in runs[label]]
        ratios = {other: statistics.median(a / b["elapsed"] for a, b in zip(seconds, runs[other], strict=True))
                  for other in probes if other != label}  # fmt: skip
        out[label] = {"seconds": statistics.median(seconds), "per_turn": seconds, "turns": len(seconds),
                      "peak_mib": max(r["maxrss_kib"] for r in [*runs[label], sampled]) / 1024,
                      "turn_ratios": ratios}  # fmt: skip
        print(f"  {label:22s} {out[label]['seconds']:8.3f} s  {out[label]['peak_mib']:8.0f} MiB", flush=True)
    return out


def probe_seconds(name: str, path: Path) -> float:
    """One timed run of a probe (no sampler), for a ratio measured in turns with something that is no probe."""
    return _probe_once(name, _UNSAMPLED + f"PATH = {str(path)!r}\n" + PROBES[name] + FOOTER)["elapsed"]


_UNSAMPLED = "_TREE_PEAK_KIB = [0]\n"  # the timed runs: no sampler thread, the footer reports ru_maxrss alone


def _probe_once(name: str, code: str) -> dict:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"probe {name} failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def tmux_first_screen(path: Path, launches: int = REPEATS, environment: dict[str, str] | None = None) -> dict | None:
    """Seconds from launching `ir-explorer FILE` in a real terminal (tmux, 160×48) until, as a user sees it:
    - `seconds`: the first screen (interpreter start, imports, first paint: the summary bar names the file);
    - `first_core_s`: a big schedule's first core's timeline drawn (its lane "c0 (x,y)" in the Timeline pane) while
      the rest loads (the bar says "◐ ... showing core 0 ..."): its first workloads, or all of it;
    - `whole_first_core_s`: the same with all of the first core (the bar says "showing core 0 of a ...");
    - `whole_s`: the whole file, checked (the bar counts its errors).
    Medians over `launches`; None when tmux is not installed. `environment`: variables the app starts with."""

    def first_core(screen: str) -> bool:
        bar = screen.splitlines()[0] if screen.strip() else ""
        return "◐" in bar and "╭─ Timeline" in screen and "c0 (" in screen  # its lane is drawn

    def whole(screen: str) -> bool:
        bar = screen.splitlines()[0] if screen.strip() else ""
        return "error" in bar and "◐" not in bar

    marks = {
        "seconds": lambda screen: path.name in screen,  # the summary bar names the file on the first frame
        "first_core_s": first_core,
        "whole_first_core_s": lambda screen: first_core(screen) and "showing core 0 of" in screen.splitlines()[0],
        "whole_s": whole,
    }
    return tmux_marks(f"{ROOT / '.venv' / 'bin' / 'ir-explorer'} {path}", marks, "whole_s", launches, environment,
                      fast_until="first_core_s")


def tmux_marks(command: str, marks: dict[str, Callable[[str], bool]], last: str, launches: int = REPEATS,
               environment: dict[str, str] | None = None, fast_until: str = "") -> dict | None:  # fmt: skip
    """Seconds from launching `command` in tmux at 160×48 until each of `marks` first holds of the pane's text,
    up to `last`'s; medians over `launches` (None for a mark never seen), or None when tmux is not installed. Each
    launch starts once the one before has ended, and the cache entry it may have kept is written. The pane is read
    every 5 ms for 5 s or until `fast_until` is seen, then every 100 ms."""
    import shutil

    if shutil.which("tmux") is None:
        return None
    milestones: dict[str, list[float]] = {name: [] for name in marks}
    for attempt in range(launches):
        session = f"irx-bench-{os.getpid()}-{attempt}"
        for _ in range(5):  # a server still exiting after the last launch's session ended refuses a new one
            start = time.perf_counter()
            launched = subprocess.run(
                ["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
                 *[f"-e{name}={value}" for name, value in (environment or {}).items()], command],
                capture_output=True,
            )  # fmt: skip
            if launched.returncode == 0:
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"tmux would not start: {launched.stderr.decode(errors='replace')}")
        seen: dict[str, float] = {}
        app_pid = subprocess.run(["tmux", "display-message", "-p", "-t", session, "#{pane_pid}"],
                                 capture_output=True, text=True).stdout.strip()  # fmt: skip
        try:
            while time.perf_counter() - start < 120 and last not in seen:
                screen = subprocess.run(
                    ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
                ).stdout
                now = time.perf_counter() - start
                for name, holds in marks.items():
                    if name not in seen and holds(screen):
                        seen[name] = now
                # a capture is a process started, and 200 a second took a good part of a CPU from the load being
                # timed (2 CPUs here)
                time.sleep(0.005 if now < 5 and fast_until not in seen else 0.1)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
            # the next launch starts once this one's app has ended: told of the hang-up, it shuts down for up to
            # 3 s (naming the incidents' roles meanwhile), and that work was timed as the next launch's
            _wait_until_gone(int(app_pid) if app_pid.isdigit() else None)
            if cache_home := (environment or {}).get("XDG_CACHE_HOME"):  # and the entry it may have kept, written
                from explorer.cache.entry import wait_for_writers

                wait_for_writers(Path(cache_home) / "ir-explorer" / "derived", 120.0)
        for name, value in seen.items():
            milestones[name].append(value)
    if not any(milestones.values()):
        return None
    return {name: statistics.median(values) if values else None for name, values in milestones.items()}


def _wait_until_gone(pid: int | None, seconds: float = 15.0) -> None:
    """Return once process `pid` has ended (or after `seconds`)."""
    ends = time.monotonic() + seconds
    while pid is not None and time.monotonic() < ends:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.02)


def _seconds(value: float | None) -> str:
    return "not seen" if value is None else f"{value:.2f} s"


def big_schedule() -> Path:
    from explorer.formats.scheduler_ir.samples import Recipe, write_streaming

    OUT.mkdir(parents=True, exist_ok=True)
    tag = "_".join(f"{k}{v}" for k, v in BIG_RECIPE.items())
    path = OUT / f"bench_16core_{tag}_stschedule.json"
    if not path.exists():
        print(f"generating {path.name} ...", flush=True)
        start = time.perf_counter()
        partial = path.with_name(path.name + ".partial")  # renamed when whole: an interrupted run leaves no
        size = write_streaming(partial, Recipe(**BIG_RECIPE))  # file that a later run would take as done
        partial.rename(path)
        print(f"  {size / 1e6:.0f} MB in {time.perf_counter() - start:.1f} s", flush=True)
    return path


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        memory = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
        memory_gib = int(memory.split()[1]) / 1024 / 1024
    except (OSError, StopIteration):
        memory_gib = 0.0
    versions = {}
    for module in ("numpy", "msgspec", "orjson", "textual"):
        try:
            versions[module] = __import__(module).__version__
        except (ImportError, AttributeError):
            versions[module] = "?"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(memory_gib, 1),
        "python": platform.python_version(),
        "versions": versions,
    }


_LOOP = "import time\nt = time.perf_counter()\ns = 0\nfor i in range(10**7): s += i\nprint(time.perf_counter() - t)"


def machine_speed() -> tuple[float, float]:
    """Seconds a pure-Python loop of 10^7 additions takes alone, and each when two run at once (median of 3):
    how fast this machine was during the run. A shared machine's speed changes from day to day (the same
    file's orjson.loads took 25 s one day and 45 s another), so runs are compared by these, not by dates."""
    alone, paired = [], []
    for _ in range(3):
        alone.append(float(subprocess.run([sys.executable, "-c", _LOOP], capture_output=True, text=True).stdout))
        both = [subprocess.Popen([sys.executable, "-c", _LOOP], stdout=subprocess.PIPE, text=True) for _ in "ab"]
        paired.append(max(float(process.communicate()[0]) for process in both))
    return statistics.median(alone), statistics.median(paired)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "—"


SECTIONS = ("schedule", "ark", "onnx", "graph", "graphreview", "torch", "weights", "metrics", "pipeline", "review",
            "scale", "cache", "cachemodels", "cacheformats", "query", "querystop", "hostile", "quit",
            "latency")  # fmt: skip
BASELINES: dict[Path, float] = {}  # a schedule's orjson.loads seconds, measured once in the run


def _cache_lines(path: Path) -> list[str]:
    from cache_bench import TURNS
    from cache_bench import section as cache_section
    from scale_bench import big64_schedule

    baseline = BASELINES.get(path) or run_probe("baseline_orjson", path)["seconds"]
    files = [("480 MB, 16 cores", path, baseline, TURNS), ("3 GB, 64 cores", big64_schedule(OUT), None, 1)]
    return cache_section(files, tmux_first_screen, tmux_second_open_floor)


def tmux_second_open_floor(path: Path, environment: dict[str, str] | None = None) -> dict | None:
    """The floor of the TUI's second open (benchmarks/second_open_floor.py, one widget, the entry read as the
    explorer reads it), timed as `tmux_first_screen` times the explorer: `seconds` its first frame, `whole_s` the
    document shown."""
    command = f"{ROOT / '.venv' / 'bin' / 'python'} {ROOT / 'benchmarks' / 'second_open_floor.py'} {path}"
    marks = {"seconds": lambda screen: path.name in screen, "whole_s": lambda screen: "problems read" in screen}
    return tmux_marks(command, marks, "whole_s", REPEATS, environment)


def _cache_format_lines() -> list[str]:
    from cache_bench import format_files, formats_section

    return formats_section(format_files(OUT))


def _cache_model_lines() -> list[str]:
    from cache_bench import bench_models, model_section

    return model_section(bench_models(OUT))


def main(sections: tuple[str, ...] = SECTIONS) -> None:
    """All sections (make bench), or some of them spliced into the existing BENCHMARKS.md
    (`python benchmarks/run.py ark onnx graph`): each section is measured in one go, never mixed."""
    if set(sections) != set(SECTIONS):
        lines = _schedule_lines(big_schedule()) if "schedule" in sections else []
        if "ark" in sections:
            from ark_bench import section as ark_section

            lines += ark_section(OUT, PROBES, run_probe, ratio)
        lines += _model_sections(sections)
        if "pipeline" in sections:
            from pipeline_bench import section as pipeline_section

            lines += pipeline_section(OUT, PROBES, run_probe, ratio)
        if "review" in sections:
            from review_bench import section as review_section

            lines += review_section(OUT, PROBES, run_probe, ratio, big_schedule())
        if "scale" in sections:
            from scale_bench import section as scale_section

            lines += scale_section(OUT, PROBES, run_probe, ratio, tmux_first_screen, big_schedule(), run_turns,
                                   probe_seconds)
        if "cache" in sections:
            lines += _cache_lines(big_schedule())
        if "cachemodels" in sections:
            lines += _cache_model_lines()
        if "cacheformats" in sections:
            lines += _cache_format_lines()
        if "query" in sections:
            from query_bench import section as query_section

            lines += query_section(OUT, big_schedule())
        if "querystop" in sections:
            from query_stop_bench import section as query_stop_section

            lines += query_stop_section(OUT)
        if "hostile" in sections:
            from hostile_bench import section as hostile_section

            lines += hostile_section(OUT)
        if "quit" in sections:
            from quit_bench import section as quit_section

            lines += quit_section(OUT)
        if "latency" in sections:
            from latency_bench import section as latency_section
            from latency_models import decoder_80, heavy_weights

            lines += latency_section(OUT, [PLANTED_2X2, big_schedule(), decoder_80(OUT), heavy_weights(OUT)])
        splice(ROOT / "BENCHMARKS.md", lines)
        print("updated BENCHMARKS.md")
        return
    path = big_schedule()
    lines = _schedule_lines(path)
    from ark_bench import section as ark_section  # benchmarks/ is on sys.path when run as a script

    lines += ark_section(OUT, PROBES, run_probe, ratio)
    lines += _model_sections(("onnx", "graph", "graphreview", "torch", "weights", "metrics"))
    from pipeline_bench import section as pipeline_section

    lines += pipeline_section(OUT, PROBES, run_probe, ratio)
    from review_bench import section as review_section

    lines += review_section(OUT, PROBES, run_probe, ratio, path)
    from scale_bench import section as scale_section

    lines += scale_section(OUT, PROBES, run_probe, ratio, tmux_first_screen, path, run_turns, probe_seconds)
    lines += _cache_lines(path)
    lines += _cache_model_lines()
    lines += _cache_format_lines()
    from query_bench import section as query_section

    lines += query_section(OUT, path)
    from query_stop_bench import section as query_stop_section

    lines += query_stop_section(OUT)
    from hostile_bench import section as hostile_section

    lines += hostile_section(OUT)
    from quit_bench import section as quit_section

    lines += quit_section(OUT)
    from latency_bench import section as latency_section
    from latency_models import decoder_80, heavy_weights

    lines += latency_section(OUT, [PLANTED_2X2, path, decoder_80(OUT), heavy_weights(OUT)])
    splice(ROOT / "BENCHMARKS.md", lines)  # the sections measured by hand (not made here) are kept
    print("wrote BENCHMARKS.md")


def preamble() -> list[str]:
    """BENCHMARKS.md's title and how everything in it is measured."""
    return [
        "# Benchmarks",
        "",
        "Written by `make bench` (`benchmarks/run.py`); numbers below are from the last run. Each measurement runs in",
        "a fresh interpreter, the sources byte-compiled first (as an installed package is); times are medians of",
        f"{REPEATS} runs and exclude interpreter start-up and imports. Peak memory comes from one more run: the larger",
        "of the process's maximum resident set and the summed proportional set size of it and its worker processes,",
        "sampled every 50 ms (imports included); the timed runs do without the sampler, which took CPU from the",
        "load. The baseline is measured in the same run on the same file, so the ratios carry over to other machines.",
        "",
    ]


def _schedule_lines(path: Path) -> list[str]:
    """The title, machine, input, scheduler IR, validation and scheduler views sections (issues #2 and #3)."""
    size_mb = path.stat().st_size / 1e6
    print(f"measuring on {path.name} ({size_mb:.0f} MB), {REPEATS} runs each", flush=True)
    paired = ("check", "check_without_room")  # a ratio: measured in turns, so drift between runs cancels out
    results = {name: run_probe(name, path) for name in PROBES if name not in paired}
    results.update(run_pair(*paired, path))
    terminal = tmux_first_screen(path)
    if terminal:
        print(f"  {'tui_first_screen_tmux':22s} {terminal['seconds']:8.3f} s", flush=True)
    info = machine()
    alone, paired = machine_speed()
    base, inf, chk = results["baseline_orjson"], results["info"], results["check"]
    BASELINES[path] = base["seconds"]
    one = results["info_one_process"]
    fast = results["baseline_orjson_gc_off"]
    analyses, tui = results["check_analyses_only"], results["tui_first_screen"]
    views = results["view_frames"]
    pyd, msg = results["validate_pydantic"], results["validate_msgspec"]
    tw, th, bw, bh = views["widget_sizes"]
    lines = [
        *preamble(),
        "## Machine",
        "",
        f"- CPU: {info['cpu']} ({info['cores']} cores), memory {info['memory_gib']} GiB",
        f"- Python {info['python']}; " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()),
        f"- Speed during this run: a pure-Python loop of 10^7 additions took {alone:.2f} s alone and {paired:.2f} s "
        "with two at once (a shared machine's speed varies from day to day: compare runs by this line)",
        "",
        "## Input",
        "",
        f"- `{path.name}`: {size_mb:.0f} MB, generated by `explorer.formats.scheduler_ir.samples.write_streaming` with "
        f"`{BIG_RECIPE}` (16 cores, compact JSON, not committed)",
        f"- {analyses['workloads']:,} workloads, {analyses['buffer_entries']:,} L2 buffer entries",
        "",
        "## Scheduler IR (issue #2)",
        "",
        "| measurement | time | peak memory | vs baseline time | vs baseline memory | target |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| baseline: `orjson.loads` of the file | {base['seconds']:.2f} s | {base['peak_mib']:.0f} MiB | 1× | 1× | |",
        f"| baseline: `orjson.loads` with the garbage collector off | {fast['seconds']:.2f} s | "
        f"{fast['peak_mib']:.0f} MiB | {ratio(fast['seconds'], base['seconds'])} | "
        f"{ratio(fast['peak_mib'], base['peak_mib'])} | |",
        f"| `ir-explorer info --json` | {inf['seconds']:.2f} s | {inf['peak_mib']:.0f} MiB | "
        f"{ratio(inf['seconds'], base['seconds'])} | {ratio(inf['peak_mib'], base['peak_mib'])} | ≤ 0.5× both (#2); "
        "≤ 0.1× time, ≤ 0.15× memory (#14) |",
        f"| `info` in one process (`IR_EXPLORER_WORKERS=0`, as on one CPU) | {one['seconds']:.2f} s | "
        f"{one['peak_mib']:.0f} MiB | {ratio(one['seconds'], base['seconds'])} | "
        f"{ratio(one['peak_mib'], base['peak_mib'])} | |",
        f"| `ir-explorer check --json` | {chk['seconds']:.2f} s | {chk['peak_mib']:.0f} MiB | "
        f"{ratio(chk['seconds'], base['seconds'])} | {ratio(chk['peak_mib'], base['peak_mib'])} | |",
        f"| `check --json` without the incidents' pressure context and room (as before issue #42) | "
        f"{results['check_without_room']['seconds']:.2f} s | {results['check_without_room']['peak_mib']:.0f} MiB | "
        f"{ratio(results['check_without_room']['seconds'], base['seconds'])} | "
        f"{ratio(results['check_without_room']['peak_mib'], base['peak_mib'])} | |",
        f"| `check --json` with them, against it (issue #42; median of {chk['turns']} runs of each in turns) | | | "
        f"{chk['turn_ratio']:.2f}× | "
        f"{ratio(chk['peak_mib'], results['check_without_room']['peak_mib'])} | ≤ 1.2× time |",
        f"| `info` against the collector-off baseline | | | {ratio(inf['seconds'], fast['seconds'])} | "
        f"{ratio(inf['peak_mib'], fast['peak_mib'])} | |",
        f"| all analyses (timelines, L2/WL0 overlaps, transfers, snapshots) on {analyses['buffer_entries']:,} "
        f"entries | {analyses['seconds']:.2f} s | | | | |",
        f"| L2 placement (ring wrap) + overlap sort/sweep + range checks alone | "
        f"{results['l2_overlap_only']['seconds']:.2f} s | | | | about 1 s per 10^6 entries |",
        f"| TUI first screen (headless, 160×48, after imports) | {tui['seconds']:.2f} s | | | | ≤ 0.5 s |",
        (
            f"| TUI first screen in a real terminal (tmux 160×48: start-up, imports, first paint) | "
            f"{terminal['seconds']:.2f} s | | | | ≤ 0.5 s |"
        )
        if terminal
        else "| TUI first screen in a real terminal | not measured: tmux is not installed | | | | |",
        f"| TUI first core shown, views mounted (headless) | {_seconds(tui['first_core_shown_s'])} | | | | |",
        f"| TUI whole file shown, views mounted (load, analyses and incidents off the UI thread; headless) | "
        f"{tui['document_shown_s']:.2f} s | {tui['peak_mib']:.0f} MiB | | | |",
        *(
            [
                "| TUI first core's timeline on screen (tmux: start-up, the first core found in the file, its first "
                f"workloads decoded by a worker, drawn) | {_seconds(terminal['first_core_s'])} | | | | ≤ 1 s |",
                "| TUI all of the first core on screen (tmux: decoded by the other worker meanwhile) | "
                f"{_seconds(terminal['whole_first_core_s'])} | | | | |",
                "| TUI whole file on screen, checked (tmux; the incidents' role words are read after it, "
                f"'naming tensors…') | {_seconds(terminal['whole_s'])} | | | | ≤ 2 s |",
            ]
            if terminal
            else []
        ),
        "",
        "## Validation library (why msgspec, not pydantic)",
        "",
        f"Typed validation of core 0's array ({msg['core_bytes'] / 1e6:.0f} MB, "
        f"{msg['workloads']:,} workloads) into equivalent models with unused keys "
        "skipped (`benchmarks/validation_models.py` mirrors the loader's Structs), collector off for both:",
        "",
        "| library | time | ratio |",
        "| --- | --- | --- |",
        f"| msgspec `Decoder(list[Workload])`, then each workload's L2 entries | {msg['seconds']:.2f} s | 1× |",
        f"| pydantic v2 `TypeAdapter(list[Workload]).validate_json` | "
        f"{pyd['seconds']:.2f} s | {ratio(pyd['seconds'], msg['seconds'])} |",
        "",
        "## Scheduler views (issue #3)",
        "",
        f"Terminal 200×60; the timeline widget is {tw}×{th} cells and the buffer view {bw}×{bh} (the details",
        "panel takes the rest). One redraw = computing every line of the widget (`render_frame`).",
        "",
        "| measurement | median | worst | target |",
        "| --- | --- | --- | --- |",
        f"| timeline redraw after a zoom or pan (60 steps) | {views['seconds'] * 1000:.1f} ms | "
        f"{views['timeline_max_s'] * 1000:.1f} ms | ≤ 16 ms median |",
        f"| timeline redraw, whole schedule in view | {views['timeline_whole_s'] * 1000:.1f} ms | | ≤ 16 ms |",
        f"| buffer-view frame (60 frames over all cores) | {views['buffer_frame_s'] * 1000:.1f} ms | "
        f"{views['buffer_frame_max_s'] * 1000:.1f} ms | ≤ 16 ms median |",
        "",
    ]
    return lines


def _model_sections(sections: tuple[str, ...]) -> list[str]:
    from graph_bench import section as graph_section
    from onnx_bench import inputs as onnx_inputs
    from onnx_bench import section as onnx_section

    lines = []
    if "onnx" in sections:
        lines += onnx_section(OUT, PROBES, run_probe, ratio)
    if "graph" in sections:
        lines += graph_section(OUT, PROBES, run_probe, ratio, onnx_inputs(OUT))
    if "graphreview" in sections:
        from graph_review_bench import section as review_graph_section

        lines += review_graph_section(OUT, PROBES, run_probe, ratio, onnx_inputs(OUT))
    if "torch" in sections:
        from hf_graph_bench import section as torch_section

        lines += torch_section(OUT)
    if "weights" in sections:
        from weights_bench import section as weights_section

        lines += weights_section(OUT)
    if "metrics" in sections:
        from metrics_bench import section as metrics_section

        lines += metrics_section(OUT)
    return lines


def splice(path: Path, lines: list[str]) -> None:
    """Replace the sections these lines hold (by their `## ` titles) in the file; add the ones it lacks. Lines
    before their first section (the title and how everything is measured) replace the file's own."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    new_sections: dict[str, list[str]] = {}
    preamble: list[str] = []
    current = None
    for line in lines:
        if line.startswith("## "):
            current = line
            new_sections[current] = []
        if current is not None:
            new_sections[current].append(line)
        else:
            preamble.append(line)
    out: list[str] = []
    skipping = bool(preamble)  # the file's own preamble is dropped when these lines bring one
    out += preamble
    for line in text.splitlines():
        if line.startswith("## "):
            skipping = line in new_sections
            if skipping:
                out += new_sections.pop(line)
        if not skipping:
            out.append(line)
    for rest in new_sections.values():
        out += rest
    path.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    chosen = tuple(sys.argv[1:]) or SECTIONS
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    main(chosen)
