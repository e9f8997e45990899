"""What a graph box says, as Netron and Model Explorer say it: the op type first (a torch name such as
`/layers/layers.3/conv1/Conv` repeats the frames around the box and ends in the op anyway), the output shape as
`1×64×112×112` (the dtype only where it is not the graph's usual one), and the weights folded into the box by
the role the format gives them (`W 64×3×7×7 · B 64`).

Pure functions over a GraphModel: the layout measures boxes with them and the canvas draws them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import numpy as np

from explorer.formatting import shorten_middle
from explorer.models.graph import GraphModel
from explorer.models.ref import Ref

_TYPED = re.compile(r"^([A-Za-z][\w.]*)\[(.*)\]$")  # "float32[1, 64, 112, 112]", "FP16[1, 512]", "bool[]"
_NOISE = re.compile(r"[\d_\s#./:()-]+|^node|^onnx")
SAMPLED = 200  # drawn nodes read to find the graph's usual dtype (each detail may cost a protobuf walk)
WEIGHTS_WIDTH = 26  # cells of a box's weights line (a box is at most 30 wide); what does not fit reads "+N"


def usual_dtype(model: GraphModel) -> str:
    """The dtype most of the graph's values have (read from the first drawn nodes' details), or ""."""
    if model._usual_dtype is not None:
        return model._usual_dtype
    counts: Counter[str] = Counter()
    drawn = np.flatnonzero(~model.node_constant)[:SAMPLED].tolist()
    for node in drawn:
        found = _TYPED.match(model.node_detail[node])
        if found:
            counts[found.group(1)] += 1
    usual = counts.most_common(1)[0][0] if counts else ""
    model._usual_dtype = usual
    return usual


def shape_text(detail: str, usual: str = "") -> str:
    """`float32[1, 64, 112, 112]` → `1×64×112×112`; `int64[1, 16]` → `int64 1×16` where float32 is usual;
    `?` (unknown) → ""; anything else unchanged."""
    if detail == "?":
        return ""
    found = _TYPED.match(detail)
    if not found:
        return detail
    dtype, dims = found.group(1), found.group(2).strip()
    shape = "×".join(_dim(d.strip()) for d in dims.split(",")) if dims else "scalar"
    return shape if dtype == usual else f"{dtype} {shape}"


_PLACEHOLDER = re.compile(r"^unk__\d+$")
_PLACEHOLDERS = re.compile(r"\bunk__\d+\b")


def without_placeholders(text: str) -> str:
    """A type as the graph says it (`float32[?, ?, 96]`, not `float32[unk__14, unk__15, 96]`)."""
    return _PLACEHOLDERS.sub("?", text)


def _dim(dim: str) -> str:
    """A dimension as a box says it: a number, a symbol the file names (`batch`, `seq`), or `?` for the
    placeholders shape inference makes up for what it cannot name (`unk__64`): they say nothing to a reader and
    took most of a torch GPT box's width."""
    return "?" if _PLACEHOLDER.match(dim) else dim


_STACK = re.compile(r"^(?P<label>.*?)(?P<count> × \d[\d,]*)(?: (?P<kind>.+))?$")


def shorten_title(text: str, limit: int) -> str:
    """A box's or frame's title within `limit` characters. A stack's (`layers.1–15 × 15 LlamaDecoderLayer`) loses
    its class first, then the middle of its name: its `× N` is never the part cut. A module's (`encoder ·
    WhisperEncoder`) loses its class first too. Any other, cut in the middle."""
    if len(text) <= limit:
        return text
    label, dot, kind = text.partition(" · ")
    if dot and len(label) <= limit:
        room = limit - len(label) - len(dot)
        return f"{label}{dot}{shorten_middle(kind, room)}" if room >= 6 else label
    stack = _STACK.match(text)
    if stack is None or limit < len(stack["count"]) + 4:
        return shorten_middle(text, limit)
    label, count = stack["label"], stack["count"]
    if len(label) + len(count) <= limit:
        kind_room = limit - len(label) - len(count) - 1
        kind = stack["kind"] or ""
        return f"{label}{count} {shorten_middle(kind, kind_room)}" if kind and kind_room >= 6 else label + count
    return shorten_middle(label, limit - len(count)) + count


TITLE_ROOM = 26  # the characters a full box's title line holds at its widest (30 cells less borders and padding)


def title(op: str, label: str, room: int = TITLE_ROOM) -> str:
    """`title_of` within `room` characters: the op type whole, always (a box grows to hold it), the name after
    it cut in the middle, or left out where too little of it would show (`LayerNormalization …layer_norm`)."""
    full = title_of(op, label)
    if len(full) <= room or not op or full == op:
        return full
    name = full[len(op) + 1 :]
    rest = room - len(op) - 1
    return f"{op} {shorten_middle(name, rest)}" if rest >= 8 else op


def title_of(op: str, label: str) -> str:
    """The op type, and the node's own name after it when the name says more than the op (`Reshape node_view`,
    not `Conv Conv_12`): the frames around a box already show its scope."""
    short = label.rstrip("/").rsplit("/", 1)[-1]
    if not op:
        return short
    if short.startswith("fused_"):  # a fused function's name (TVM) says what its op type already says
        return op
    if not short or _NOISE.sub("", short.lower()) in ("", _NOISE.sub("", op.lower())):
        return op
    return f"{op} {short}"


SHAPE_CHAIN_LIMIT = 64  # ops counted in a folded shape value's chain, at most


