"""One matcher, one count (issue #59 item 4): the compare screen's header and `diff` count the same ops changed,
removed and added (the screen counted the input and output boxes too: 86 changed where diff said 84), and diff's
text says a type as the graph does (`?`, never shape inference's `unk__3`)."""

from __future__ import annotations

import re

import pytest

from explorer.api import open_document
from explorer.diff import diff_documents, diff_lines
from explorer.graph.compare import compare_documents
from tests.conftest import SAMPLE_DATA, SAMPLES

PAIRS = [
    (SAMPLE_DATA / "residual_blocks.onnx", SAMPLE_DATA / "residual_blocks_renamed.onnx"),
    (SAMPLES / "onnx" / "minigpt4_dynaxes_torchscript_opset17_noconstfold.onnx",
     SAMPLES / "onnx" / "minigpt4_dynamo_dynseq_noopt.onnx"),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=["renamed", "two-exports"])
def test_the_compare_header_and_diff_count_the_same(a, b):
    if not b.exists():
        pytest.skip("../shared/samples is not beside the checkout")
    first, second = open_document(a), open_document(b)
    header = compare_documents(first, second).summary()
    summary = diff_documents(first, second)["summary"]
    changed, removed, added = (int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:changed|removed|added)",
                                                                             header))  # fmt: skip
    assert (changed, removed, added) == (summary["nodes_changed"], summary["nodes_removed"], summary["nodes_added"])
    text = "\n".join(diff_lines(diff_documents(first, second, limit=None)))
    assert "unk__" not in text
