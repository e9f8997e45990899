"""Pilot tests for the timeline and buffer views: every key, the shared time cursor and problem jumps."""

from __future__ import annotations

import numpy as np
from textual.widgets import TabbedContent

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA, samples_dir
from widgets.app import make_app
from widgets.details import DetailsPanel
from widgets.doc_tree import DocumentTree
from widgets.schedule.buffer_view import BufferView
from widgets.schedule.timeline import LABEL, Timeline

CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"
PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def frame_text(widget) -> str:
    return "\n".join(strip.text for strip in widget.render_frame())


async def test_timeline_keys():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline = app.query_one(Timeline)
        assert app.focused is timeline and app.query_one(TabbedContent).active == "tab-timeline"
        makespan = app.document.summary["makespan"]
        assert (timeline.t0, timeline.t1) == (0, makespan)
        await pilot.press("w")
        assert timeline.t1 - timeline.t0 == makespan / 2
        await pilot.press("s", "s")
        assert timeline.t1 - timeline.t0 == makespan * 2
        await pilot.press("0")
        span = makespan
        await pilot.press("d")
        assert timeline.t0 == span / 4
        await pilot.press("a", "a")
        assert timeline.t0 == -span / 4
        await pilot.press("full_stop", "full_stop")
        assert timeline.selected == 2
        await pilot.press("comma")
        assert timeline.selected == 1
        await pilot.press("f")
        start, end = timeline.times()
        assert timeline.t0 < start[1] and timeline.t1 > end[1] and timeline.t1 - timeline.t0 < span / 4
        await pilot.press("home")
        assert timeline.t0 == 0
        await pilot.press("end")
        assert timeline.t1 == makespan
        await pilot.press("down")
        assert timeline.core_index == 1 and int(app.document.schedule.wl_core[timeline.selected]) == 1
        await pilot.press("c", "l")
        assert timeline.show_critical and timeline.by_layer
        await pilot.press("m")
        assert timeline.sequential and timeline.t1 == app.document.summary["makespan_sequential"]


async def test_timeline_draws_cores_axis_and_selection():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline = app.query_one(Timeline)
        lines = [strip.text for strip in timeline.render_frame()]
        assert lines[0].startswith("time (cycles)") and "20k" in lines[0]
        assert "▼" in lines[1]  # the time cursor
        labels = [line[:LABEL].strip() for line in lines[2:-1] if line[:LABEL].strip()]
        assert labels == ["▶c0 (0,0)", "c1 (1,0)", "c2 (0,1)", "c3 (1,1)"]
        assert "·" in "".join(lines[2:])  # idle gaps are visible
        assert lines[-1].startswith("0–71.7k · dependencies")


async def test_click_selects_and_moves_the_buffer_view():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline = app.query_one(Timeline)
        frame = timeline.render_frame()
        core2_line = next(i for i, strip in enumerate(frame) if "c2 (0,1)" in strip.text)
        await pilot.click(Timeline, offset=(LABEL + 1 + 40, core2_line + 1))  # +1: the border
        await pilot.pause()
        s = app.document.schedule
        assert int(s.wl_core[timeline.selected]) == 2
        buffers = app.query_one(BufferView)
        assert buffers.row == timeline.selected
        assert app.query_one(DetailsPanel).sections[0].title == f"Workload {s.wl_label(timeline.selected)}"


async def test_buffer_view_keys_and_playback():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        buffers = app.query_one(BufferView)
        timeline = app.query_one(Timeline)
        assert app.focused is buffers
        await pilot.press("right", "right")
        assert buffers.frame == 2 and timeline.selected == buffers.row  # the shared time cursor
        await pilot.press("left")
        assert buffers.frame == 1
        await pilot.press("end")
        assert buffers.frame == 11
        await pilot.press("home", "plus", "plus")
        assert buffers.speed_index == 4
        await pilot.press("minus")
        assert buffers.speed_index == 3
        await pilot.press("space")
        assert buffers.playing
        await pilot.pause(0.6)  # 4 frames per second
        await pilot.press("space")
        assert not buffers.playing and buffers.frame >= 1
        await pilot.press("down")
        assert buffers.core == 1
        await pilot.press("right_square_bracket")
        entry = buffers.selected_entry
        assert entry >= 0
        tensor = int(app.document.schedule.buf_tensor[entry])
        assert app.query_one(DetailsPanel).sections[0].title.startswith(f"Tensor {tensor}")
        await pilot.press("G")
        assert buffers.grid
        text = frame_text(buffers)
        assert "all cores at t =" in text and all(f"c{c} #" in text for c in range(4))


