"""The mesh view (issue #43): every core on its grid at the timeline's time cursor. Its numbers are checked
against the timeline's times and the buffer view's L2 bytes at 20 random cursors on a generated 16-core
schedule; playback, Enter on a cell, the shared selection, and a mesh that cannot hold every core."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from textual.widgets import TabbedContent

from explorer.api import open_document
from explorer.formats.scheduler_ir.samples import Recipe, write_streaming
from explorer.schedule.mesh import DONE, IDLE, RUNNING, WAITING_DRAM
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.schedule.buffer_view import BufferView
from widgets.schedule.mesh import MeshView
from widgets.schedule.timeline import Timeline


@pytest.fixture(scope="module")
def sixteen(tmp_path_factory):
    path = tmp_path_factory.mktemp("mesh") / "mesh16_stschedule.json"
    write_streaming(path, Recipe(xlen=4, ylen=4, layers=10, seed=5))
    return path


def frame_text(widget) -> str:
    return "\n".join(strip.text for strip in widget.render_frame())


async def test_the_mesh_agrees_with_the_timeline_and_the_buffers_at_random_cursors(sixteen):
    app = make_app(sixteen)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("8")
        mesh = app.query_one(MeshView)
        timeline, buffers = app.query_one(Timeline), app.query_one(BufferView)
        s, analysis = app.document.schedule, app.document.schedule_analysis
        start, end = timeline.times()
        chosen = random.Random(43).sample(range(s.n_workloads), 20)
        for row in chosen:
            timeline.select(row, announce=True)
            await pilot.pause()
            assert mesh.time == start[row]
            assert mesh.selected_core == int(s.wl_core[row])
            text = frame_text(mesh)
            for core in s.core_ids.tolist():
                rows = s.core_rows(core)
                running = [r for r in rows if start[r] <= mesh.time < end[r]]
                state = mesh.state_of(core)
                if running:
                    assert (state.state, state.row) == (RUNNING, running[0])
                else:
                    later = [r for r in rows if start[r] > mesh.time]
                    assert state.state in (IDLE, WAITING_DRAM, DONE, "not started")
                    assert state.row == (later[0] if later else rows.stop - 1)
                # the buffer view draws the same snapshot: its L2 bytes are the mesh's share
                buffers.show_row(state.row)
                assert int(analysis.l2_bytes[buffers.row]) / s.buffersize == pytest.approx(state.l2_share)
                assert f"c{core} ({core % 4},{core // 4})" in text
                assert f"L2 {state.l2_share:4.0%}" in text


async def test_playback_steps_every_core_and_the_others_follow(sixteen):
    app = make_app(sixteen)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("8")
        mesh = app.query_one(MeshView)
        events = mesh.times.events
        await pilot.press("full_stop")
        assert mesh.time == events[1]
        await pilot.press("comma")
        assert mesh.time == events[0]
        before = mesh.time
        await pilot.press("plus", "plus", "plus", "space")
        for _ in range(100):
            await pilot.pause(0.05)
            if mesh.time > before:
                break
        await pilot.press("space")
        assert mesh.time > before and not mesh.playing
        timeline = app.query_one(Timeline)
        state = mesh.state_of(mesh.selected_core)
        assert timeline.selected == state.row  # one cursor for both


async def test_enter_opens_the_cell_s_core_in_the_buffers_at_that_time(sixteen):
    app = make_app(sixteen)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("8", "full_stop", "full_stop", "full_stop", "right", "down", "right")
        mesh = app.query_one(MeshView)
        assert mesh.cell == (2, 1) and mesh.selected_core == 6
        state = mesh.state_of(6)
        await pilot.press("b")  # the bookmark prompt names the selected cell's workload
        await pilot.pause()
        assert "core 6" in str(app.screen.query_one("Label").render())
        await pilot.press("escape", "enter")
        await pilot.pause()
        buffers = app.query_one(BufferView)
        assert app.query_one(TabbedContent).active == "tab-buffers"
        assert buffers.core == 6 and buffers.row == state.row


async def test_a_mesh_too_small_for_its_cores_draws_what_it_can_and_says_the_rest(write_json):
    value = json.loads((SAMPLE_DATA / "clean_2x2_stschedule.json").read_text())
    value["xlen"], value["ylen"] = 3, 1  # four cores, three places
    path = write_json(value)
    document = open_document(path)
    [problem] = [p for p in document.problems if p.code == "mesh-placement"]
    assert "core 3" in problem.message and "outside the 3×1 mesh" in problem.message
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("8")
        text = frame_text(app.query_one(MeshView))
        assert "not on the mesh: core 3 is outside the 3×1 mesh" in text and "c2 (2,0)" in text


async def test_a_single_core_schedule_has_no_mesh():
    path = SAMPLE_DATA / "clean_2x2_stschedule.json"
    document = open_document(path)
    assert document.offers("mesh")
    from tests.conftest import SAMPLES

    one = SAMPLES / "scheduler_ir" / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    if one.exists():
        assert not open_document(one).offers("mesh")
    assert np.all(document.schedule.core_ids == np.arange(4))


async def test_the_timeline_at_64_cores_counts_the_hidden_ones_and_jumps_to_a_core(tmp_path):
    path = tmp_path / "mesh64_stschedule.json"
    write_streaming(path, Recipe(xlen=8, ylen=8, layers=4, seed=5))
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline = app.query_one(Timeline)
        visible = timeline._visible_cores()
        status = frame_text(timeline).splitlines()[-1]
        assert len(visible) < 64 and f"↑0 ↓{64 - len(visible)} cores (j: go to)" in status
        await pilot.press("j", "4", "0", "enter")
        await pilot.pause()
        s = app.document.schedule
        assert timeline.core_index == 40 and int(s.wl_core[timeline.selected]) == 40
        visible = timeline._visible_cores()
        assert 40 in visible
        status = frame_text(timeline).splitlines()[-1]
        assert f"↑{visible[0]} ↓{63 - visible[-1]} cores" in status
        await pilot.press("j", "9", "9", "enter")
        await pilot.pause()
        assert timeline.core_index == 40  # no core 99: said, nothing moves
        assert any("no core 99 (the cores are 0–63)" in n.message for n in app._notifications)
        from widgets.palette import system_commands

        assert any(command.title == "Go to core" for command in system_commands(app))
        await pilot.press("8")
        mesh = app.query_one(MeshView)
        assert mesh.selected_core == 40  # the shared cursor
        text = frame_text(mesh)
        assert "c40" in text and "showing x" in text  # 8×8 at 80×24 scrolls with the selection


async def test_at_80_columns_every_tab_is_whole_and_the_core_table_keeps_every_column(tmp_path):
    """Issue #43: a schedule's seven tabs need 58 cells of the 50 an 80-column terminal leaves them (the last
    one, `8 Mesh`, was cut): they take short titles there, the full ones again when the terminal widens; the
    details' core table, too wide for its panel, is written one record per core with every column named."""
    from widgets.details import DetailsPanel

    path = tmp_path / "mesh64_stschedule.json"
    write_streaming(path, Recipe(xlen=8, ylen=8, layers=2, seed=5))
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        tabs = app.query_one(TabbedContent)
        row = tabs.query_one("Tabs")
        labels = [tab.label_text for tab in row.query("Tab")]
        assert labels == ["1 Tree", "2 Time", "3 Buf", "6 Graph", "7 Mem", "8 Mesh"]
        right = max(tab.region.right for tab in row.query("Tab"))
        assert right <= tabs.region.right  # the last tab drawn whole
        details = app.query_one(DetailsPanel)
        text = "\n".join(strip.text for static in details.query("Static.section") for strip in
                         static.render_lines(static.region.reset_offset))  # fmt: skip
        assert details.max_scroll_x == 0  # nothing to the side of the panel
        for column in ("mesh x0, y0", "workloads", "busy", "ends at", "idle"):
            assert column in text, column
        assert "0 · mesh x0, y0" in text and "63 · mesh x7, y7" in text  # every core, its first cell leading
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert [tab.label_text for tab in row.query("Tab")][1] == "2 Timeline"


