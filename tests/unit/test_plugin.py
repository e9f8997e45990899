"""The plug-in path is real: the example format package under examples/ is installed (pip, from its own
pyproject.toml and entry point) into a folder on the path of child processes, which then open its sample with
`info`, `check` and the TUI. A broken plug-in is reported by name and reason, never silently skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "layer_list"
SAMPLE = EXAMPLE / "sample.layers.txt"


def run(args: list[str], path: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in (extra_path, ROOT) if p)}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=path, env=env, timeout=120
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """pip-installs the example plug-in (no network: setuptools comes with the test extra) into a folder."""
    target = tmp_path_factory.mktemp("plugin")
    source = tmp_path_factory.mktemp("plugin-source") / "layer_list"
    shutil.copytree(EXAMPLE, source)  # setuptools builds in the source folder: never in the checkout
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (target / "irx_layer_list").is_dir()
    return target


def test_version_lists_the_plugin_format(installed, tmp_path):
    result = run(["--version"], tmp_path, installed)
    assert result.returncode == 0, result.stderr
    assert "layer-list" in result.stdout.splitlines()[1]
    assert "failed to load" not in result.stdout


def test_info_and_check_open_the_plugin_sample(installed, tmp_path):
    info = run(["info", str(SAMPLE), "--json"], tmp_path, installed)
    assert info.returncode == 0, info.stderr
    payload = json.loads(info.stdout)
    assert payload["format"] == "layer-list"
    assert payload["summary"]["layers"] == 6  # six good lines; the bad one is a problem, not a layer
    assert payload["problems"] == {"error": 1, "warning": 1}
    check = run(["check", str(SAMPLE), "--json"], tmp_path, installed)
    assert check.returncode == 1  # the sample has one malformed line: an error
    found = {(p["code"], p["location"]) for p in json.loads(check.stdout)["problems"]}
    assert found == {("bad-line", "line 8"), ("undefined-input", "line 7, input 1")}


def test_the_tui_opens_the_plugin_sample(installed, tmp_path):
    svg = tmp_path / "tree.svg"
    result = run(["screenshot", str(SAMPLE), "--view", "tree", "-o", str(svg)], tmp_path, installed)
    assert result.returncode == 0, result.stderr
    text = svg.read_text()
    assert "layer-list" in text and "conv1" in text and "undefined-input" in text
    refused = run(["screenshot", str(SAMPLE), "--view", "timeline", "-o", str(svg)], tmp_path, installed)
    assert refused.returncode == 2 and "has no timeline view" in refused.stderr


def test_without_the_plugin_the_sample_is_refused_plainly(tmp_path):
    result = run(["info", str(SAMPLE)], tmp_path)
    assert result.returncode == 2 and "unknown format" in result.stderr and "Traceback" not in result.stderr


def test_a_broken_plugin_is_reported_not_skipped(tmp_path):
    """A distribution whose entry point names a module that does not exist."""
    site = tmp_path / "site"
    info = site / "broken_formats-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-formats\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ir_explorer.formats]\nbroken = no_such_module_for_ir_explorer\n")
    version = run(["--version"], tmp_path, site)
    assert version.returncode == 0
    assert "plug-in broken failed to load: ModuleNotFoundError" in version.stdout
    info_run = run(["info", str(ROOT / "sample_data" / "clean_2x2_stschedule.json"), "--json"], tmp_path, site)
    assert info_run.returncode == 0  # the built-in formats still open
    assert "plug-in broken failed to load" in info_run.stderr
    assert json.loads(info_run.stdout)["plugin_failures"][0].startswith("plug-in broken failed to load")
