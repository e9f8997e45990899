"""ONNX: real samples, onnx's own test models, generated subgraphs/functions/external data, broken files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from explorer.api import open_document
from explorer.errors import LoadError
from explorer.formats.onnx.samples import linear_model, odd_types_model, save_with_external_data, subgraph_model
from tests.conftest import ROOT, samples_dir
from tests.hostile import chain_model, cut_onnx_chain


def save(model, tmp_path: Path, name: str = "model.onnx") -> Path:
    path = tmp_path / name
    onnx.save_model(model, path)
    return path


def test_real_samples_open_with_zero_errors():
    folder = samples_dir("onnx")
    dynamo = open_document(folder / "small_cnn_dynamo.onnx")
    assert [p for p in dynamo.problems if p.severity != "info"] == []
    s = dynamo.summary
    assert (s["graphs"], s["nodes"], s["top_level_nodes"], s["initializers"], s["inputs"], s["outputs"]) == (
        1,
        11,
        11,
        10,
        1,
        1,
    )
    assert s["opsets"] == {"ai.onnx": 20} and s["op_types"]["Conv"] == 3
    # weights live in the .onnx.data sidecar and are read when a weight is opened
    view = dynamo.view
    sections = dynamo.describe(("init", "graph", 0))
    stats = dict(sections[1].rows)
    assert (
        sections[0].title == "Initializer c1.weight"
        and "min" in stats
        and "external" in dict(sections[0].rows)["stored"]
    )
    assert view.index.main.initializers["c1.weight"] == 0
    loop = open_document(folder / "loop_if_scripted_opset16.onnx")
    assert [p for p in loop.problems if p.severity != "info"] == []
    assert (loop.summary["graphs"], loop.summary["top_level_nodes"]) == (4, 2)  # main, Loop body, If's two branches


def test_every_model_in_onnx_test_data_opens():
    folder = Path(onnx.__file__).parent / "backend" / "test" / "data"
    models = sorted(folder.rglob("*.onnx"))
    assert len(models) > 100
    for path in models:
        doc = open_document(path)
        assert doc.meta.format == "onnx"
        doc.describe(("summary",))
        for item in doc.tree.get_children()[1:]:
            for child in item.get_children()[:5]:
                doc.describe(child.ref)


def test_subgraphs_outer_scope_and_functions(tmp_path):
    doc = open_document(save(subgraph_model(), tmp_path))
    assert [p for p in doc.problems if p.severity == "error"] == []
    s = doc.summary
    # main + then + else + the Loop body inside else; the function body is not a graph of the model's
    assert (s["graphs"], s["nodes"], s["top_level_nodes"], s["functions"]) == (4, 6, 2, 1)
    assert s["op_types"] == {"If": 1, "Scale": 1, "Add": 1, "Loop": 1, "Mul": 1, "Identity": 1}
    assert s["opsets"] == {"ai.onnx": 17, "custom": 1}
    view = doc.view
    index = view.index
    # helper.make_node sorts attributes by name: else_branch is attribute 0, then_branch attribute 1
    then_key = "graph.node[0].attribute[1].g"
    body_key = "graph.node[0].attribute[0].g.node[0].attribute[0].g"
    assert index.graphs[body_key].parent == "graph.node[0].attribute[0].g"
    # the Loop body reads `w` two levels up; `x` is read by the then branch from the main graph
    assert index.resolve(body_key, "w") == ("graph", "initializer")
    assert index.resolve(then_key, "x") == ("graph", "input")
    consumers = view.consumers_of("graph", "w")
    assert set(consumers) == {(then_key, 0), (body_key, 0)}
    # the tree reaches the Loop body through the If node and back up through ancestors
    path = view.ancestors(("node", body_key, 0))
    assert path[0] == ("nodes", "graph") and path[-1] == ("node", body_key, 0)
    rows = dict(doc.describe(("graph", body_key))[0].rows)
    assert rows["inside"].startswith("Else_branch") or "inner_loop" in rows["inside"]
    function_doc = doc.describe(("graph", "functions[0]"))
    assert function_doc[0].title == "function custom.Scale"
    assert dict(doc.describe(("node", "graph", 1))[0].rows)["local function"].startswith("custom.Scale")
    assert [p.key for p in index.model.metadata_props] == ["author", "purpose"]


def test_networkx_graph_edges_follow_value_names(tmp_path):
    doc = open_document(save(subgraph_model(), tmp_path))
    graph = doc.view.graph  # built on first use: producer node → consumer node, by value name
    main_edges = [(a, b, data["value"]) for a, b, data in graph.edges(data=True) if a[0] == "graph"]
    assert main_edges == [(("graph", 0), ("graph", 1), "branch_out")]
    assert graph.number_of_nodes() == doc.summary["nodes"]


def test_value_links_jump_to_producers_and_consumers(tmp_path):
    doc = open_document(save(subgraph_model(), tmp_path))
    view = doc.view
    links = view._links("graph", "branch_out")
    targets = [item.ref for item in links]
    assert targets == [("goto", ("node", "graph", 0)), ("goto", ("node", "graph", 1))]
    assert doc.search("Loop")[0][1] == ("node", "graph.node[0].attribute[0].g", 0)


def test_every_type_is_shown(tmp_path):
    doc = open_document(save(odd_types_model(), tmp_path))
    view = doc.view
    from explorer.formats.onnx.text import type_text

    shown = {name: type_text(view.index.type_of("graph", name)) for name in view.index.main.inputs}
    assert shown == {
        "f8": "float8e4m3fn[4]",
        "i4": "int4[batch, 8]",
        "bf": "bfloat16[?, 3]",
        "text": "string[2]",
        "seq": "seq(float32[k])",
        "maybe": "optional(int64[])",
        "table": "map(string, float32[])",
    }


def test_external_data_read_on_demand_and_missing_sidecar(tmp_path):
    path = save_with_external_data(linear_model(), tmp_path)
    doc = open_document(path)
    assert doc.problems == []
    stats = dict(doc.describe(("init", "graph", 0))[1].rows)
    # linspace(-1, 1, 128): min -1, max 1, mean 0
    assert (stats["min"], stats["max"], stats["mean"]) == ("-1", "1", "0")
    (tmp_path / "external.onnx.data").unlink()
    doc = open_document(path)
    assert [(p.code, p.location) for p in doc.problems] == [("missing-external-data", "graph.initializer[0]")]
    assert "missing" in dict(doc.describe(("init", "graph", 0))[1].rows)["values"]


def test_undefined_values_are_located_errors(tmp_path):
    model = subgraph_model()
    model.graph.node[1].input[0] = "nowhere"
    doc = open_document(save(model, tmp_path))
    errors = [(p.code, p.location) for p in doc.problems if p.severity == "error"]
    assert ("undefined-value", "graph.node[1].input[0]") in errors
    problem = next(p for p in doc.problems if p.code == "undefined-value")
    assert doc.find_ref({"location": problem.location}) == ("node", "graph", 1)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12345\n", "Git LFS pointer"),
        (b"\x00\x01garbage that is not protobuf \xff\xfe" * 10, "not a valid ONNX protobuf"),
        (b"\x08\x07", "no graph"),
    ],
)
def test_unusable_files_say_why(tmp_path, content, message):
    path = tmp_path / "broken.onnx"
    path.write_bytes(content)
    with pytest.raises(LoadError, match=message) as caught:
        open_document(path)
    assert caught.value.location
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "info", str(path)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_truncated_model_opens_with_what_is_valid_and_says_where_it_ends(tmp_path):
    """Issue #56: the wire walk reads up to the cut; the field the file ends in is one located problem."""
    data = subgraph_model().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    document = open_document(path)
    first = document.problems[0]
    assert (first.severity, first.code, first.location) == ("error", "unreadable-field",
                                                            "graph.node[0].attribute[0].g.output[0]")  # fmt: skip
    assert "runs past the end of the file" in first.message
    assert document.summary["nodes"] == 4  # the If, its branch's Loop and the loop body's nodes read before the cut