@pytest.mark.parametrize(("xlen", "ylen", "shown", "where"), [(2**62, 1, "4×1", "$.xlen"), (1, 2**62, "1×4", "$.ylen")])
async def test_a_hostile_mesh_size_shows_the_cores_that_exist_and_keys_stay_quick(write_json, xlen, ylen, shown,
                                                                                   where):  # fmt: skip
    """A declared side of 2^62 for four cores (issue #60 item 3): one located problem, the mesh drawn as far as
    its cores reach, the cursor moving in one search per key (it walked the empty columns one by one), q quits."""
    value = json.loads((SAMPLE_DATA / "clean_2x2_stschedule.json").read_text())
    value["xlen"], value["ylen"] = xlen, ylen
    path = write_json(value)
    document = open_document(path)
    [problem] = [p for p in document.problems if p.code == "mesh-size"]
    assert problem.location == where and f"the {shown} that holds them" in problem.message
    assert f"{xlen:,}×{ylen:,} mesh for 4 cores" in problem.message
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("8")
        mesh = app.query_one(MeshView)
        assert f"{shown} (declared {xlen:,}×{ylen:,}) mesh" in frame_text(mesh)
        key = "right" if xlen > ylen else "down"
        for _ in range(5):
            await pilot.press(key)
        await pilot.pause()
        assert mesh.selected_core == 3  # the last core; the presses past it found no cell and stayed
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


async def test_a_live_overlap_fills_its_cell_not_one_mark():
    """Issue #59 item 6: one ✗ on a green grid was missed; a cell whose snapshot holds an overlap is drawn in a
    colour off the heat scale, and the legend shows it."""
    from widgets.schedule.mesh import LIVE_OVERLAP

    app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("8")
        s = app.document.schedule
        row = int(s.rows_of([1], [3])[0])  # core 1, workload 3: the planted overlap
        app.query_one(Timeline).select(row, announce=True)
        await pilot.pause()
        mesh = app.query_one(MeshView)
        assert mesh.state_of(1).overlap and not mesh.state_of(0).overlap
        lines = mesh.render_frame()
        painted = {seg.text.split()[0] for line in lines for seg in line
                   if seg.style and seg.style.bgcolor and seg.style.bgcolor.name == LIVE_OVERLAP and seg.text.strip()}
        assert "c1" in painted and "c0" not in painted  # fmt: skip
        assert "overlap live" in frame_text(mesh)


async def test_the_tree_follows_a_selection_made_in_any_view_of_rows(sixteen):
    """Issue #74: the tree did not follow a selection made in the mesh (nor in the timeline, buffers or memory
    map: only the other views followed them)."""
    from widgets.doc_tree import DocumentTree

    app = make_app(sixteen)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_loaded(pilot)
        tree = app.query_one(DocumentTree)
        mesh = app.query_one(MeshView)
        await pilot.press("8", "right", "down")  # another core in the mesh
        await pilot.pause()
        row = mesh.state_of(mesh.selected_core).row
        assert tree.cursor_node.data.ref == ("workload", row)
        await pilot.press("2", "full_stop", "full_stop")  # the timeline's next workloads
        await pilot.pause()
        assert tree.cursor_node.data.ref == ("workload", app.query_one(Timeline).selected)
