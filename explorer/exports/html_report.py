"""A self-contained HTML report (plotly.js embedded, so it works offline) of any loaded document.

Every report has the summary and the problems; schedules add the overlap incidents, a per-core Gantt with the
critical path and the problems, an animated L2 occupancy with a frame slider and the L2 memory map (both per
core behind a menu, the core to review first), and L2 bytes over time with the peak and the capacity; models add
the op histogram and parameter bytes by dtype; TVM bundles add their storage plan over node order; every
document with a graph adds it as the graph view opens it (pan, zoom, hover). The figure
builders return plotly Figures, so tests check their data.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explorer.arrays import distinct
from explorer.document import Capability, Document
from explorer.writing import write_atomically

MAX_GANTT_WORKLOADS = 20_000
MAX_FRAMES = 120
KIND_COLOURS = ("#4f8fe8", "#4cbf73", "#e8a33d", "#b46be8")  # block kinds by code, as the timeline draws them
ENTRY_COLOURS = ("#4cbf73", "#b46be8", "#e8a33d")  # address-space entry kinds by code, as the buffer view


def gantt(document: Document) -> go.Figure:
    s = document.scheduled()
    words = document.vocabulary
    timeline = document.analysed().timeline
    start, end = timeline.start, timeline.end
    rows = np.flatnonzero(np.isfinite(start))
    if rows.size > MAX_GANTT_WORKLOADS:  # keep the report openable: the earliest workloads, said in the title
        rows = rows[np.argsort(start[rows], kind="stable")[:MAX_GANTT_WORKLOADS]]
    figure = go.Figure()
    for code in distinct(s.wl_type[rows]).tolist():
        name = words.block_kind(code)
        chosen = rows[s.wl_type[rows] == code]
        if chosen.size:
            figure.add_bar(
                name=name,
                orientation="h",
                base=start[chosen],
                x=end[chosen] - start[chosen],
                y=[s.core_short(int(c)) for c in s.wl_core[chosen]],
                marker_color=KIND_COLOURS[code % len(KIND_COLOURS)],
                customdata=[[int(s.wl_id[r]), html.escape(s.layers[s.wl_layer[r]], quote=False)] for r in chosen],
                hovertemplate=words.block + " %{customdata[0]} %{customdata[1]}<br>%{base} – %{x}<extra></extra>",
            )
    critical = [r for r in timeline.critical_path if np.isfinite(start[r])]
    if critical:
        figure.add_bar(
            name="critical path",
            orientation="h",
            base=start[critical],
            x=end[critical] - start[critical],
            y=[s.core_short(int(s.wl_core[r])) for r in critical],
            marker={"color": "rgba(0,0,0,0)", "line": {"color": "#ff3030", "width": 2}},
        )
    from explorer.problem_groups import rows_with_problems

    found = rows_with_problems(s, document.problems, ("error", "warning"))
    marked = {r: [html.escape(f"{p.code}: {p.message}") for p in found[r]] for r in found if np.isfinite(start[r])}
    if marked:  # a red ✗ at the start of each block with a problem, its problems on hover
        chosen = sorted(marked)
        figure.add_scatter(
            name="problems",
            mode="markers",
            x=start[chosen],
            y=[s.core_short(int(s.wl_core[r])) for r in chosen],
            marker={"symbol": "x", "color": "#ff3030", "size": 11, "line": {"width": 1, "color": "#ffffff"}},
            customdata=[[int(s.wl_id[r]), "<br>".join(marked[r][:6])] for r in chosen],
            hovertemplate=words.block + " %{customdata[0]}<br>%{customdata[1]}<extra>problems</extra>",
        )
    shown = "" if rows.size == np.isfinite(start).sum() else f" (first {rows.size:,} {words.block}s)"
    figure.update_layout(
        title=f"Per-{words.lane} timeline{shown}, makespan {timeline.makespan:,.0f}",
        barmode="overlay",
        xaxis_title=words.time_label,
        yaxis_title=words.lane,
    )
    return figure


def errors_per_core(document: Document) -> dict[int, int]:
    errors: dict[int, int] = {}
    for problem in document.problems:
        core = problem.refs.get("core")
        if problem.severity == "error" and isinstance(core, int):
            errors[core] = errors.get(core, 0) + 1
    return errors


def core_to_review(document: Document) -> int:
    """The lane with the most errors; without errors, the lane with the memory peak."""
    s = document.scheduled()
    errors = errors_per_core(document)
    if errors:
        return max(errors, key=lambda c: (errors[c], -c))
    analysis = document.analysed()
    return int(s.wl_core[analysis.peak_l2_row]) if analysis.peak_l2_row >= 0 else int(s.core_ids[0])


def incidents_table(document: Document) -> str:
    """The overlap incidents first: what a reviewer opens a schedule's report for."""
    if document.schedule is None:
        return ""
    from explorer.schedule.pressure import explained_incidents

    words = document.vocabulary
    found = explained_incidents(document)
    if not found:
        return "<h2>Overlap incidents</h2><p>none</p>"
    from explorer.schedule.touched import touched_words

    rows = [[i.code, i.core, f"{i.introduced_by} ({i.roles.get(i.introduced_by, '')})",
             ", ".join(map(str, i.tensor_ids[1:])) or "itself", f"{i.first_workload}–{i.last_workload}",
             i.snapshots, f"{i.bytes:,}", i.room_words()] for i in found]  # fmt: skip
    columns = ["code", words.lane, "misplaced", "collides with", f"{words.block}s", "snapshots", "bytes",
               "was there room?"]  # fmt: skip
    if any(i.touched is not None for i in found):  # an assembly or trace joined: what ran, in a column
        columns.append("written by what ran?")
        for row, incident in zip(rows, found, strict=True):
            row.append(touched_words(incident.touched))
    return f"<h2>Overlap incidents ({len(found)})</h2>" + _table(columns, rows)


