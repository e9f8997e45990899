"""Loader for Core ML: `.mlpackage` folders (through Manifest.json), `.mlmodel` files (ML Program,
NeuralNetwork, pipelines, ...) and compiled `.mlmodelc` folders (their `model.mil` text).

Only coremltools' protobuf modules are used (see explorer.formats.coreml.proto). Weight records in
`weight.bin` are validated here, 64 bytes each; their data is read when a weight is opened. A missing
`weight.bin` is a warning: the structure still shows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from explorer.bounded_read import opened_regular, read_regular
from explorer.document import Document, ProgressCallback, no_progress
from explorer.errors import LoadError, Problem
from explorer.formats.coreml.model import CoreMLModel, index_program, read_blob_record
from explorer.formats.coreml.wire import strip_weights
from explorer.gc_pause import collector_paused
from explorer.memory_guard import BASE_BYTES, refusal
from explorer.protobuf_wire import MAX_BYTES, Walk, file_source, parse_stripped

MAX_SPEC_BYTES = MAX_BYTES  # the spec besides the weights' values the walk leaves in the file
MAX_METADATA_BYTES = 16 * 2**20  # coremlcompiler writes a few KB: inputs, outputs, an op histogram
MIL_MEMORY_PER_BYTE = 80  # model.mil drawn: 60-70 bytes a byte measured (BENCHMARKS.md), and some room
# ... and per line, for programs of short lines: `graph --json` of one-op lines of 48 bytes took 4.7-5.6 KB a line
# (95-116 bytes a byte: past the per-byte bound), measured by tests/unit/test_mil_limits.py
MIL_MEMORY_PER_LINE = 6144


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    with collector_paused():
        return _load(Path(path), progress or no_progress)


def _load(path: Path, progress: ProgressCallback) -> Document:
    from explorer.formats.coreml.document import build_document
    from explorer.formats.coreml.proto import CoreMLUnavailable, proto_module

    problems: list[Problem] = []
    progress(0, 3, "reading")
    if path.is_dir() and not (path / "Manifest.json").is_file() and _is_compiled(path):
        if (path / "model.mil").is_file():
            mil_text = _read_text(_inside(path, path / "model.mil", "model.mil"), path, "model.mil",
                                  bytes_per_file_byte=MIL_MEMORY_PER_BYTE)  # fmt: skip
            _ensure_lines_fit(path, mil_text)
        else:  # a compiled NeuralNetwork: its layers are in Apple's binary files
            mil_text = ""
            said = "a compiled model without model.mil (a NeuralNetwork): its inputs and outputs are shown, its layers"
            problems.append(Problem("info", "no-model-mil", said + " are not read", "model.mil"))
        weights = _weights_inside(path, path / "weights", problems)
        model = CoreMLModel(path, None, None, weights, mil_text=mil_text)
        model.compiled_metadata = _compiled_metadata(path, problems)
        _check_weights(model, problems)
        return build_document(path, model, problems)
    spec_path, weights_dir = _locate(path)
    if path.is_dir():
        weights_dir = _weights_inside(path, weights_dir, problems)
    try:
        model_pb2 = proto_module("Model_pb2")
    except CoreMLUnavailable as error:
        raise LoadError(path, "", str(error)) from None
    spec, walk = _read_spec(spec_path, model_pb2)
    problems += [Problem("error", "unreadable-field", f"{location}: {message}", location)
                 for location, message in walk.problems]  # fmt: skip
    if spec.specificationVersion == 0 and spec.WhichOneof("Type") is None:
        raise LoadError(spec_path, "Model.specificationVersion", "no specification version and no model: not Core ML")
    model = CoreMLModel(path, spec_path, spec, weights_dir, stamp=walk.stamp)
    progress(1, 3, "indexing")
    if spec.WhichOneof("Type") == "mlProgram":
        index_program(spec.mlProgram, model)
        problems += _check_program(model)
        _check_weights(model, problems)
    progress(3, 3, "done")
    return build_document(path, model, problems)


def _read_spec(spec_path: Path, model_pb2: Any) -> tuple[Any, Walk]:
    """The spec without its weights' values: a file over DIRECT_BYTES (or one that does not parse as it is) is
    walked (explorer.formats.coreml.wire), each layer's large weights left in the file, their sizes noted."""
    try:
        with opened_regular(spec_path) as (fd, status):
            if status.st_size == 0:
                raise LoadError(spec_path, "byte 0", "the model file is empty")
            source = file_source(fd, status.st_size)
            stamp = f"{status.st_size}:{status.st_mtime_ns}"
            spec, walk = parse_stripped(spec_path, source, model_pb2.Model, "Core ML",
                                        lambda checked: strip_weights(source, stamp, checked=checked))  # fmt: skip
    except OSError as error:
        raise LoadError(spec_path, "", f"cannot be read: {error.strerror or error}") from None
    if walk.problems and spec.WhichOneof("Type") is None:  # cut or broken before any model: nothing to show
        where, why = walk.problems[0]
        raise LoadError(spec_path, where, f"not a valid Core ML model protobuf (truncated or not Core ML): {why}")
    return spec, walk


