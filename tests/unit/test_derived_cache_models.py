"""Issue #76 for models: an ONNX document is kept with its shape inference's answer and the graph built after it, so
a second open runs neither; what the user brings (per-node data) is never kept; the dims bound are part of the key;
an open that finds no entry hashes nothing, and what cost little to work out, or a file changed since it was read,
writes nothing."""

from __future__ import annotations

import os
import pickle
import shutil

import pytest

from explorer.api import open_document
from explorer.cache import documents as derived
from explorer.cache import folder as cache_folder
from explorer.cache import key as cache_key
from explorer.cli import main
from tests.conftest import SAMPLE_DATA, entry_files, written

MODEL = SAMPLE_DATA / "residual_blocks.onnx"
NESTED = SAMPLE_DATA / "subgraphs_functions.onnx"


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def never(what: str):
    def refuse(*args, **kwargs):
        pytest.fail(f"{what} ran again on a kept document")

    return refuse


@pytest.mark.parametrize("path", [MODEL, NESTED], ids=lambda p: p.name)
def test_a_kept_model_answers_without_inference_or_building_its_graph(path, cache_on, capsys, monkeypatch):
    from explorer import isolated
    from explorer.formats.onnx import graph_model

    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "off")
    without = run(capsys, "graph", str(path), "--json")
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "on")
    first = run(capsys, "graph", str(path), "--json")
    kept = written(cache_on)
    monkeypatch.setattr(isolated, "run_forked", never("shape inference"))
    monkeypatch.setattr(graph_model, "onnx_graph", never("the graph's build"))
    second = run(capsys, "graph", str(path), "--json")
    assert first == without and second == without and without[0] == 0
    assert len(kept) == 1 and written(cache_on) == kept  # read back, nothing new: not written again


def test_the_index_reads_back_every_graph_from_the_model_it_keeps(cache_on):
    """Subgraphs (an If's branches, a Loop's body, nested) and local functions are found again in the model by
    their keys; the declared types come back, the inferred ones only when the deep checks merge them again."""
    document = open_document(NESTED)
    document.run_deep_checks()
    index = document.view.index
    back = pickle.loads(pickle.dumps(index, protocol=5))
    assert sorted(back.graphs) == sorted(index.graphs) and len(back.graphs) > 3
    assert any(".attribute[" in key for key in back.graphs) and any(k.startswith("functions[") for k in back.graphs)
    for key, graph in index.graphs.items():
        again = back.graphs[key]
        assert again.proto.SerializeToString() == graph.proto.SerializeToString()
        assert {n: t.SerializeToString() for n, t in again.types.items()} == \
            {n: t.SerializeToString() for n, t in graph.types.items()}  # fmt: skip
        assert again.inferred == {} and again.node_names == graph.node_names
    assert any(graph.inferred for graph in index.graphs.values())
    assert back.inference is not None and back.inference.output == index.inference.output


def test_the_dims_bound_are_part_of_the_key(cache_on, capsys, monkeypatch):
    path = real_torchscript_sample()
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "off")
    plain, bound = run(capsys, "info", str(path), "--json"), run(capsys, "info", str(path), "--json", "--dims", "seq=8")
    assert plain != bound
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "on")
    for _ in range(2):
        assert run(capsys, "info", str(path), "--json") == plain
        assert run(capsys, "info", str(path), "--json", "--dims", "seq=8") == bound
    assert len(entry_files(cache_on)) == 2


def real_torchscript_sample():
    from tests.conftest import SAMPLES

    path = SAMPLES / "onnx" / "minigpt4_dynaxes_torchscript_opset17_noconstfold.onnx"
    if not path.is_file():
        pytest.skip(f"needs the real samples ({path} is absent)")
    return path


