"""The scheduler IR loader: every real variant loads; bad records become located problems; junk is a LoadError."""

from __future__ import annotations

import os
import stat

import pytest

from explorer.api import open_document
from explorer.errors import LoadError
from tests.conftest import samples_dir
from tests.schedules import entry, two_core


def errors(doc):
    return [p for p in doc.problems if p.severity == "error"]


def test_every_real_sample_loads_with_zero_errors():
    files = sorted(samples_dir("scheduler_ir").glob("*_stschedule.json"))
    assert files
    for path in files:
        mode = path.stat().st_mode
        doc = open_document(path)
        assert errors(doc) == [], path.name
        assert doc.schedule.wl0_key == "wl1_buffer"
        assert doc.summary["workloads"] == 69
        assert path.stat().st_mode == mode  # opened read-only, never changed


def test_real_sample_known_values():
    path = samples_dir("scheduler_ir") / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    doc = open_document(path)
    s = doc.summary
    # Counted independently with `python -c json.load(...)` over the file: 4 DRAM in, 41 out, 69 workloads.
    assert (s["cores"], s["workloads"], s["dram_reads"], s["dram_writes"]) == (1, 69, 41, 4)
    assert s["makespan"] == s["makespan_sequential"]  # one core: dependencies never delay it
    assert s["buffer_size"] == 8388608


def test_two_core_summary(write_json):
    doc = open_document(write_json(two_core()))
    assert doc.problems == []
    assert doc.summary == {
        "cores": 2,
        "workloads": 4,
        "layers": 4,
        "transfers": 5,
        "dram_reads": 1,
        "dram_writes": 1,
        "buffer_size": 1024,
        "makespan": 20,
        "makespan_sequential": 15,
        "peak_l2_bytes": 0,
    }


@pytest.mark.parametrize("variant", ["wl0", "wl1", "null", "absent"])
def test_weight_buffer_key_variants(write_json, variant):
    doc_json = two_core()
    for w in doc_json["0"]:
        w.pop("wl0_buffer")
        wl = [
            {
                "address": 0,
                "size": 8,
                "source": "DDR",
                "transfer_id": [0],
                "tensor_order": None,
                "layer_name": "A",
                "align": 8,
                "bitwidth": 8,
            }
        ]
        if variant == "wl0":
            w["wl0_buffer"] = wl
        elif variant == "wl1":
            w["wl1_buffer"] = wl
        elif variant == "null":
            w["wl0_buffer"] = None
    doc = open_document(write_json(doc_json))
    assert errors(doc) == []
    expected = {"wl0": 2, "wl1": 2, "null": 0, "absent": 0}[variant]
    assert doc.schedule.w0_addr.size == expected
    assert doc.schedule.wl0_key == ("wl1_buffer" if variant == "wl1" else "wl0_buffer")


def test_optional_keys_and_sources(write_json):
    doc_json = two_core()
    a = doc_json["0"][0]
    a["buffer"] = [
        {**entry(1, 0, 16, "ifmap", new=True), "cur_wl_ifmap": True, "tensor_order": None},
        {**entry(2, 16, 16, "ofmap"), "start_send": True},
    ]
    a["wl0_buffer"] = [{"address": 0, "size": 4, "source": s, "transfer_id": [0]} for s in ("CORE",)]
    doc_json["0"][1]["wl0_buffer"] = [{"address": 0, "size": 4, "source": "DRAM", "transfer_id": [0]}]
    doc_json["-1"]["in"][0].pop("related_ofmap", None)
    doc = open_document(write_json(doc_json))
    assert errors(doc) == []
    assert doc.schedule.buf_tensor.tolist() == [1, 2]


def test_core_keys_with_gaps(write_json):
    doc_json = two_core()
    doc_json["3"] = doc_json.pop("1")
    for w in doc_json["0"]:
        for d in w["ofmap"][0]["destination"]:
            if d.get("core_id") == 1:
                d["core_id"] = 3
    doc_json["-1"]["in"][0]["core_id"] = 3
    doc_json["xlen"] = 4
    doc = open_document(write_json(doc_json))
    assert errors(doc) == []
    assert doc.schedule.core_ids.tolist() == [0, 3]
    assert doc.summary["makespan"] == 20


