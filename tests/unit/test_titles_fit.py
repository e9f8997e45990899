"""Issue #74 item 6: a stack's `× N` is never the part of its title that is cut, and a frame scrolled past its
left edge keeps its title on screen (GPT-2's first screen showed `T2LMHeadModel ┄┄`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from explorer.graph.text import shorten_title
from widgets.graph.canvas import Canvas, _draw_frame_labels

STACK = "layers.1–15 × 15 LlamaDecoderLayer"


@pytest.mark.parametrize("limit, shown", [
    (40, STACK),
    (30, "layers.1–15 × 15 LlamaD…rLayer"),
    (20, "layers.1–15 × 15"),
    (12, "lay…–15 × 15"),
    (8, "lay…ayer"),  # too narrow for the count and a name: cut as any title
])  # fmt: skip
def test_a_stack_title_loses_its_class_then_its_name_never_its_count(limit, shown):
    assert shorten_title(STACK, limit) == shown and len(shown) <= limit


@pytest.mark.parametrize("limit, shown", [
    (40, "encoder · WhisperEncoder"),
    (18, "encoder · Whi…oder"),
    (16, "encoder · Wh…der"),
    (15, "encoder"),  # room for less than six of the class: the name alone (was `encoder…rEncoder`)
    (5, "en…er"),
])  # fmt: skip
def test_a_module_title_loses_its_class_before_its_name(limit, shown):
    assert shorten_title("encoder · WhisperEncoder", limit) == shown and len(shown) <= limit


def test_other_titles_are_cut_in_the_middle():
    assert shorten_title("GPT2LMHeadModel", 10) == "GPT2…Model"
    assert shorten_title("W 64×3×7×7", 40) == "W 64×3×7×7"


def frame_row(x: int, offset: int) -> str:
    canvas = Canvas(40, 3)
    layout = SimpleNamespace(frames={0: (x, 0, 30, 3)}, frame_labels={0: "GPT2LMHeadModel"})
    _draw_frame_labels(canvas, layout, offset, 0)
    return "".join(map(chr, canvas.chars[0])).rstrip()


def test_a_frame_scrolled_past_its_left_edge_keeps_its_title():
    assert frame_row(5, 0) == "        ▾ GPT2LMHeadModel"  # where it was: two cells in from the frame's edge
    assert frame_row(5, 10) == " ▾ GPT2LMHeadModel"  # scrolled 5 cells past the edge: at the screen's left
    assert frame_row(5, 24) == " ▾ GP…el"  # little of the frame left: what fits inside it
    assert frame_row(5, 30) == ""  # the frame is gone


def test_a_frame_reaching_past_the_window_s_right_side_shortens_its_title_to_fit():
    """BERT's 80×24 first screen cut `▾ embeddings · BertEmbeddin` at the window's right side; the title is
    shortened whole to what the window shows (the class goes first)."""
    canvas = Canvas(40, 3)
    layout = SimpleNamespace(frames={0: (20, 0, 30, 3)}, frame_labels={0: "embeddings · BertEmbeddings"})
    _draw_frame_labels(canvas, layout, 0, 0)
    row = "".join(map(chr, canvas.chars[0])).rstrip()
    assert row == " " * 22 + " ▾ embeddings" and len(row) <= 40