def test_the_users_per_node_data_is_never_kept(cache_on, tmp_path):
    from explorer.graph.node_data import load_node_data

    document = open_document(MODEL)
    document.run_deep_checks()
    model = document.view.drawn_graph()
    data = tmp_path / "latency.csv"
    data.write_text("".join(f"{label},{k}\n" for k, label in enumerate(model.node_label)))
    load_node_data(document, [data])
    assert "data: latency" in model.data_sets and "data: latency" in model.node_values
    derived.keep(document)
    derived.wait_for_writes()
    again = open_document(MODEL)
    kept = again.view.drawn_graph()
    assert again._kept_state is not None and kept is not model  # read back
    assert kept.data_sets == {} and "data: latency" not in kept.node_values
    assert "data: latency" not in kept.group_values and kept.n_nodes == model.n_nodes
    assert "data: latency" in model.data_sets  # (the shown document keeps what the user brought)


def test_an_open_that_finds_no_entry_hashes_nothing_and_the_write_hashes_once(cache_on, monkeypatch):
    hashed = []
    real = cache_key.content_hash
    monkeypatch.setattr(cache_key, "content_hash", lambda path: hashed.append(path) or real(path))
    document = open_document(MODEL)
    document.run_deep_checks()
    document.view.drawn_graph()
    assert hashed == [] and entry_files(cache_on) == []
    derived.keep(document)
    derived.wait_for_writes()
    assert len(hashed) == 1 and len(entry_files(cache_on)) == 1
    assert open_document(MODEL)._kept_state is not None and len(hashed) == 2  # an entry found: checked by the hash


def test_what_cost_little_to_work_out_is_not_written(cache_on, monkeypatch):
    monkeypatch.setattr(derived, "MIN_SECONDS", 3600.0)
    document = open_document(MODEL)
    document.run_deep_checks()
    document.view.drawn_graph()
    assert 0 < document.derive_seconds < 3600
    derived.keep(document)
    derived.wait_for_writes()
    assert entry_files(cache_on) == []


def test_a_file_changed_after_it_was_read_is_not_kept(cache_on, tmp_path):
    path = tmp_path / "m.onnx"
    shutil.copy(MODEL, path)
    document = open_document(path)
    document.run_deep_checks()
    before = os.stat(path)
    path.write_bytes(path.read_bytes())  # the same bytes written again: its change time moves
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    derived.keep(document)
    derived.wait_for_writes()
    assert entry_files(cache_on) == []  # what was read may not be what the file holds now: kept under no key
    again = open_document(path)
    derived.keep(again)
    derived.wait_for_writes()
    assert len(entry_files(cache_on)) == 1


def test_a_file_whose_hash_would_cost_too_much_of_what_it_saves_is_not_kept(cache_on, monkeypatch):
    """Keeping costs a hash of every byte, on the write and on every second open: a file read quickly for its size
    (a 512 MiB TVM bundle in 0.5 s) is not kept."""
    document = open_document(MODEL)
    document.run_deep_checks()
    document.view.drawn_graph()
    seconds, size = document.derive_seconds, MODEL.stat().st_size
    monkeypatch.setattr(derived, "HASH_BYTES_PER_SECOND", size * derived.SAVED_PER_HASH / seconds / 2)
    derived.keep(document)
    derived.wait_for_writes()
    assert entry_files(cache_on) == []
    monkeypatch.setattr(derived, "HASH_BYTES_PER_SECOND", size * derived.SAVED_PER_HASH / seconds * 2)
    derived.keep(document)
    derived.wait_for_writes()
    assert len(entry_files(cache_on)) == 1


def test_a_file_changed_after_its_entry_was_checked_is_not_kept(cache_on, tmp_path):
    """The hash taken when an entry was looked up (a miss: the file changed in place) is not trusted for a write
    after the file changed again."""
    path = tmp_path / "m.onnx"
    shutil.copy(MODEL, path)
    derived.keep(open_document(path))
    derived.wait_for_writes()
    [entry] = entry_files(cache_on)
    entry.write_bytes(b"damaged")  # an entry under the file's name that does not read: the open hashes, misses
    entry.chmod(0o600)
    document = open_document(path)
    assert document._kept_state is None and document.cache_slot._key is not None
    before = os.stat(path)
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    derived.keep(document)
    derived.wait_for_writes()
    assert entry.read_bytes() == b"damaged"  # nothing written over it
