"""Per-node data (issue #33): Model Explorer's node-data JSON, a plain name → number JSON and a two-column CSV
joined to the graph's nodes; bad input is one problem each and changes nothing else; colours, aggregates, the
top list and `graph --json`'s "data"."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from explorer.api import open_document
from explorer.errors import LoadError
from explorer.graph.builder import GraphBuilder
from explorer.graph.colours import DIVERGING_BASE, GRADIENT_BASE, GREY_INDEX, item_colours
from explorer.graph.node_data import load_node_data, read_node_data, set_aggregate, top_nodes
from explorer.graph.visible import expand_all, visible_graph
from tests.conftest import ROOT, SAMPLE_DATA


def small_model():
    """block › (a → b → c), d outside; b outputs the value "b_out"."""
    b = GraphBuilder()
    block = b.group("block", kind="module")
    a = b.node("a", "Relu", group=block)
    bb = b.node("b", "Add", group=block)
    c = b.node("c", "Mul", group=block)
    d = b.node("d", "Sigmoid")
    b.edge(a, bb, "a_out")
    b.edge(bb, c, "b_out")
    b.edge(c, d, "c_out")
    return b.build()


def codes(problems) -> list[str]:
    return [p.code for p in problems]


def test_a_plain_json_joins_by_name_output_and_id_and_reports_the_rest(tmp_path):
    model = small_model()
    path = tmp_path / "profile.json"
    path.write_text('{"a": 1.5, "b_out": 2, "n2": 4, "d": "slow", "nobody": 3, "e": NaN, "f": Infinity}')
    sets, problems = read_node_data(path, model)
    (data,) = sets
    assert data.name == "data: profile" and data.keys == 7 and data.matched == 3
    assert data.values.tolist()[:3] == [1.5, 2.0, 4.0] and np.isnan(data.values[3])
    assert sorted(codes(problems)) == ["node-data-not-finite", "node-data-not-finite", "node-data-not-numeric",
                                       "node-data-unknown-key"]  # fmt: skip
    unknown = next(p for p in problems if p.code == "node-data-unknown-key")
    assert "'nobody'" in unknown.message and unknown.location == '$["nobody"]'


def test_model_explorer_node_data_per_graph_with_thresholds(tmp_path):
    model = small_model()
    path = tmp_path / "me.json"
    path.write_text(json.dumps({
        "main": {"results": {"a": {"value": 1}, "b": {"value": 20}, "c": {"value": 200}},
                 "thresholds": [{"value": 50, "bgColor": "red"}, {"value": 10, "bgColor": "green"}]},
        "other": {"results": {"d": {"value": 5}}},
    }))  # fmt: skip
    sets, problems = read_node_data(path, model)
    assert problems == [] and [s.name for s in sets] == ["data: me · main", "data: me · other"]
    main = sets[0]
    assert main.thresholds == [10.0, 50.0]
    from explorer.graph.node_data import apply_node_data

    apply_node_data(model, main)
    visible = visible_graph(model, expand_all(model))
    colours, legend = item_colours(model, visible, main.name)
    by_node = {int(visible.item_id[i]): int(colours[i]) for i in range(visible.n_items) if visible.item_kind[i] == 0}
    assert by_node[0] == GRADIENT_BASE and by_node[1] == GRADIENT_BASE + 2 and by_node[2] == GRADIENT_BASE + 4
    assert by_node[3] == GREY_INDEX  # no value
    assert [text for text, _ in legend][:3] == ["≤ 10", "10–50", "> 50"]


def test_a_csv_with_a_header_and_a_diverging_scale_when_values_straddle_zero(tmp_path):
    model = small_model()
    path = tmp_path / "error.csv"
    path.write_text("node,error\na,-0.5\nb,0.01\nc,0.5\n")
    (data,), problems = read_node_data(path, model)
    assert problems == [] and data.matched == 3 and data.diverging_centre == 0.0
    from explorer.graph.node_data import apply_node_data

    apply_node_data(model, data)
    visible = visible_graph(model, expand_all(model))
    colours, legend = item_colours(model, visible, data.name)
    nodes = np.flatnonzero(visible.item_kind == 0)
    node_colour = dict(zip(visible.item_id[nodes].tolist(), colours[nodes].tolist(), strict=True))
    assert node_colour[0] == DIVERGING_BASE and node_colour[2] == DIVERGING_BASE + 6
    assert node_colour[1] == DIVERGING_BASE + 3  # near the centre
    assert any(text.startswith("≈ 0") for text, _ in legend)


def test_closed_groups_show_sum_max_or_mean_and_the_top_list_is_largest_first(tmp_path):
    model = small_model()
    path = tmp_path / "t.json"
    path.write_text('{"a": 1, "b": 5, "c": 3, "d": 10}')
    load = type("D", (), {})()
    load.view = type("V", (), {"graph_model": lambda self: model})()
    load.problems = []
    assert load_node_data(load, [path]) == ["t.json: 4 of 4 keys matched a node"]
    name = "data: t"
    block = model.group_label.index("block")
    assert model.group_values[name][block] == 9.0
    set_aggregate(model, name, "max")
    assert model.group_values[name][block] == 5.0
    set_aggregate(model, name, "mean")
    assert model.group_values[name][block] == 3.0
    assert top_nodes(model, model.data_sets[name], 3) == [(3, -1), (1, -1), (2, -1)]
    visible = visible_graph(model, set())  # the block closed: coloured by its aggregate
    colours, legend = item_colours(model, visible, name)
    group_item = int(np.flatnonzero(visible.item_kind == 1)[0])
    assert colours[group_item] != GREY_INDEX and ("groups: mean", "#7a7a7a") in legend


@pytest.mark.parametrize(
    ("content", "suffix", "expected"),
    [("\x00\x01binary", ".bin", "node-data-unreadable"), ("[1, 2", ".json", "node-data-unreadable"),
     ("a,b,c\n1,2,3\n", ".csv", "node-data-unreadable"), ('{"x": 1, "y": 2}', ".json", "node-data-no-match")],
)  # fmt: skip
def test_bad_node_data_is_one_clear_problem_and_changes_nothing_else(tmp_path, content, suffix, expected):
    model = small_model()
    path = tmp_path / f"bad{suffix}"
    path.write_text(content)
    document = type("D", (), {})()
    document.view = type("V", (), {"graph_model": lambda self: model})()
    document.problems = []
    before = dict(model.node_values)
    lines = load_node_data(document, [path])
    assert codes(document.problems)[0] == expected and len(lines) == 1
    if expected == "node-data-unreadable":
        assert model.data_sets == {} and model.node_values == before and len(document.problems) == 1
        assert str(path) in document.problems[0].message


def test_a_schedule_joins_layers_by_name_and_workloads_as_core_slash_workload(tmp_path):
    document = open_document(SAMPLE_DATA / "clean_2x2_stschedule.json")
    model = document.view.graph_model()
    layer = next(g for g in range(model.n_groups) if model.group_unit[g])
    workload = next(n for n in range(model.n_nodes) if model.node_values["data_key"][n])
    key = model.node_values["data_key"][workload]
    path = tmp_path / "cycles.json"
    path.write_text(json.dumps({model.group_label[layer]: 1000, key: 42}))
    assert load_node_data(document, [path]) == ["cycles.json: 2 of 2 keys matched a node"]
    data = model.data_sets["data: cycles"]
    assert data.values[workload] == 42 and model.group_values["data: cycles"][layer] == 1000
    assert top_nodes(model, model.data_sets["data: cycles"], 2)[0][1] == layer  # the layer, found by its first workload


def test_graph_json_lists_each_nodes_data_and_problem_marks(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{"If_0": 3.5}')
    sample = SAMPLE_DATA / "subgraphs_functions.onnx"
    document = open_document(sample)
    label = next(n for n, op in zip(document.view.graph_model().node_label, document.view.graph_model().node_op,
                                    strict=True) if op == "If")  # fmt: skip
    path.write_text(json.dumps({label: 3.5}))
    result = subprocess.run([sys.executable, "-m", "explorer", "graph", str(sample), "--json", "--node-data",
                             str(path)], capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 8
    assert [n["data"] for n in payload["nodes"] if n.get("data")] == [{"d": 3.5}]
    assert "1 of 1 keys matched" in result.stderr
    planted = subprocess.run([sys.executable, "-m", "explorer", "graph", str(SAMPLE_DATA /
                              "planted_problems_2x2_stschedule.json"), "--json"], capture_output=True, text=True,
                             cwd=ROOT)  # fmt: skip
    marked = [n for n in json.loads(planted.stdout)["nodes"] if n.get("problem")]
    assert marked and {n["problem"] for n in marked} <= {"error", "warning"}


def test_the_top_list_ranks_boxes_not_the_constants_folded_into_them():
    """parameter bytes: an initializer carries its own bytes, but it is drawn inside its reader's box."""
    from explorer.graph.node_data import numeric_mode_set

    model = open_document(SAMPLE_DATA / "subgraphs_functions.onnx").view.graph_model()
    data = numeric_mode_set(model, "parameter bytes")
    top = top_nodes(model, data, 20)
    assert top and not any(model.node_constant[node] for node, _ in top)


