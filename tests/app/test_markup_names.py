"""A file's names are text, never markup (issue #60 item 1): a node, op or layer named
`[@click=app.screenshot('x.svg','DIR')]conv[/]` is shown as typed in the tree, search, details, toasts, the compare
header, the problems and the graph of every format, and clicking on it runs nothing (it wrote a file before)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper
from textual.widgets._toast import Toast

from tests.app.helpers import SIZE, wait_loaded
from tests.app.test_compare import wait_compare
from tests.conftest import ROOT
from tests.schedules import two_core
from tests.unit.test_coreml_loader import write_compiled
from widgets.app import make_app

SAMPLES = ROOT / "sample_data"


def hostile(folder: Path) -> str:
    return f"[@click=app.screenshot('x.svg','{folder}')]conv[/]"


@pytest.fixture
def written():
    """The folder a click on the link would write to: short, so the whole name fits a tree line at 160 columns."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="w", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def schedule_file(tmp: Path, name: str) -> Path:
    text = json.dumps(two_core()).replace('"layer_name": "', '"layer_name": "' + json.dumps(name)[1:-1])
    path = tmp / "markup_stschedule.json"
    path.write_text(text)
    return path


def onnx_file(tmp: Path, name: str, file: str = "markup.onnx", second: str = "Sigmoid") -> Path:
    nodes = [helper.make_node("Relu", ["x"], [name], name=name),
             helper.make_node(second, [name], ["z"], name=name + "2")]  # fmt: skip
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])],
    )  # fmt: skip
    path = tmp / file
    onnx.save(helper.make_model(graph), path)
    return path


def ark_file(tmp: Path, name: str) -> Path:
    model = json.loads((SAMPLES / "views_ark_model.json").read_text())
    for node in model["Nodes"]:
        node["Op"]["Name"] = name + node["Op"]["Name"]
    path = tmp / "markup_ark.json"
    path.write_text(json.dumps(model))
    return path


def coreml_file(tmp: Path, name: str) -> Path:
    folder = write_compiled(tmp / "markup.mlmodelc")
    metadata = json.loads((folder / "metadata.json").read_text())
    metadata[0]["inputSchema"][0]["name"] = name
    metadata[0]["shortDescription"] = name
    (folder / "metadata.json").write_text(json.dumps(metadata))
    mil = (folder / "model.mil").read_text().replace('string("z")', "string(" + json.dumps(name) + ")")
    (folder / "model.mil").write_text(mil)
    return folder


def tvm_file(tmp: Path, name: str) -> Path:
    out = io.BytesIO()
    with tarfile.open(SAMPLES / "two_modules_mlf.tar") as source, tarfile.open(fileobj=out, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else b""
            if member.name.endswith(".graph"):
                graph = json.loads(data)
                for node in graph["nodes"]:
                    node["name"] = name + node["name"]
                data = json.dumps(graph).encode()
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if member.isfile() else None)
    path = tmp / "markup_mlf.tar"
    path.write_bytes(out.getvalue())
    return path


def frontend_file(tmp: Path, name: str) -> Path:
    layers = json.loads((SAMPLES / "demo_pipeline_b1.json").read_text())
    path = tmp / "markup_b1.json"
    path.write_text(json.dumps({key: {**value, "name": name + value["name"]} for key, value in layers.items()}))
    return path


MAKERS = {"scheduler_ir": schedule_file, "onnx": onnx_file, "ark": ark_file, "coreml": coreml_file,
          "tvm_mlf": tvm_file, "gemini_frontend": frontend_file}  # fmt: skip


def screen_segments(app):
    update = app.screen._compositor.render_update(full=True)
    return [segment for line in update.strips for strip in line for segment in strip]


def check_screen(app, seen: list[str]) -> None:
    """No segment on screen is a link; what shows is the name's text."""
    segments = screen_segments(app)
    actions = [value for s in segments if s.style is not None for key, value in s.style.meta.items() if key[0] == "@"]
    assert set(actions) <= {"grab", "scroll_up", "scroll_down"}  # a scrollbar's, Textual's own
    seen.append("".join(s.text for s in segments))


async def click_every_name(pilot, app, clicked: set | None = None) -> None:
    """Click wherever the name's opening bracket shows (the link was there); a line already clicked where it
    stood (`clicked`) is not clicked again: each click waits on the app, and most keys leave most lines as they were."""
    update = app.screen._compositor.render_update(full=True)
    for y, line in enumerate(update.strips):
        text = "".join(s.text for strip in line for s in strip)
        x = text.find("[@click")
        if clicked is not None:
            if (y, text) in clicked:
                continue
            clicked.add((y, text))
        if x >= 0:
            await pilot.click(offset=(x + 2, y))
            await pilot.pause(0.05)


@pytest.mark.parametrize("fmt", list(MAKERS))
async def test_names_with_markup_are_shown_verbatim_and_click_nothing(tmp_path, fmt, written):
    name = hostile(written)
    path = MAKERS[fmt](tmp_path, name)
    app = make_app(path)
    seen: list[str] = []
    clicked: set[tuple[int, str]] = set()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_loaded(pilot)
        assert app.load_error is None
        keys = ["1", "down", "enter", "down", "enter", "down", "down", "6", "down", "enter", "7", "n", "g"]
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.1)
            check_screen(app, seen)
            await click_every_name(pilot, app, clicked)
        await pilot.press("ctrl+f")
        await pilot.pause(0.1)
        await pilot.press(*"conv")
        await pilot.pause(0.2)
        check_screen(app, seen)
        assert "[@click=app.screenshot(" in seen[-1]  # the search results show the name as typed
        await click_every_name(pilot, app)
        await pilot.press("escape")
        app.notify(f"bookmarked {name}")  # a toast naming the item, as `b` would
        await pilot.pause(0.2)
        check_screen(app, seen)
        toasts = [str(toast.render()) for toast in app.screen.query(Toast)]
        assert any(f"bookmarked {name}" in toast for toast in toasts)
        await click_every_name(pilot, app)
        assert app.is_running
    assert any("]conv[/]" in screen for screen in seen)  # the name whole somewhere, brackets and all
    assert list(written.iterdir()) == []  # no click ran the screenshot action


async def test_the_compare_header_and_panes_show_names_verbatim(tmp_path, written):
    name = hostile(written)
    a = onnx_file(tmp_path, name, "[@click=app.quit]a.onnx")
    b = onnx_file(tmp_path, name, "[@click=app.quit]b.onnx", second="Tanh")
    app = make_app(a, compare=b)
    seen: list[str] = []
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await wait_compare(pilot)
        for key in ("n", "down", "tab", "down"):
            await pilot.press(key)
            await pilot.pause(0.1)
            check_screen(app, seen)
            await click_every_name(pilot, app)
        assert "A [@click=app.quit]a.onnx" in seen[-1] and "B [@click=app.quit]b.onnx" in seen[-1]
        assert app.is_running and app.screen is screen
    assert list(written.iterdir()) == []


async def test_a_link_that_a_view_might_still_draw_runs_nothing(written):
    """The second guard: were a view to parse a name as markup again, clicking its link runs no action."""
    from textual.widgets import Static

    app = make_app(SAMPLES / "residual_blocks.onnx")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        link = Static(hostile(written), id="planted")
        await app.screen.mount(link)
        await pilot.pause(0.1)
        await pilot.click("#planted", offset=(2, 0))
        await pilot.pause(0.2)
        assert app.is_running
    assert list(written.iterdir()) == []
