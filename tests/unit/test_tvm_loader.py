"""TVM MLF bundles: every metadata version, the storage plan against hand-worked values, params, hostile tars."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import tarfile

import numpy as np
import pytest

from explorer.api import open_document
from explorer.errors import LoadError
from explorer.formats.tvm_mlf import archive as mlf_archive
from explorer.formats.tvm_mlf.params import ParamsError, array_stats, parse_params
from explorer.formats.tvm_mlf.samples import MLF_NAME, bundle_members, params_bytes, tar_bytes
from tests.conftest import ROOT, SAMPLE_DATA, samples_dir

SAMPLE = SAMPLE_DATA / MLF_NAME


def write_tar(tmp_path, members: dict[str, bytes], name="bundle.tar"):
    path = tmp_path / name
    path.write_bytes(tar_bytes(members))
    return path


def test_storage_plan_of_the_sample_worked_by_hand():
    # classifier graph (float32): entry → storage id, bytes, producing node, last reader
    #   e0 input [1,64]  sid0 256 B  node0 → read by node3      e4 relu [1,32]   sid0 128 B node4 → node7
    #   e1 p0 [32,64]    sid1 8192   node1 → node3              e5 p2 [10,32]    sid4 1280  node5 → node7
    #   e2 p1 [32]       sid2 128    node2 → node3              e6 p3 [10]       sid5 40    node6 → node7
    #   e3 dense [1,32]  sid3 128    node3 → node4              e7 dense2 [1,10] sid6 40    node7 → node8
    #   e8 softmax (head) sid7 40    node8 → live to the end (node 8)
    # sid0 is shared by e0 and e4: size max(256, 128) = 256, live from node 0 to node 7.
    doc = open_document(SAMPLE)
    module = doc.view.modules[0]
    plan = module.plan
    lifetimes = {sid: (s.size, s.start, s.end) for sid, s in plan.storage.items()}
    assert lifetimes == {
        0: (256, 0, 7),
        1: (8192, 1, 3),
        2: (128, 2, 3),
        3: (128, 3, 4),
        4: (1280, 5, 7),
        5: (40, 6, 7),
        6: (40, 7, 8),
        7: (40, 8, 8),
    }
    # live bytes per node: n3 = 256 + 8192 + 128 + 128; n7 = 256 + 1280 + 40 + 40; n8 = 40 + 40
    assert plan.live_bytes.tolist() == [256, 8448, 8576, 8704, 384, 1536, 1576, 1616, 80]
    assert (plan.peak_bytes, plan.peak_node, plan.allocated_bytes) == (8704, 3, 10104)
    assert {s.sid: s.role for s in plan.storage.values()} == {
        0: "input",
        1: "param",
        2: "param",
        3: "intermediate",
        4: "param",
        5: "param",
        6: "intermediate",
        7: "output",
    }


def test_sample_bundle_summary_and_the_occupancy_schedule():
    doc = open_document(SAMPLE)
    assert doc.problems == []
    assert doc.summary["metadata_version"] == 7
    classifier, kws = doc.summary["modules"]
    assert classifier == {
        "name": "classifier",
        "executors": ["graph"],
        "graph_nodes": 9,
        "tvm_ops": 4,
        "params": 4,
        "param_bytes": 32 * 64 * 4 + 32 * 4 + 10 * 32 * 4 + 10 * 4,
        "storage_ids": 8,
        "peak_storage_bytes": 8704,
        "workspace_bytes": 384,
    }
    assert (kws["executors"], kws["graph_nodes"], kws["params"], kws["workspace_bytes"]) == (["aot"], 0, 1, 1184)
    s = doc.schedule  # one core per module with a graph, one workload per tvm_op node
    assert s.core_ids.tolist() == [0] and s.wl_id.tolist() == [3, 4, 7, 8]
    # before node 3 the live storage ids are 0, 1, 2 and 3 (3 is written by it): 8704 bytes
    assert doc.schedule_analysis.l2_bytes.tolist() == [8704, 384, 1616, 80]
    view = doc.view
    assert view.function_source("tvmgen_classifier_fused_nn_relu") == ("codegen/host/src/classifier_lib0.c", 12)


def test_real_bundles_open_with_zero_errors():
    folder = samples_dir("tvm_mlf")
    expected = {
        "pub_guberti_yes_no_9c6dfeb.tar": (4, ["graph"], 16, 6, 9, 33524, 14, 17392),
        "pub_gromero_sine_aot_model.tar": (5, ["aot"], 0, 0, 6, 1284, 0, 1184),
        "small_cnn_graph_crt_c.tar": (7, ["graph"], 18, 9, 8, 22952, 13, 100800),
    }
    for name, values in expected.items():
        doc = open_document(folder / name)
        assert [p for p in doc.problems if p.severity == "error"] == [], name
        (module,) = doc.summary["modules"]
        got = (
            doc.summary["metadata_version"],
            module["executors"],
            module["graph_nodes"],
            module["tvm_ops"],
            module["params"],
            module["param_bytes"],
            module["storage_ids"],
            module["workspace_bytes"],
        )
        assert got == values, name
        # the constants in metadata.json are exactly the params file's bytes
        constants = [m.constants_bytes for m in doc.view.modules[0].memory if m.function == "main"]
        assert constants == [module["param_bytes"]]


def test_extracted_folder_reads_like_the_tar(tmp_path):
    folder = tmp_path / "extracted"
    for name, data in bundle_members().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    from_folder = open_document(folder)
    assert from_folder.meta.format == "tvm-mlf"
    assert from_folder.summary["modules"] == open_document(SAMPLE).summary["modules"]


def test_flat_v5_and_operator_only_bundles(tmp_path):
    members = bundle_members()
    flat = {
        "metadata.json": json.dumps(
            {
                "version": 5,
                "model_name": "net",
                "executors": ["graph"],
                "style": "full-model",
                "target": {"1": "c -keys=cpu"},
                "memory": {"functions": {"main": [{"device": 1, "workspace_size_bytes": 99}]}},
            }
        ).encode(),
        "executor-config/graph/graph.json": members["executor-config/graph/classifier.graph"],
        "parameters/net.params": members["parameters/classifier.params"],
        "src/relay.txt": members["src/classifier.relay"],
    }
    doc = open_document(write_tar(tmp_path, flat))
    (module,) = doc.summary["modules"]
    assert (module["name"], module["graph_nodes"], module["params"], module["workspace_bytes"]) == ("net", 9, 4, 99)
    operator = {
        "metadata.json": json.dumps(
            {
                "version": 7,
                "modules": {
                    "ops": {
                        "executors": [],
                        "style": "operator",
                        "memory": {"add": [{"device": 1, "workspace_size_bytes": 12}]},
                        "target": ["c"],
                    }
                },
            }
        ).encode(),
        "src/tir-1.txt": b"# from tvm.script import tir as T\n",
        "codegen/host/src/ops_lib0.c": b"int32_t add(void) {\n  return 0;\n}\n",
    }
    doc = open_document(write_tar(tmp_path, operator, "ops.tar"))
    (module,) = doc.summary["modules"]
    assert (module["executors"], module["graph_nodes"], module["storage_ids"]) == ([], 0, 0)
    assert doc.view.modules[0].tir_members == ["src/tir-1.txt"]
    assert [(m.function, m.workspace_bytes) for m in doc.view.modules[0].memory] == [("add", 12)]


def test_params_parser_and_stats():
    data = params_bytes({"w": np.array([[0.0, -2.0], [4.0, 0.0]], dtype=np.float32), "b": np.arange(3, dtype=np.int8)})
    w, b = parse_params(data)
    assert (w.name, w.dtype, w.shape, w.nbytes) == ("w", "float32", (2, 2), 16)
    assert (b.name, b.dtype, b.shape, b.nbytes) == ("b", "int8", (3,), 3)
    stats = array_stats(data, w)
    # values 0, -2, 4, 0: min -2, max 4, mean 0.5, half of them zero
    assert (stats["min"], stats["max"], stats["mean"], stats["sparsity"]) == ("-2", "4", "0.5", "50.0% zeros")
    with pytest.raises(ParamsError) as bad_magic:
        parse_params(b"\0" * 24)
    assert bad_magic.value.args[0] == 0
    with pytest.raises(ParamsError) as truncated:
        parse_params(data[:-2])
    assert "claims 3 bytes" in truncated.value.args[1]
    huge = bytearray(data)
    struct.pack_into("<Q", huge, 16, 2**40)  # the name count: far more than the file holds
    with pytest.raises(ParamsError, match="cannot fit"):
        parse_params(bytes(huge))


def test_broken_members_are_located_problems(tmp_path):
    members = bundle_members()
    members["parameters/classifier.params"] = members["parameters/classifier.params"][:100]
    graph = json.loads(members["executor-config/graph/classifier.graph"])
    graph["nodes"][4]["inputs"] = [[42, 0, 0]]
    members["executor-config/graph/classifier.graph"] = json.dumps(graph).encode()
    doc = open_document(write_tar(tmp_path, members))
    found = {(p.code, p.location) for p in doc.problems}
    assert ("bad-graph", "executor-config/graph/classifier.graph: $.nodes[4].inputs[0]") in found
    assert any(code == "bad-params" and loc.startswith("parameters/classifier.params: byte") for code, loc in found)
    ref = doc.find_ref({"member": "executor-config/graph/classifier.graph", "location": "x: $.nodes[4].inputs[0]"})
    assert ref == ("workload", 1)  # node 4 is the module's second tvm_op


@pytest.fixture
def quiet_dir(tmp_path, monkeypatch):
    """Run from an empty folder, so a test can check that nothing was written anywhere near."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def hostile_tar(path, entries):
    with tarfile.open(path, "w") as archive:
        for info, data in entries:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def member(name, data=b"", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data)
    return info, data if kind == tarfile.REGTYPE else None