def occupancy_animation(document: Document, core: int | None = None) -> go.Figure:
    """The memory (L2) of one lane (by default the one with the most errors, else the one with the peak), one
    frame per block (sampled to MAX_FRAMES), with a slider: a review starts where the problems are."""
    s = document.scheduled()
    words = document.vocabulary
    core = core_to_review(document) if core is None else core
    rows = list(s.core_rows(core))
    if len(rows) > MAX_FRAMES:
        rows = [rows[int(i)] for i in np.linspace(0, len(rows) - 1, MAX_FRAMES)]

    def frame_data(row: int) -> list[go.Bar]:
        lo, hi = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
        bars = []
        for code, name in enumerate(words.entry_kinds):
            entries = [e for e in range(lo, hi) if s.buf_type[e] == code]
            bars.append(
                go.Bar(
                    name=name,
                    orientation="h",
                    base=[int(s.buf_addr[e]) for e in entries],
                    x=[int(s.buf_size[e]) for e in entries],
                    y=[name] * len(entries),
                    marker_color=ENTRY_COLOURS[code % len(ENTRY_COLOURS)],
                    customdata=[int(s.buf_tensor[e]) for e in entries],
                    hovertemplate="tensor %{customdata}<br>%{base:#x} + %{x} B<extra></extra>",
                )
            )
        return bars

    frames = [go.Frame(data=frame_data(row), name=str(int(s.wl_id[row]))) for row in rows]
    figure = go.Figure(data=frames[0].data if frames else [], frames=frames)
    steps = [
        {
            "label": frame.name,
            "method": "animate",
            "args": [[frame.name], {"mode": "immediate", "frame": {"duration": 0}}],
        }
        for frame in frames
    ]
    figure.update_layout(
        title=f"{words.memory} occupancy of {s.core_label(core)}, before each {words.block} ({len(frames)} frames)",
        xaxis={"title": "address (bytes)", "range": [0, max(s.buffersize, 1)]},
        barmode="overlay",
        sliders=[{"steps": steps, "currentvalue": {"prefix": f"{words.block} "}}],
        updatemenus=[{"type": "buttons", "buttons": [{"label": "Play", "method": "animate", "args": [None]}]}],
        meta={"per_core": "occupancy_animation", "core": core},
    )
    return figure


