"""What a new user hit in review sessions, each fixed where it started (issue #32): the diff's Back, the diff's
lists, the TUI's exit code on a file it cannot open, and screenshots of a big file."""

from __future__ import annotations

import asyncio
import json
import time

from explorer import cli
from explorer.api import open_document
from explorer.diff import TOP_CHANGES, diff_documents
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from tests.schedules import entry, two_core
from widgets.app import IrExplorerApp, make_app
from widgets.problems import ProblemsTable

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"


async def test_back_from_the_diffs_other_file_lists_the_problems_again():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        table = app.query_one(ProblemsTable)
        before = (table.row_count, table.border_title)
        other = open_document(CLEAN)
        other.run_deep_checks()
        app.switch_document(other)  # what the diff screen's `o` does
        await wait_loaded(pilot)
        assert not table.display  # the clean file has none: the details take the column
        app.action_back()
        await wait_loaded(pilot)
        await pilot.pause(0.2)
        assert table.display and (table.row_count, table.border_title) == before and before[0] > 0
        assert "✗3" in table.border_title or "3 errors" in table.border_title


def test_diff_says_how_many_changes_it_did_not_list_and_all_lists_them(write_json, capsys):
    a, b = two_core(), two_core()
    b["0"] += [dict(b["0"][-1], workload_id=500 + k) for k in range(40)]  # 40 added: their transfers and problems
    path_a, path_b = write_json(a, "a_stschedule.json"), write_json(b, "b_stschedule.json")
    everything = diff_documents(open_document(path_a), open_document(path_b), limit=None)
    assert everything["left_out"] == {}
    in_all = {
        kind: sum(c["kind"] == kind for c in everything["changes"]) for kind in ("transfer-added", "problem-introduced")
    }
    assert min(in_all.values()) > TOP_CHANGES  # more than are listed of both kinds
    assert cli.main(["diff", str(path_a), str(path_b), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["left_out"] == {kind: count - TOP_CHANGES for kind, count in in_all.items()}
    assert cli.main(["diff", str(path_a), str(path_b), "--json", "--all"]) == 0
    assert json.loads(capsys.readouterr().out)["changes"] == everything["changes"]
    assert cli.main(["diff", str(path_a), str(path_b)]) == 0
    said = ", ".join(f"{count - TOP_CHANGES:,} {kind}" for kind, count in in_all.items())
    assert f"and {said} changes more than are listed (`diff --all` lists every change)" in capsys.readouterr().out


def test_the_tui_on_a_file_it_cannot_open_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    broken = tmp_path / "broken_stschedule.json"
    broken.write_text('{"0": [')

    def headless(app: IrExplorerApp) -> None:  # the real app, without a terminal: load, show the error, quit
        async def drive() -> None:
            async with app.run_test(size=SIZE) as pilot:
                await wait_loaded(pilot)

        asyncio.run(drive())

    monkeypatch.setattr(IrExplorerApp, "run", headless)
    assert cli.main([str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ir-explorer: ") and str(broken) in err and err.count("\n") == 1


def test_a_screenshot_of_a_big_schedule_shows_the_whole_file_not_its_preview(monkeypatch, tmp_path):
    from explorer import open_ahead as opening  # (the app loads through opening.open_checked)
    from explorer.formats.scheduler_ir import first_core
    from widgets.screenshot import take_screenshot

    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)  # every file gets a first-core preview
    whole_load = opening.open_document

    def slower(*args, **kwargs):  # the whole file arrives after its first core, as a big one does
        time.sleep(0.5)
        return whole_load(*args, **kwargs)

    monkeypatch.setattr(opening, "open_document", slower)
    out = tmp_path / "buffers.svg"
    take_screenshot(PLANTED, view="buffers", output=out, core=3, workload=2, size=(120, 40))  # was: no core 3
    text = out.read_text().replace("&#160;", " ")
    assert "core 3 workload 2" in text


async def test_the_buffers_view_lists_every_overlapping_pair_or_says_how_many_more(write_json):
    """Four tensors on the same bytes: six pairs. At 160x48 the lines under the map hold them all; at 80x24
    the view lists what fits and says how many more (it used to list three and say nothing)."""
    doc_json = two_core()
    doc_json["0"][1]["buffer"] = [entry(t, 0x100, 64, new=True) for t in (11, 12, 13, 14)]
    path = write_json(doc_json)
    for size in ((160, 48), (80, 24)):
        app = make_app(path)
        async with app.run_test(size=size) as pilot:
            await wait_loaded(pilot)
            await pilot.press("3", "right")
            await pilot.pause()
            text = [strip.text for strip in app.buffers.render_frame()]
            listed = [line for line in text if line.startswith("overlap: tensor")]
            more = [line for line in text if line.startswith("and ") and "more overlapping pairs" in line]
            said = int(more[0].split()[1]) if more else 0
            assert len(listed) + said == 6 and listed, (size, text[-8:])
            if size == (160, 48):
                assert said == 0


async def test_at_80x24_text_is_folded_or_shortened_never_cut_mid_field():
    from widgets.help_screen import HelpScreen
    from widgets.schedule.buffer_view import split_columns

    app = make_app(PLANTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        bar = str(app.query_one("#summary").render())
        assert bar.endswith(" …") and "KiB/" not in bar  # whole fields, then "…" (was: `peak L2 9.0 KiB/28.0`)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("VerticalScroll").region
        assert box.x >= 0 and box.right <= 80  # the help box ran off the right edge
        await pilot.press("escape", "3")
        await pilot.pause()
        l2, side = split_columns(app.buffers.size.width, True)
        assert l2 > side  # L2 first (it had 16 columns beside WL0's 22)
        text = [strip.text for strip in app.buffers.render_frame()]
        legend = " ".join(line for line in text if line.startswith("legend") or line.startswith("       "))
        assert all(word in legend for word in ("ifmap", "weight", "ofmap", "overlap", "free", "WL0"))
        assert any(line.startswith("  frame") for line in text)  # the header folded at a field
        await pilot.press("7")
        await pilot.pause()
        text = [strip.text for strip in app.memory_map.render_frame()]
        legend = " ".join(line for line in text if line.startswith("legend") or line.startswith("       "))
        assert "peak" in legend and "cursor" in legend


async def test_the_load_progress_never_goes_back():
    from textual.widgets import ProgressBar

    from widgets.loading import LoadingPanel

    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(LoadingPanel)
        for fraction, stage in ((0.26, "reading"), (0.0, "decoding core 1"), (0.2, "decoding core 2")):
            panel.set_progress(fraction, stage)
        assert panel.query_one("#loading-bar", ProgressBar).progress == 26
        await wait_loaded(pilot)


def test_check_lists_errors_first_and_counts_in_words(write_json, capsys):
    doc_json = two_core()
    doc_json["0"][0]["buffer"] = [entry(1, 0, 0)]  # a zero-size entry: a warning, first in the file
    doc_json["1"][1]["ifmap"][0]["transfer_id"] = [777]  # an unresolved transfer: an error, later
    assert cli.main(["check", str(write_json(doc_json))]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line and not line.startswith(" ")]
    severities = [line.split()[0] for line in lines[:-1]]
    assert severities == sorted(severities, key=lambda s: s != "error") and "warning" in severities
    assert lines[-1] == "1 error, 1 warning"


def test_a_json_of_numbered_arrays_without_a_schedules_keys_is_not_a_schedule(tmp_path):
    import pytest

    from explorer.errors import LoadError

    other = tmp_path / "numbers.json"
    other.write_text('{"0": [1, 2], "1": [3]}')
    with pytest.raises(LoadError, match="unknown format"):
        open_document(other)


async def test_address_zoom_to_an_overlap_and_back_in_the_buffers_view_and_the_memory_map():
    """A 128-byte overlap in 28 KiB is a cell or two of the whole map; `I` zooms to it, `o` back out."""
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")  # the first problem: the L2 overlap of core 1 workload 3 (0x1c40-0x1cc0)
        await pilot.pause()
        await pilot.press("3", "I")
        await pilot.pause()
        view = app.buffers
        lo, hi = view.addresses
        assert lo <= 0x1C40 and hi >= 0x1CC0 and hi - lo <= 0x100
        text = [strip.text for strip in view.render_frame()]
        assert any(f"{lo:#x}–{hi:#x} (o: out) · 1 B per cell" in line for line in text)
        ruler = [line[:7] for line in text if line[:2] == "0x"]
        assert ruler[0] == f"{lo:#07x}" and len(ruler) >= 3  # the window spread over the map's rows
        await pilot.press(*"oooo")
        assert view.addresses is None  # back to all of L2
        await pilot.press("7", "I")
        await pilot.pause()
        lo, hi = app.memory_map.addresses
        assert lo <= 0x1C40 and hi >= 0x1CC0
        header = " ".join(strip.text for strip in app.memory_map.render_frame()[:2])
        assert f"addresses {lo:#x}–{hi:#x} (o: out)" in header
        await pilot.press("i")  # in again, around the same overlap
        assert app.memory_map.addresses[1] - app.memory_map.addresses[0] < hi - lo


def test_an_address_window_stays_inside_the_memory():
    from explorer.schedule.buffer_view import address_window, window_around

    assert address_window(8 << 20, None, 0.25, 0) == (0, 2 << 20)
    assert address_window(8 << 20, (0, 1024), 4, 100) == (0, 4096)
    assert address_window(4096, (0, 1024), 4, 100) is None  # the whole memory again
    assert window_around(0x7FFFF0, 0x800000, 8 << 20) == ((8 << 20) - 64, 8 << 20)


def test_screenshot_picks_the_source_file_and_export_says_where_it_is(tmp_path, capsys):
    bundle = SAMPLE_DATA / "two_modules_mlf.tar"
    out = tmp_path / "source.svg"
    assert cli.main(["screenshot", str(bundle), "--view", "source", "--member", "src/kws.relay", "-o",
                     str(out)]) == 0  # fmt: skip
    assert "kws.relay" in out.read_text().replace("&#160;", " ")
    assert cli.main(["screenshot", str(bundle), "--view", "source", "--member", "nope.txt", "-o", str(out)]) == 2
    assert "'nope.txt' is not a source file" in capsys.readouterr().err
    assert cli.main(["export", str(PLANTED), "--html", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    assert "report: gantt (1/5)" in err and "report: graph (5/5)" in err  # no trace: no measured figures announced


async def test_cores_of_about_the_same_length_open_alike_in_the_memory_map(write_json):
    from explorer.formats.scheduler_ir.samples import Recipe, generate

    doc_json = generate(Recipe(xlen=2, ylen=1, layers=60))
    doc_json["1"] = doc_json["1"][:52]  # 60 and 52 steps: one over twice 28 columns, one under
    app = make_app(write_json(doc_json))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("7")
        await pilot.pause()
        memory = app.memory_map
        shown = []
        for core_index in (0, 1):
            memory.core_index = core_index
            memory._columns = 28  # what a narrow view's map is wide
            first, last = memory.steps_shown()
            shown.append(last - first)
        assert shown == [28, 28]  # both one step a column (the shorter one used to open whole)


async def test_the_address_zoom_follows_the_incident_n_moves_to():
    """Issue #45, item 1: after `I`, `n` kept the old window for every incident (a later one's overlap was off
    the map); the window now fits the selected incident's ranges, in the buffers view and the memory map."""
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")
        await pilot.pause()
        for view_key, view in (("3", app.buffers), ("7", app.memory_map)):
            await pilot.press(view_key, "I")
            await pilot.pause()
            assert view.addresses is not None
            fitted = 0
            for _ in range(6):  # on through the incidents: each one's overlap whole in the window, or all shown
                await pilot.press("n")
                await pilot.pause()
                ranges = view.incident_overlap()
                if ranges is None:
                    assert view.addresses is None  # an incident with no overlap here: every address
                    continue
                lo, hi = view.addresses
                assert lo <= ranges[0] and hi >= ranges[1], (view_key, (lo, hi), ranges)
                fitted += 1
            assert fitted >= 2  # the zoom came back for the next incident that overlaps here
            await pilot.press(*"oooo")


def test_screenshot_and_serve_take_the_companions_the_tui_takes(tmp_path, capsys):
    """Issue #45, item 7: `screenshot` and `serve` refused --frontend/--asm/--trace, so companions not beside the
    schedule could not be shown in a saved screenshot or a browser."""
    from explorer import cli, cli_parsers
    from tests.conftest import SAMPLES
    from widgets.serve.server import command_argv

    schedule = SAMPLES / "scheduler_ir" / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    frontend = SAMPLES / "gemini_pipeline" / "int8_resnet34.sim_quantized_b1.json"
    argv = command_argv(schedule, False, None, None, {"frontend": frontend})
    assert argv[-2:] == ["--frontend", str(frontend)]  # every browser tab's app is opened with it
    with_dims = command_argv(schedule, False, None, None, None, {"batch": 1, "seq": 2048})  # issue #57
    assert with_dims[4:6] == ["--dims", "batch=1,seq=2048"]
    assert cli_parsers.tui_parser().parse_args([str(schedule), *with_dims[4:6]]).dims == {"batch": 1, "seq": 2048}
    serve_args = cli_parsers.command_parser("serve").parse_args([str(schedule), "--frontend", str(frontend)])
    assert serve_args.frontend == frontend
    if not schedule.exists():
        return  # the real samples are not here (a user's clone): the options are checked above
    out = tmp_path / "shot.svg"
    assert cli.main(["screenshot", str(schedule), "--frontend", str(frontend), "--view", "tree", "-o", str(out)]) == 0
    assert "companions: frontend ✓" in out.read_text().replace("&#160;", " ")


def test_a_frontend_of_another_batch_is_refused_and_text_info_says_so(capsys):
    """Issue #45, items 4 and 5: the b1 frontend IR was joined to the b4 schedule (`frontend ✓`, shapes of
    batch 1 beside workload boxes 4 wide); text `info` said nothing of companions (only --json did)."""
    import pytest

    from explorer import cli
    from tests.conftest import SAMPLES

    pipeline = SAMPLES / "gemini_pipeline"
    b4 = SAMPLES / "scheduler_ir" / "int8_resnet34.sim_quantized_b4_c1_bw16_stschedule.json"
    if not b4.exists():
        pytest.skip("real samples not found (a user's clone has no ../shared)")
    document = open_document(b4, companions={"frontend": pipeline / "int8_resnet34.sim_quantized_b1.json"})
    from explorer.companions import companions_of

    assert "another batch" in companions_of(document).refused["frontend"]
    assert any(p.code == "companion-mismatch" and "batch 1" in p.message for p in document.problems)
    right = open_document(b4, companions={"frontend": pipeline / "int8_resnet34.sim_quantized_b4.json"})
    assert "frontend" not in companions_of(right).refused  # the same model at its own batch is joined
    cli.main(["info", str(b4), "--frontend", str(pipeline / "int8_resnet34.sim_quantized_b1.json")])
    out = capsys.readouterr().out
    assert "companion frontend: int8_resnet34.sim_quantized_b1.json (not joined: its shapes are batch 1" in out


async def test_the_buffers_view_and_the_memory_map_name_one_peak_in_the_same_words():
    """Issue #45, item 5: `peak … at #82` in one view and `peak … at step 83` in the other for one point."""
    import re

    app = make_app(PLANTED)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("3")
        await pilot.pause()
        buffers = "\n".join(strip.text for strip in app.buffers.render_frame())
        await pilot.press("7")
        await pilot.pause()
        memory = "\n".join(strip.text for strip in app.memory_map.render_frame())
        pattern = re.compile(r"peak [\d.]+ \w?i?B before #\d+ \(step \d+\)")
        said_buffers, said_memory = pattern.findall(buffers), pattern.findall(memory)
        assert said_buffers and said_memory and said_buffers[0] == said_memory[0], (said_buffers, said_memory)


async def test_at_80_columns_the_companions_and_the_problem_keys_stay_on_screen():
    """Issue #45, item 9 (two of its parts): at 80×24 the summary bar dropped the companions and the footer
    stopped at `1 Tree 2▏`, so `p`/`n` were invisible."""
    import pytest

    from tests.conftest import SAMPLES
    from widgets.summary_bar import SummaryBar

    schedule = SAMPLES / "scheduler_ir" / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json"
    pipeline = SAMPLES / "gemini_pipeline"
    if not schedule.exists():
        pytest.skip("real samples not found (a user's clone has no ../shared)")
    companions = {"frontend": pipeline / "int8_resnet34.sim_quantized_b1.json",
                  "trace": pipeline / "int8_resnet34.sim_quantized_b1_c1_bw16_sim.txt",
                  "asm": pipeline / "int8_resnet34.sim_quanti_b1_c1_bw16_asm.txt"}  # fmt: skip
    app = make_app(schedule, companions=companions)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await pilot.pause()
        bar = str(app.query_one(SummaryBar).render())
        assert "frontend✓" in bar and "asm✓" in bar and "trace✓" in bar, bar
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "Problems" in screen and "Next problem" in screen


def test_a_graph_legend_at_80_columns_keeps_whole_entries_and_says_what_it_dropped():
    """Issue #45, item 9: the estimate-error legend read `measured…d < 0.25×` and entries that did not fit
    vanished without a word; entries are whole now, and the rest is counted (`+N more`)."""
    from widgets.graph.painting import legend_segments

    names = ["measured/estimated < 0.25×", "0.25×–0.5×", "0.5×–0.8×", "0.8×–1.25× (measured ≈ estimated)", "1.25×–2×",
             "none"]  # fmt: skip
    legend = [(name, "#777777") for name in names]
    text = "".join(segment.text for segment in legend_segments(legend, 78))
    assert "measured/estimated < 0.25×" in text and text.rstrip().endswith("more")
    shown = sum(1 for name, _ in legend if name in text)
    assert f"+{len(legend) - shown} more" in text and len(text) <= 78
    wide = "".join(segment.text for segment in legend_segments(legend, 400))
    assert "more" not in wide and all(name in wide for name, _ in legend)


async def test_at_80_columns_every_view_s_footer_keeps_p_and_n():
    """Issue #45, item 9 (the rest of the footer): in a view with keys of its own the footer was cut before `n`
    (`… p Problems n Next p▏`). The footer is compact and each view shows only a few of its keys (? lists all)."""
    from widgets.key_footer import KeyFooter

    for path, keys in ((SAMPLE_DATA / "planted_problems_2x2_stschedule.json", "12367 8"),
                       (SAMPLE_DATA / "views_ark_model.json", "146"),
                       (SAMPLE_DATA / "subgraphs_functions.onnx", "16")):  # fmt: skip
        app = make_app(path)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_loaded(pilot)
            for key in keys.replace(" ", ""):
                await pilot.press(key)
                await pilot.pause()
                spans = app.query_one(KeyFooter).key_spans()
                for wanted in ("p", "n"):
                    span = spans.get(wanted)
                    assert span is not None and span[1] <= 80 - 12, f"{path.name} view {key}: `{wanted}` is cut"


def test_a_field_wider_than_the_line_folds_at_its_spaces():
    """Seen at 80×24: the buffers view's `w` line lost its counts at the panel's edge (a field wider than a line
    was cut). Fields fold between them first, then a field too wide at its last space that fits."""
    from rich.style import Style

    from widgets.text_lines import folded

    lines = [strip.text.rstrip() for strip in folded("▼ where they start (2 in L2, 1 in WL1) · b", 20, Style())]
    assert lines == ["▼ where they start", "  (2 in L2, 1 in", "  WL1) · b"]
    assert [s.text.rstrip() for s in folded("a · verylongwordwithoutspaces", 10, Style())] == ["a", "  verylong"]