def test_hostile_members_are_refused_and_nothing_is_written(tmp_path, quiet_dir):
    metadata = json.dumps({"version": 5, "model_name": "m", "executors": []}).encode()
    path = hostile_tar(
        tmp_path / "hostile.tar",
        [
            member("./metadata.json", metadata),
            member("../escape.txt", b"x"),
            member("/etc/absolute.txt", b"x"),
            member("./a/../../up.txt", b"x"),
            member("./link", kind=tarfile.SYMTYPE, link="/etc/passwd"),
            member("./hard", kind=tarfile.LNKTYPE, link="metadata.json"),
            member("./dev", kind=tarfile.CHRTYPE),
            member("./fifo", kind=tarfile.FIFOTYPE),
        ],
    )
    before = sorted(os.listdir(tmp_path))
    doc = open_document(path)
    refused = sorted(p.location for p in doc.problems if p.code == "refused-member")
    assert refused == sorted(
        f"tar member {n!r}"
        for n in ("../escape.txt", "/etc/absolute.txt", "./a/../../up.txt", "./link", "./hard", "./dev", "./fifo")
    )
    assert all(p.severity == "error" for p in doc.problems if p.code == "refused-member")
    assert set(doc.view.mlf.bundle.members) == {"metadata.json"}
    assert sorted(os.listdir(tmp_path)) == before and os.listdir(quiet_dir) == []
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path.parent / "up.txt").exists()