def weights_text(model: GraphModel, node: int, usual: str, width: int = WEIGHTS_WIDTH) -> str:
    """The constants a box folds, by role where the format names them, within `width` cells: `W 64×3×7×7 · B 64`,
    a small one by its values (`axes = [0, 2]`), the largest tensors first whatever their dtype (an int8 weight
    before a float bias, shapes and options last),
    the rest counted (`+3`)."""
    parts = []
    values = model.node_values.get("value")  # a small constant's values, where the format gives them
    for _, source, role in model.folded_inputs(node):
        detail = model.node_detail[source]
        shape = shape_text(detail, usual) or model.node_op[source]
        size = _elements(detail)  # the weights first, whatever their dtype (an int8 W before a float bias)
        value = values[source] if values is not None else ""
        if model.node_shape_only[source]:  # computed from shapes when the model runs: how, not a weight's shape
            known = _shape_it_makes(model, node, role)
            if known:
                parts.append((0, f"{role} = {known}"))
                continue
            made = shape_ops_text(model, source)
            parts.append((0, f"{role} ← {made}" if role else f"← {made}"))
            continue
        if value:  # as Netron says it: `indices = 1`, `axes = [0, 2]`
            parts.append((-size, f"{role} = {value}" if role else f"= {value}"))
            continue
        parts.append((-size, f"{role} {shape}" if role else shape))
    parts.sort(key=lambda part: part[0])  # the largest first; stable: the inputs' own order among equals
    line = ""
    for k, (_, text) in enumerate(parts):
        candidate = f"{line} · {text}" if line else text
        rest = len(parts) - k - 1
        if len(candidate) + (len(f" · +{rest}") if rest else 0) > width and line:
            return f"{line} · +{len(parts) - k}"
        line = candidate
    return line


_UNKNOWN_DIM = re.compile(r"\bunk__\d+\b")  # ONNX shape inference's name for a dim it could not work out
SHAPE_INPUT_OF = {"Reshape": "shape", "ConstantOfShape": "input"}  # op → its input whose value is the output's shape


def _shape_it_makes(model: GraphModel, node: int, role: str) -> str:
    """A folded shape value as the dims it comes to (`[1, seq, 6, 16]`), where the reader's output shape is that
    value and shape inference knows every dim of it; "" otherwise (then the line counts the ops)."""
    if SHAPE_INPUT_OF.get(model.node_op[node]) != role:
        return ""
    found = _TYPED.match(model.node_detail[node])
    if not found or "?" in found.group(2) or _UNKNOWN_DIM.search(found.group(2)):
        return ""
    return f"[{found.group(2)}]"


def shape_ops_text(model: GraphModel, node: int) -> str:
    """How many ops compute a folded shape value (`4 ops`, `Shape` for one): the shape plumbing it is made of."""
    chain = model.constant_chain(node, limit=SHAPE_CHAIN_LIMIT)
    ops = [c for c in chain if model.node_shape_only[c]]
    if len(ops) == 1:
        return model.node_op[ops[0]]
    return f"{len(ops)}{'+' if len(chain) >= SHAPE_CHAIN_LIMIT else ''} ops"


def _elements(detail: str) -> int:
    """How many elements a typed shape holds (`float32[64, 3, 7, 7]` → 9408); 0 when it says no numbers (a
    string option, an unknown shape): those come last."""
    found = _TYPED.match(detail)
    if not found:
        return 0
    dims = [d.strip() for d in found.group(2).split(",") if d.strip()]
    count = 1
    for dim in dims:
        if not dim.isdigit():
            return 1  # symbolic: a real tensor, size unknown
        count *= int(dim)
    return count


def folded_section(model: GraphModel, ref: Ref, preview: Callable[[Ref], str]) -> tuple[str, tuple, list] | None:
    """The details panel's table of what a node's box folds (None for a node that folds nothing): each folded
    input with its role, the op that makes it (and the constants it is computed from), its shape and a preview
    of its values."""
    node = model.ref_to_node.get(ref)
    if node is None or model.node_constant[node]:
        return None
    folded = model.folded_inputs(node)
    if not folded:
        return None
    usual = usual_dtype(model)
    rows = []
    for _, source, role in folded:
        chain = model.constant_chain(source, limit=6)
        made = " ← ".join(model.node_op[c] for c in chain[:4]) + (" ← …" if len(chain) > 4 else "")
        shape = shape_text(model.node_detail[source], usual) or "?"
        ref_of = model.node_ref[source]
        rows.append((role or "·", f"{model.node_label[source]} ({made})", shape, preview(ref_of) if ref_of else ""))
    return "Folded into this box", ("input", "constant", "shape", "values"), rows


def stub_text(lead: str, names: list[str], each: int = 18) -> str:
    """A long or back edge's label: the arrow (`↓`, `↑ from`), the first two ends' names cut in the middle to
    `each` characters, and how many more (`↓ /layers.0/Add, Add_7 +3`); the canvas and the SVG both say it."""
    shown = ", ".join(shorten_middle(n, each) for n in names[:2])
    more = f" +{len(names) - 2}" if len(names) > 2 else ""
    return f"{lead} {shown}{more}"


def stub_forms(lead: str, names: list[str], limit: int) -> list[str]:
    """A stub's label in its whole forms, the fullest first, each within `limit` characters: the first two ends'
    names and how many more (stub_text), the first and how many more, the count alone, the arrow alone. The canvas
    writes the first form that finds blank cells, so a label is shortened to a whole form, never cut at its end
    (a UNet's `↓ up_bl…`)."""
    forms = [stub_text(lead, names)]
    if len(names) > 1:
        forms += [f"{lead} {shorten_middle(names[0], 18)} +{len(names) - 1}", f"{lead} +{len(names)}"]
    forms.append(lead)
    return [form for form in dict.fromkeys(forms) if len(form) <= limit] or [lead]

