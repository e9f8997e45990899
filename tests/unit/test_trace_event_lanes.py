"""The Trace Event export (issue #59 item 6): cross-core arrows only while they can be followed (10,000 unless
--flows asks for all; a 480 MB schedule drew 649,728), and a joined hardware trace as a measured process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from explorer.api import open_document
from explorer.exports import trace_event
from explorer.exports.trace_event import MEASURED_PID, trace_events
from tests.conftest import ROOT, SAMPLE_DATA, SAMPLES

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def arrows(trace: dict) -> int:
    return sum(1 for event in trace["traceEvents"] if event["ph"] == "s")


def test_flows_are_drawn_up_to_the_default_and_all_when_asked(monkeypatch):
    document = open_document(PLANTED)
    every = trace_events(document)
    total = arrows(every)
    assert total > 0 and every["otherData"]["flows"] == f"{total:,} of {total:,} cross-core transfers drawn"
    monkeypatch.setattr(trace_event, "FLOWS_BY_DEFAULT", total - 1)
    none = trace_events(document)
    assert arrows(none) == 0
    assert none["otherData"]["flows"] == f"0 of {total:,} cross-core transfers drawn (export with --flows to draw all)"
    assert arrows(trace_events(document, flows=True)) == total


def test_the_flows_option_of_export(tmp_path):
    out = tmp_path / "t.json"
    subprocess.run([sys.executable, "-m", "explorer", "export", str(PLANTED), "--trace-event", str(out), "--flows"],
                   cwd=ROOT, check=True, capture_output=True)  # fmt: skip
    assert "cross-core transfers drawn" in json.loads(out.read_text())["otherData"]["flows"]


SCHEDULE = SAMPLES / "scheduler_ir" / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
TRACE = SAMPLES / "gemini_pipeline" / "int8_resnet34.sim_quantized_b1_c1_bw16_sim.txt"


@pytest.mark.skipif(not TRACE.exists(), reason="../shared/samples is not beside the checkout")
def test_a_joined_trace_is_a_measured_process_with_a_lane_per_core():
    document = open_document(SCHEDULE, companions={"trace": TRACE})
    trace = trace_events(document)
    measured = [e for e in trace["traceEvents"] if e["pid"] == MEASURED_PID and e["ph"] == "X"]
    names = [e["args"].get("name") for e in trace["traceEvents"] if e["pid"] == MEASURED_PID and e["ph"] == "M"]
    assert names[0] == f"measured: {TRACE.name}" and "core 0 (x0, y0) measured" in names
    spans = document.view.companions.measured
    assert len(measured) == int((spans.instructions > 0).sum()) > 0
    first = min(measured, key=lambda e: e["ts"])
    assert first["ts"] == float(min(s for s in spans.start.tolist() if s == s))