def memory_map_figure(document: Document, core: int | None = None) -> go.Figure:
    """The memory map of one lane (by default the one to review): x the step, y the address, each tensor a
    rectangle over the steps it stays in place, overlapping bytes red, ring regions and capacity dashed, the
    peak marked; hover names the tensor, its bytes and its blocks (explorer.schedule.memory_map's bands)."""
    from explorer.schedule.memory_map import memory_map

    s = document.scheduled()
    words = document.vocabulary
    core = core_to_review(document) if core is None else core
    m = memory_map(s, core, "l2", document.analysed().placement)
    ids = s.wl_id[m.rows] if m.steps else np.zeros(0, dtype=np.int64)
    figure = go.Figure()
    for code, name in enumerate(words.entry_kinds):
        chosen = np.flatnonzero(m.kind == code)
        if not chosen.size:
            continue
        first, last = m.first[chosen], m.last[chosen]
        figure.add_bar(
            name=name,
            x=(first + last + 1) / 2,
            width=last - first + 1,
            base=m.lo[chosen],
            y=m.hi[chosen] - m.lo[chosen],
            marker={"color": ENTRY_COLOURS[code % len(ENTRY_COLOURS)], "line": {"width": 0.5, "color": "#ffffff"}},
            customdata=np.stack([m.tensor[chosen], ids[first], ids[last]], axis=1),
            hovertemplate=(
                f"tensor %{{customdata[0]}} ({name})<br>%{{base:#x}} + %{{y}} B<br>{words.block}s "
                "#%{customdata[1]}–#%{customdata[2]}<extra></extra>"
            ),  # fmt: skip
        )
    if m.overlap_step.size:
        figure.add_bar(
            name="overlap",
            x=m.overlap_step + 0.5,
            width=np.ones(m.overlap_step.size),
            base=m.overlap_lo,
            y=m.overlap_hi - m.overlap_lo,
            marker_color="#ff3030",
            customdata=ids[m.overlap_step],
            hovertemplate=f"overlap before {words.block} #%{{customdata}}<br>%{{base:#x}} + %{{y}} B<extra></extra>",
        )
    for ring_first, ring_last, lo, _ in m.ring:
        figure.add_shape(type="line", x0=ring_first, x1=ring_last + 1, y0=lo, y1=lo,
                         line={"dash": "dot", "color": "#888"})
    figure.add_hline(y=m.capacity, line_dash="dash", line_color="#888", annotation_text="capacity")
    if m.peak_step >= 0:
        figure.add_vline(x=m.peak_step + 0.5, line_color="#ff9f43",
                         annotation_text=f"peak {int(m.used[m.peak_step]):,} B")  # fmt: skip
    figure.update_layout(
        title=f"{words.memory} memory map of {s.core_label(core)}: each tensor a band over the {words.block}s it "
        "stays in place",
        barmode="overlay",
        bargap=0,
        xaxis_title=f"step ({words.block}s of the {words.lane} in order)",
        yaxis={"title": "address (bytes)", "autorange": "reversed", "range": [m.top, 0]},
        meta={"per_core": "memory_map_figure", "core": core},
    )
    return figure


def per_core_block(document: Document, figure: go.Figure, index: int) -> str:
    """A per-lane figure for every lane behind a menu, the one to review shown first: the figures are drawn
    for each lane, and the menu shows one at a time (Plotly resizes it when shown)."""
    s = document.scheduled()
    words = document.vocabulary
    builder = globals()[figure.layout.meta["per_core"]]
    chosen = int(figure.layout.meta["core"])
    errors = errors_per_core(document)
    options, divs = [], []
    for core in s.core_ids.tolist():
        drawn = figure if core == chosen else plain_text(builder(document, core))
        div_id = f"figure-{index}-core-{core}"
        said = f" · {errors[core]} error{'s' if errors[core] != 1 else ''}" if core in errors else ""
        selected = " selected" if core == chosen else ""
        options.append(f"<option value='{div_id}'{selected}>{html.escape(s.core_label(core))}{said}</option>")
        hidden = "" if core == chosen else " style='display:none'"
        divs.append(f"<div class='per-core-{index}' id='{div_id}-box'{hidden}>"
                    + drawn.to_html(full_html=False, include_plotlyjs=False, div_id=div_id) + "</div>")  # fmt: skip
    menu = (f"<p>{html.escape(words.lane)}: <select onchange=\"showCore({index}, this.value)\">"
            + "".join(options) + "</select></p>")  # fmt: skip
    return menu + "".join(divs)


SHOW_CORE_JS = """<script>
function showCore(index, divId) {
  document.querySelectorAll('.per-core-' + index).forEach(function (box) { box.style.display = 'none'; });
  var box = document.getElementById(divId + '-box');
  box.style.display = '';
  Plotly.Plots.resize(document.getElementById(divId));
}
</script>"""


