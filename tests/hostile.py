"""Small hostile files for the hardening tests (issue #44), made on demand."""

from __future__ import annotations

from pathlib import Path


def onnx_that_crashes_shape_inference(folder: Path) -> list[Path]:
    """Two tiny models on which onnx's C++ shape inference segfaults: a node reading an input nobody declares, of
    RegexFullMatch (opset 20) and of ai.onnx.ml's DictVectorizer."""
    from onnx import helper

    made = []
    regex = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern="a")
    model = helper.make_model(helper.make_graph([regex], "g", [], []), opset_imports=[helper.make_opsetid("", 20)])
    made.append(folder / "regex_undeclared.onnx")
    made[-1].write_bytes(model.SerializeToString())
    vectorizer = helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", string_vocabulary=["a"])
    model = helper.make_model(
        helper.make_graph([vectorizer], "g", [], []),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
    )
    made.append(folder / "vectorizer_undeclared.onnx")
    made[-1].write_bytes(model.SerializeToString())
    return made
