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
        assert "Traceback" not in result.stderr and result.stderr.strip()
    assert not out.exists()