def hostile_node_data(folder) -> dict[str, object]:
    """The files of issue #44 item 5: each must be one problem about the data file, never an exception."""
    files = {
        "huge_field.csv": "a," + "9" * 200_000 + "\n",
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "digits_5000.json": '{"a": ' + "7" * 5000 + "}",
        "digits_400.json": '{"a": ' + "7" * 400 + ', "b": 1.5}',
        "thresholds.json": '{"results": {"a": {"value": 1}}, "thresholds": 5}',
        "threshold_digits.json": '{"results": {"a": {"value": 1}}, "thresholds": [{"value": ' + "9" * 400 + "}]}",
        "graph_ids.json": json.dumps({f"g{k}": {"results": {}} for k in range(100_000)}),
    }
    paths = {}
    for name, text in files.items():
        paths[name] = folder / name
        paths[name].write_text(text)
    return paths


def test_hostile_node_data_is_one_problem_and_the_model_stays(tmp_path):
    """A 200 KB CSV field, JSON nested 100,000 deep, 5,000- and 400-digit integers, "thresholds": 5, 100,000 empty
    graph ids: each ends in a problem about the file (the 400-digit value: not finite); nothing raises."""
    model = small_model()
    for name, path in hostile_node_data(tmp_path).items():
        if name == "digits_400.json":
            sets, problems = read_node_data(path, model)
            assert codes(problems) == ["node-data-not-finite"] and sets[0].matched == 1, name
            continue
        with pytest.raises(LoadError) as refused:
            read_node_data(path, model)
        assert refused.value.message, name


