"""Core ML models made with coremltools' MIL builder, in a child process.

The child imports coremltools (converters and all); the test process never does, because the explorer loads
coremltools' protobuf modules on their own and the two cannot share one process (see
explorer.formats.coreml.proto).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import sys, numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types
out = sys.argv[1]

@mb.program(input_specs=[mb.TensorSpec(shape=(1, 8)), mb.TensorSpec(shape=(1,), dtype=types.int32)],
            opset_version=ct.target.iOS16)
def nested(x, n):
    w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)  # 64 values: stored as a blob in weight.bin
    def cond(i, acc):
        return mb.less(x=i, y=n)
    def body(i, acc):
        total = mb.reduce_sum(x=acc)
        picked = mb.cond(pred=mb.greater(x=total, y=0.0), _true_fn=lambda: mb.relu(x=acc),
                         _false_fn=lambda: mb.mul(x=acc, y=2.0))
        return mb.add(x=i, y=1), mb.linear(x=picked, weight=w)
    _, y = mb.while_loop(_cond=cond, _body=body, loop_vars=(mb.const(val=np.array([0], dtype=np.int32)), x))
    q = mb.constexpr_affine_dequantize(quantized_data=np.arange(64, dtype=np.uint8).reshape(8, 8),
                                       zero_point=np.uint8(3), scale=np.float32(0.5), axis=0)
    return mb.linear(x=y, weight=q, name="out")

model = ct.convert(nested, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                   compute_precision=ct.precision.FLOAT32)
model.save(out + "/nested_blocks_blob.mlpackage")

spec = model.get_spec()  # a second function that shares the first one's block: a multi-function package
program = spec.mlProgram
program.functions["second"].CopyFrom(program.functions["main"])
for name in ("main", "second"):
    function = spec.description.functions.add()
    function.name = name
    function.input.extend(spec.description.input)
    function.output.extend(spec.description.output)
spec.description.defaultFunctionName = "main"
del spec.description.input[:]
del spec.description.output[:]
spec.specificationVersion = 9
with open(out + "/multi_function.mlmodel", "wb") as handle:
    handle.write(spec.SerializeToString())

@mb.program(input_specs=[mb.StateTensorSpec((1, 4), dtype=types.fp16), mb.TensorSpec((1, 4), dtype=types.fp16)],
            opset_version=ct.target.iOS18)
def stateful(cache, x):
    old = mb.read_state(input=cache)
    new = mb.add(x=old, y=x)
    mb.coreml_update_state(state=cache, value=new)
    return new

model = ct.convert(stateful, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS18)
model.save(out + "/stateful.mlpackage")
print("made")
"""


def make_models(folder: Path) -> Path:
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(folder)], capture_output=True, text=True, timeout=300)
    if "made" not in result.stdout:
        raise RuntimeError("coremltools could not build the test models:\n" + result.stderr[-3000:])
    return folder
