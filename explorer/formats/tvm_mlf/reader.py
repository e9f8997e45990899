"""Loader for TVM Model Library Format bundles: a tar (read in memory) or an extracted folder.

Metadata versions seen in the wild: v4 (flat, `runtimes`, `runtime-config/graph/graph.json`), v5 (flat,
`executors`, `executor-config/graph/graph.json`, `src/relay.txt`), v7 (a `modules` map; per-module
`executor-config/graph/<mod>.graph`, `parameters/<mod>.params`, `src/<mod>.relay`, `codegen/host/src/
<mod>_lib0.c`), operator-only builds (`style: "operator"`, no graph, `src/tir-*.txt`) and AOT builds (no graph,
`codegen/host/include/tvmgen_<mod>.h`). What a version lacks is simply absent; unknown versions are read by
shape (a `modules` key or not) with a warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from explorer import jsonpath
from explorer.document import Document, ProgressCallback, no_progress
from explorer.errors import LoadError, Problem
from explorer.formats.tvm_mlf.archive import Bundle, read_folder, read_tar
from explorer.formats.tvm_mlf.bundle import FunctionMemory, MlfBundle, Module
from explorer.formats.tvm_mlf.graph import GraphError, parse_graph
from explorer.formats.tvm_mlf.params import ParamsError, parse_params
from explorer.formats.tvm_mlf.storage_plan import plan_schedule, storage_plan
from explorer.gc_pause import collector_paused
from explorer.json_errors import locate_json_error
from explorer.memory_guard import json_value_bound

KNOWN_VERSIONS = (2, 3, 4, 5, 6, 7)
MAX_METADATA_BYTES = 16 << 20  # real ones are kilobytes: per-function memory lists at most
MAX_METADATA_VALUES = 1_000_000


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    with collector_paused():
        return _load(Path(path), progress or no_progress, strict)


def _load(path: Path, progress: ProgressCallback, strict: bool) -> Document:
    from explorer.formats.tvm_mlf.document import build_document

    progress(0, 3, "reading the bundle")
    bundle = read_folder(path) if path.is_dir() else read_tar(path)
    problems = list(bundle.problems)
    if "metadata.json" not in bundle.members:
        raise LoadError(path, "tar member 'metadata.json'" if bundle.kind == "tar" else "metadata.json",
                        "no metadata.json: this is not a Model Library Format bundle")  # fmt: skip
    metadata = _metadata(path, bundle.members["metadata.json"])
    version = metadata.get("version") if type(metadata.get("version")) is int else None
    if version not in KNOWN_VERSIONS:
        message = f"metadata version {metadata.get('version')!r} is not one this explorer knows; read by its shape"
        problems.append(Problem("warning", "unknown-version", message, "metadata.json: $.version"))
    progress(1, 3, "reading graphs and parameters")
    modules = _modules(metadata, bundle, problems)
    for module in modules:
        _read_module_files(module, bundle, problems)
    progress(2, 3, "planning storage")
    with_graphs = [(m.name, m.graph, m.plan) for m in modules if m.graph is not None and m.plan is not None]
    mlf = MlfBundle(bundle, metadata, version, modules)
    schedule = None
    if with_graphs:
        schedule, mlf.rows_nid = plan_schedule(with_graphs)
        schedule.core_names = {core: f"module {name}" for core, (name, _, _) in enumerate(with_graphs)}
        for core, module in enumerate(m for m in modules if m.graph is not None and m.plan is not None):
            module.core = core
    if strict:
        problems = [Problem("error", p.code, p.message, p.location, p.refs) if p.severity == "warning" else p
                    for p in problems]  # fmt: skip
    progress(3, 3, "done")
    return build_document(path, mlf, schedule, problems)


def _metadata(path: Path, data: bytes) -> dict[str, Any]:
    if len(data) > MAX_METADATA_BYTES or json_value_bound(data) > MAX_METADATA_VALUES:
        raise LoadError(path, "metadata.json: $", f"over the cap for metadata ({MAX_METADATA_BYTES:,} bytes, "
                        f"{MAX_METADATA_VALUES:,} JSON values): real bundles' are kilobytes")  # fmt: skip
    try:
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        location, message = locate_json_error(data, error)
        raise LoadError(path, f"metadata.json: {location}", f"not valid JSON: {message}") from None
    except RecursionError:
        raise LoadError(path, "metadata.json: $", "JSON nested too deeply to be metadata") from None
    if not isinstance(value, dict):
        raise LoadError(path, "metadata.json: $", f"expected an object, got {jsonpath.short_json(value)}")
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, dict):  # v4/v5 target: {"1": "c -keys=cpu ..."}
        return [f"{k}: {v}" for k, v in value.items()]
    return [str(value)] if value else []


def _modules(metadata: dict[str, Any], bundle: Bundle, problems: list[Problem]) -> list[Module]:
    raw_modules = metadata.get("modules")
    if isinstance(raw_modules, dict):  # v7
        entries = [(str(name), value, f"metadata.json: $.modules{jsonpath.key(str(name))}")
                   for name, value in raw_modules.items()]  # fmt: skip
    else:
        if raw_modules is not None:
            problems.append(Problem("error", "bad-metadata", f"expected an object of modules, got "
                                    f"{jsonpath.short_json(raw_modules)}", "metadata.json: $.modules"))  # fmt: skip
        named = metadata.get("model_name")
        name = named if isinstance(named, str) else "default"
        entries = [(name, metadata, "metadata.json: $")]
    modules = []
    for name, value, where in entries:
        if not isinstance(value, dict):
            problems.append(Problem("error", "bad-metadata", f"module {name!r}: expected an object", where))
            continue
        executors = value.get("executors", value.get("runtimes", []))  # v4 called them runtimes
        module = Module(
            name=name,
            executors=_strings(executors),
            style=str(value.get("style", "full-model")),
            targets=_strings(value.get("target")),
            memory=_memory(value.get("memory"), where + ".memory", problems),
        )
        modules.append(module)
    _assign_files(modules, bundle)
    return modules


def _memory(value: Any, where: str, problems: list[Problem]) -> list[FunctionMemory]:
    """`memory.functions.main` and `.operator_functions` (full models) or `{function: [usage]}` (operator-only)."""
    if value is None:
        return []
    if not isinstance(value, dict):
        problems.append(
            Problem("error", "bad-metadata", f"expected an object, got {jsonpath.short_json(value)}", where)
        )
        return []
    result: list[FunctionMemory] = []
    functions = value.get("functions")
    if isinstance(functions, dict):
        for usage in functions.get("main", []) if isinstance(functions.get("main"), list) else []:
            result += _usage("main", usage)
        operators = functions.get("operator_functions", [])
        for item in operators if isinstance(operators, list) else []:
            if isinstance(item, dict):
                for usage in item.get("workspace", []) if isinstance(item.get("workspace"), list) else []:
                    result += _usage(str(item.get("function_name", "?")), usage)
        return result
    for function, usages in value.items():  # operator-only builds
        if function == "sids":
            continue
        for usage in usages if isinstance(usages, list) else [usages]:
            result += _usage(str(function), usage)
    return result


def _usage(function: str, usage: Any) -> list[FunctionMemory]:
    if not isinstance(usage, dict):
        return []

    def number(key: str) -> int | None:
        value = usage.get(key)
        return value if type(value) is int else None

    return [
        FunctionMemory(
            function,
            number("device"),
            number("workspace_size_bytes") or 0,
            number("constants_size_bytes"),
            number("io_size_bytes"),
        )
    ]


def _assign_files(modules: list[Module], bundle: Bundle) -> None:
    """Each module's graph, params, relay, TIR and codegen files, by the names each version uses."""
    single = len(modules) == 1
    for module in modules:
        name = module.name
        module.graph_member = bundle.find(
            f"executor-config/graph/{name}.graph",
            *(("executor-config/graph/graph.json", "runtime-config/graph/graph.json") if single else ()),
        )
        module.params_member = bundle.find(f"parameters/{name}.params")
        if module.params_member is None and single:
            module.params_member = next(iter(bundle.under("parameters")), None)
        module.relay_member = bundle.find(f"src/{name}.relay", *(("src/relay.txt",) if single else ()))
        module.tir_members = [m for m in bundle.under("src") if m.startswith("src/tir") and (single or name in m)]
        codegen = bundle.under("codegen")
        mine = [m for m in codegen if Path(m).name.startswith((f"{name}_", f"tvmgen_{name}"))]
        module.source_members = mine if (mine or not single) else codegen


def _read_module_files(module: Module, bundle: Bundle, problems: list[Problem]) -> None:
    if module.graph_member:
        try:
            module.graph, found = parse_graph(bundle.members[module.graph_member], module.graph_member)
            problems += found
        except GraphError as error:
            location, message = error.args
            problems.append(Problem("error", "bad-graph", f"{message}; the graph is not shown", location,
                                    {"member": module.graph_member}))  # fmt: skip
    elif "graph" in module.executors:
        problems.append(Problem("warning", "missing-graph", f"module {module.name!r} names the graph executor but "
                                "the bundle has no graph JSON for it", "metadata.json"))  # fmt: skip
    if module.params_member:
        left = bundle.left.get(module.params_member)
        try:
            if left is None:
                module.params = parse_params(bundle.members[module.params_member])
            elif isinstance(left.arrays, ParamsError):
                raise left.arrays
            else:
                module.params = left.arrays
        except ParamsError as error:
            offset, message = error.args
            where = f"{module.params_member}: byte {offset}"
            message = f"{message}; the parameters are not shown"
            problems.append(Problem("error", "bad-params", message, where, {"member": module.params_member}))
    if module.graph is not None:
        names = {array.name for array in module.params}
        module.plan = storage_plan(module.graph, names)