def test_the_cli_and_a_loaded_document_take_hostile_node_data_as_a_problem(tmp_path):
    files = hostile_node_data(tmp_path)
    model = SAMPLE_DATA / "residual_blocks.onnx"
    for name in ("huge_field.csv", "deep.json", "thresholds.json"):
        result = subprocess.run([sys.executable, "-m", "explorer", "graph", str(model), "--json", "--node-data",
                                 str(files[name])], capture_output=True, text=True, cwd=ROOT)  # fmt: skip
        assert result.returncode in (0, 1), result.stderr
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr
        assert f"{name}: not read" in result.stderr
    document = open_document(model)
    said = load_node_data(document, [files["graph_ids.json"], files["digits_5000.json"]])
    assert all(": not read (" in line for line in said), said
    assert codes(document.problems).count("node-data-unreadable") == 2


def test_the_top_list_says_values_as_people_read_them():
    """Issue #45 item 5: `T` printed bytes as `9.43718e+06`."""
    from explorer.graph.node_data import value_text

    assert value_text("L2 peak", 9437184.0) == "9,437,184 (9.0 MiB)"
    assert value_text("data: profile", 9437184.0) == "9,437,184"
    assert value_text("data: ratio", 0.125) == "0.125" and value_text("time", 12345678.5) == "12,345,678.50"


def test_the_legend_of_plain_groups_follows_the_aggregate(tmp_path):
    """Issue #45, item 9 (last part): closed plain groups (name scopes, not schedule layers) are coloured by their
    aggregate; the legend named the sum's range after `a` switched to max or mean. It says the aggregate now."""
    from explorer.api import open_document
    from explorer.graph.colours import item_colours
    from explorer.graph.node_data import load_node_data, set_aggregate
    from explorer.graph.visible import visible_graph
    from tests.conftest import SAMPLE_DATA

    document = open_document(SAMPLE_DATA / "residual_blocks.onnx")
    model = document.view.graph_model()
    names = [label for label in model.node_label if "/blocks." in label]
    profile = tmp_path / "times.json"
    profile.write_text(json.dumps({label: float(k + 1) for k, label in enumerate(names)}))
    load_node_data(document, [profile])
    name = "data: times"
    visible = visible_graph(model, set())  # every block closed: plain groups on screen
    assert (visible.item_kind == 1).any() and not model.group_unit.any()
    _, legend = item_colours(model, visible, name)
    words = [text for text, _ in legend]
    assert any(text.startswith("groups: sum ") for text in words)
    for aggregate in ("max", "mean"):
        set_aggregate(model, name, aggregate)
        _, legend = item_colours(model, visible, name)
        words = [text for text, _ in legend]
        assert f"groups: {aggregate}" in words and not any("sum" in text for text in words)