def occupancy_curve(document: Document) -> go.Figure:
    s = document.scheduled()
    words = document.vocabulary
    analysis = document.analysed()
    start = analysis.timeline.start
    figure = go.Figure()
    for core in s.core_ids.tolist():
        rows = np.array(list(s.core_rows(core)), dtype=np.int64)
        rows = rows[np.isfinite(start[rows])] if rows.size else rows
        figure.add_scatter(
            name=s.core_short(core), x=start[rows], y=analysis.l2_bytes[rows], mode="lines", line_shape="hv"
        )
    figure.add_hline(y=s.buffersize, line_dash="dash", line_color="#888", annotation_text="capacity")
    if analysis.peak_l2_row >= 0:
        row = analysis.peak_l2_row
        figure.add_scatter(
            name="peak",
            x=[start[row]],
            y=[analysis.peak_l2_bytes],
            mode="markers+text",
            marker={"color": "#ff3030", "size": 10},
            text=[f"peak {analysis.peak_l2_bytes:,} B"],
            textposition="top center",
        )
    figure.update_layout(
        title=f"{words.memory} bytes in use over time", xaxis_title=words.time_label, yaxis_title="bytes"
    )
    return figure


def op_histogram(document: Document) -> go.Figure | None:
    counts = document.summary.get("op_types") or document.summary.get("layer_types")
    if not counts:
        return None
    items = Counter(counts).most_common()
    figure = go.Figure(go.Bar(x=[k for k, _ in items], y=[v for _, v in items], marker_color="#4f8fe8"))
    figure.update_layout(title="Operations by type", xaxis_title="op type", yaxis_title="count")
    return figure


def parameter_bytes(document: Document) -> go.Figure | None:
    by_dtype = document.view.parameter_bytes_by_dtype()
    if not by_dtype:
        return None
    figure = go.Figure(go.Bar(x=list(by_dtype), y=list(by_dtype.values()), marker_color="#b46be8"))
    figure.update_layout(title="Parameter bytes by dtype", xaxis_title="dtype", yaxis_title="bytes")
    return figure


def top_groups(document: Document) -> go.Figure | None:
    """The groups a review compares (explorer.graph.metrics.breakdown) by multiply-accumulates, each bar with its
    share of the model; None where the format counts nothing or nothing is counted."""
    if not document.view.counts_ops():
        return None
    from explorer.graph.metrics import breakdown, metrics_of

    document.run_deep_checks()  # the shapes the counts are read from
    model = document.view.drawn_graph()
    metrics = metrics_of(model)
    listed = [(g, found) for g, found in breakdown(model, metrics) if found.count.value] if metrics else []
    if metrics is None or not listed:
        return None
    labels = [model.group_label[g] for g, _ in listed]
    values = [found.count.value for _, found in listed]
    shares = [f"{metrics.share('macs', found.count) or 0:.1%} of the model" for _, found in listed]
    figure = go.Figure(go.Bar(x=labels, y=values, text=shares, marker_color="#e8a33d"))
    total = metrics.model["macs"]
    figure.update_layout(title=f"Multiply-accumulates by group (the model: {total.text()})", xaxis_title="group",
                         yaxis_title="multiply-accumulates")  # fmt: skip
    return figure


def memory_plan_figure(document: Document) -> go.Figure | None:
    """Bytes live per step of each memory plan the document has (TVM: storage ids over node order)."""
    curves = document.view.memory_curves()
    if not curves:
        return None
    figure = go.Figure()
    for curve in curves:
        figure.add_scatter(
            name=curve.name,
            x=list(range(len(curve.live_bytes))),
            y=list(curve.live_bytes),
            mode="lines",
            line_shape="hv",
        )
        figure.add_hline(
            y=curve.peak_bytes, line_dash="dot", annotation_text=f"{curve.name} peak {curve.peak_bytes:,} B"
        )
    step = curves[0].step_label
    figure.update_layout(title=f"Memory plan over {step} order", xaxis_title=step, yaxis_title="bytes live")
    return figure


def graph_section(document: Document) -> str:
    """The graph as the graph view lays it out (same layout code), drawn as the `graph --svg` drawing inline:
    the aspect kept, stubs, frames and legend shown, each box's details on hover, coloured by the file's most
    telling mode (explorer.exports.graph_svg.best_mode); "" without a graph."""
    if not document.offers(Capability.GRAPH):
        return ""
    from explorer.exports.graph_svg import graph_svg

    model = document.view.drawn_graph()
    if model.n_nodes == 0:
        return ""
    drawing = graph_svg(model, "auto", title=document.meta.source.name)
    return ("<h2>Graph</h2><p>Groups as the graph view opens them; hover a box for its details.</p>"
            "<div style='overflow:auto;max-height:90vh;border:1px solid #ccc'>" + drawing + "</div>")  # fmt: skip


HOVER = "%{customdata[0]} %{customdata[1]}<br>%{base} – %{x}<extra></extra>"