def _is_compiled(path: Path) -> bool:
    """A folder as coremlcompiler writes it: model.mil (an ML Program), or coremldata.bin with metadata.json."""
    return (path / "model.mil").is_file() or (
        (path / "coremldata.bin").is_file() and (path / "metadata.json").is_file()
    )


def _compiled_metadata(path: Path, problems: list[Problem]) -> dict | None:
    """metadata.json of a compiled folder: coremlcompiler writes an array of one object (`[{"inputSchema": ...}]`),
    older tools an object; both are read. Anything else is a warning, and the model loads without it."""
    if not (path / "metadata.json").exists():
        return None
    try:
        value = json.loads(_read_text(_inside(path, path / "metadata.json", "metadata.json"), path,
                                      "a compiled model's metadata.json", limit=MAX_METADATA_BYTES))
    except ValueError as error:
        problems.append(Problem("warning", "bad-metadata", f"metadata.json is not JSON ({error})", "metadata.json"))
        return None
    except LoadError as error:  # a FIFO, a device, a giant: the model loads without it
        problems.append(Problem("warning", "bad-metadata", f"metadata.json is not read: {error.message}",
                                "metadata.json"))  # fmt: skip
        return None
    if isinstance(value, list) and value and all(isinstance(entry, dict) for entry in value):
        if len(value) > 1:
            problems.append(Problem("warning", "bad-metadata", f"metadata.json holds {len(value)} entries; the "
                                    "first is read", "metadata.json: $"))  # fmt: skip
        return value[0]
    if isinstance(value, dict):
        return value
    problems.append(Problem("warning", "bad-metadata", "metadata.json: expected an object or an array of one "
                            "object", "metadata.json: $"))  # fmt: skip
    return None


def _inside(root: Path, path: Path, member: str) -> Path:
    """The real path of a file of a package or compiled folder, refused when a symbolic link takes it outside
    (an absolute link to /etc/passwd, say) or round in a loop: the explorer reads only what the model holds."""
    try:
        real = path.resolve()
        inside = real.is_relative_to(root.resolve())
    except (RuntimeError, OSError) as error:  # a symbolic link loop (RuntimeError before Python 3.13)
        raise LoadError(root, member, f"cannot follow this path: {error}") from None
    if not inside:
        raise LoadError(root, member, f"a symbolic link leads outside the model, to {real}: not read")
    return real


def _weights_inside(root: Path, weights: Path | None, problems: list[Problem]) -> Path | None:
    """The weights folder if it is inside the package; otherwise the structure still shows, without weights."""
    if weights is None or not (weights.exists() or weights.is_symlink()):
        return weights
    try:
        folder = _inside(root, weights, "weights")
        blob = folder / "weight.bin"
        if blob.exists() or blob.is_symlink():
            _inside(root, blob, "weights/weight.bin")
        return folder
    except LoadError as error:
        problems.append(Problem("warning", "weights-not-read", error.message, error.location))
        return None


def _ensure_lines_fit(path: Path, mil_text: str) -> None:
    """The guard by what the program's lines become once drawn (the size alone misjudges short lines)."""
    lines = mil_text.count("\n") + 1
    estimate = BASE_BYTES + max(len(mil_text) * MIL_MEMORY_PER_BYTE, lines * MIL_MEMORY_PER_LINE)
    said = refusal(estimate, f"model.mil of {lines:,} lines ({MIL_MEMORY_PER_LINE:,} bytes a line once drawn)")
    if said is not None:
        raise LoadError(path, "model.mil", said)