def test_wrong_type_is_dropped_with_its_json_path(write_json):
    doc_json = two_core()
    doc_json["1"][0]["buffer"] = [entry(5, 0, 8), {**entry(6, 8, 8), "address": "0x100"}, entry(7, 16, 8)]
    doc = open_document(write_json(doc_json))
    [problem] = errors(doc)
    assert problem.location == '$["1"][0].buffer[1].address'
    assert 'expected an integer, got "0x100"' in problem.message
    # the rest of the workload is kept, and positions of later entries still point at the file
    assert doc.schedule.buf_tensor.tolist() == [5, 7]
    assert doc.schedule.buf_pos.tolist() == [0, 2]


def test_broken_workload_is_dropped_and_the_rest_kept(write_json):
    doc_json = two_core()
    doc_json["1"][1]["time"] = "soon"
    doc = open_document(write_json(doc_json))
    dropped = [p for p in errors(doc) if p.code == "bad-workload"]
    assert [p.location for p in dropped] == ['$["1"][1].time']
    assert doc.summary["workloads"] == 3


def test_missing_field_names_the_key(write_json):
    doc_json = two_core()
    del doc_json["0"][1]["buffer"]
    doc = open_document(write_json(doc_json))
    problem = next(p for p in errors(doc) if p.code == "bad-workload")
    assert problem.location == '$["0"][1]' and 'missing required key "buffer"' in problem.message


def test_huge_numbers_are_refused_not_overflowed(write_json):
    doc_json = two_core()
    doc_json["0"][0]["buffer"] = [{**entry(1, 0, 8), "address": 10**30}]
    doc = open_document(write_json(doc_json))
    assert [p.location for p in errors(doc)] == ['$["0"][0].buffer[0].address']


def test_strict_reports_unknown_keys(write_json):
    doc_json = two_core()
    doc_json["0"][0]["surprise"] = 1
    assert errors(open_document(write_json(doc_json))) == []
    strict = open_document(write_json(doc_json), strict=True)
    assert [(p.code, p.location) for p in errors(strict)] == [("unknown-key", '$["0"][0].surprise')]


@pytest.mark.parametrize(
    ("content", "where", "what"),
    [
        (b"", "byte 0", "empty"),
        (b"   \n", "byte 0", "empty"),
        (b'{"-1": {"in": [], "out": []}, "0": [', "line 1", "truncated"),
        (b'{"-1": {"in": [], \n "out": [}, "0": []}', "line 2", "not valid JSON"),
        (b"[1, 2, 3]", "$", "top level"),
        (b'{"buffersize": 1, "foo": 2}', "$", "core arrays"),
    ],
)
def test_unusable_files_raise_located_load_errors(tmp_path, content, where, what):
    path = tmp_path / "x_stschedule.json"
    path.write_bytes(content)
    with pytest.raises(LoadError) as info:
        open_document(path)
    assert str(path) in str(info.value)
    assert where in info.value.location
    assert what in str(info.value)


def test_binary_and_directory_and_missing(tmp_path):
    binary = tmp_path / "blob.bin"
    binary.write_bytes(os.urandom(256) + b"\x00")
    for path, message in ((binary, "unknown format"), (tmp_path, "directory"), (tmp_path / "nope", "no such")):
        with pytest.raises(LoadError, match=message):
            open_document(path)


def test_input_file_is_opened_read_only(write_json):
    path = write_json(two_core())
    path.chmod(stat.S_IRUSR)
    before = path.read_bytes()
    open_document(path)
    assert path.read_bytes() == before


def test_dropped_dram_and_wl_entries_keep_file_positions(write_json):
    doc_json = two_core()
    doc_json["-1"]["out"].insert(0, {"transfer_id": "x", "type": "fmap"})
    doc_json["0"][0]["wl1_buffer"] = [{"address": -5.5, "size": 4}, {"address": 0, "size": 4, "source": "CORE"}]
    doc = open_document(write_json(doc_json))
    assert sorted(p.location for p in errors(doc)) == ['$["-1"].out[0].transfer_id', '$["0"][0].wl1_buffer[0].address']
    assert doc.schedule.dout_pos.tolist() == [1]
    assert doc.schedule.w0_pos.tolist() == [1]
    assert doc.describe(("dram-out", 0))[0].title == "DRAM read 0"


