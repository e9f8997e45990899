"""The graph session without a screen (issue #55): Enter, ↓ into a group, forks, reveal and `graph --open` on a
small hand-made graph, each with its exact answer."""

from __future__ import annotations

import numpy as np

from explorer.exports.graph_json import opened_layout
from explorer.graph.builder import GraphBuilder
from explorer.graph.session import GraphSession

WINDOW = (0, 0, 160, 46)


def residual_model():
    """x → block(a → b) → head, and x → b (a residual): the block's two members keep it a group."""
    b = GraphBuilder()
    x = b.node("x", "Input")
    a = b.node("a", "MatMul", group=b.scope("/block/a"))
    add = b.node("b", "Add", group=b.scope("/block/b"))
    head = b.node("head", "Softmax")
    for source, target in ((x, a), (a, add), (x, add), (add, head)):
        b.edge(source, target)
    model = b.build()
    block = int(model.node_group[a])
    return model, {"x": x, "a": a, "b": add, "head": head, "block": block}


def nested_model():
    """outer(c, inner(d → e)) after an input: opening `inner` has to open `outer` first."""
    b = GraphBuilder()
    x = b.node("x", "Input")
    c = b.node("c", "Relu", group=b.scope("/outer/c"))
    d = b.node("d", "MatMul", group=b.scope("/outer/inner/d"))
    e = b.node("e", "Add", group=b.scope("/outer/inner/e"))
    for source, target in ((x, c), (c, d), (d, e)):
        b.edge(source, target)
    model = b.build()
    inner = int(model.node_group[d])
    return model, {"outer": int(model.group_parent[inner]), "inner": inner, "d": d}


def started(model, expanded: set[int] | None = None) -> GraphSession:
    session = GraphSession()
    session.start(model, expanded or set())
    return session


def test_the_session_opens_on_the_models_first_input():
    model, ids = residual_model()
    session = started(model)
    assert session.selected_key == (0, ids["x"])


def test_enter_on_a_closed_group_opens_it_and_the_cursor_lands_on_its_top_left_member():
    model, ids = residual_model()
    session = started(model)
    layout = session.layout
    session.select(session.item_of_key(layout, (1, ids["block"])))
    toggled = session.toggle(WINDOW)
    assert toggled is not None and toggled.opened and toggled.group == ids["block"]
    assert session.expanded == {ids["block"]}
    assert session.selected_key == (0, ids["a"])
    # the input above the block is the anchor: it did not move, so the window does not either
    assert toggled.shift == (0, 0)


def test_enter_on_a_member_closes_its_group_and_selects_the_group():
    model, ids = residual_model()
    session = started(model, {ids["block"]})
    session.select(session.item_of_key(session.layout, (0, ids["b"])))
    toggled = session.toggle(WINDOW)
    assert toggled is not None and not toggled.opened
    assert session.expanded == set() and session.selected_key == (1, ids["block"])


def test_backspace_on_a_closed_group_closes_the_group_it_is_drawn_in_and_its_insides():
    model, ids = nested_model()
    session = started(model, {ids["outer"]})
    session.select(session.item_of_key(session.layout, (1, ids["inner"])))
    toggled = session.toggle(WINDOW, enclosing=True)  # Enter would open `inner`: Backspace closes `outer`
    assert toggled is not None and not toggled.opened and toggled.group == ids["outer"]
    assert session.expanded == set() and session.selected_key == (1, ids["outer"])
    assert session.toggle(WINDOW, enclosing=True) is None  # `outer` is at the top level: nothing encloses it


def test_enter_on_a_top_level_node_does_nothing():
    model, ids = residual_model()
    session = started(model)
    assert session.toggle(WINDOW) is None  # x is at the top level: no group to close
    assert session.expanded == set()


def test_down_reads_into_a_closed_group_and_at_a_fork_takes_the_first_reader():
    model, ids = residual_model()
    session = started(model)
    block_item = session.step("down")
    assert block_item == session.item_of_key(session.layout, (1, ids["block"]))
    session.select(block_item)
    assert session.step("down") is None  # a closed group: the caller opens it with toggle(reading=True)
    session.toggle(WINDOW, reading=True)
    assert session.selected_key == (0, ids["a"])  # where reading enters: the first member fed from outside
    session.select(session.item_of_key(session.layout, (0, ids["x"])))
    first = session.step("down")
    assert session.fork is not None and session.fork.choices == ((0, ids["a"]), (0, ids["b"]))
    assert session.key_of(session.layout, first) == (0, ids["a"])
    second = session.other_branch()
    assert session.key_of(session.layout, second) == (0, ids["b"]) and session.fork.taken == 1
    assert session.key_of(session.layout, session.other_branch()) == (0, ids["a"])  # round the branches


def test_reveal_opens_what_hides_a_node():
    model, ids = residual_model()
    session = started(model)
    item = session.reveal(ids["b"])
    assert session.expanded == {ids["block"]}
    assert session.key_of(session.layout, item) == (0, ids["b"])


def test_open_path_opens_the_ancestors_outermost_first_and_graph_open_lays_out_the_same():
    model, ids = nested_model()
    session = started(model)
    opened: list[set[int]] = []
    relayout = session._relayout

    def spy(expanded: set[int]):
        opened.append(set(expanded))
        return relayout(expanded)

    session._relayout = spy  # type: ignore[method-assign]
    session.open_path(ids["inner"])
    assert opened == [{ids["outer"]}, {ids["outer"], ids["inner"]}]
    layout, expanded = opened_layout(model, "none", [ids["inner"]])
    assert expanded == session.expanded
    assert np.array_equal(layout.x, session.layout.x) and np.array_equal(layout.y, session.layout.y)


def test_each_state_is_laid_out_once():
    model, ids = residual_model()
    session = started(model)
    session.expanded = {ids["block"]}
    _ = session.layout
    count = session.laid_out
    session.expanded = set()
    _ = session.layout  # the first screen again: from the cache
    session.expanded = {ids["block"]}
    _ = session.layout
    assert session.laid_out == count
