"""Every key the help and the README document runs its action, in every view of every format that offers
the view: each binding is pressed with its action replaced by a recorder (so nothing quits or opens)."""

from __future__ import annotations

import pytest

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import IrExplorerApp, make_app
from widgets.views import ALL_VIEWS

SAMPLES_BY_VIEW = {
    "tree": ["clean_2x2_stschedule.json", "subgraphs_functions.onnx", "demo_pipeline_b1.json"],
    "timeline": ["clean_2x2_stschedule.json", "two_modules_mlf.tar", "demo_pipeline_b1_c1_bw16_sim.txt"],
    "buffers": ["clean_2x2_stschedule.json", "two_modules_mlf.tar"],
    "layout": ["views_ark_model.json"],
    "source": ["two_modules_mlf.tar"],
    "graph": ["subgraphs_functions.onnx", "clean_2x2_stschedule.json", "demo_pipeline_b1.json"],
    "memory": ["clean_2x2_stschedule.json", "two_modules_mlf.tar"],
}
CASES = [(view, name) for view, names in SAMPLES_BY_VIEW.items() for name in names]


def keys_of(binding) -> list[str]:
    return [key.strip() for key in binding.key.split(",") if key.strip()]


async def press_recording(pilot, target, binding, key: str) -> list:
    name = binding.action.split("(", 1)[0]
    calls: list = []
    original = getattr(target, f"action_{name}")
    setattr(target, f"action_{name}", lambda *args, **kwargs: calls.append(args))
    try:
        await pilot.press(key)
        await pilot.pause()
    finally:
        setattr(target, f"action_{name}", original)
    return calls


@pytest.mark.parametrize(("view", "name"), CASES, ids=[f"{v}-{n}" for v, n in CASES])
async def test_every_key_of_a_view_runs_its_action(view, name):
    spec = next(s for s in ALL_VIEWS if s.name == view)
    app = make_app(SAMPLE_DATA / name)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert app.document.offers(spec.capability), (view, name)
        await pilot.press(spec.key)
        widget = app.query_one(f"#{view}")
        widget.focus()
        await pilot.pause()
        for binding in getattr(type(widget), "BINDINGS", []):
            for key in keys_of(binding):
                widget.focus()
                assert await press_recording(pilot, widget, binding, key), f"{view}: {key} did not run {binding.action}"


@pytest.mark.parametrize("name", ["clean_2x2_stschedule.json", "subgraphs_functions.onnx"])
async def test_every_global_key_runs_its_action(name):
    app = make_app(SAMPLE_DATA / name)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        for binding in IrExplorerApp.BINDINGS:
            if binding.action.startswith("view("):
                view = binding.action.split("'")[1]
                spec = next(s for s in ALL_VIEWS if s.name == view)
                if not app.document.offers(spec.capability):
                    continue  # not offered: not bound (tested in test_capabilities)
            for key in keys_of(binding):
                app.query_one("#tree").focus()
                assert await press_recording(pilot, app, binding, key), f"{key} did not run {binding.action}"


