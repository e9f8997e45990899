"""Memory explained in the TUI (issue #42): an incident's details say whether there was room, `v` previews the
move in the buffers and the memory map (nothing written), `P` lists the core's peak, the map draws
fragmentation, and the summary (`h`) shows packing per core."""

from __future__ import annotations

from textual.widgets import OptionList

from explorer.schedule.pressure import pressure_of
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.details import DetailsPanel
from widgets.schedule.buffer_view import BufferView
from widgets.schedule.memory_map import MemoryMapView

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def text(widget) -> str:
    return "\n".join(strip.text for strip in widget.render_frame())


def details_text(app) -> str:
    return "\n".join(" ".join(str(cell) for cell in row) for section in app.query_one(DetailsPanel).sections
                     for row in [[section.title], *section.rows])  # fmt: skip


async def test_the_incident_s_details_say_where_its_tensor_fits():
    before = PLANTED.read_bytes()
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")
        await pilot.pause()
        said = details_text(app)
        assert "Room for the misplaced tensor" in said
        assert "would fit at 0x0 (in region 0x0-0x5000) for workloads 3–3" in said
        assert "largest free block in region 0x0-0x5000" in said and "largest free block in L2" in said
        assert "live: tensor 36" in said and "ifmap from core 1 (Add_3)" in said  # named in words here
        buffers = app.query_one(BufferView)
        await pilot.press("3")
        await pilot.pause()
        assert "overlap: tensor 36 and 90000, bytes 0x1c40-0x1cc0" in text(buffers)
        await pilot.press("v")
        await pilot.pause()
        frame = text(buffers)
        assert "PREVIEW · tensor 90000 → 0x0 (was 0x1c40) · workloads 3–3 · nothing is written" in frame
        assert "no overlap in this snapshot" in frame and "overlap: tensor 36" not in frame
        await pilot.press("v")
        await pilot.pause()
        assert "PREVIEW" not in text(buffers)
        await pilot.press("7", "v")
        await pilot.pause()
        memory = app.query_one(MemoryMapView)
        frame = text(memory)
        assert "PREVIEW · tensor 90000" in frame and "no overlap on this core" in frame
        assert memory.map.overlap_step.size == 0  # the collision is gone from the preview
        await pilot.press("v")
        await pilot.pause()
        assert memory.map.overlap_step.size == 1 and "PREVIEW" not in text(memory)
    assert PLANTED.read_bytes() == before  # nothing written


async def test_v_without_an_incident_says_what_to_do():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("7", "v")
        await pilot.pause()
        assert app.query_one(MemoryMapView).preview is None
        said = "choose an overlap incident first to preview where its tensor fits (p: problems, n: next)"
        assert any(n.message == said for n in app._notifications)  # the keys as the app binds them (issue #55)


async def test_p_lists_the_peak_largest_first_and_enter_selects_one():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("7", "P")
        await pilot.pause()
        memory = app.query_one(MemoryMapView)
        m = memory.map
        assert memory.frame == m.peak_step
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(k).prompt) for k in range(options.option_count)]
        s, row = app.document.schedule, memory.row
        sizes = sorted((int(v) for v in s.buf_size[s.buf_ptr[row] : s.buf_ptr[row + 1]]), reverse=True)
        assert len(labels) == len(sizes)
        assert any(word in labels[0] for word in ("from core", "DRAM"))  # named in words
        await pilot.press("down", "enter")
        await pilot.pause()
        band = memory.selected_band
        assert band >= 0 and int(m.hi[band] - m.lo[band]) == sizes[1]
        assert f"tensor {int(m.tensor[band])}" in details_text(app)


async def test_the_fragmentation_strip_and_the_summary_s_packing():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("7")
        await pilot.pause()
        memory = app.query_one(MemoryMapView)
        strip = next(line for line in text(memory).splitlines() if line.startswith("frag"))
        values = pressure_of(app.document).core_fragmentation(memory.core)
        assert len(values) == memory.map.steps and values.max() > 0
        assert set(strip.split("│", 1)[1].strip()) <= set(" ▁▂▃▄▅▆▇█") and strip.split("│", 1)[1].strip()
        await pilot.press("h")
        await pilot.pause()
        said = details_text(app)
        core = pressure_of(app.document).cores[0]
        assert "L2 at its fullest, per core" in said and f"{core.packing:.2f}" in said


