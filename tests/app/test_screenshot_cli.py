"""`ir-explorer screenshot`: a headless SVG of a view at a given state; bad requests exit 2 with one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from explorer.cli import main
from tests.conftest import ROOT, SAMPLE_DATA

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


@pytest.mark.parametrize("view", ["tree", "timeline", "buffers"])
def test_each_view_is_written_as_svg(tmp_path, view):
    out = tmp_path / f"{view}.svg"
    assert (
        main(
            [
                "screenshot",
                str(PLANTED),
                "--view",
                view,
                "--core",
                "1",
                "--workload",
                "3",
                "--size",
                "120x40",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    svg = out.read_text()
    assert svg.startswith("<svg") and "planted_problems_2x2_stschedule.json" in svg
    if view == "buffers":
        assert "overlap:&#160;tensor&#160;36&#160;and&#160;90000" in svg
    if view == "timeline":
        assert "time&#160;(cycles)" in svg


def test_bad_requests_exit_2_without_traceback(tmp_path):
    out = tmp_path / "x.svg"
    for extra in (["--core", "9"], ["--core", "0", "--workload", "99"], ["--size", "huge"]):
        result = subprocess.run(
            [sys.executable, "-m", "explorer", "screenshot", str(PLANTED), "-o", str(out), *extra],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert result.returncode == 2, extra
        assert "Traceback" not in result.stderr and result.stderr.strip(), (extra, result.stderr)  # all of it
    assert not out.exists()


def test_open_opens_groups_as_enter_does(tmp_path, monkeypatch, capsys):
    """`screenshot --view graph --open G`: the graph view after Enter opened G (here a subgraph of the demo
    model), the cursor on its first member; a group that is not there, or --open without the graph view, is one
    line and exit 2."""
    import widgets.screenshot as screenshot

    seen = {}
    real = screenshot._open_groups

    def spy(graph, opens, path):
        real(graph, opens, path)
        seen["expanded"] = set(graph.expanded)
        seen["selected"] = graph.selected_key
        seen["model"] = graph.model

    monkeypatch.setattr(screenshot, "_open_groups", spy)
    model_file = SAMPLE_DATA / "subgraphs_functions.onnx"
    out = tmp_path / "opened.svg"
    from explorer.exports.graph_json import resolve_group

    assert main(["screenshot", str(model_file), "--view", "graph", "--open", "g1", "-o", str(out)]) == 0
    group = resolve_group(seen["model"], "g1")
    model = seen["model"]
    assert set(model.ancestors(group)) <= seen["expanded"]  # its closed parent was opened first, as Enter must
    kind, node = seen["selected"]
    assert kind == 0 and group in model.ancestors(int(model.node_group[node]))  # the cursor on one of its members
    assert out.read_text().startswith("<svg")
    capsys.readouterr()
    assert main(["screenshot", str(model_file), "--view", "graph", "--open", "nothere", "-o", str(out)]) == 2
    assert "no group 'nothere'" in capsys.readouterr().err
    assert main(["screenshot", str(model_file), "--view", "tree", "--open", "g1", "-o", str(out)]) == 2
    assert "give --view graph" in capsys.readouterr().err
