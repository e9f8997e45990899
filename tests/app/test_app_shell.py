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
        first = problems.problems[0]
        tree = app.query_one(DocumentTree)
        row = app.document.schedule.row_of(first.refs["core"], first.refs["workload_id"])
        assert tree.cursor_node.data.ref == ("workload", row)
        await pilot.press("n")
        await pilot.pause()
        second = problems.problems[1]
        assert tree.cursor_node.data.ref == (
            "workload",
            app.document.schedule.row_of(second.refs["core"], second.refs["workload_id"]),
        )


async def test_enter_on_a_problem_jumps_there():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("p", "down", "enter")
        await pilot.pause()
        chosen = app.query_one(ProblemsTable).problems[1]
        assert chosen.code == "l2-overlap"
        assert app.query_one(DocumentTree).cursor_node.data.ref == ("workload", app.document.schedule.row_of(1, 3))
        assert titles(app)[:2] == ["Problem", "Workload core 1 workload 3"]
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
    from widgets.buffer_view import BufferView
    from widgets.timeline import Timeline

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
    for spec in ALL_VIEWS:
        widget = spec.widget_class()
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
        assert problems.display and problems.outer_size.height == 3 + 4  # three problems: sized to them