async def test_an_incident_s_details_say_whether_what_ran_wrote_into_it(tmp_path):
    """Issue #75: with the trace joined, `n` on the planted overlap of the real b1 pipeline shows which
    instruction wrote into the shared bytes, as check does; the HTML report has it in a column."""
    from explorer.api import open_document
    from explorer.exports.html_report import incidents_table
    from tests.conftest import samples_dir
    from tests.unit.test_plan_conformance import planted_overlap

    samples_dir("gemini_pipeline")  # skips with a reason when ../shared/samples is absent
    schedule, line = planted_overlap(tmp_path, 401408)
    app = make_app(schedule, companions={"trace": tmp_path / "t_sim.txt"})
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")
        await pilot.pause()
        said = details_text(app)
        assert "written by what ran?" in said and f"touched by pe_conv (line {line}, cycles " in said
    report = incidents_table(open_document(schedule, companions={"trace": tmp_path / "t_sim.txt"}))
    assert "written by what ran?" in report and f"touched by pe_conv (line {line}, cycles " in report


async def test_w_marks_where_the_workload_s_instructions_write_in_the_buffers_view(tmp_path):
    """Issue #75: `w` in the buffers view marks ▼ the cell of each destination of the workload's instructions (the
    joined trace's) and names them; on the planted overlap, the pe_conv's mark sits in the red overlap."""
    from tests.conftest import samples_dir
    from tests.unit.test_plan_conformance import planted_overlap
    from widgets.schedule.buffer_view import BufferView

    samples_dir("gemini_pipeline")
    schedule, line = planted_overlap(tmp_path, 401408)
    app = make_app(schedule, companions={"trace": tmp_path / "t_sim.txt"})
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n", "3")
        await pilot.pause()
        buffers = app.query_one(BufferView)
        assert buffers.row == app.document.schedule.row_of(0, 1) and "▼" not in text(buffers)
        await pilot.press("w")
        await pilot.pause()
        said = text(buffers)
        assert buffers.writes_here() == [(401408, "pe_conv", line, 802816)]  # its tile's 1·64·112·112 outputs
        assert said.count("▼") == 2  # the mark on the map and the line naming it
        said = " ".join(said.split())
        assert f"pe_conv (line {line}) at 0x62000–0x126000" in said, said
        await pilot.press("w")
        await pilot.pause()
        assert "▼" not in text(buffers)


async def test_w_without_an_assembly_or_trace_says_so():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3", "w")
        await pilot.pause()
        from widgets.schedule.buffer_view import BufferView

        assert not app.query_one(BufferView).show_writes
        assert any("no assembly or trace is joined" in str(n.message) for n in app._notifications)


async def test_w_marks_the_side_memory_too(tmp_path):
    """Issue #75: `w` marks the weight loads into WL0 (`lw_mov`, these files' WL1) on the side memory's map, and
    counts them apart."""
    import shutil

    from tests.conftest import samples_dir
    from tests.unit.test_plan_conformance import pipeline
    from widgets.schedule.buffer_view import BufferView

    samples_dir("gemini_pipeline")
    schedule, asm, _ = pipeline("b1")
    shutil.copy(schedule, tmp_path / "s.json")
    app = make_app(tmp_path / "s.json", companions={"asm": asm})
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        await pilot.pause()
        buffers = app.query_one(BufferView)
        assert buffers.row == app.document.schedule.row_of(0, 0)
        await pilot.press("w")
        await pilot.pause()
        side = buffers.writes_here(side=True)
        assert [name for _, name, *_ in side] == ["lw_mov"] and side[0][0] == 0  # line 18: WL1 byte 0
        said = " ".join(text(buffers).split())
        counts = f"{len(buffers.writes_here())} in L2, 1 in WL1"
        assert f"▼ where its instructions start writing ({counts}) · underlined: as far as each writes" in said
        assert "lda_mov (line 7) at 0x62000–0xab800" in said  # its range: Tile × FP16, 301,056 bytes
        assert "lw_mov (line 18) at 0x0–0xb3 in WL1 units" in said  # 179 units of 64 bytes: WL0's own unit
        underlined = sum(len(seg.text) for strip in buffers.render_frame() for seg in strip
                         if seg.style is not None and seg.style.underline)  # fmt: skip
        # 8,192 bytes a cell: lda_mov's cells 49-85 and vp_self's 0-18, each but its first (the ▼)
        assert underlined == (85 - 49) + 18
        right = [line.split("│", 1)[1] for line in said.splitlines() if "│" in line]
        assert any("▼" in part for part in right)  # the mark on the side memory's map, right of the divider