async def test_the_palette_names_the_keys_that_run_its_commands():
    """A command's "(k)" in the palette is a key bound to the same action (no stale key after a move)."""
    import re

    from textual.screen import Screen

    app = make_app(SAMPLE_DATA / "clean_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        bound = {key.strip(): binding.action for binding in IrExplorerApp.BINDINGS for key in binding.key.split(",")}
        display = {"?": "question_mark", "Ctrl+F": "ctrl+f"}
        checked = 0
        for command in app.get_system_commands(app.screen if isinstance(app.screen, Screen) else None):
            found = re.search(r"\(([^()]+)\)$", command.help or "")
            if not found or len(found.group(1)) > 6:  # not a key: a remark in parentheses
                continue
            key = display.get(found.group(1), found.group(1))
            assert key in bound, (command.title, key)
            name = bound[key].split("(")[0]
            callback = getattr(command.callback, "__name__", "")
            function = getattr(command.callback, "func", None)
            assert name in callback or (function and name in function.__name__) or callback == "<lambda>", (
                command.title, key, bound[key])  # fmt: skip
            checked += 1
        assert checked >= 8


async def test_every_key_of_the_problems_panel_runs_its_action():
    from widgets.problems import ProblemsTable

    app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        table = app.query_one(ProblemsTable)
        for binding in ProblemsTable.BINDINGS:
            for key in keys_of(binding):
                table.focus()
                ran = await press_recording(pilot, table, binding, key)
                assert ran, f"problems: {key} did not run {binding.action}"


KEY_NAMES = {"←": "left", "→": "right", "↑": "up", "↓": "down", ".": "full_stop", ",": "comma", "+": "plus",
             "-": "minus", "[": "left_square_bracket", "]": "right_square_bracket", "<": "less_than_sign",
             ">": "greater_than_sign", "/": "slash", "?": "question_mark", "Space": "space", "Home": "home",
             "End": "end", "Enter": "enter", "Backspace": "backspace", "Delete": "delete", "F1": "f1",
             "Ctrl+F": "ctrl+f", "PgUp": "pageup", "PgDn": "pagedown"}  # fmt: skip
NOT_KEYS = {"click", "wheel", "!", "▸", "↺", "Δ", "−"}  # glyphs the README shows on boxes


def bound_keys(widget_class) -> set[str]:
    """Every key a widget class binds, its base classes' included (DataTable's Enter)."""
    found: set[str] = set()
    for klass in widget_class.__mro__:
        for binding in getattr(klass, "BINDINGS", []):
            key = binding.key if hasattr(binding, "key") else binding[0]
            found |= {part.strip() for part in key.split(",")}
    return found


def key_tokens(text: str) -> list[str]:
    """The keys a help entry names: "w / s, a / d, 0", "↑ ↓ PgUp PgDn", "arrows", "Shift+arrows"."""
    import re

    if text.startswith("tree:"):  # an action in the tree, not a key of the view
        return []
    tokens = []
    for token in re.split(r" / |, | ,|/ | ", text.strip()):
        if token == "arrows":
            tokens += ["←", "→", "↑", "↓"]
        elif token == "Shift+arrows":
            tokens += ["shift+up", "shift+down", "shift+left", "shift+right"]
        elif token and token not in NOT_KEYS:
            tokens.append(token)
    return tokens


def test_every_key_the_help_names_is_bound():
    """The help lists each view's HELP_KEYS; every key in them must be bound by that view (or everywhere)."""
    from widgets.problems import ProblemsTable

    everywhere = bound_keys(IrExplorerApp) | {spec.key for spec in ALL_VIEWS}
    for widget_class in [spec.widget_class() for spec in ALL_VIEWS] + [ProblemsTable]:
        bound = bound_keys(widget_class) | everywhere
        for _, keys, _ in getattr(widget_class, "HELP_KEYS", []):
            for token in key_tokens(keys):
                assert KEY_NAMES.get(token, token) in bound, f"{widget_class.__name__}: help names {token!r}"


def test_every_key_the_readme_gives_a_view_is_bound():
    """The README's bullet for each view names its keys in backticks: each one-key token must be bound."""
    import re

    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## In the TUI") : readme.index("## The Gemini pipeline")]
    everywhere = bound_keys(IrExplorerApp) | {spec.key for spec in ALL_VIEWS}
    titles = {"Timeline": "timeline", "Buffers": "buffers", "Memory map": "memory", "Layout": "layout",
              "Graph": "graph"}  # fmt: skip
    checked = 0
    for bullet in re.split(r"\n- \*\*", section)[1:]:
        name = bullet.split("**")[0]
        if name not in titles:
            continue
        spec = next(s for s in ALL_VIEWS if s.name == titles[name])
        bound = bound_keys(spec.widget_class()) | everywhere
        for token in re.findall(r"`([^`]+)`", bullet):
            if token == "Shift+arrows":
                assert {"shift+up", "shift+down", "shift+left", "shift+right"} <= bound, name
            elif (len(token) == 1 or token in KEY_NAMES) and token not in NOT_KEYS:
                assert KEY_NAMES.get(token, token) in bound, f"README's {name} names {token!r}, which is not bound"
                checked += 1
    assert checked > 40
