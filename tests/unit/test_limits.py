"""Limits that say so: every format's ceilings are in the README as the code declares them, the numbers in
those sentences are the ones the code enforces, and the scheduler's memory guard refuses with the estimate."""

from __future__ import annotations

import pytest

from explorer import memory_guard
from explorer.api import open_document
from explorer.errors import LoadError
from explorer.registry import registry
from tests.conftest import ROOT, SAMPLE_DATA


def test_the_readme_lists_every_formats_limits():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Limits") : readme.index("## What `check` finds")]
    for fmt in registry().formats:
        assert fmt.limits, f"{fmt.name} declares no limits"
        assert f"**{fmt.title}" in section or f" and {fmt.title}**" in section, fmt.title
        for sentence in fmt.limits:
            assert f"  - {sentence}\n" in section, sentence


def limits_of(name: str) -> str:
    return " ".join(next(f for f in registry().formats if f.name == name).limits)


def test_the_numbers_in_the_limits_are_the_enforced_ones():
    from explorer.formats.ark.reader import INT_LIMIT
    from explorer.formats.coreml.model import MAX_STATS_BYTES as COREML_STATS
    from explorer.formats.coreml.reader import MAX_SPEC_BYTES
    from explorer.formats.onnx.details import MAX_STATS_BYTES as ONNX_STATS
    from explorer.formats.scheduler_ir.checks import MAX_PER_CODE
    from explorer.formats.scheduler_ir.memory_budget import MEMORY_PER_FILE_BYTE
    from explorer.formats.tvm_mlf.archive import MAX_MEMBER_BYTES, MAX_MEMBERS, MAX_TOTAL_BYTES
    from explorer.formats.tvm_mlf.graph import MAX_ENTRIES, MAX_STORAGE_ID
    from explorer.formats.tvm_mlf.params import MAX_NDIM
    from explorer.protobuf_wire import MAX_BYTES

    scheduler = limits_of("scheduler-ir")
    assert f"{MEMORY_PER_FILE_BYTE:g}× the file's size" in scheduler
    assert f"plus {memory_guard.BASE_BYTES // 2**20} MiB" in scheduler and f"{MAX_PER_CODE:,} listed" in scheduler
    assert INT_LIMIT == 2**62 and "above 2^62" in limits_of("ark-model")
    assert MAX_BYTES == MAX_SPEC_BYTES == 2**31 - 1 and "2 GiB − 1 byte" in limits_of("onnx") + limits_of("coreml")
    assert (
        ONNX_STATS == COREML_STATS == 256 * 2**20
        and "256 MiB" in limits_of("onnx")
        and "256 MiB" in limits_of("coreml")
    )
    tvm = limits_of("tvm-mlf")
    assert f"{MAX_MEMBER_BYTES // 2**20} MiB per member" in tvm and f"{MAX_TOTAL_BYTES // 2**30} GiB in all" in tvm
    assert f"{MAX_MEMBERS:,} members" in tvm and f"{MAX_ENTRIES:,} node outputs" in tvm
    assert f"{MAX_NDIM} dimensions" in tvm and MAX_STORAGE_ID == 2**31 and "below 2^31" in tvm
    from explorer.formats.tvm_mlf.params import MAX_NAME_BYTES
    from explorer.formats.tvm_mlf.params import MAX_STATS_BYTES as TVM_STATS

    assert f"names up to {MAX_NAME_BYTES // 2**10} KiB" in tvm and f"over {TVM_STATS // 2**20} MiB" in tvm
    from explorer.formats.scheduler_ir.memory_budget import KEPT_PER_ELEMENT, MEMORY_PER_ELEMENT, MEMORY_PER_OBJECT
    from explorer.formats.tvm_mlf.graph import MAX_GRAPH_NODES
    from explorer.formats.tvm_mlf.graph import MEMORY_PER_OBJECT as TVM_PER_OBJECT

    assert f"{MAX_GRAPH_NODES:,} nodes" in tvm and f"{TVM_PER_OBJECT:,} bytes each" in tvm
    assert f"JSON objects ({MEMORY_PER_OBJECT} bytes each) and array elements are counted" in scheduler
    assert f"({KEPT_PER_ELEMENT} bytes an element once decoded)" in scheduler
    assert f"({MEMORY_PER_ELEMENT} bytes an element: one workload's" in scheduler


def test_the_memory_guard_refuses_with_its_estimate(monkeypatch, tmp_path):
    path = SAMPLE_DATA / "clean_2x2_stschedule.json"
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: 50 * 2**20)  # a machine with 50 MiB free
    with pytest.raises(LoadError) as refused:
        open_document(path)
    assert "needs about" in refused.value.message and "50.0 MiB is available" in refused.value.message
    assert "IR_EXPLORER_MEMORY_GUARD=off" in refused.value.message
    monkeypatch.setenv("IR_EXPLORER_MEMORY_GUARD", "off")
    assert open_document(path).schedule.n_workloads > 0
    monkeypatch.delenv("IR_EXPLORER_MEMORY_GUARD")
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: None)  # a system that cannot say: no guess
    assert open_document(path).schedule.n_workloads > 0


def test_nesting_past_the_limit_is_refused_as_such(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    schedule = tmp_path / "deep_stschedule.json"
    schedule.write_text('{"0": ' + deep + "}")
    with pytest.raises(LoadError) as refused:
        open_document(schedule)
    assert "nested too deeply" in refused.value.message


def test_the_model_mil_limits_are_the_enforced_ones():
    from explorer.formats.coreml.mil_text import MAX_SKIPPED_LISTED
    from explorer.formats.coreml.reader import MAX_METADATA_BYTES, MIL_MEMORY_PER_BYTE, MIL_MEMORY_PER_LINE

    said = limits_of("coreml")
    assert f"when {MIL_MEMORY_PER_BYTE}× its size" in said and f"when {MIL_MEMORY_PER_LINE:,} bytes a line" in said
    assert f"({MAX_SKIPPED_LISTED} listed" in said
    assert f"metadata.json over {MAX_METADATA_BYTES // 2**20} MiB" in said