def test_missing_sections_are_located_errors_and_the_rest_loads(write_json):
    doc_json = two_core()
    del doc_json["-1"]
    del doc_json["buffersize"]
    doc = open_document(write_json(doc_json))
    found = {(p.code, p.location) for p in errors(doc)}
    assert ("missing-key", "$") in found
    assert any('"-1"' in p.message for p in errors(doc)) and any('"buffersize"' in p.message for p in errors(doc))
    assert doc.summary["workloads"] == 4  # the cores still load
    # without the DRAM section, the DRAM input and output of the schedule no longer resolve
    assert {"unresolved-transfer", "dram-write-missing"} <= {p.code for p in errors(doc)}


def test_a_core_that_is_not_an_array(write_json):
    doc_json = two_core()
    doc_json["1"] = {"not": "a list"}
    doc = open_document(write_json(doc_json))
    assert ("bad-value", '$["1"]') in {(p.code, p.location) for p in errors(doc)}
    assert doc.schedule.core_ids.tolist() == [0]


def test_progress_moves_by_bytes_even_for_one_core(tmp_path, monkeypatch):
    """A one-core file's bar does not jump from 0 to 100 %: reading, the core's slices and the build each
    report, in order, and a slice-by-slice decode gives the same schedule as one decode."""
    from explorer.formats.scheduler_ir import lenient, load_progress, reader
    from explorer.formats.scheduler_ir.samples import Recipe, write_streaming

    path = tmp_path / "one_core_stschedule.json"
    size = write_streaming(path, Recipe(xlen=1, ylen=1, layers=400))
    whole = reader.load_schedule(path)[0]
    monkeypatch.setattr(load_progress, "READ_CHUNK", size // 7)
    monkeypatch.setattr(lenient, "SLICE_BYTES", size // 9)
    seen: list[tuple[float, str]] = []
    sliced = reader.load_schedule(path, progress=lambda done, total, stage: seen.append((done / total, stage)))[0]
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1
    stages = [stage for _, stage in seen]
    assert stages.count("reading") >= 6 and stages.count("core 0") >= 8 and "building columns" in stages
    assert len({round(f, 3) for f in fractions if 0 < f < 1}) >= 15  # many steps between 0 and 1
    for name in ("wl_id", "buf_tensor", "buf_addr", "w0_tid", "in_tid", "of_tid"):
        assert getattr(sliced, name).tolist() == getattr(whole, name).tolist(), name


def test_workload_details_are_read_again_from_the_file(write_json):
    """The loader keeps no copy of the file: a workload's raw JSON is read from the file when it is looked at,
    byte for byte what the file holds, and a file changed on disk since is said to be, never misread."""
    import json

    import msgspec

    from explorer.file_spans import FileChanged, FileSpans

    doc_json = two_core()
    doc_json["0"][1]["buffer"].append({"tensor_id": 9, "type": "weight", "address": "bad", "size": 4})
    path = write_json(doc_json)
    document = open_document(path)
    s = document.schedule
    assert isinstance(s.core_raw, FileSpans) and isinstance(s.dram_raw, bytes)
    top = msgspec.json.decode(path.read_bytes(), type=dict[str, msgspec.Raw])
    for row in range(s.n_workloads):
        items = msgspec.json.decode(top[str(int(s.wl_core[row]))], type=list[msgspec.Raw])
        assert s.workload_raw(row) == bytes(items[int(s.wl_pos[row])])
    assert document.view.raw(1)["buffer"][-1]["address"] == "bad"  # the details show the file, dropped parts too
    path.write_text(json.dumps(doc_json) + "\n")  # changed on disk
    with pytest.raises(FileChanged, match="changed on disk since it was loaded"):
        s.workload_raw(2)
    assert "changed on disk" in document.view.raw(2)["(not available)"]
    assert document.describe(("workload", 2))  # the details panel still draws, with the reason


def test_the_file_read_again_is_closed_with_its_schedule(write_json):
    import gc

    document = open_document(write_json(two_core()))
    document.schedule.workload_raw(0)
    fd = document.schedule.core_raw._fd[0]
    os.fstat(fd)  # open while the schedule lives
    del document
    gc.collect()
    with pytest.raises(OSError):
        os.fstat(fd)
