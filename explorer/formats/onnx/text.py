"""How ONNX types, dimensions and attributes read in one line (the tree, the details and the graph's boxes)."""

from __future__ import annotations

from typing import Any

from onnx import AttributeProto

from explorer.formats.onnx.index import element_name


def type_text(type_proto: Any) -> str:
    """`float32[batch, 3, 32, 32]`, `seq(float32[?])`, `optional(int64[])`, `map(string, float32)`."""
    if type_proto is None:
        return "?"
    kind = type_proto.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        tensor = getattr(type_proto, kind)
        dims = "?" if not tensor.HasField("shape") else ", ".join(_dim(d) for d in tensor.shape.dim)
        prefix = "sparse " if kind == "sparse_tensor_type" else ""
        return f"{prefix}{element_name(tensor.elem_type)}[{dims}]"
    if kind == "sequence_type":
        return f"seq({type_text(type_proto.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({type_text(type_proto.optional_type.elem_type)})"
    if kind == "map_type":
        return f"map({element_name(type_proto.map_type.key_type)}, {type_text(type_proto.map_type.value_type)})"
    return "?"


def _dim(dim: Any) -> str:
    which = dim.WhichOneof("value")
    if which == "dim_value":
        return str(dim.dim_value)
    if which == "dim_param":
        name = dim.dim_param  # bytes when a corrupt file holds invalid UTF-8 there
        return name if isinstance(name, str) else name.decode("utf-8", errors="replace")
    return "?"


def attribute_text(attribute: Any, limit: int = 80) -> tuple[str, str]:
    """(type name, short value) of a node attribute."""
    kind = attribute.type
    name = AttributeProto.AttributeType.Name(kind).lower() if kind in AttributeProto.AttributeType.values() else "?"
    if kind == AttributeProto.FLOAT:
        value = f"{attribute.f:g}"
    elif kind == AttributeProto.INT:
        value = str(attribute.i)
    elif kind == AttributeProto.STRING:
        value = repr(attribute.s.decode("utf-8", errors="replace"))
    elif kind == AttributeProto.TENSOR:
        value = f"tensor {element_name(attribute.t.data_type)}{list(attribute.t.dims)}"
    elif kind == AttributeProto.GRAPH:
        value = f"graph ({len(attribute.g.node)} nodes)"
    elif kind == AttributeProto.FLOATS:
        value = "[" + ", ".join(f"{v:g}" for v in attribute.floats) + "]"
    elif kind == AttributeProto.INTS:
        value = "[" + ", ".join(map(str, attribute.ints)) + "]"
    elif kind == AttributeProto.STRINGS:
        value = "[" + ", ".join(repr(v.decode("utf-8", errors="replace")) for v in attribute.strings) + "]"
    elif kind == AttributeProto.GRAPHS:
        value = f"{len(attribute.graphs)} graphs"
    elif kind == AttributeProto.TYPE_PROTO:
        value = type_text(attribute.tp)
    else:
        value = attribute.ref_attr_name and f"ref {attribute.ref_attr_name}" or "?"
    if attribute.ref_attr_name:
        value = f"→ function attribute {attribute.ref_attr_name}"
    return name, value if len(value) <= limit else value[: limit - 1] + "…"