def test_info_json_keys(tmp_path):
    path = save(subgraph_model(), tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "info", str(path), "--json"], capture_output=True, text=True, cwd=ROOT
    )
    summary = json.loads(result.stdout)["summary"]
    assert {
        "graphs",
        "nodes",
        "top_level_nodes",
        "functions",
        "initializers",
        "op_types",
        "inputs",
        "outputs",
        "opsets",
        "parameters",
    } <= set(summary)
    assert summary["parameters"] == 2 + 1  # w [2, 1] and the scalar trips


def test_a_cut_chain_names_every_undefined_weight(tmp_path):
    """Issue #72: a cut file (its initializers after the nodes lost) has an undefined value per node; each was
    checked against every later node (183 s for 800 KB of a 20,000-node chain). The answers stay the same."""
    doc = open_document(cut_onnx_chain(tmp_path / "cut.onnx", 2000))
    undefined = [p for p in doc.problems if p.code == "undefined-value"]
    assert len(undefined) == 2000
    assert undefined[7].message == "node 7 (Mul) reads 'w7', which no earlier node, input or initializer defines"
    assert undefined[7].location == "graph.node[7].input[1]"


def test_a_value_a_later_node_makes_is_said_so(tmp_path):
    doc = open_document(save(chain_model(300, reverse=True), tmp_path))
    undefined = [p for p in doc.problems if p.code == "undefined-value"]
    assert len(undefined) == 299  # the first node listed reads v299, made by the next; the last reads the input
    assert undefined[0].message == ("node 0 (Mul) reads 'v299', which no earlier node, input or initializer defines"
                                    " (a later node produces it: the nodes are not in topological order)")  # fmt: skip
