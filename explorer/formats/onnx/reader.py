"""Loader for ONNX models: the structure without weights; weights are read on demand by the views.

The file is read once, read-only, and parsed with the onnx package's protobuf classes. External-data
sidecars are only checked for existence here. Shape inference fills in value types where it succeeds; a
failure is a warning. A Git LFS pointer, a truncated file or something that is not an ONNX protobuf is a
LoadError that says which.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.bounded_read import opened_regular
from explorer.document import ProgressCallback
from explorer.errors import LoadError, Problem
from explorer.formats.onnx import LFS_POINTER
from explorer.formats.onnx.wire import strip_weights
from explorer.protobuf_wire import file_source, parse_stripped

if TYPE_CHECKING:
    from explorer.formats.onnx.index import ModelIndex


def read_model(path: Path, progress: ProgressCallback) -> tuple[Any, list[Problem], dict]:
    """The model's index (explorer.formats.onnx.index), its load problems and its `info` summary. A file over
    DIRECT_BYTES is walked (explorer.formats.onnx.wire): tensors over STRIP_BYTES stay in it, read when asked."""
    from explorer.formats.onnx.index import BadText, build_index

    progress(0, 3, "reading")
    try:
        with opened_regular(path) as (fd, status):
            size = status.st_size
            source = file_source(fd, size)
            if source[: len(LFS_POINTER)] == LFS_POINTER:
                raise LoadError(
                    path, "byte 0", "this is a Git LFS pointer, not a model: fetch the real file with `git lfs pull`"
                )
            stamp = f"{size}:{status.st_mtime_ns}"
            model, walk = parse_stripped(path, source, _model_class(), "ONNX",
                                         lambda checked: strip_weights(source, path.name, stamp, checked=checked))
    except OSError as error:
        raise LoadError(path, "", f"cannot be read: {error.strerror or error}") from None
    if not model.HasField("graph"):
        if walk.problems:  # bytes that do not read as protobuf at all
            where, why = walk.problems[0]
            raise LoadError(path, where, f"not a valid ONNX protobuf (truncated or not ONNX): {why}")
        raise LoadError(path, "ModelProto.graph", "no graph: this protobuf is not an ONNX model")
    progress(1, 3, "indexing graphs")
    try:
        index = build_index(model)
    except BadText as error:
        raise LoadError(path, error.args[0], "a name is not valid UTF-8 text (a corrupt file)") from None
    index.stripped = walk.data
    problems = [Problem("error", "unreadable-field", f"{location}: {message}", location)
                for location, message in walk.problems]  # fmt: skip
    problems += [Problem(s, c, m, loc) for s, c, m, loc in index.problems]
    problems += _checks(path, index)
    return index, problems, summarise(index)


def _model_class() -> Any:
    import onnx

    return onnx.ModelProto


def summarise(index: ModelIndex) -> dict:
    """The `info` summary (issue #5 fixes the keys), plus parameter elements and bytes per dtype."""
    from explorer.formats.onnx.index import element_name, tensor_bytes

    model = index.model
    main = index.main
    by_dtype: dict[str, list[int]] = {}
    parameters = 0
    for tensor in main.proto.initializer:
        elements = math.prod(tensor.dims)
        parameters += elements
        entry = by_dtype.setdefault(element_name(tensor.data_type), [0, 0])
        entry[0] += elements
        entry[1] += tensor_bytes(tensor) or 0
    return {
        "graphs": len(index.counted),
        "nodes": sum(len(index.graphs[key].nodes) for key in index.counted),
        "top_level_nodes": len(main.nodes),
        "functions": len(model.functions),
        "initializers": len(main.proto.initializer),
        "op_types": dict(index.op_types().most_common()),
        "inputs": len(main.inputs),
        "outputs": len(main.outputs),
        "opsets": {("ai.onnx" if o.domain in ("", "ai.onnx") else o.domain): o.version for o in model.opset_import},
        "parameters": parameters,
        "parameters_by_dtype": {k: tuple(v) for k, v in sorted(by_dtype.items())},
    }


def _checks(path: Path, index: ModelIndex) -> list[Problem]:
    problems: list[Problem] = []
    model = index.model
    if not model.opset_import:
        problems.append(Problem("warning", "no-opset", "the model imports no opset", "ModelProto.opset_import"))
    for key, info in index.graphs.items():  # node inputs were checked while indexing (explorer.formats.onnx.index)
        for k, name in enumerate(info.outputs):
            if name and index.resolve(key, name) is None:
                problems.append(
                    Problem(
                        "error", "undefined-output", f"graph output {name!r} is never produced", f"{key}.output[{k}]"
                    )
                )
    missing: set[str] = set()
    for i, tensor in enumerate(index.main.proto.initializer):
        if tensor.data_location == 1:  # EXTERNAL
            location = next((e.value for e in tensor.external_data if e.key == "location"), "")
            if not isinstance(location, str):
                problems.append(
                    Problem(
                        "error",
                        "bad-external-data",
                        "the external data location is not valid text",
                        f"graph.initializer[{i}].external_data",
                    )
                )
                continue
            if location and location not in missing and not (path.parent / location).is_file():
                missing.add(location)
                problems.append(
                    Problem(
                        "warning",
                        "missing-external-data",
                        f"external data file {location!r} is missing: the structure shows, these weights cannot",
                        f"graph.initializer[{i}]",
                    )
                )
    return problems


def _inferred_model(serialized: bytes, dims: Mapping[str, int] | None = None) -> bytes:
    """In a child forked for it (explorer.isolated): onnx's C++ inference segfaults on some hostile models (a node
    reading an undeclared input of RegexFullMatch or ai.onnx.ml's DictVectorizer). It reads the model as the walk
    left it (large tensors' bytes in the file: inference reads their dims, and the small ones as data) and gives
    back the inferred model without its initializers, so only value types travel. Shape values onnx's inference
    does not evaluate are worked out by shape_folding and a second inference runs with them as constants. The
    dims the user bound are the graph inputs' sizes from the start."""
    import onnx

    from explorer.formats.onnx.shape_folding import fold_shape_inputs

    model = onnx.ModelProto()
    model.ParseFromString(serialized)
    if dims:
        _bind_input_dims(model.graph, dims)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    if fold_shape_inputs(model, inferred):
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    _strip_initializers(inferred.graph)
    return inferred.SerializeToString()


def _bind_input_dims(graph: Any, dims: Mapping[str, int]) -> None:
    """Each graph input's dim named in `dims` (or an expression of them, `batch*seq`) given its size."""
    from explorer.models.dim_expressions import value_of

    for value in graph.input:
        if not value.type.HasField("tensor_type"):
            continue
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param"):
                size = dims.get(dim.dim_param) or value_of(dim.dim_param, dims)
                if size:
                    dim.dim_value = size


def _strip_initializers(graph: Any) -> None:
    del graph.initializer[:]
    del graph.sparse_initializer[:]
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("g"):
                _strip_initializers(attribute.g)
            for sub in attribute.graphs:
                _strip_initializers(sub)


INFERENCE_SECONDS = 600.0


def infer_shapes(index: ModelIndex, path: Path, dims: Mapping[str, int] | None = None) -> list[Problem]:
    """Add inferred value types to the index; a failure, a crash or a timeout of onnx's inference is a warning
    (the declared types stay, the model opens). It costs about twice the parse on big graphs; every command that
    shows shapes or counts runs it (`info` too, for the counts). Its answer is kept on the index
    (`ModelIndex.inference`): a document read back from the cache merges it again for the same dims."""
    from explorer.formats.onnx.index import KeptInference

    bound = dict(dims or {})
    kept = index.inference
    if kept is not None and kept.dims == bound:
        try:
            if kept.output is not None:
                _merge_output(index, kept.output)
            return list(kept.problems)
        except _Unreadable:  # (it read when it was kept: the entry's checksum holds it) run again, as if not kept
            pass
    from explorer.isolated import run_forked

    infer = functools.partial(_inferred_model, dims=bound)
    result = run_forked(infer, index.stripped or index.model.SerializeToString(), INFERENCE_SECONDS)
    if result.failure:
        problems = [Problem("warning", "shape-inference", f"shape inference failed: {result.failure}; the model is "
                            "shown with the types it declares", "graph")]  # fmt: skip
        index.inference = KeptInference(bound, None, problems)
        return problems
    try:
        _merge_output(index, result.output)
    except _Unreadable as error:
        problems = [Problem("warning", "shape-inference", f"shape inference gave no readable model: {error}",
                            "graph")]  # fmt: skip
        index.inference = KeptInference(bound, None, problems)
        return problems
    index.types_version += 1
    index.inference = KeptInference(bound, result.output, [])
    return []


class _Unreadable(Exception):
    """The inferred model does not parse."""


def _merge_output(index: ModelIndex, output: bytes) -> None:
    """The types of the inferred model (`output`, serialized) in place of what an earlier inference found."""
    import onnx
    from google.protobuf.message import DecodeError

    inferred = onnx.ModelProto()
    try:
        inferred.ParseFromString(output)
    except (DecodeError, RecursionError, ValueError) as error:
        raise _Unreadable(error) from None
    for info in index.graphs.values():
        info.inferred = {}
    _merge_types(index, "graph", inferred.graph)


def _merge_types(index: ModelIndex, key: str, graph: Any) -> None:
    from explorer.formats.onnx.index import shapeless

    info = index.graphs.get(key)
    if info is None:
        return
    for value in [*graph.value_info, *graph.output]:
        if value.HasField("type"):
            declared = info.types.get(value.name)
            if declared is None or shapeless(declared):  # inference knows more than a type without a shape
                info.inferred[value.name] = value.type
    for n, node in enumerate(graph.node):
        for a, attribute in enumerate(node.attribute):
            if attribute.HasField("g"):
                _merge_types(index, f"{key}.node[{n}].attribute[{a}].g", attribute.g)
            for g, sub in enumerate(attribute.graphs):
                _merge_types(index, f"{key}.node[{n}].attribute[{a}].graphs[{g}]", sub)
