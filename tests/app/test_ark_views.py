"""The ARK document in the app: tree → details, the layout view following the tree, keys, problem jumps."""

from __future__ import annotations

import json

import numpy as np

from explorer.tensors.stride_map import DATA, OTHER
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from tests.unit.test_ark_loader import two_nodes
from widgets.app import make_app
from widgets.messages import RevealRef

VIEWS = SAMPLE_DATA / "views_ark_model.json"


async def test_layout_follows_the_tree_and_moves_by_cells():
    app = make_app(VIEWS)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        tabs = app.query_one("#tabs")
        assert not tabs.query("#tab-timeline") and tabs.query("#tab-layout")  # only the views ARK offers
        app.post_message(RevealRef(("tensor-id", 10)))
        await pilot.pause()
        assert app.layout.tensor_id == 10
        assert app.query_one("#details").sections[0].title == "Tensor 10"
        await pilot.press("4")
        assert app.focused is app.layout
        assert app.layout.cursor == (0, 48)  # the window's first element: row 0, column 48
        grid = app.layout.grid()
        await pilot.press("right", "down")
        assert app.layout.cursor == (grid.row_block, 48 // grid.col_block * grid.col_block + grid.col_block)
        # the window (cols 48..143) shares bytes with q (0..63) and k (64..127): the shared cells are marked
        first_data_col = 48 // grid.col_block
        assert grid.codes[0, first_data_col] & DATA and grid.codes[0, first_data_col] & OTHER
        lines = [app.layout.render_line(y).text for y in range(app.layout.size.height)]
        assert any("shares bytes with: t2, t3, t4, t7" in line for line in lines)
        assert any("first byte = 96 = 2 × (0×12288 + 0×192 + 48×1)" in line for line in lines)


async def test_outer_dimension_keys_pick_the_plane():
    app = make_app(VIEWS)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.post_message(RevealRef(("tensor-id", 19)))  # [2, 4, 16, 16] in a [2, 4, 16, 32] region
        await pilot.pause()
        await pilot.press("4")
        assert app.layout.outer_index == (0, 0)
        await pilot.press("right_square_bracket")
        assert app.layout.outer_index == (1, 0)
        await pilot.press("greater_than_sign", "right_square_bracket", "right_square_bracket")
        assert app.layout.outer_index == (1, 2)
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        assert app.layout.outer_index == (1, 3)  # wraps around
        grid = app.layout.grid()
        assert (grid.codes[:, :16] & DATA).sum() == 0 and (grid.codes[:, 16:] & DATA).all()


async def test_problem_jump_lands_on_the_broken_tensor(tmp_path):
    value = two_nodes()
    value["Nodes"][1]["Op"]["WriteTensors"][0]["Offsets"] = [0, 5]  # 5 + 1 > Strides 1
    path = tmp_path / "broken_model.json"
    path.write_text(json.dumps(value))
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")
        await pilot.pause()
        tree = app.query_one("#tree")
        assert tree.cursor_node.data.ref == ("tensor", 1, 0, "write", 0)
        titles = [section.title for section in app.query_one("#details").sections]
        assert titles[:2] == ["Problem", "Tensor 13"]
        await pilot.press("4")
        lines = [app.layout.render_line(y).text for y in range(3)]
        assert "Tensor 13" in lines[0]  # it cannot be placed: the view says why instead of drawing
        assert "exceeds Strides[1]" in lines[1]


async def test_plan_tree_has_processor_groups():
    from tests.conftest import samples_dir

    app = make_app(samples_dir("ark") / "plan_main_d8bbaebd_plan.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.post_message(RevealRef(("tgroup", 5, 0, 0)))
        await pilot.pause()
        sections = app.query_one("#details").sections
        assert sections[0].title == "Task group 0"
        rows = dict(sections[0].rows)
        assert rows["task id"] == 5 and rows["task range"] == "[0, 64)"
        found = app.document.search("Matmul")
        assert len(found) == 4 and all(ref[0] == "op" for _, ref in found)
        assert np.all([ref[1] < 8 for _, ref in found])


async def test_at_80_columns_the_byte_formulas_say_their_value_and_cut_at_a_term():
    """Issue #45, item 9: the layout view cut its formulas mid-expression at 80 columns; the value comes
    first now, and what does not fit is cut between terms with `…`."""
    from widgets.tensors.stride_map import _formula_strip

    formula = "2 × (0×16384 + 63×256 + 255×1 + 1) = 32,768"
    narrow = _formula_strip("end byte   = ", formula, 40).text
    assert narrow.startswith("end byte   = 32,768 = 2 × (") and narrow.endswith("…)") and len(narrow) <= 40
    assert "63×2" not in narrow.replace("63×256", "")  # no term cut inside
    wide = _formula_strip("end byte   = ", formula, 120).text
    assert wide == "end byte   = 32,768 = 2 × (0×16384 + 63×256 + 255×1 + 1)"
