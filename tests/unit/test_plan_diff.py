"""Two ARK plans of one model differ in their settings, not their graph (issue #59 item 3): `diff` and the
compare screen list each task, op Config and processor-group field that changed, with both values."""

from __future__ import annotations

import json

import pytest

from explorer.api import open_document
from explorer.diff import diff_documents, diff_lines
from tests.conftest import SAMPLES

PLAN = SAMPLES / "ark" / "plan_main_d8bbaebd_plan.json"
pytestmark = pytest.mark.skipif(not PLAN.exists(), reason="../shared/samples is not beside the checkout")


def larger_tile(folder):
    """The tutorial's plan_1_larger_tile change, made on the sample: one warp, a smaller tile, more tasks."""
    plan = json.loads(PLAN.read_text())
    task = plan["TaskInfos"][0]
    task["NumWarps"] = task["Ops"][0]["Config"]["NumWarps"] = 1
    task["Ops"][0]["Config"]["TileShapeMNK"] = [1, 64, 64]
    task["Ops"][0]["Config"]["NumTasks"] = 88_064
    resources = plan["ProcessorGroups"][0]["ResourceGroups"][0]
    resources["WarpRange"] = [0, 1]
    resources["TaskGroups"][0]["TaskRange"] = [0, 88_064]
    path = folder / "plan_larger_tile.json"
    path.write_text(json.dumps(plan))
    return path


def test_diff_lists_every_setting_that_changed(tmp_path):
    result = diff_documents(open_document(PLAN), open_document(larger_tile(tmp_path)))
    settings = [(c["where"], c["a"], c["b"]) for c in result["changes"] if c["kind"] == "setting-changed"]
    assert settings == [
        ("task 0 NumWarps", "8", "1"),
        ("task 0 op 0 (matmul) Config.NumTasks", "172", "88064"),
        ("task 0 op 0 (matmul) Config.NumWarps", "8", "1"),
        ("task 0 op 0 (matmul) Config.TileShapeMNK", "[128, 256, 64]", "[1, 64, 64]"),
        ("processor group 0 resource group 0 WarpRange", "[0, 8)", "[0, 1)"),
        ("processor group 0 resource group 0 task group 0 TaskRange", "[0, 172)", "[0, 88064)"),
    ]
    assert result["summary"]["settings_changed"] == 6
    assert "  setting-changed where task 0 NumWarps, a 8, b 1" in diff_lines(result)
    same = diff_documents(open_document(PLAN), open_document(PLAN))
    assert "settings_changed" not in same["summary"]


async def test_the_compare_screen_says_which_settings_differ(tmp_path):
    from textual.widgets import Static

    from tests.app.test_compare import wait_compare
    from widgets.app import make_app

    app = make_app(PLAN, compare=larger_tile(tmp_path))
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await wait_compare(pilot)
        header = str(screen.query_one("#compare-summary", Static).render())
        settings = str(screen.query_one("#compare-settings", Static).render())
    assert "6 settings differ" in header
    assert settings.startswith("settings: task 0 NumWarps 8 → 1; task 0 op 0 (matmul) Config.NumTasks 172 → 88064;")
