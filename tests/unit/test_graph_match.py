"""Two graphs side by side (issue #33): nodes matched by name, and by structure where every name differs; a
model whose every node is renamed and one attribute changed reads as exactly that one change, in `diff` and in
the graph comparison."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import helper

from explorer.api import open_document
from explorer.diff import diff_documents
from explorer.formats.onnx.samples import CHANGED_NODE, RENAMED_NAME, RESIDUAL_NAME, residual_model
from explorer.graph.match import CHANGED, ONLY, SAME, match_graphs
from tests.conftest import ROOT, SAMPLE_DATA


@pytest.fixture
def two_exports():
    """The bundled comparison demo: a model, and the same model with every node renamed (another exporter's
    names) and block 3's LeakyRelu alpha changed."""
    return SAMPLE_DATA / RESIDUAL_NAME, SAMPLE_DATA / RENAMED_NAME, *CHANGED_NODE


def test_renamed_nodes_match_by_structure_and_one_attribute_change_is_the_only_change(two_exports):
    a_path, b_path, name_a, name_b = two_exports
    a, b = open_document(a_path), open_document(b_path)
    ma, mb = a.view.graph_model(), b.view.graph_model()
    match = match_graphs(ma, mb, lambda n: a.view.node_attributes(ma.node_ref[n]),
                         lambda n: b.view.node_attributes(mb.node_ref[n]))  # fmt: skip
    counts = match.counts()
    assert counts["added"] == counts["removed"] == 0 and counts["changed"] == 1
    (changed,) = [n for n in range(ma.n_nodes) if match.status_a[n] == CHANGED]
    assert ma.node_label[changed] == name_a and mb.node_label[match.a_to_b[changed]] == name_b
    assert match.what[changed] == "attributes alpha"
    ops = [n for n in range(ma.n_nodes) if not ma.node_constant[n] and ma.node_op[n] not in ("input", "output")]
    assert all(match.by_structure[n] for n in ops)  # every op was named apart
    # each op matched its counterpart: the same place in the same block
    for n in ops:
        m = int(match.a_to_b[n])
        assert int(mb.node_ref[m][2]) == int(ma.node_ref[n][2])  # the node's index in the file
    # diff says the same: one change, matched by structure
    result = diff_documents(a, b)
    nodes = [c for c in result["changes"] if c["kind"].startswith("node-")]
    assert nodes == [{"kind": "node-changed", "name": name_b, "name_a": name_a, "op_a": "LeakyRelu",
                      "op_b": "LeakyRelu", "what": "attributes alpha", "matched_by": "structure"}]  # fmt: skip


def test_an_inserted_node_is_added_and_the_rest_still_match(tmp_path):
    model = residual_model(4)
    a = tmp_path / "a.onnx"
    onnx.save(model, a)
    nodes = list(model.graph.node)
    nodes[5].input[0] = "extra"  # block 1's LeakyRelu now reads a new Sigmoid
    extra = helper.make_node("Sigmoid", ["c1_1"], ["extra"], name="/blocks.1/gate/Sigmoid")
    del model.graph.node[:]
    model.graph.node.extend([*nodes[:5], extra, *nodes[5:]])
    b = tmp_path / "b.onnx"
    onnx.save(model, b)
    ma, mb = open_document(a).view.graph_model(), open_document(b).view.graph_model()
    match = match_graphs(ma, mb)
    added = [mb.node_label[n] for n in range(mb.n_nodes) if match.status_b[n] == ONLY]
    assert added == ["/blocks.1/gate/Sigmoid"]
    assert (match.status_a[~ma.node_constant] == SAME).all()