def test_size_caps(tmp_path, monkeypatch):
    metadata = json.dumps({"version": 5, "model_name": "m"}).encode()
    path = hostile_tar(tmp_path / "big.tar", [member("./metadata.json", metadata), member("./big.bin", b"\0" * 5000)])
    monkeypatch.setattr(mlf_archive, "MAX_MEMBER_BYTES", 4096)
    doc = open_document(path)
    assert [p.location for p in doc.problems if p.code == "refused-member"] == ["tar member './big.bin'"]
    monkeypatch.setattr(mlf_archive, "MAX_MEMBER_BYTES", 1 << 20)
    monkeypatch.setattr(mlf_archive, "MAX_TOTAL_BYTES", len(metadata) + 100)
    doc = open_document(path)
    assert any("cap" in p.message for p in doc.problems if p.code == "refused-member")


@pytest.mark.parametrize("cut", [100, 700, 2000, "inside the last member"])
def test_truncated_and_corrupt_tars_are_clean_load_errors(tmp_path, cut):
    data = tar_bytes(bundle_members())
    if not isinstance(cut, int):
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            last = archive.getmembers()[-1]
        cut = last.offset_data + last.size // 2
    path = tmp_path / "cut.tar"
    path.write_bytes(data[:cut])
    with pytest.raises(LoadError) as caught:
        open_document(path)
    assert caught.value.location and caught.value.path == str(path)


def test_not_a_bundle(tmp_path):
    path = write_tar(tmp_path, {"readme.txt": b"hello"})
    with pytest.raises(LoadError, match="no metadata.json"):
        open_document(path)
    garbage = tmp_path / "garbage.tar"
    garbage.write_bytes(b"this is not a tar file at all" * 40)
    with pytest.raises(LoadError) as caught:
        open_document(garbage)
    assert caught.value.location == "tar header"


def test_info_json_and_check_on_the_sample():
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "info", str(SAMPLE), "--json"], capture_output=True, text=True, cwd=ROOT
    )
    payload = json.loads(result.stdout)
    assert payload["format"] == "tvm-mlf" and payload["summary"]["metadata_version"] == 7
    assert [m["name"] for m in payload["summary"]["modules"]] == ["classifier", "kws"]


def test_a_tvm_graphs_boxes_name_the_operators_they_fused():
    """Issue #40: every box said `tvm_op` with the fused function's name cut in the middle (conv2d lost); the op
    type is now the operators (`conv2d+add+relu`), the box coloured by the first, the legend names them."""
    from explorer.formats.tvm_mlf.graph_model import fused_operators
    from explorer.graph.colours import item_colours
    from explorer.graph.layout import item_texts
    from explorer.graph.visible import expand_all, visible_graph

    assert fused_operators("fused_nn_contrib_conv2d_NCHWc_add_nn_relu_1") == "conv2d+add+relu"
    assert fused_operators("fused_nn_contrib_dense_pack_add_14669711146056581479_") == "dense+add"
    assert fused_operators("fused_layout_transform_nn_batch_flatten") == "layout_transform+batch_flatten"
    model = open_document(SAMPLE_DATA / "two_modules_mlf.tar").view.graph_model()
    assert "tvm_op" not in set(model.node_op) and "dense+add" in set(model.node_op)
    visible = visible_graph(model, expand_all(model))
    titles = item_texts(model, visible).titles
    assert "dense+add" in titles and not any("fused_" in title for title in titles)
    _, legend = item_colours(model, visible, "op type")
    assert "dense" in [text for text, _ in legend] and "dense+add" not in [text for text, _ in legend]
