"""Issue #74 item 1: a `--dims` name the model does not have is said in the TUI (it bound nothing, silently)."""

from __future__ import annotations

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import samples_dir
from widgets.app import make_app


async def test_the_tui_says_a_name_the_model_does_not_have():
    app = make_app(samples_dir("onnx") / "minigpt4_dynamo_dynseq_noopt.onnx", dims={"seq": 128, "sequence": 3})
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        for _ in range(200):
            if app._notifications:
                break
            await pilot.pause(0.02)
        said = [str(notice.message) for notice in app._notifications]
        assert said == ["this model has no dim named 'sequence'; its dims: seq"]
