"""Issue #74 item 1: `--dims` on the exports people make. A dim named by an expression (`batch*seq`) binds from
its parts; a name the model does not have is refused with its dims listed; and the dims are bound before shape
inference, so a TorchScript export's `unk__N` dims become sizes and its counts equal the dynamo export's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from explorer.models.count import Count
from explorer.models.dim_expressions import parts, value_of, with_expressions
from tests.conftest import ROOT, samples_dir


@pytest.mark.parametrize("name, dims, value", [
    ("batch*seq", {"batch": 2, "seq": 128}, 256),
    ("2*(s0+1)//3", {"s0": 5}, 4),
    ("s0 - 1", {"s0": 5}, 4),
    ("s/2", {"s": 6}, 3),
    ("s/2", {"s": 5}, None),  # does not divide exactly
    ("s-9", {"s": 5}, None),  # not a size
    ("batch*seq", {"batch": 2}, None),  # a part unbound
    ("seq", {"seq": 3}, None),  # a plain symbol is not an expression
    ("__import__('os')", {}, None),
    ("a.b*c", {"c": 2}, None),
    ("s**2", {"s": 3}, None),
])  # fmt: skip
def test_an_expression_is_evaluated_only_as_arithmetic(name, dims, value):
    assert value_of(name, dims) == value


def test_parts_and_binding_with_expressions():
    assert parts("batch*seq") == {"batch", "seq"} and parts("seq") == set() and parts("f(x)*2") == set()
    assert with_expressions({"batch*seq", "seq", "heads"}, {"batch": 2, "seq": 4}) == {"batch": 2, "seq": 4,
                                                                                      "batch*seq": 8}  # fmt: skip
    count = Count.product(["batch*seq", 768]) * Count.product(["seq"])
    assert count.text() == "768·batch*seq·seq"
    assert count.bind({"batch": 2, "seq": 128}).value == 768 * 256 * 128
    assert count.bind({"seq": 128}).text() == "98,304·batch*seq"


def info(path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "info", str(path), *args], capture_output=True,
                          text=True, cwd=ROOT)  # fmt: skip


def test_a_name_the_model_does_not_have_is_refused_with_its_dims():
    model = samples_dir("onnx") / "minigpt4_dynamo_dynseq_noopt.onnx"
    done = info(model, "--dims", "seq=128,foo=3")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--dims: this model has no dim named 'foo'; its dims: seq" in done.stderr


def test_torchscript_dims_are_bound_before_inference():
    """TorchScript's export leaves inference a new `unk__N` for every reshape: MACs were `6·batch·unk__1²·unk__10
    + …` even with --dims; bound first, they are the dynamo export's number."""
    folder = samples_dir("onnx")
    totals = []
    for name, dims in (("minigpt4_dynaxes_torchscript_opset17_noconstfold.onnx", "batch=1,seq=128"),
                       ("minigpt4_dynamo_dynseq_noopt.onnx", "seq=128")):  # fmt: skip
        done = info(folder / name, "--dims", dims, "--json")
        assert done.returncode == 0, done.stderr
        totals.append(json.loads(done.stdout)["metrics"]["totals"]["macs"])
    assert totals[0] == totals[1] and totals[0]["value"] == 73_138_176 and totals[0]["unknown_ops"] == 0

