"""`ir-explorer export`: the Chrome trace follows the Trace Event rules; the HTML report's figures hold the data."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from explorer.api import open_document
from explorer.exports.html_report import (
    figures,
    gantt,
    memory_map_figure,
    memory_plan_figure,
    occupancy_animation,
    occupancy_curve,
    op_histogram,
    parameter_bytes,
)
from explorer.exports.trace_event import trace_events
from tests.conftest import ROOT, SAMPLE_DATA
from tests.schedules import two_core

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def check_trace_rules(trace: dict) -> Counter:
    """The Trace Event format's rules that Perfetto and chrome://tracing rely on."""
    assert isinstance(trace["traceEvents"], list)
    phases = Counter()
    flows: dict[int, list[str]] = {}
    for event in trace["traceEvents"]:
        phase = event["ph"]
        phases[phase] += 1
        assert isinstance(event["pid"], int) and isinstance(event["name"], str)
        if phase == "M":
            assert event["name"] in ("process_name", "thread_name", "thread_sort_index") and "args" in event
            continue
        assert isinstance(event["ts"], float) and event["ts"] >= 0
        if phase == "X":
            assert isinstance(event["tid"], int) and event["dur"] >= 0
        elif phase in ("s", "f"):
            flows.setdefault(event["id"], []).append(phase)
            assert event["cat"] == "transfer"
        elif phase == "C":
            assert all(isinstance(v, int | float) for v in event["args"].values())
        else:
            raise AssertionError(f"unexpected phase {phase}")
    assert all(sorted(pair) == ["f", "s"] for pair in flows.values())  # every flow starts once and ends once
    return phases


def test_trace_of_the_hand_worked_schedule(write_json):
    doc = open_document(write_json(two_core()))
    trace = trace_events(doc)
    phases = check_trace_rules(trace)
    s = doc.schedule
    assert phases["X"] == s.n_workloads and phases["C"] == s.n_workloads
    threads = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert threads == {0: "core 0 (x0, y0)", 1: "core 1 (x1, y0)"}
    # one slice per workload, at the timeline's start, with its ids as args
    timeline = doc.schedule_analysis.timeline
    slices = {(e["tid"], e["args"]["workload_id"]): e for e in trace["traceEvents"] if e["ph"] == "X"}
    for row in range(s.n_workloads):
        event = slices[(int(s.wl_core[row]), int(s.wl_id[row]))]
        assert (event["ts"], event["ts"] + event["dur"]) == (timeline.start[row], timeline.end[row])
    # flows only between cores, and as many as the cross-core dependencies
    deps = doc.schedule_analysis.deps
    cross = sum(
        1
        for p, c, dram in zip(deps.producer, deps.consumer, deps.via_dram, strict=True)
        if not dram and s.wl_core[p] != s.wl_core[c]
    )
    assert phases["s"] == cross > 0


