"""Nothing in a file reaches the terminal as a control sequence (issue #44 item 1): names holding OSC 52
(clipboard), a window title, ESC[2J or a bidi override are shown visibly in every view, and the line filter drops
whatever a view might still hold, so no rendered line carries one."""

from __future__ import annotations

import json
import re

import onnx
from onnx import TensorProto, helper
from rich.segment import Segment
from textual.color import Color

from explorer.api import open_document
from tests.app.helpers import SIZE, wait_loaded
from tests.app.test_compare import wait_compare
from tests.schedules import two_core
from widgets.app import make_app
from widgets.terminal_safety import InertText

EVIL = "\x1b]52;c;ZXZpbA==\x07X\x1b]0;title\x07\x1b[2J\u202eY\x9b"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def evil_schedule(tmp_path):
    schedule = two_core()
    text = json.dumps(schedule).replace('"layer_name": "', '"layer_name": "' + json.dumps(EVIL)[1:-1])
    path = tmp_path / "evil_stschedule.json"
    path.write_text(text)
    return path


def evil_onnx(tmp_path, name="evil.onnx", extra=""):
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="relu" + EVIL + extra),
        helper.make_node("Sigmoid", ["y"], ["z"], name="sig" + EVIL),
    ]
    graph = helper.make_graph(
        nodes, "g" + EVIL, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
    )  # fmt: skip
    path = tmp_path / name
    onnx.save(helper.make_model(graph), path)
    return path


def unsafe_segments(app) -> list[str]:
    """The text of every segment the screen would write now that holds a control or bidi character."""
    update = app.screen._compositor.render_update(full=True)
    return [seg.text for line in update.strips for strip in line for seg in strip if UNSAFE.search(seg.text)]


async def test_every_schedule_view_shows_a_hostile_layer_name_inert(tmp_path):
    app = make_app(evil_schedule(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        seen_visible = False
        for key in ("1", "down", "enter", "2", "right", "3", "6", "down", "enter", "7", "n"):
            await pilot.press(key)
            await pilot.pause(0.2)
            assert unsafe_segments(app) == [], key
            screen_text = "".join(s.text for line in app.screen._compositor.render_update(full=True).strips
                                  for strip in line for s in strip)  # fmt: skip
            seen_visible |= "␛]52;c;" in screen_text
        assert seen_visible  # shown, not hidden: the reader sees there was an escape in the name


async def test_graph_tree_and_compare_show_hostile_node_names_inert(tmp_path):
    a, b = evil_onnx(tmp_path), evil_onnx(tmp_path, "evil_b.onnx", extra="2")
    app = make_app(a, compare=b)
    async with app.run_test(size=SIZE) as pilot:
        await wait_compare(pilot)
        for key in ("n", "down", "tab", "down"):
            await pilot.press(key)
            await pilot.pause(0.1)
            assert unsafe_segments(app) == [], key
    app = make_app(a)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        for key in ("1", "down", "enter", "down", "6", "down", "enter"):
            await pilot.press(key)
            await pilot.pause(0.1)
            assert unsafe_segments(app) == [], key


def test_the_svg_and_the_cli_say_the_names_as_the_tui_does(tmp_path):
    """Made visible where they enter the document, the names read the same in `graph --svg` and `--json`, and
    neither carries a bidi override or a control character."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    model = evil_onnx(tmp_path)
    svg = tmp_path / "g.svg"
    subprocess.run([sys.executable, "-m", "explorer", "graph", str(model), "--svg", str(svg)], cwd=ROOT, check=True)
    drawing = svg.read_text()
    assert "relu␛]52;c;ZXZpbA==" in drawing and not UNSAFE.search(drawing)
    out = subprocess.run([sys.executable, "-m", "explorer", "graph", str(model), "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "relu␛]52;c;ZXZpbA==" in json.loads(out)["nodes"][0]["label"] + json.loads(out)["nodes"][1]["label"]


def test_hostile_names_enter_the_document_visible(tmp_path):
    doc = open_document(evil_onnx(tmp_path))
    model = doc.view.graph_model()
    labels = list(model.node_label)
    assert any(label.startswith("relu␛]52;c;ZXZpbA==␇X␛]0;title␇␛[2J\\u202eY\\u009b") for label in labels)
    assert not any(UNSAFE.search(label) for label in labels)
    schedule = open_document(evil_schedule(tmp_path))
    assert all(not UNSAFE.search(name) for name in schedule.schedule.layers)
    assert all(not UNSAFE.search(p.message + p.location) for p in schedule.problems)


def test_the_line_filter_drops_what_a_view_forgot_and_keeps_the_layout():
    from rich.cells import cell_len

    segments = [Segment("name\x1b]0;x\x07 \u202etail"), Segment("\x1b[2J", None, [(1,)])]
    out = InertText().apply(segments, Color(0, 0, 0))
    assert out[0].text == "name]0;x tail"
    assert cell_len(out[0].text) == cell_len(segments[0].text)  # the zero-width characters only
    assert out[1] is segments[1]  # Textual's own control segments pass
    clean = [Segment("plain")]
    assert InertText().apply(clean, Color(0, 0, 0)) is clean
