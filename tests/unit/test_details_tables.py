"""A details table is drawn whole or as records, never cut at the panel's edge: a workload's Tiles table at
160×48 lost the end of its last header (`mini til`), its empty columns taken for numbers that may not wrap."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from explorer.document import Section
from widgets.details import _table, fitted

TILES = Section(
    "Tiles",
    ("tile", "ofmap box", "pred time", "cut", "loop", "mini tile"),
    [("tile_num_0", "[0, 0:63, 0:55, 0:55]", "12,572", "", "", "")],
)
BINDINGS = Section(  # a Core ML op's inputs: names too long for a column at 57 cells are never cut
    "Inputs",
    ("parameter", "binding", "from"),
    [("keep_dims", "reduce_sum_1_keep_dims_0", "#1 const  reduce_sum_1_keep_dims_0  →  keep_dims_0: bool[]")],
)
INPUTS = Section(
    "Inputs",
    ("kind", "transfers", "box", "bytes", "bits", "align"),
    [("ifmap", "40", "[0, 0:63, 0:55, 0:55]", "200704", "8", "8")],
)


@pytest.mark.parametrize("section", [TILES, INPUTS, BINDINGS])
@pytest.mark.parametrize("room", range(20, 80, 3))
def test_every_header_word_and_cell_is_whole_at_any_width(section, room):
    console = Console(width=room, record=True, color_system=None)
    console.print(fitted(section, _table(section), room, console))
    text = console.export_text()
    assert all(len(line.rstrip()) <= room for line in text.splitlines())
    words = set(text.replace("│", " ").replace("┃", " ").split())
    as_table = "┃" in text  # else records, each led by its first cell (the first column's name is not said)
    for column in section.columns[0 if as_table else 1 :]:
        assert set(column.split()) <= words, (room, column, text)
    assert "…" not in text
    flat = "".join(text.split())  # a word longer than the panel folds onto the next line in records, whole
    for cell in section.rows[0]:
        assert all(part.strip(",[]") in flat for part in str(cell).split()), (room, cell, text)


_word = st.text(alphabet="abcdefghij", min_size=1, max_size=9)
_cell = st.one_of(
    st.just(""),
    st.integers(0, 10**9).map(lambda n: f"{n:,}"),
    st.lists(_word, min_size=1, max_size=4).map(" ".join),
)


@settings(max_examples=150, deadline=None)
@given(
    headers=st.lists(st.lists(_word, min_size=1, max_size=2).map(" ".join), min_size=2, max_size=7),
    data=st.data(),
    room=st.integers(20, 90),
)
def test_any_table_is_whole_or_records_at_any_width(headers, data, room):
    rows = [tuple(data.draw(_cell) for _ in headers) for _ in range(data.draw(st.integers(1, 3)))]
    section = Section("T", tuple(headers), rows)
    console = Console(width=room, record=True, color_system=None)
    console.print(fitted(section, _table(section), room, console))
    text = console.export_text()
    assert all(len(line.rstrip()) <= room for line in text.splitlines()), text
    as_table = "┃" in text
    words = set(text.replace("│", " ").replace("┃", " ").replace("·", " ").split())
    for column in headers[0 if as_table else 1 :]:
        assert set(column.split()) <= words, (room, column, text)
    assert "…" not in text  # no word cut short: a table that cannot hold one is written as records
    for row in rows:
        assert {word for cell in row for word in cell.split()} <= words, (room, row, text)


def test_an_empty_section_says_none_as_records_too():
    section = Section("Inputs", ("index", "entry", "dtype", "shape", "storage", "bytes"), [])
    for room in (12, 80):  # records at 12 cells (its columns do not fit), a table at 80
        console = Console(width=room, record=True, color_system=None)
        console.print(fitted(section, _table(section), room, console))
        assert "(none)" in console.export_text(), room
