"""Key names come from the TUI's bindings, never from core strings (issue #55): the core points at an action
(explorer.document.KeyHint), the TUI names the key its bindings give that action."""

import io
import re
import tokenize

from explorer.document import KeyHint
from tests.conftest import ROOT
from widgets.app import make_app
from widgets.doc_tree import DocumentTree
from widgets.key_names import key_for, keys_said


def test_the_key_of_an_action_is_read_from_the_bindings():
    app = make_app(ROOT / "sample_data" / "two_modules_mlf.tar")
    assert key_for(app, "view('source')") == "5"
    assert key_for(app, "focus('problems')") == "p"
    assert key_for(app, "help") == "?"  # its key_display, not question_mark
    assert key_for(app, "select_cursor") == ""  # the tree's, not the app's
    assert key_for(app, "select_cursor", (DocumentTree,)) == "Enter"
    asked = [("focus('problems')", "problems"), ("no_such_action", "x"), ("next_problem(1)", "next")]
    assert keys_said(app, asked) == "p: problems, n: next"


def test_a_key_hint_says_its_purpose_where_there_are_no_keys():
    assert str(KeyHint("view('source')", "open the source view")) == "open the source view"


def test_no_core_string_names_a_key():
    """`press 5`, `press Enter`, `(p: problems` in explorer/ would tell a user of `info` or the HTML report a key
    that does nothing there, and the TUI a key its bindings may not have."""
    pattern = re.compile(r"\bpress (?:[0-9a-zA-Z]|Enter|Esc)\b|\([a-zA-Z?]: [a-z]+[,)]")
    found = []
    for path in sorted((ROOT / "explorer").rglob("*.py")):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        found += [f"{path.relative_to(ROOT)}:{token.start[0]}" for token in tokens
                  if token.type == tokenize.STRING and pattern.search(token.string)]  # fmt: skip
    assert found == []