def measured_gantt(document: Document) -> go.Figure | None:
    """The estimate and the measurement one above the other: per core an estimated lane and a measured lane
    (a workload's first instruction start to its last instruction end in the joined trace)."""
    from explorer.companions import companions_of

    measured = companions_of(document).measured
    if measured is None:
        return None
    s = document.scheduled()
    timeline = document.analysed().timeline
    words = document.vocabulary
    figure = go.Figure()
    for label, start, end, colour in (("estimated", timeline.start, timeline.end, "#4f8fe8"),
                                      ("measured", measured.start, measured.end, "#e8a33d")):  # fmt: skip
        rows = np.flatnonzero(np.isfinite(start) & np.isfinite(end))[:MAX_GANTT_WORKLOADS]
        figure.add_bar(
            name=label, orientation="h", base=start[rows], x=end[rows] - start[rows],
            y=[f"{s.core_short(int(c))} {label}" for c in s.wl_core[rows]], marker_color=colour,
            customdata=[[int(s.wl_id[r]), s.layers[s.wl_layer[r]]] for r in rows],
            hovertemplate=f"{label} {words.block} " + HOVER,
        )  # fmt: skip
    figure.update_layout(
        title=f"Estimated and measured ({measured.source.name}): makespan {timeline.makespan:,.0f} estimated, "
        f"{measured.makespan:,.0f} measured",
        barmode="overlay", xaxis_title=words.time_label, yaxis={"autorange": "reversed"},
    )  # fmt: skip
    return figure


def measured_scatter(document: Document) -> go.Figure | None:
    """Per layer, estimated against measured cycles, with the line where they agree."""
    from explorer.companions import companions_of, measured_summary

    per_layer = measured_summary(document).get("per_layer") if companions_of(document).measured else None
    if not per_layer:
        return None
    names = list(per_layer)
    estimated = [per_layer[n]["estimated"] for n in names]
    measured = [per_layer[n]["measured"] for n in names]
    top = max(max(estimated), max(measured), 1.0)
    figure = go.Figure()
    figure.add_scatter(x=[0, top], y=[0, top], mode="lines", name="measured = estimated",
                       line={"color": "#999999", "dash": "dash"})  # fmt: skip
    figure.add_scatter(
        x=estimated, y=measured, mode="markers", name="layers", text=names, marker={"color": "#e8603d"},
        hovertemplate="%{text}<br>estimated %{x:,.0f}<br>measured %{y:,.0f}<extra></extra>",
    )  # fmt: skip
    figure.update_layout(title="Per layer: estimated against measured cycles", xaxis_title="estimated (cycles)",
                         yaxis_title="measured (cycles)")  # fmt: skip
    return figure


# Trace and figure fields plotly reads as its own markup (<a href>, <b>, <span style>, <br>, entities): a name
# from the file there became a live link or 300-px red text. Our hover templates are left as they are; the
# customdata they show is escaped where it is made.
_MARKUP_FIELDS = ("x", "y", "name", "text", "hovertext", "labels", "ids", "legendgroup")


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return html.escape(value, quote=False)
    if isinstance(value, list | tuple) and any(isinstance(v, str) for v in value):
        return [html.escape(v, quote=False) if isinstance(v, str) else v for v in value]
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [_plain(v) for v in value.tolist()]
    return value


def plain_text(figure: go.Figure) -> go.Figure:
    """Every name, label and category of a figure shown as plain text, never as plotly markup."""
    traces = list(figure.data) + [trace for frame in (figure.frames or ()) for trace in frame.data]
    for trace in traces:
        for name in _MARKUP_FIELDS:
            if name in trace and trace[name] is not None:
                trace[name] = _plain(trace[name])
    title = figure.layout.title.text
    if title:
        figure.layout.title.text = html.escape(title, quote=False)
    for annotation in figure.layout.annotations or ():
        if annotation.text:
            annotation.text = html.escape(annotation.text, quote=False)
    return figure


def figures(
    document: Document, progress: Callable[[int, int, str], None] | None = None, steps_after: int = 0
) -> list[go.Figure]:
    """The report's figures, in order; `progress(done, total, name)` hears each before it is built (a 500 MB
    schedule's take half a minute: `export` says where it is)."""
    builders = _builders(document)
    found: list[go.Figure | None] = []
    for done, build in enumerate(builders):
        if progress is not None:
            progress(done, len(builders) + steps_after, build.__name__.replace("_", " "))
        found.append(build(document))
    return [plain_text(figure) for figure in found if figure is not None]