def test_diff_json_reports_the_matching_and_different_formats_exit_2(two_exports):
    a_path, b_path, _, _ = two_exports
    done = subprocess.run([sys.executable, "-m", "explorer", "diff", str(a_path), str(b_path), "--json"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    payload = json.loads(done.stdout)
    assert payload["summary"]["nodes_matched_by_structure"] == 24 and payload["summary"]["nodes_changed"] == 1
    other = subprocess.run([sys.executable, "-m", "explorer", "diff", str(a_path),
                            str(SAMPLE_DATA / "clean_2x2_stschedule.json")], capture_output=True, text=True,
                           cwd=ROOT)  # fmt: skip
    assert other.returncode == 2 and "cannot compare" in other.stderr


def review_samples() -> list:
    """One file per format that has a graph: ours, and each real format folder's first files."""
    found = [SAMPLE_DATA / name for name in ("subgraphs_functions.onnx", "two_modules_mlf.tar",
                                             "views_ark_model.json", "clean_2x2_stschedule.json",
                                             "demo_pipeline_b1.json")]  # fmt: skip
    from tests.conftest import SAMPLES

    for kind in ("onnx", "coreml", "ark", "tvm_mlf", "scheduler_ir"):
        folder = SAMPLES / kind
        if folder.is_dir():
            found += [p for p in sorted(folder.iterdir()) if not p.name.endswith((".data", ".md"))][:2]
    return found


@pytest.mark.parametrize("path", review_samples(), ids=lambda p: p.name)
def test_every_formats_sample_compares_with_itself_takes_node_data_and_draws_as_svg(path, tmp_path):
    """Per format: a file compared with itself has no change; node data keyed by its boxes' names joins;
    the SVG has a box per drawn item."""
    from explorer.exports.graph_svg import graph_svg
    from explorer.graph.compare import compare_documents
    from explorer.graph.node_data import load_node_data

    a, b = open_document(path), open_document(path)
    if not a.offers("graph"):
        pytest.skip(f"{path.name} has no graph")
    comparison = compare_documents(a, b)
    counts = comparison.match.counts()
    assert (counts["changed"], counts["added"], counts["removed"]) == (0, 0, 0), comparison.summary()
    model = a.view.graph_model()
    drawn = [n for n in range(model.n_nodes) if not model.node_constant[n]][:5]
    data = tmp_path / "d.json"
    data.write_text(json.dumps({model.node_label[n]: float(k) for k, n in enumerate(drawn)}))
    (line,) = load_node_data(a, [data])
    assert line.startswith(f"d.json: {len(drawn)} of {len({model.node_label[n] for n in drawn})} keys matched")
    assert graph_svg(model, "auto").count("<title>") > 0


def test_two_schedules_pair_workloads_inside_the_layer_of_the_same_name():
    """Issue #45, item 2: ResNet-34 b1 against b4 (the same 69 layer names) paired workloads across layers
    (`Conv_15 … ⇄ … Conv_12 … matched by name`); they pair within their layer, and the line says so."""
    import pytest

    from explorer.api import open_document
    from explorer.graph.compare import compare_documents
    from tests.conftest import SAMPLES

    folder = SAMPLES / "scheduler_ir"
    a_path = folder / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    if not a_path.exists():
        pytest.skip("real samples not found (a user's clone has no ../shared)")
    b_path = folder / "int8_resnet34.sim_quantized_b4_c1_bw16_stschedule.json"
    comparison = compare_documents(open_document(a_path), open_document(b_path))
    a, b, match = comparison.a, comparison.b, comparison.match
    paired = np.flatnonzero(match.a_to_b >= 0)
    assert paired.size == 69
    for x in paired.tolist():
        y = int(match.a_to_b[x])
        assert a.group_label[a.node_group[x]] == b.group_label[b.node_group[y]]
    assert "matched in their layers 69" in comparison.summary()
    line = comparison.describe("a", int(paired[0]))
    assert " · matched in its layer, by order · " in line and "matched by name" not in line
    assert " type " not in line  # a workload's detail is its time


def _two_gathers(order: list[int], names: list[str]):
    from explorer.graph.builder import GraphBuilder

    b = GraphBuilder()
    tables = {0: "float32 512×128", 1: "float32 64×8"}
    ids = {}
    for k in order:  # the node order decides the topological order among equals
        source = b.node(f"in{k}", "input")
        table = b.node(f"table{k}", "initializer", constant=True, detail=tables[k])
        ids[k] = b.node(names[k], "Gather")
        b.edge(source, ids[k])
        b.edge(table, ids[k], f"table{k}")
    add = b.node("sum", "Add")
    for k in order:
        b.edge(ids[k], add)
    return b.build(), ids


def test_folded_weights_of_one_shape_are_evidence_for_a_pair():
    """Issue #45, item 3: the embedding Gather with the same 512×128 table was 'removed' on one side and
    'added' on the other; two Gathers alike but for their tables pair by their tables, named apart and listed
    in another order."""
    a, ids_a = _two_gathers([0, 1], ["/emb/Gather", "/pos/Gather"])
    b, ids_b = _two_gathers([1, 0], ["node_Gather_7", "node_Gather_3"])
    match = match_graphs(a, b)
    assert match.a_to_b[ids_a[0]] == ids_b[0] and match.a_to_b[ids_a[1]] == ids_b[1]


def test_diff_and_compare_agree_on_two_exports_of_one_model():
    """Issue #45, item 3: `--compare` and `diff` disagreed on two exports of one model; `diff` now runs the
    compare screen's matcher, so both count the same changed, removed and added ops."""
    from explorer.graph.compare import compare_documents
    from explorer.graph.match import CHANGED
    from explorer.models.graph import VALUE_OPS
    from tests.conftest import SAMPLES

    a_path = SAMPLES / "onnx" / "minigpt4_dynaxes_torchscript_opset17_noconstfold.onnx"
    if not a_path.exists():
        pytest.skip("real samples not found (a user's clone has no ../shared)")
    a, b = open_document(a_path), open_document(SAMPLES / "onnx" / "minigpt4_dynamo_dynseq_noopt.onnx")
    comparison = compare_documents(a, b)
    summary = diff_documents(a, b)["summary"]
    ma, mb, match = comparison.a, comparison.b, comparison.match

    def ops(model, status, value):
        return sum(1 for n in range(model.n_nodes) if status[n] == value and model.node_op[n] not in VALUE_OPS)

    assert summary["nodes_changed"] == ops(ma, match.status_a, CHANGED)
    assert summary["nodes_removed"] == ops(ma, match.status_a, ONLY)
    assert summary["nodes_added"] == ops(mb, match.status_b, ONLY)