def _read_text(path: Path, root: Path, what: str, **bounds: Any) -> str:
    """A text file of the folder, read only when it is a regular file that fits (`bounded_read.read_regular`)."""
    try:
        data = read_regular(path, what, location=path.name, **bounds)
    except LoadError as error:
        raise LoadError(root, error.location, error.message) from None
    return data.decode("utf-8", errors="replace")


def _locate(path: Path) -> tuple[Path, Path | None]:
    """(the model protobuf, the weights folder) of a package or a plain .mlmodel."""
    if not path.is_dir():
        return path, path.parent / "weights"
    manifest_path = path / "Manifest.json"
    if not manifest_path.is_file():
        raise LoadError(path, "Manifest.json", "a .mlpackage folder needs Manifest.json")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        root = manifest["rootModelIdentifier"]
        entry = manifest["itemInfoEntries"][root]["path"]
    except (ValueError, KeyError, TypeError, OSError) as error:
        raise LoadError(
            path, "Manifest.json", f"expected itemInfoEntries[rootModelIdentifier].path ({error!r})"
        ) from None
    try:
        spec_path = (path / "Data" / str(entry)).resolve()
    except (RuntimeError, OSError) as error:  # a symbolic link loop (RuntimeError before Python 3.13)
        raise LoadError(path, f"Data/{entry}", f"cannot follow the model path: {error}") from None
    if not spec_path.is_relative_to(path.resolve()):
        raise LoadError(path, "Manifest.json", f"the model path {entry!r} leaves the package")
    if not spec_path.is_file():
        raise LoadError(path, "Manifest.json", f"the root model {entry!r} is not in Data/")
    return spec_path, spec_path.parent / "weights"


def _check_program(model: CoreMLModel) -> list[Problem]:
    problems: list[Problem] = []
    program = model.model.mlProgram
    for name, function in sorted(program.functions.items()):
        if function.opset not in function.block_specializations:
            problems.append(
                Problem(
                    "error",
                    "missing-block",
                    f"function {name!r}: no block for its opset {function.opset!r}",
                    f"mlProgram.functions[{name}]",
                )
            )
    if not program.functions:
        problems.append(Problem("warning", "empty-program", "the ML Program has no functions", "mlProgram.functions"))
    return problems


def _check_weights(model: CoreMLModel, problems: list[Problem]) -> None:
    """Validate every blob record the program points at; a missing weight.bin is a warning."""
    uses = []
    for key, block in model.blocks.items():
        for i, op in enumerate(block.proto.operations):
            for attribute_name, value in sorted(op.attributes.items()):
                if value.WhichOneof("value") == "blobFileValue":
                    uses.append((key, i, attribute_name, value.blobFileValue))
    weight_file = model.weights_dir / "weight.bin" if model.weights_dir else None
    if model.mil_text is not None:
        if "BLOBFILE" in model.mil_text and not (weight_file and weight_file.is_file()):
            problems.append(
                Problem(
                    "warning",
                    "missing-weights",
                    "model.mil refers to weights/weight.bin, which is missing",
                    "weights/weight.bin",
                )
            )
        return
    if not uses:
        return
    if weight_file is None or not weight_file.is_file():
        problems.append(
            Problem(
                "warning",
                "missing-weights",
                f"{len(uses)} constants live in weights/weight.bin, "
                "which is missing: the structure shows, their values cannot",
                "weights/weight.bin",
            )
        )
        return
    size = weight_file.stat().st_size
    with weight_file.open("rb") as handle:
        header = handle.read(64)
        if len(header) < 8 or int.from_bytes(header[4:8], "little") != 2:
            problems.append(
                Problem(
                    "warning",
                    "weights-header",
                    "weight.bin does not start with a version-2 header",
                    "weights/weight.bin: byte 0",
                )
            )
        for key, i, attribute_name, blob in uses:
            where = f"{key}.operations[{i}].attributes[{attribute_name}]"
            if not re.search(r"weights/weight\.bin$", blob.fileName):
                problems.append(
                    Problem("warning", "other-blob-file", f"blob file {blob.fileName!r} is not read", where)
                )
                continue
            record = read_blob_record(handle, size, blob.offset)
            if isinstance(record, str):
                problems.append(Problem("error", "bad-blob", record, where))
            else:
                model.blobs[(key, i)] = record
                if record.data_offset % 64:
                    problems.append(
                        Problem(
                            "warning", "unaligned-blob", f"data at {record.data_offset:,} is not 64-byte aligned", where
                        )
                    )