def _builders(document: Document) -> list[Callable[[Document], go.Figure | None]]:
    if document.is_schedule and document.offers(Capability.TIMELINE):
        from explorer.companions import companions_of

        measured = [measured_gantt, measured_scatter] if companions_of(document).measured is not None else []
        # the figures a measurement draws only when a trace was joined: the progress never announces one it skips
        return [gantt, *measured, occupancy_animation, memory_map_figure, occupancy_curve]
    builders: list[Callable[[Document], go.Figure | None]] = [op_histogram, parameter_bytes, top_groups,
                                                              memory_plan_figure]
    if document.offers(Capability.TIMELINE) and not document.offers(Capability.BUFFERS):
        builders.append(gantt)  # lanes without an address space: an instruction trace
    return builders


def _summary_value(key: str, value: Any) -> str:
    """A summary value as the `info` command prints it (a list of records: one phrase per record)."""
    from explorer.formatting import human

    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return " | ".join(", ".join(f"{k.replace('_', ' ')} {human(v, k)}" for k, v in item.items()) for item in value)
    return human(value, key)


def peak_table(document: Document) -> str:
    """Each core's L2 at its fullest (`info`'s numbers), and what is live at the worst core's peak."""
    from explorer.schedule.pressure import packing_text, pressure_of

    pressure = pressure_of(document) if document.schedule is not None else None
    if pressure is None or not pressure.cores:
        return ""
    words = document.vocabulary
    rows = [[c.core, f"{c.peak_bytes:,}", c.peak_workload, f"{c.high_water:#x}", packing_text(c.packing),
             f"{c.max_fragmentation:.2f} ({words.block} {c.max_fragmentation_workload})"]
            for c in pressure.cores]  # fmt: skip
    worst = max(pressure.cores, key=lambda c: (c.peak_bytes, -c.core))
    live = [[t["tensor_id"], f"{t['bytes']:,}", f"{t['address']:#x}", t["role"]] for t in worst.live_at_peak]
    return (f"<h2>{html.escape(words.memory)} at its fullest</h2>"
            + _table([words.lane, "peak bytes", f"peak {words.block}", "high water", "packing", "worst fragmentation"],
                     rows)
            + f"<p>Live at the peak of {html.escape(words.lane)} {worst.core} (before {html.escape(words.block)} "
              f"{worst.peak_workload}), largest first:</p>"
            + _table(["tensor", "bytes", "address", "kind"], live))  # fmt: skip


def _table(columns: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def report_html(document: Document, progress: Callable[[int, int, str], None] | None = None) -> str:
    summary_rows = [[k.replace("_", " "), _summary_value(k, v)] for k, v in document.summary.items()]
    rank = {"error": 0, "warning": 1}
    first = sorted(document.problems, key=lambda p: rank.get(p.severity, 2))[:2000]  # errors first
    problem_rows = [[p.severity, p.code, p.message, p.location] for p in first]
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>ir-explorer report: {html.escape(document.meta.source.name)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;} table{border-collapse:collapse;margin:1em 0;}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;} th{background:#f0f0f0;}</style></head><body>",
        f"<h1>{html.escape(document.meta.source.name)}</h1>",
        f"<p>format: {html.escape(document.meta.format)}</p>",
        incidents_table(document),
        "<h2>Summary</h2>",
        _table(["property", "value"], summary_rows),
        f"<h2>Problems ({len(document.problems)})</h2>",
        _table(["severity", "code", "message", "location"], problem_rows) if problem_rows else "<p>none</p>",
        peak_table(document),
    ]
    built = figures(document, progress, steps_after=int(document.offers(Capability.GRAPH)))  # the graph follows
    for index, figure in enumerate(built):
        if index == 0:  # plotly.js once, inline, so the report works offline
            from plotly.offline import get_plotlyjs

            parts.append(f"<script>{get_plotlyjs()}</script>")
            parts.append(SHOW_CORE_JS)
        if isinstance(figure.layout.meta, dict) and "per_core" in figure.layout.meta:
            parts.append(per_core_block(document, figure, index))
        else:
            parts.append(figure.to_html(full_html=False, include_plotlyjs=False, div_id=f"figure-{index}"))
    if progress is not None and document.offers(Capability.GRAPH):
        steps = len(_builders(document)) + 1
        progress(steps - 1, steps, "graph")
    parts.append(graph_section(document))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(document: Document, out: Path, progress: Callable[[int, int, str], None] | None = None,
                 force: bool = False) -> None:  # fmt: skip
    write_atomically(out, report_html(document, progress).encode("utf-8"), force)