def test_export_command_writes_both_files(tmp_path):
    html_path, trace_path = tmp_path / "report.html", tmp_path / "trace.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "export",
            str(PLANTED),
            "--html",
            str(html_path),
            "--trace-event",
            str(trace_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    check_trace_rules(json.loads(trace_path.read_text()))
    page = html_path.read_text()
    # Gantt, bytes over time, and per core (behind a menu) its occupancy and its memory map; the graph as SVG
    assert "plotly" in page and "l2-overlap" in page and page.count('class="plotly-graph-div"') == 2 + 2 * 4
    assert page.count("<h2>Graph</h2>") == 1 and "<title>Conv_0 · pe" in page
    assert page.count("<select onchange") == 2
    missing = subprocess.run(
        [sys.executable, "-m", "explorer", "export", str(PLANTED)], capture_output=True, text=True, cwd=ROOT
    )
    assert missing.returncode == 2 and "--html" in missing.stderr


def test_schedule_figures_hold_the_data():
    doc = open_document(PLANTED)
    s = doc.schedule
    analysis = doc.schedule_analysis
    chart = gantt(doc)
    bars = [trace for trace in chart.data if trace.name in ("pe", "vp", "dt")]
    assert sum(len(trace.x) for trace in bars) == s.n_workloads
    critical = next(trace for trace in chart.data if trace.name == "critical path")
    assert len(critical.x) == len(analysis.timeline.critical_path)
    animation = occupancy_animation(doc)
    core = int(s.wl_core[analysis.peak_l2_row])
    assert len(animation.frames) == len(s.core_rows(core))
    first = s.core_rows(core).start
    assert sum(len(bar.x) for bar in animation.frames[0].data) == int(s.buf_ptr[first + 1] - s.buf_ptr[first])
    assert list(animation.layout.sliders[0].steps[0].args[0]) == [animation.frames[0].name]
    problems = next(trace for trace in chart.data if trace.name == "problems")  # a ✗ on each block with one
    marked = {(trace_y, int(wid)) for trace_y, (wid, _) in zip(problems.y, problems.customdata, strict=True)}
    assert marked == {(s.core_short(p.refs["core"]), p.refs["workload_id"]) for p in doc.problems}
    memory = memory_map_figure(doc, 1)  # the planted L2 overlap is on core 1, before workload 3
    overlap = next(trace for trace in memory.data if trace.name == "overlap")
    assert list(overlap.customdata) == [3] and list(overlap.base) == [0x1C40] and list(overlap.y) == [0x80]
    assert {trace.name for trace in memory.data} >= {"ifmap", "weight", "overlap"}
    curve = occupancy_curve(doc)
    peak = next(trace for trace in curve.data if trace.name == "peak")
    assert list(peak.y) == [analysis.peak_l2_bytes]
    assert any(shape.y0 == s.buffersize for shape in curve.layout.shapes)  # the capacity line


def test_model_figures():
    onnx_doc = open_document(SAMPLE_DATA / "subgraphs_functions.onnx")
    histogram = op_histogram(onnx_doc)
    assert dict(zip(histogram.data[0].x, histogram.data[0].y, strict=True)) == onnx_doc.summary["op_types"]
    params = parameter_bytes(onnx_doc)
    assert dict(zip(params.data[0].x, params.data[0].y, strict=True)) == {"float32": 8, "int64": 8}
    tvm_doc = open_document(SAMPLE_DATA / "two_modules_mlf.tar")
    plan = memory_plan_figure(tvm_doc)
    assert list(plan.data[0].y) == tvm_doc.view.modules[0].plan.live_bytes.tolist()
    assert len(figures(tvm_doc)) == 2  # parameters and plan (the graph is an SVG after them); no op histogram


def test_the_reports_graph_is_the_graph_views_layout_drawn_as_svg():
    import re

    from explorer.exports.graph_svg import CELL_H, CELL_W, MARGIN
    from explorer.exports.html_report import graph_section
    from explorer.graph.expansion import initial_expansion
    from explorer.graph.layout import layout_graph
    from explorer.graph.visible import visible_graph

    document = open_document(SAMPLE_DATA / "subgraphs_functions.onnx")
    section = graph_section(document)
    model = document.view.graph_model()
    layout = layout_graph(model, visible_graph(model, initial_expansion(model)))
    assert section.count("<title>") == layout.visible.n_items  # one box (with its hover text) per item
    boxes = re.findall(r'<g><title>[^<]*</title><rect x="([\d.]+)" y="([\d.]+)"', section)
    assert [(float(x), float(y)) for x, y in boxes] == [
        (x * CELL_W + 2, y * CELL_H + 2) for x, y in zip(layout.x.tolist(), layout.y.tolist(), strict=True)
    ]
    assert f'width="{max(layout.width * CELL_W + 2 * MARGIN, 480)}"' in section  # the layout's own aspect
    assert "colour: op type" in section and "<svg" in section


@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)
def test_report_renders_in_headless_chromium(tmp_path):
    """The page is opened by a real browser: every plot div must have been drawn by plotly.js (an SVG inside)."""
    html_path = tmp_path / "report.html"
    subprocess.run(
        [sys.executable, "-m", "explorer", "export", str(PLANTED), "--html", str(html_path)], check=True, cwd=ROOT
    )
    # the lane menu works: choosing core 0 shows its figures and hides the default lane's
    page = html_path.read_text()
    index = page.index("showCore(", page.index("<select"))
    figure_index = int(page[index + len("showCore(") : page.index(",", index)])
    html_path.write_text(page.replace("</body>", f"<script>showCore({figure_index}, "
                                      f"'figure-{figure_index}-core-0')</script></body>"))  # fmt: skip
    result = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            html_path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom = result.stdout
    # Gantt, bytes over time, and per core (4) its occupancy and its memory map; then the graph's own SVG
    assert dom.count('class="plotly-graph-div') == 2 + 2 * 4
    assert dom.count("main-svg") >= 2 + 2 * 4  # plotly drew each figure, the hidden ones too
    assert "<h2>Graph</h2>" in dom and "colour: time" in dom  # a schedule's most telling colours
    tags = [box.split(">", 1)[0] for box in dom.split(f'class="per-core-{figure_index}"')[1:]]
    shown = [tag for tag in tags if not re.search(r"display:\s*none", tag)]
    assert len(tags) == 4
    assert len(shown) == 1 and f'id="figure-{figure_index}-core-0-box"' in shown[0]


@pytest.mark.parametrize(
    ("kind", "pattern", "plots"),
    [
        ("scheduler_ir", "*_stschedule.json", 3),
        ("onnx", "*.onnx", 2),
        ("coreml", "*.ml*", 1),
        ("tvm_mlf", "*.tar", 1),
        ("ark", "model_*.json", 1),
    ],
)
def test_reports_of_the_real_samples(tmp_path, kind, pattern, plots):
    from explorer.exports.html_report import report_html
    from tests.conftest import samples_dir

    for path in sorted(samples_dir(kind).glob(pattern)):
        document = open_document(path)
        page = report_html(document)
        assert page.count('class="plotly-graph-div"') >= plots, path.name
        if document.schedule is not None and kind == "scheduler_ir":
            check_trace_rules(trace_events(document))


def test_the_report_announces_only_the_figures_it_draws(tmp_path):
    """Issue #45 item 5: a schedule with no trace was announced `measured gantt (2/7)` while exporting."""
    from explorer.exports.html_report import figures

    said: list[str] = []
    document = open_document(SAMPLE_DATA / "clean_2x2_stschedule.json")
    drawn = figures(document, lambda done, total, name: said.append(f"{name} ({done + 1}/{total})"))
    assert not any(name.startswith("measured") for name in said), said
    assert len(said) == len(drawn)
