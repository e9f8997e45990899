"""The Gemini pipeline's other files: frontend IR, assembly and ZeBu trace on their own (facts derived here
independently from the published files), their bad inputs, and joined to the schedule they belong to."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from explorer import cli
from explorer.api import open_document
from explorer.companions import companions_of
from explorer.errors import LoadError
from explorer.exports.trace_event import trace_events
from tests.conftest import SAMPLE_DATA, SAMPLES

PIPELINE = SAMPLES / "gemini_pipeline"
SCHEDULES = SAMPLES / "scheduler_ir"


def published(pattern: str) -> list[Path]:
    if not PIPELINE.is_dir():
        pytest.skip("real samples not found (a user's clone has no ../shared)")
    found = sorted(PIPELINE.glob(pattern))
    assert found, pattern
    return found


def info(capsys, path: Path, *extra: str) -> dict:
    assert cli.main(["info", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def lines_of(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("pattern", ["*_asm.txt", "*_sim.txt"])
def test_every_published_assembly_and_trace_opens_with_the_right_counts(capsys, pattern):
    for path in published(pattern):
        payload = info(capsys, path)
        lines = lines_of(path)
        summary = payload["summary"]
        assert payload["format"] == ("gemini-trace" if pattern == "*_sim.txt" else "gemini-asm")
        assert summary["instructions"] == len(lines)
        assert summary["units"] == dict(Counter(line[1:].split(",", 1)[0].split("_", 1)[0] for line in lines))
        workloads = {int(w) for w in re.findall(r"'wkl': (-?\d+)", path.read_text()) if int(w) >= 0}
        assert summary["workloads"] == len(workloads)
        if pattern == "*_sim.txt":
            times = [(int(a), int(b)) for a, b in re.findall(r"'time': \[(\d+), (\d+)\]", path.read_text())]
            assert summary["span"] == max(b for _, b in times) - min(a for a, _ in times)
        assert payload["problems"] == {"error": 0, "warning": 0}


def test_every_published_frontend_ir_opens_with_its_layers_and_operations(capsys):
    for path in published("*.json"):
        payload = info(capsys, path)
        layers = json.loads(path.read_text())
        assert payload["format"] == "gemini-frontend"
        assert payload["summary"]["layers"] == len(layers)
        assert payload["summary"]["operations"] == dict(Counter(layer["operation"] for layer in layers.values()))
        assert payload["problems"] == {"error": 0, "warning": 0}  # inputs, constants and outputs are not errors
        graph = open_document(path).view.graph_model()
        assert int((~graph.node_constant).sum()) >= len(layers)


def test_bad_lines_are_located_and_the_rest_is_kept(tmp_path):
    lines = lines_of(SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt")
    lines[2] = lines[2][:40]  # cut short
    lines[4] = lines[4].replace("<DataFmt.INT8: 1>", "<DataFmt.INT9: 7>")  # an unknown enum name
    lines[6] = re.sub(r"'time': \[(\d+), (\d+)\]", r"'time': [\2, \1]", lines[6])  # end before start
    lines.append(lines[8].replace("'wkl': 1", "'wkl': 1"))  # the same inst_idx twice
    path = tmp_path / "broken_sim.txt"
    path.write_text("\n".join(lines) + "\n")
    document = open_document(path)
    found = {p.code: p for p in document.problems}
    assert found["malformed-line"].location.startswith("line 3, column ")
    assert found["unknown-enum"].location.startswith("line 5, column ")
    assert found["time-reversed"].location == "line 7"
    assert "duplicate-inst-idx" in found
    assert document.summary["instructions"] == len(lines) - 1  # every readable line kept
    empty = tmp_path / "empty_sim.txt"
    empty.write_text("\n")
    with pytest.raises(LoadError):
        open_document(empty)


def test_frontend_checks_say_where(tmp_path):
    layers = json.loads((SAMPLE_DATA / "demo_pipeline_b1.json").read_text())
    layers["Conv_3"]["next_layer"] = ["Add_5", "Ghost_9"]  # a layer nobody defines
    layers["Add_5"]["previous_layer"] = ["Conv_3"]  # Conv_1 still says it feeds Add_5
    layers["Conv_3"]["layer_index"] = 1  # Conv_1's index
    layers["Add_5"]["input_shape"][0] = [1, 8, 32, 32]  # Conv_3 makes [1, 16, 32, 32]
    path = tmp_path / "broken_b1.json"
    path.write_text(json.dumps(layers))
    found = {(p.code, p.location) for p in open_document(path).problems}
    assert ("unknown-layer", "$.Conv_3.next_layer[1]") in found
    assert ("link-asymmetry", "$.Conv_1.next_layer[1]") in found
    assert any(code == "duplicate-layer-index" for code, _ in found)
    assert ("shape-mismatch", "$.Add_5.previous_layer[0]") in found


def pipeline_folder(tmp_path: Path, batch: int, trace_batch: int | None = None) -> Path:
    """A schedule with its companions beside it, as the Gemini tools publish them."""
    published("*.json")
    trace_batch = trace_batch or batch
    shutil.copy(SCHEDULES / f"int8_resnet34.sim_quantized_b{batch}_c1_bw16_stschedule.json", tmp_path)
    shutil.copy(PIPELINE / f"int8_resnet34.sim_quantized_b{batch}.json", tmp_path)
    shutil.copy(PIPELINE / f"int8_resnet34.sim_quanti_b{batch}_c1_bw16_asm.txt", tmp_path)
    trace = PIPELINE / f"int8_resnet34.sim_quantized_b{trace_batch}_c1_bw16_sim.txt"
    (tmp_path / f"int8_resnet34.sim_quantized_b{batch}_c1_bw16_sim.txt").write_bytes(trace.read_bytes())
    return tmp_path / f"int8_resnet34.sim_quantized_b{batch}_c1_bw16_stschedule.json"


@pytest.mark.parametrize("batch", [1, 4])
def test_a_schedule_finds_and_joins_its_companions(capsys, tmp_path, batch):
    schedule = pipeline_folder(tmp_path, batch)
    payload = info(capsys, schedule)
    assert {kind: state["joined"] for kind, state in payload["companions"].items()} == {
        "frontend": True, "asm": True, "trace": True}  # fmt: skip
    trace = tmp_path / f"int8_resnet34.sim_quantized_b{batch}_c1_bw16_sim.txt"
    times = [(int(a), int(b)) for a, b in re.findall(r"'time': \[(\d+), (\d+)\]", trace.read_text())]
    workloads = {int(w) for w in re.findall(r"'wkl': (-?\d+)", trace.read_text()) if int(w) >= 0}
    assert payload["measured"]["makespan"] == max(b for _, b in times) - min(a for a, _ in times)
    assert payload["measured"]["workloads"] == len(workloads)
    layer_times = payload["measured"]["per_layer"]
    assert set(layer_times) <= set(open_document(schedule).schedule.layers) and len(layer_times) == 69
    document = open_document(schedule)
    details = [section.title for section in document.describe(("workload", 1))]
    assert "Estimate vs measured" in details and any(t.startswith("Instructions (trace") for t in details)
    assert any(t.startswith("Frontend: Layer Conv_1") for t in details)


def test_companions_of_another_batch_are_reported_not_joined(capsys, tmp_path):
    schedule = pipeline_folder(tmp_path, 1, trace_batch=4)
    document = open_document(schedule)
    assert companions_of(document).measured is None
    refused = [p for p in document.problems if p.code == "companion-mismatch"]
    assert refused and "another batch or model" in refused[0].message
    assert info(capsys, schedule)["companions"]["trace"]["joined"] is False


def refused_trace(tmp_path: Path, edit) -> tuple[Any, list[str]]:
    """The batch-1 schedule with its own trace edited by `edit` (line → line or None), named on the command
    line with no frontend: (the document, the companion-mismatch messages)."""
    published("*.json")
    trace = PIPELINE / "int8_resnet34.sim_quantized_b1_c1_bw16_sim.txt"
    edited = tmp_path / "edited_sim.txt"
    edited.write_text("\n".join(line for line in map(edit, trace.read_text().splitlines()) if line is not None))
    schedule = SCHEDULES / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    document = open_document(schedule, companions={"trace": edited})
    return document, [p.message for p in document.problems if p.code == "companion-mismatch"]


def test_a_trace_that_covers_too_few_workloads_is_refused_without_a_frontend(tmp_path):
    """Another batch's trace names the workloads both batches have: it must also cover the schedule's."""
    document, refused = refused_trace(tmp_path, lambda line: None if re.search(r"'wkl': 6[0-8],", line) else line)
    assert companions_of(document).measured is None
    assert refused and "cover 60 of the schedule's 69 workloads" in refused[0]


def test_a_trace_whose_layers_group_the_workloads_otherwise_is_refused(tmp_path):
    """Without the frontend to name layers, the grouping still tells: one schedule layer, one slyr."""

    def regroup(line: str) -> str:
        found = re.search(r"'wkl': (\d+),", line)
        return re.sub(r"'slyr': \d+", f"'slyr': {int(found.group(1)) % 7}", line) if found else line

    document, refused = refused_trace(tmp_path, regroup)
    assert companions_of(document).measured is None
    assert refused and "share an instruction layer (slyr)" in refused[0]
    same, refused = refused_trace(tmp_path, lambda line: line)  # the trace as it is: joined
    assert refused == [] and companions_of(same).measured is not None


def test_companions_named_on_the_command_line_and_a_stray_workload(capsys, tmp_path):
    published("*.json")
    trace = PIPELINE / "int8_resnet34.sim_quantized_b1_c1_bw16_sim.txt"
    text = trace.read_text().replace("'wkl': 68, 'tile': -1}, {'inst_idx'", "'wkl': 999, 'tile': -1}, {'inst_idx'", 1)
    stray = tmp_path / "renamed_trace.txt"
    stray.write_text(text)
    schedule = SCHEDULES / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    document = open_document(schedule, companions={"trace": stray})
    unknown = [p for p in document.problems if p.code == "unknown-workload"]
    assert unknown and unknown[0].location.startswith("renamed_trace.txt: line ")
    assert companions_of(document).measured is not None
    payload = info(capsys, schedule, "--trace", str(stray))
    assert payload["companions"]["trace"]["joined"] is True


def test_the_trace_as_trace_events():
    document = open_document(SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt")
    events = trace_events(document)["traceEvents"]
    threads = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert {"CT (control)", "PE (tensor engine)", "VP (vector processor)"} <= threads
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == document.summary["instructions"]
    pe = next(e for e in slices if e["name"] == "pe_conv")
    assert pe["dur"] == 2100
    assert any(e["ph"] == "s" and e["cat"] == "dependency" for e in events)
    assert not any(e["ph"] == "C" for e in events)  # no address space: no counter track


def test_the_report_shows_estimate_against_measurement(tmp_path):
    from explorer.exports.html_report import figures

    document = open_document(pipeline_folder(tmp_path, 1))
    titles = [figure.layout.title.text for figure in figures(document)]
    gantts = next(t for t in titles if t.startswith("Estimated and measured"))
    assert "1,922,067 measured" in gantts
    scatter = next(f for f in figures(document) if f.layout.title.text.startswith("Per layer"))
    assert len(scatter.data[1].x) == 69  # one point per layer
    trace_titles = [
        f.layout.title.text for f in figures(open_document(SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt"))
    ]
    assert any(t.startswith("Per-unit timeline") for t in trace_titles)


def test_the_schedule_graph_is_coloured_by_the_measurement_when_joined(tmp_path):
    from explorer.graph.colours import colour_modes, item_colours
    from explorer.graph.expansion import initial_expansion
    from explorer.graph.visible import visible_graph

    joined = open_document(pipeline_folder(tmp_path, 1)).view.graph_model()
    assert {"measured time", "estimate error"} <= set(colour_modes(joined))
    visible = visible_graph(joined, initial_expansion(joined))
    colours, legend = item_colours(joined, visible, "estimate error")
    assert len(legend) == 8 and (colours != colours[0]).any()  # a diverging scale of 7 (centred on 1×) and "none"
    # the measured cycles offered as per-node data too: a layer's sum on its box, aggregates, the top list
    cycles = joined.data_sets["data: trace cycles"]
    layers = cycles.unit_values[joined.group_unit]
    assert np.isfinite(layers).sum() > 10 and np.nansum(cycles.values) > 0
    assert colour_modes(joined)[-1] == "data: trace cycles"
    alone = open_document(SCHEDULES / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json").view.graph_model()
    assert "measured time" not in colour_modes(alone) and not alone.data_sets  # no trace beside it: no such mode


def test_the_three_link_both_ways(tmp_path):
    document = open_document(pipeline_folder(tmp_path, 1))
    labels = [item.label for item in document.tree.children]
    assert any(label.startswith("ZeBu trace: ") for label in labels)
    assert any(label.startswith("Frontend IR: ") for label in labels)
    links = dict((label, ref) for label, ref in document.links(("workload", 5)))
    instruction = next(ref for label, ref in links.items() if label.startswith("instruction pe_conv"))
    layer = links["frontend layer Conv_8"]
    assert instruction[:2] == ("companion", "trace") and layer[:2] == ("companion", "frontend")
    assert document.describe(instruction)[0].rows[0] == ("instruction", "pe_conv")
    back = dict(document.links(instruction))
    assert back["schedule core 0 workload 5 (Conv_8)"] == ("workload", 5)
    assert back["frontend layer Conv_8"] == layer
    from_layer = dict(document.links(layer))
    assert from_layer["schedule core 0 workload 5 (Conv_8)"] == ("workload", 5)
    assert any(label.startswith("instruction pe_conv") for label in from_layer)
    assert document.ancestors(instruction)[0] == ("companion", "trace", ("summary",))


def test_with_its_frontend_the_schedule_graph_is_the_network_coloured_by_the_schedule(tmp_path):
    document = open_document(pipeline_folder(tmp_path, 1))
    model = document.view.graph_model()
    frontend = companions_of(document).documents["frontend"].view.graph_model()
    assert "input1" in model.node_label and model.n_groups == document.schedule.n_workloads  # a group per layer
    assert model.edge_src.size == frontend.edge_src.size  # the network's edges, not the transfers'
    assert model.group_label[0] == "src_quantize_1_1" and model.group_unit.all()


def test_an_instruction_in_a_layer_the_frontend_lacks_is_reported(tmp_path):
    schedule = pipeline_folder(tmp_path, 1)
    trace = tmp_path / "int8_resnet34.sim_quantized_b1_c1_bw16_sim.txt"
    trace.write_text(trace.read_text().replace("'slyr': 68,", "'slyr': 468,", 1))
    document = open_document(schedule)
    stray = [p for p in document.problems if p.code == "unknown-layer-index"]
    assert stray and "468" in stray[0].message and stray[0].location.startswith(trace.name + ": line ")
    titles = [section.title for section in document.describe(("workload", 1))]
    assert "Layer Conv_1: estimate vs measured" in titles
    assert set(open_document(trace).summary["idle"]) == set(open_document(trace).summary["busy"])


def test_an_instructions_ids_and_parameters_read_as_the_trace_writes_them():
    """Ids, the line and raw parameters are matched against the trace's text: '4,096' is not found by a search
    for 'DTaddr': 4096, and '[0, 8,191]' reads as three numbers. Cycle counts, which are quantities, are grouped."""
    document = open_document(SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt")
    details = [document.describe(("workload", row)) for row in range(15)]
    mov = next(sections for sections in details if sections[0].rows[0] == ("instruction", "lda_mov"))
    facts = dict(mov[0].rows)
    assert facts["line"] == "3" and facts["inst_idx"] == "3" and facts["workload (wkl)"] == "0"
    assert facts["duration (cycles)"] == "900"
    parameters = dict(mov[1].rows)
    assert parameters["DTaddr"] == "4096" and parameters["STaddr"] == "0"
    cfg = next(sections for sections in details if sections[0].rows[0] == ("instruction", "lda_cfg"))
    assert dict(cfg[1].rows)["STile"] == "[3, 32, 32]"


def test_a_workloads_measured_time_leaves_its_set_up_out(tmp_path):
    """Configuration instructions can run long before the work (sta_cfg at the first cycles of a workload that
    ends millions of cycles later): measured over every instruction, ratios reached thousands."""
    import numpy as np

    document = open_document(pipeline_folder(tmp_path, 4))
    measured = companions_of(document).measured
    s = document.schedule
    work = (measured.end - measured.start) / s.wl_time
    whole = (measured.last_end - measured.first_start) / s.wl_time
    assert np.nanmax(whole) > 100 and np.nanmax(work) < 5 and 0.8 < np.nanmedian(work) < 1.25
    row = int(np.nanargmax(whole))
    rows = dict(next(x for x in document.describe(("workload", row)) if x.title == "Estimate vs measured").rows)
    assert rows["measured over"].startswith("compute and data-movement instructions")
    assert "with set-up (cycles)" in rows


def test_the_estimate_error_is_coloured_on_a_scale_centred_on_one(tmp_path):
    from collections import Counter

    from explorer.graph.colours import DIVERGING, DIVERGING_BASE, item_colours
    from explorer.graph.expansion import initial_expansion
    from explorer.graph.visible import visible_graph

    model = open_document(pipeline_folder(tmp_path, 1)).view.graph_model()
    colours, legend = item_colours(model, visible_graph(model, initial_expansion(model)), "estimate error")
    assert [hex_ for _, hex_ in legend[:7]] == list(DIVERGING)
    assert legend[0][0].startswith("measured/estimated") and "(measured ≈ estimated)" in legend[3][0]
    buckets = Counter(c - DIVERGING_BASE for c in colours.tolist() if c >= DIVERGING_BASE)
    assert buckets.most_common(1)[0][0] == 3  # most layers within 1.25× once set-up is left out


def test_an_instruction_is_found_by_its_name_and_workload_and_by_its_own_label():
    """`Ctrl+F` on an assembly or trace: name words and `wkl N` / `slyr N` / `inst_idx N` all hold together, so
    a result's own label (`vp_self wkl 68 @2,024,865`) finds it again; a number alone is an inst_idx or a wkl."""
    document = open_document(SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt")
    view, program = document.view, document.view.program
    k = next(k for k in range(program.n) if program.wkl[k] >= 0 and "_cfg" not in program.name[k])
    name, workload = program.name[k], int(program.wkl[k])
    found = view.search(f"{name} wkl {workload}")
    rows = [ref[1] for _, ref in found]
    assert found and all(program.name[int(view.order[r])] == name and program.wkl[int(view.order[r])] == workload
                         for r in rows)  # fmt: skip
    expected = sum(1 for j in range(program.n) if program.name[j] == name and program.wkl[j] == workload)
    assert len(found) == expected
    label = found[0][0]
    assert "@" in label and view.search(label)[0] == found[0]  # its own label, start cycle included
    assert view.search(f"wkl {workload} {name.upper()}") == found  # any order, any case
    assert view.search("no_such_instruction wkl 0") == []
