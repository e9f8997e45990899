"""Pilot tests: the TUI shell driven with the keys a user would press."""

from __future__ import annotations

from textual.widgets import ContentSwitcher, OptionList

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import ROOT, SAMPLE_DATA, samples_dir
from widgets.app import make_app
from widgets.details import DetailsPanel
from widgets.doc_tree import DocumentTree
from widgets.error_panel import ErrorPanel
from widgets.help_screen import HelpScreen
from widgets.problems import ProblemsTable
from widgets.search_screen import SearchScreen
from widgets.summary_bar import SummaryBar

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"


def titles(app) -> list[str]:
    return [section.title for section in app.query_one(DetailsPanel).sections]


async def test_loads_in_a_worker_and_shows_the_document():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert app.query_one(ContentSwitcher).current == "main"
        tree = app.query_one(DocumentTree)
        labels = [str(child.label) for child in tree.root.children]
        assert labels[:2] == ["Summary", "DRAM  (5 writes, 41 reads)"]
        assert labels[2].startswith("core 0  (x0, y0)")
        summary = str(app.query_one(SummaryBar).render())
        assert "4 cores" in summary and "48 workloads" in summary and "0 errors" in summary


async def test_tree_opens_workloads_and_details_follow():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("down", "down", "down", "enter")  # open core 0
        await pilot.press("down", "down")  # workload #1
        tree = app.query_one(DocumentTree)
        assert tree.cursor_node.data.ref == ("workload", 1)
        await pilot.pause()
        assert titles(app)[0] == "Workload core 0 workload 1"
        await pilot.press("enter")
        kinds = [child.data.kind for child in tree.cursor_node.children]
        assert kinds[0] == "ifmap" and "buffer" in kinds and "wl0" in kinds


async def test_next_problem_jumps_to_the_workload():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        problems = app.query_one(ProblemsTable)
        assert len(problems.problems) == 3
        await pilot.press("n")
        await pilot.pause()
        first = problems.groups[0].first  # the groups are walked, errors first, then by code
        tree = app.query_one(DocumentTree)
        row = app.document.schedule.row_of(first.refs["core"], first.refs["workload_id"])
        assert tree.cursor_node.data.ref == ("workload", row)
        await pilot.press("n")
        await pilot.pause()
        second = problems.groups[1].first
        assert tree.cursor_node.data.ref == (
            "workload",
            app.document.schedule.row_of(second.refs["core"], second.refs["workload_id"]),
        )


async def test_enter_on_a_problem_jumps_there():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("p", "enter")
        await pilot.pause()
        chosen = app.query_one(ProblemsTable).groups[0].first
        assert chosen.code == "l2-overlap"
        assert app.query_one(DocumentTree).cursor_node.data.ref == ("workload", app.document.schedule.row_of(1, 3))
        assert titles(app)[:3] == ["Problem", "Room for the misplaced tensor", "Workload core 1 workload 3"]
        assert "L2 snapshot before core 1 workload 3" in titles(app)


async def test_search_by_layer_name_and_by_id():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"Add_7")
        await pilot.pause()
        assert app.screen.query_one(OptionList).option_count == 4  # one Add_7 workload per core
        await pilot.press("enter")
        await pilot.pause()
        node = app.query_one(DocumentTree).cursor_node
        assert node.data.kind == "workload" and "Add_7" in node.data.label
        await pilot.press("ctrl+f", *"7", "enter")
        await pilot.pause()
        assert app.query_one(DocumentTree).cursor_node.data.label.startswith("#7 ")


