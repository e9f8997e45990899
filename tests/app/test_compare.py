"""Two graphs side by side (issue #33): `--compare` opens a pane per file coloured by the comparison, a box
chosen in one pane selects its match in the other, `n`/`N` walk the changes, and two files of different
formats are refused with a message (exit 2 in the CLI)."""

from __future__ import annotations

import subprocess
import sys

from explorer.formats.onnx.samples import CHANGED_NODE, RENAMED_NAME, RESIDUAL_NAME
from explorer.graph.compare import ADDED, REMOVED
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import ROOT, SAMPLE_DATA
from widgets.app import make_app
from widgets.graph.compare_screen import CompareScreen

A, B = SAMPLE_DATA / RESIDUAL_NAME, SAMPLE_DATA / RENAMED_NAME


async def wait_compare(pilot) -> CompareScreen:
    await wait_loaded(pilot)
    for _ in range(500):
        screen = pilot.app.screen
        if isinstance(screen, CompareScreen) and screen.ready:
            await pilot.pause()
            return screen
        await pilot.pause(0.02)
    raise AssertionError("the comparison did not open")


async def test_compare_opens_two_panes_synced_and_n_walks_the_one_change():
    app = make_app(A, compare=B)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_compare(pilot)
        pane_a, pane_b = screen.pane("a"), screen.pane("b")
        assert pane_a.modes[pane_a.mode] == "diff" == pane_b.modes[pane_b.mode]
        assert "1 changed, 0 removed, 0 added" in str(screen.query_one("#compare-summary").render())
        await pilot.press("n")
        assert pane_a.picture.labels[pane_a.selected_item] == CHANGED_NODE[0]
        assert pane_b.picture.labels[pane_b.selected_item] == CHANGED_NODE[1]  # its match, shown
        about = str(screen.query_one("#compare-about").render())
        assert "matched by structure" in about and "changed: attributes alpha" in about
        legend = "\n".join(strip.text for strip in pane_b.render_frame()[-2:])
        assert "changed" in legend and "same" in legend
        # a box chosen in B: A follows to its match
        model_b = pane_b.model
        target = next(n for n in range(model_b.n_nodes) if model_b.node_label[n] == "Conv_0")
        pane_b.focus()
        pane_b.reveal_node(target)
        await pilot.pause()
        match = screen.comparison.match
        assert pane_a.selected_key == (0, int(match.b_to_a[target]))
        assert pane_a.model.node_label[int(match.b_to_a[target])] == "/blocks.0/conv1/Conv"
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)
        assert "diff" not in app.document.view.graph_model().node_values  # the document's graph is untouched


async def test_added_and_removed_nodes_are_marked_on_their_side(tmp_path):
    import onnx
    from onnx import helper

    from explorer.formats.onnx.samples import residual_model

    model = residual_model(2)
    nodes = list(model.graph.node)
    nodes[1].input[0] = "gate"
    del model.graph.node[:]
    model.graph.node.extend([nodes[0], helper.make_node("Sigmoid", ["c0_1"], ["gate"], name="/blocks.0/Sigmoid"),
                             *nodes[1:]])  # fmt: skip
    b = tmp_path / "b.onnx"
    onnx.save(model, b)
    app = make_app(tmp_path / "a.onnx", compare=b)
    onnx.save(residual_model(2), tmp_path / "a.onnx")
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_compare(pilot)
        b_model = screen.comparison.b
        added = [b_model.node_label[n] for n in range(b_model.n_nodes) if b_model.node_values["diff"][n] == ADDED]
        assert added == ["/blocks.0/Sigmoid"]
        assert not (screen.comparison.a.node_values["diff"] == REMOVED).any()
        await pilot.press("n")
        assert screen.pane("b").picture.labels[screen.pane("b").selected_item] == "/blocks.0/Sigmoid"
        assert "added: /blocks.0/Sigmoid (Sigmoid) is only in B" in str(screen.query_one("#compare-about").render())


async def test_comparing_files_of_different_formats_says_so():
    app = make_app(A)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.compare_with(SAMPLE_DATA / "clean_2x2_stschedule.json")
        for _ in range(200):
            if app._notifications:
                break
            await pilot.pause(0.02)
        assert any("cannot compare" in str(n.message) for n in app._notifications)
        assert not isinstance(app.screen, CompareScreen)
    done = subprocess.run([sys.executable, "-m", "explorer", str(A), "--compare",
                           str(SAMPLE_DATA / "clean_2x2_stschedule.json")], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "cannot compare" in done.stderr


async def test_two_schedules_compare_their_layers_with_time_deltas():
    app = make_app(
        SAMPLE_DATA / "clean_2x2_stschedule.json", compare=SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_compare(pilot)
        model_a = screen.comparison.a
        assert "data: time Δ" in screen.pane("a").modes and "data: L2 peak Δ" in screen.pane("a").modes
        delta = model_a.data_sets["data: time Δ"].unit_values
        assert (delta[model_a.group_unit] == delta[model_a.group_unit]).all()  # every layer has one (both have all)


async def test_at_80_columns_the_change_line_still_says_how_the_box_was_matched():
    """Issue #45, item 9: compare's change line lost how it matched at 80 columns (it came last)."""
    app = make_app(A, compare=B)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_compare(pilot)
        await pilot.press("n")
        await pilot.pause()
        about = screen.query_one("#compare-about")
        shown = str(about.render())[: about.size.width]
        assert "matched by structure" in shown, shown
