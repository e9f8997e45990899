"""The problems panel sizes each row from its own measure of how rich wraps the text (`wrapped_height`): it must
say what rich's own wrapping gives, or a row would be cut or padded."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from explorer.api import open_document
from explorer.schedule.incidents import incidents_of
from tests.conftest import SAMPLE_DATA
from widgets.problems import wrapped_height

CONSOLE = Console(width=200)
WORDS = st.text(alphabet=st.sampled_from(list("ab xyz0123…–·→✗漢字\n\t")), max_size=120)


@settings(max_examples=400, deadline=None)
@given(WORDS, st.integers(min_value=1, max_value=60), st.sampled_from(["fold", "crop", "ellipsis", None]))
def test_the_height_is_the_one_rich_wraps_to(plain, width, overflow):
    text = Text("▸ ", style="dim")
    text.append(plain)
    text.overflow = overflow
    assert wrapped_height(text, width, CONSOLE) == len(text.wrap(CONSOLE, width))


def test_every_problem_line_of_the_planted_demo_at_every_width():
    document = open_document(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    lines = [p.message for p in document.problems] + [i.line() for i in incidents_of(document)]
    for line in lines:
        for width in range(8, 90, 3):
            text = Text(line)
            assert wrapped_height(text, width, CONSOLE) == len(text.wrap(CONSOLE, width)), (line, width)