async def test_frame_is_a_settable_reactive():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        buffers = app.query_one(BufferView)
        buffers.core_index, buffers.frame = 2, 5
        await pilot.pause()
        text = frame_text(buffers)
        assert "core 2 (x0, y1) · before workload #5" in text and "frame 6/12" in text
        assert "no overlap in this snapshot" in text and "◆" in text  # ring regions are ticked


async def test_overlap_problem_opens_the_buffer_view_on_that_frame():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")  # the first group is the L2 overlap incident (errors first, then by code)
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "tab-buffers"
        buffers = app.query_one(BufferView)
        s = app.document.schedule
        assert buffers.row == s.row_of(1, 3) and buffers.highlight == (90000, 36)  # the misplaced tensor first
        text = frame_text(buffers)
        assert "overlap: tensor 36 and 90000, bytes 0x1c40-0x1cc0" in text and "▒" in text
        assert app.query_one(Timeline).selected == s.row_of(1, 3)


async def test_views_on_a_real_single_core_sample():
    path = samples_dir("scheduler_ir") / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3", "right")
        text = frame_text(app.query_one(BufferView))
        assert "WL1" in text  # this file names its weight buffer wl1_buffer
        await pilot.press("2", "c")
        assert app.query_one(Timeline).show_critical


async def test_clicking_a_cell_selects_its_tensor():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        buffers = app.query_one(BufferView)
        buffers.render_frame()
        top, left, rows, cols, owner = buffers._l2_geometry
        index = int(next(i for i, o in enumerate(owner.tolist()) if o >= 0))
        await pilot.click(BufferView, offset=(left + index % cols + 1, top + index // cols + 1))  # +1: border
        await pilot.pause()
        assert buffers.selected_entry == int(owner[index])
        tensor = int(app.document.schedule.buf_tensor[buffers.selected_entry])
        assert app.query_one(DetailsPanel).sections[0].title.startswith(f"Tensor {tensor}")
        assert "resident in" in dict(app.query_one(DetailsPanel).sections[0].rows)


async def test_timeline_letters_work_in_either_case_as_documented():
    """The help and README write Perfetto's keys in upper case: both cases must act."""
    from tests.app.helpers import SIZE, wait_loaded
    from tests.conftest import SAMPLE_DATA
    from widgets.app import make_app

    app = make_app(SAMPLE_DATA / "clean_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline = app.timeline
        for zoom_in, zoom_out in (("w", "s"), ("W", "S")):
            span = timeline.t1 - timeline.t0
            await pilot.press(zoom_in)
            assert timeline.t1 - timeline.t0 < span
            await pilot.press(zoom_out)
            assert abs((timeline.t1 - timeline.t0) - span) < 1e-6 * span
        for key, attribute in (("C", "show_critical"), ("L", "by_layer"), ("M", "sequential")):
            before = getattr(timeline, attribute)
            await pilot.press(key)
            assert getattr(timeline, attribute) != before, key
            await pilot.press(key.lower())
            assert getattr(timeline, attribute) == before, key.lower()


async def test_a_joined_trace_draws_a_measured_lane_under_the_estimate(tmp_path):
    from tests.unit.test_gemini_pipeline import pipeline_folder

    schedule = pipeline_folder(tmp_path, 1)
    app = make_app(schedule)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert "companions: frontend ✓, asm ✓, trace ✓" in str(app.query_one("#summary").render())
        await pilot.press("2")
        timeline = app.query_one(Timeline)
        lines = [strip.text for strip in timeline.render_frame()]
        labels = [line[:LABEL].strip() for line in lines[2:-1] if line[:LABEL].strip()]
        assert labels == ["▶c0 (0,0)", "measured"]
        measured = lines[3][LABEL:]
        assert "█" in measured and measured.rstrip("·").endswith("█")  # drawn to the last measured end
        # the axis covers the measured spans (each workload's compute and data movement; the trace's last
        # instruction, a control one at 1,922,067, is left out), longer than the estimate
        assert timeline.makespan == 1_922_030 > app.document.schedule_analysis.timeline.makespan
        titles = [section.title for section in app.document.describe(("workload", timeline.selected))]
        assert "Estimate vs measured" in titles


async def test_timeline_blocks_carry_their_layer_names_and_problem_marks():
    app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline = app.query_one(Timeline)
        lines = [strip.text for strip in timeline.render_frame()]
        lanes = {line[:LABEL].strip(): line[LABEL:] for line in lines[2:-1] if line[:LABEL].strip()}
        assert set(lanes) == {"▶c0 (0,0)", "!c1 (1,0)", "!c2 (0,1)", "!c3 (1,1)"}  # cores with errors flagged
        assert "Add_3 #3" in lanes["▶c0 (0,0)"]  # a block's layer and id where there is room
        assert "!" in lanes["!c3 (1,1)"]  # the block of the unresolved transfer


async def test_g_jumps_from_a_workload_to_its_instruction_and_back(tmp_path):
    from tests.unit.test_gemini_pipeline import pipeline_folder
    from widgets.details import DetailsPanel

    app = make_app(pipeline_folder(tmp_path, 1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        from widgets.messages import RevealRef

        app.post_message(RevealRef(("workload", 5)))
        await pilot.pause(0.3)
        await pilot.press("g")
        await pilot.pause(0.2)
        screen = app.screen
        labels = [str(option.prompt) for option in screen.query("OptionList").first().options]
        index = next(k for k, label in enumerate(labels) if label.startswith("instruction pe_conv"))
        for _ in range(index):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause(0.3)
        details = app.query_one(DetailsPanel)
        assert details.sections[0].rows[0] == ("instruction", "pe_conv")
        await pilot.press("g")
        await pilot.pause(0.2)
        labels = [str(option.prompt) for option in app.screen.query("OptionList").first().options]
        assert "schedule core 0 workload 5 (Conv_8)" in labels


async def test_stepping_through_a_trace_timeline_without_a_buffer_view():
    from widgets.details import DetailsPanel

    app = make_app(SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline = app.query_one(Timeline)
        timeline.focus()
        first = timeline.selected
        await pilot.press("full_stop")  # the real action: selects the next instruction and announces it
        await pilot.pause()
        assert timeline.selected == first + 1 and app.load_error is None
        assert app.query_one(DetailsPanel).sections[0].title == "Instruction"


async def test_the_memory_map_shares_the_cursor_and_the_selection():
    from widgets.schedule.memory_map import MemoryMapView

    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")  # the L2 overlap incident: core 1, workload 3, tensors 90000 and 36
        await pilot.pause()
        memory = app.query_one(MemoryMapView)
        s = app.document.schedule
        assert memory.row == s.row_of(1, 3) and memory.highlight == (90000, 36)
        await pilot.press("7")
        text = frame_text(memory)
        assert "core 1 (x1, y0) · L2 · workload #3 Add_3 · step 4/12" in text
        assert "1 range, 128 B shared" in text and "▲" in text and "◆" in text
        # issue #45, item 5: the overlap names its tensors, where they meet, and which one moved
        assert "90000 (moved)" in text and "36" in text and "0x1c40–0x1cc0 (128 B)" in text
        await pilot.press("right")  # the cursor is shared: the timeline and the buffers follow
        await pilot.pause()
        assert app.query_one(Timeline).selected == s.row_of(1, 4) == app.query_one(BufferView).row
        await pilot.press("right_square_bracket")  # the lowest tensor at the cursor: the tree and details follow
        await pilot.pause()
        band = memory.selected_band
        assert band >= 0 and memory.map.first[band] <= memory.frame <= memory.map.last[band]
        ref = app.query_one(DocumentTree).cursor_node.data.ref
        assert ref[0] == "buffer-entry" and ref[1] == s.row_of(1, 4)
        assert s.buf_tensor[ref[2]] == memory.map.tensor[band]
        assert f"tensor {int(memory.map.tensor[band])}" in frame_text(memory)
        await pilot.press("m")  # WL0 of the same core
        assert memory.memory == "wl0" and "· WL0 ·" in frame_text(memory)
        await pilot.press("w", "a", "d", "0", "end")
        assert memory.frame == memory.map.steps - 1 and memory.steps_shown() == (0, memory.map.steps)
        # a click on a band selects its tensor and moves the cursor to the clicked step
        memory.memory = "l2"
        frame_text(memory)
        top, left, lines, columns = memory._geometry
        pixels = memory._pixels[1]
        line, column = next((y // 2, x) for y, x in zip(*np.nonzero(pixels.band >= 0), strict=True))
        await pilot.click(MemoryMapView, offset=(left + column + 1, top + line + 1))  # +1: the border
        await pilot.pause()
        assert memory.selected_band >= 0 and app.query_one(Timeline).selected == memory.row


async def test_the_memory_map_of_a_long_core_opens_at_one_step_a_column_around_the_cursor(tmp_path):
    from explorer.formats.scheduler_ir.samples import Recipe, write_streaming
    from widgets.schedule.memory_map import MemoryMapView

    path = tmp_path / "long_stschedule.json"
    write_streaming(path, Recipe(xlen=1, ylen=1, layers=600))
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.go_to_workload(300)
        await pilot.press("7")
        await pilot.pause()
        memory = app.query_one(MemoryMapView)
        frame_text(memory)
        first, last = memory.steps_shown()
        assert last - first == memory._columns and first <= memory.frame < last  # one step a column
        assert f"showing {first + 1}–{last}" in frame_text(memory)
        await pilot.press("0")  # the whole run, however many steps a column
        assert memory.steps_shown() == (0, memory.map.steps) and "showing" not in frame_text(memory)