async def test_help_screen_lists_every_key():
    from widgets.schedule.buffer_view import BufferView
    from widgets.schedule.timeline import Timeline

    app = make_app(CLEAN)  # a schedule: the tree, timeline and buffer views
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        listed = " ".join(key.lower() for _, key, _ in app.screen.app_bindings)
        names = {
            "question_mark": "?",
            "full_stop": ".",
            "comma": ",",
            "right_square_bracket": "]",
            "left_square_bracket": "[",
            "space": "space",
            "equals_sign": "+",
            "plus": "+",
            "minus": "-",
            "greater_than_sign": ">",
            "less_than_sign": "<",
        }
        for owner in (app, Timeline, BufferView):
            for binding in owner.BINDINGS:
                if binding.action in ("view('layout')", "view('source')"):  # not offered by a schedule
                    continue
                key = binding.key.split(",")[0]
                shown = names.get(key, key).replace("right", "→").replace("left", "←").replace("up", "↑")
                shown = shown.replace("down", "↓")
                assert shown.lower() in listed, f"{owner.__class__.__name__}: {binding.key} is not in the help"
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_load_error_is_shown_in_the_app(monkeypatch):
    monkeypatch.chdir(ROOT)
    app = make_app("tests/app/data/truncated_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert app.query_one(ContentSwitcher).current == "error"
        text = str(app.query_one(ErrorPanel).render())
        assert "truncated" in text and "line" in text
        await pilot.press("n", "ctrl+f", "p")  # keys that need a document do nothing, and nothing crashes
        await pilot.press("q")


async def test_palette_offers_the_app_commands():
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert {"Search", "Help: keys", "Next problem", "Summary"} <= set(titles)


async def test_real_sample_opens():
    path = samples_dir("scheduler_ir") / "int8_resnet34.sim_quantized_b4_c1_bw16_stschedule.json"
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert app.load_error is None
        assert "69 workloads" in str(app.query_one(SummaryBar).render())


def test_the_readme_lists_the_global_keys_as_the_help_does():
    from tests.conftest import ROOT
    from widgets.app import IrExplorerApp

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for _, keys, what in IrExplorerApp.HELP_KEYS:
        assert f"| `{keys}` | {what} |" in readme, keys
    for _, keys, what in ProblemsTable.HELP_KEYS:  # the problems panel's, in a schedule's words
        assert f"| `{keys}` | {what.format(lane='core')} |" in readme, keys


def test_no_view_binding_shadows_a_global_key():
    """A view's key must not hide a key that works everywhere (the timeline keeps Perfetto's w a s d, so the
    global details and summary keys are e and h)."""
    from widgets.app import IrExplorerApp
    from widgets.views import ALL_VIEWS

    def keys_of(bindings) -> set[str]:
        found = set()
        for binding in bindings:
            found |= {key.strip() for key in binding.key.split(",")}
        return found

    everywhere = keys_of(IrExplorerApp.BINDINGS)
    for widget in [spec.widget_class() for spec in ALL_VIEWS] + [ProblemsTable]:
        clash = keys_of(getattr(widget, "BINDINGS", [])) & everywhere
        assert not clash, f"{widget.__name__} hides the global key(s) {sorted(clash)}"


async def test_the_problems_panel_hides_when_empty_and_z_maximises_the_focused_panel():
    from tests.app.helpers import SIZE, wait_loaded
    from tests.conftest import SAMPLE_DATA
    from widgets.app import make_app
    from widgets.details import DetailsPanel
    from widgets.problems import ProblemsTable

    app = make_app(SAMPLE_DATA / "clean_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert not app.query_one(ProblemsTable).display  # nothing to list: the details take the column
        app.query_one(DetailsPanel).focus()
        await pilot.press("z")
        assert app.screen.maximized is app.query_one(DetailsPanel)
        await pilot.press("z")
        assert app.screen.maximized is None
    app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        problems = app.query_one(ProblemsTable)
        await pilot.pause()
        # three problems, their messages wrapped: the panel is as tall as they are, no taller, no scrolling
        assert problems.display and problems.outer_size.height < 14 and problems.max_scroll_y == 0
        assert problems.outer_size.height == problems.virtual_size.height + 2  # and no empty line under them


async def test_incidents_are_listed_with_the_file_and_their_tensors_named_after(tmp_path, monkeypatch):
    """The file is on screen before the incidents' roles are read again from it; the lines gain them after.
    WL0 incidents are named from the loaded columns (nothing to read), before the file is shown."""
    import threading

    import explorer.schedule.incidents as incidents
    from tests.unit.test_incidents import planted

    naming = incidents.name_incident_roles
    release = threading.Event()

    def slow_naming(document, found):
        if any(incident.code == "l2-overlap" for incident in found):  # the ones read again from the file
            release.wait(30)
        naming(document, found)

    monkeypatch.setattr(incidents, "name_incident_roles", slow_naming)
    path, _, _ = planted(tmp_path)
    await _named_after(path, 77777, release)
    release.clear()
    assert await _named_after(PLANTED, 90000, release)  # it has a WL0 incident (a transfer placed twice)


async def _named_after(path, introduced_by, release) -> list:
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(ProblemsTable)
        for _ in range(400):
            if app.document is not None and app.views_ready:
                break
            await pilot.pause(0.01)
        assert table.roles_pending and "naming tensors…" in table.border_subtitle
        group = next(g for g in table.groups if g.incident and g.incident.introduced_by == introduced_by)
        assert group.incident.roles == {} and "collides with" in group.title
        wl0 = [g.incident for g in table.groups if g.code == "wl0-overlap"]
        assert all(incident.roles for incident in wl0)  # named from the loaded columns at once, nothing read
        release.set()
        await wait_loaded(pilot)
        assert not table.roles_pending and "naming" not in table.border_subtitle
        role = group.incident.roles[introduced_by]
        assert role and f"{introduced_by} ({role})" in group.title  # the line, written again, names the tensor
        assert any(f"{introduced_by} ({role})" in str(table.get_row_at(k)) for k in range(table.row_count))
    return wl0


async def test_the_problems_panel_groups_by_incident_filters_and_walks_incidents(tmp_path):
    from tests.unit.test_incidents import planted
    from widgets.schedule.buffer_view import BufferView

    path, _, _ = planted(tmp_path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        table = app.query_one(ProblemsTable)
        incident = next(g for g in table.groups if g.incident and g.incident.introduced_by == 77777)
        assert len(table.lines) == len(table.groups)  # closed groups: one line each
        await pilot.press("p")
        table.move_cursor(row=table.groups.index(incident))
        await pilot.press("right")
        assert len(table.lines) == len(table.groups) + len(incident.problems)  # opened: its pairs under it
        await pilot.press("left")
        assert len(table.lines) == len(table.groups)
        await pilot.press("l")  # keep one core: the first present
        assert table.chosen.core == 0 and {g.core for g in table.groups} == {0}
        assert "only core 0" in table.border_title
        await pilot.press("x")
        assert not table.chosen.active
        await pilot.press("s")
        assert table.chosen.severity == "error" and all(g.severity == "error" for g in table.groups)
        await pilot.press("x", "slash", *"88888", "enter")
        await pilot.pause()
        assert [g.incident.introduced_by for g in table.groups] == [88888]
        await pilot.press("x", "t", "p", "l")  # typed at once: l reaches the panel p focused
        assert table.chosen.core == 0
        await pilot.press("x")
        # n walks the incidents: the incident's workload is selected and all its tensors are highlighted
        heads = [g.incident for g in table.groups]  # (the groups were made anew; their incidents are the same)
        for _ in range(heads.index(incident.incident) + 1):
            await pilot.press("n")
            await pilot.pause()
        assert table.lines[table.cursor_row][0].incident is incident.incident
        assert app.query_one(BufferView).highlight == tuple(incident.tensor_ids)


def test_a_narrow_details_panel_puts_a_long_value_under_its_name_at_full_width():
    """An 80-column terminal leaves the details about 25 cells: a message beside its name wrapped one word a line
    (seen in the 80x24 snapshot); under the name it gets the whole width, while short values stay aligned."""
    from rich.console import Console

    from explorer.document import Section
    from widgets.details import _key_value

    message = "core 1 workload 3: tensors 36 and 90000 overlap at bytes 0x1c40-0x1cc0"
    section = Section("Problem", ("property", "value"), [("severity", "error"), ("message", message)])
    console = Console(width=200)
    lines = _key_value(section, 25, console).plain.split("\n")
    assert lines[:3] == ["Problem", "severity │ error", "message"]
    assert all(line.startswith("  ") and len(line) <= 25 for line in lines[3:])
    assert " ".join(line.strip() for line in lines[3:]) == message  # every word kept, in order
    assert len(lines) - 3 <= 4  # 23 cells a line: four lines, not one word on each of eleven
    wide = _key_value(section, 100, console).plain.split("\n")
    assert wide == ["Problem", "severity │ error", f"message  │ {message}"]  # a wide panel keeps one column


async def test_the_tree_measures_labels_as_textual_does_and_a_reveal_along_open_nodes_rebuilds_nothing():
    """Textual rebuilds and measures every line of the tree whenever a node opens: our cheaper measure must agree
    with its own on every line, and a jump along nodes already open (`n` within an incident's core) must not
    rebuild the lines at all (on the 519 MB schedule each `n` rebuilt 8,000 lines)."""
    from textual.widgets import Tree

    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        tree = app.query_one(DocumentTree)
        assert tree.reveal(("workload", 15)) and tree.reveal(("workload", 40))
        lines = tree._tree_lines
        assert len(lines) > 30
        for line in lines:
            assert tree.get_label_width(line.node) == Tree.get_label_width(tree, line.node), str(line.node.label)
        assert tree.reveal(("workload", 16))  # beside the first: every node on its way is open already
        assert tree._tree_lines is lines  # not rebuilt
        assert str(tree.cursor_node.label).startswith("#4 ")  # core 1's fifth workload: row 16


async def test_views_mounting_when_the_app_ends_stop_without_an_error():
    """`q` while the views mount: the app's widgets are gone under the mounting worker, which stops there (it
    raised NoMatches, and the app ended with its traceback: seen quitting a big schedule's second open)."""
    from widgets.tab_labels import FittingTabs
    from widgets.views import offered_views

    app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        views = tuple(offered_views(app.document))
        await app.query_one(FittingTabs).remove()  # what the app's end does to the widgets the worker reaches
        views_ready = app.views_ready
        await app._mount_views(app.document, views)
        assert app.views_ready == views_ready


async def test_roles_named_as_the_app_ends_stop_without_an_error():
    """The incidents' roles, named in a worker, reach an app whose problems table is gone (it is ending: a
    `screenshot` refused, seen once in CI as `internal error: NoMatches`): nothing to update, no error."""
    app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await app.query_one(ProblemsTable).remove()
        app._roles_named(app.incidents)


async def test_a_workers_results_reaching_an_ending_app_stop_without_an_error():
    """Progress, a first part, the whole file or an error handed over by the load workers as the app ends (its
    panels gone): nothing to show, no error; an error is still kept for the command line to say."""
    from explorer.errors import LoadError
    from widgets.summary_bar import SummaryBar

    app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        document = app.document
        await app.query_one(SummaryBar).remove()  # what the app's end does to the panels the workers reach
        app.document = None
        app._show_progress(0.5, "loading")
        app._show_preview(document)
        app.show_document(document)
        assert app.document is None
        error = LoadError(app.path, "", "expected a number")
        app.show_error(error)
        assert app.load_error is error
