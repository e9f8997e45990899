"""Per-node data: the user's own numbers on the graph's boxes (profiler times, quantisation error, a compiler's
cost estimate), read from Model Explorer's node-data JSON, a plain `{"node name": number}` JSON or a two-column
CSV, and joined to the graph's nodes.

A key names a node by its name, by a value it outputs (Model Explorer keys results by output tensor name), by
its `graph --json` id (`n12`), a schedule layer by its name and a workload as `core/workload` (`1/3`). What
cannot be joined or read is a problem, never an exception: unknown keys, non-numeric values, NaN and
infinities each say where they are, and the rest of the file is kept.

Each data set becomes node and group columns of the model (`node_values` / `group_values` under its mode name,
"data: <name>"), so the graph's colour modes, the details panel and `graph --json` read them like any other
column. A closed group shows an aggregate of what it holds (sum, max or mean).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from explorer.document import Document
from explorer.errors import LoadError, Problem, Severity
from explorer.formatting import human_bytes, number
from explorer.graph.data_set import NodeDataSet
from explorer.memory_guard import ensure_fits, ensure_json_fits
from explorer.models.graph import ROOT, GraphModel, first_nodes

MODE_PREFIX = "data: "
AGGREGATES = ("sum", "max", "mean")
MAX_BYTES = 256 * 1024 * 1024  # a node-data file larger than this is refused (it names at most every node)
MAX_LISTED = 100  # problems listed per kind before one line says how many more
MAX_SETS = 64  # data sets (Model Explorer graphs) one file may hold: each costs two arrays the size of the graph
# what reading a file costs per byte of it, at most (measured on hostile files: tests/unit/test_node_data.py):
# a CSV of short rows keeps a key string, a value string and a line number per row
CSV_BYTES_PER_BYTE = 24




def read_node_data(path: str | Path, model: GraphModel) -> tuple[list[NodeDataSet], list[Problem]]:
    """The data sets in `path`, joined to `model`, and the problems found on the way. Raises LoadError when the
    file cannot be read at all (missing, too big, neither JSON nor CSV)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise LoadError(path, "", "a node-data file must be a regular file")
        if size > MAX_BYTES:
            raise LoadError(path, "", f"{size:,} bytes is more than a node-data file can be ({MAX_BYTES:,})")
        raw = path.read_bytes()
    except OSError as error:
        raise LoadError(path, "", f"cannot read the node-data file: {error.strerror or error}") from None
    try:
        tables = _parse(path, raw)
    except RecursionError:
        raise LoadError(path, "$", "nested too deep to be node data") from None
    except ValueError as error:  # json's digit limit ("Exceeds the limit (4300 digits)") and the like
        raise LoadError(path, "", f"not node data: {error}") from None
    if len(tables) > MAX_SETS:
        raise LoadError(path, "$", f"{len(tables):,} graphs of node data: at most {MAX_SETS} are read from one file")
    stem = path.stem
    sets, problems = [], []
    joiner = _Joiner(model)
    for graph_id, table in tables:
        name = MODE_PREFIX + stem + (f" · {graph_id}" if graph_id and len(tables) > 1 else "")
        found, found_problems = _join(path, graph_id, table, model, joiner, name)
        sets.append(found)
        problems += found_problems
    return sets, problems


@dataclass
class _Table:
    keys: list[str]
    raw: list[Any]  # the values as the file gives them
    # row → where it is in the file (a JSON path, a CSV line), worked out for problems only
    locate: Callable[[int], str]
    thresholds: list[float] = field(default_factory=list)
    centre: float | None = None


def _parse(path: Path, raw: bytes) -> list[tuple[str, _Table]]:
    text = raw.decode("utf-8-sig", errors="replace")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        ensure_json_fits(path, raw, "node-data file")  # judged by what its values can become, before decoding
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise LoadError(
                path, f"line {error.lineno}, column {error.colno}", f"not valid JSON: {error.msg}"
            ) from None
        return _from_json(path, data)
    if path.suffix.lower() == ".json":
        raise LoadError(path, "$", "expected a JSON object of node data (Model Explorer's, or name → number)")
    ensure_fits(path, len(raw), CSV_BYTES_PER_BYTE, "node-data file")
    return [("", _from_csv(path, text))]


def _from_json(path: Path, data: Any) -> list[tuple[str, _Table]]:
    if not isinstance(data, dict):
        raise LoadError(path, "$", f"expected an object (node → value), got {type(data).__name__}")
    if "results" in data:  # Model Explorer's GraphNodeData: one graph
        return [("", _graph_table(path, data, "$"))]
    if data and all(isinstance(v, dict) and "results" in v for v in data.values()):  # ModelNodeData: per graph
        return [(str(k), _graph_table(path, v, f"$[{json.dumps(k)}]")) for k, v in data.items()]
    keys = list(data)
    return [("", _Table(keys, list(data.values()), lambda row: f"$[{json.dumps(keys[row])}]"))]


def _graph_table(path: Path, data: dict, where: str) -> _Table:
    results = data.get("results")
    if not isinstance(results, dict):
        raise LoadError(path, f"{where}.results", 'expected an object of node key → {"value": number}')
    keys = list(results)
    raw = [result.get("value") if isinstance(result, dict) else result for result in results.values()]
    thresholds = []
    given = data.get("thresholds") or []
    if not isinstance(given, list):
        raise LoadError(path, f"{where}.thresholds", 'expected a list of {"value": number}')
    for k, item in enumerate(given):
        value = item.get("value") if isinstance(item, dict) else None
        number = _number_or_none(value) if _is_number(value) else None
        if number is None or not np.isfinite(number):
            raise LoadError(path, f"{where}.thresholds[{k}].value", "expected a finite number")
        thresholds.append(number)
    centre = data.get("centre", data.get("center"))
    if centre is not None:
        centre = _number_or_none(centre) if _is_number(centre) else None
        if centre is None or not np.isfinite(centre):
            raise LoadError(path, f"{where}.centre", "expected a finite number")
    return _Table(keys, raw, lambda row: f"{where}.results[{json.dumps(keys[row])}].value", sorted(thresholds),
                  centre)  # fmt: skip


def _from_csv(path: Path, text: str) -> _Table:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    keys: list[str] = []
    raw: list[str] = []
    lines: list[int] = []
    rows = enumerate(csv.reader(io.StringIO(text), dialect), start=1)
    while True:
        try:
            line, row = next(rows)
        except StopIteration:
            break
        except csv.Error as error:  # a field over csv's limit (128 KiB), a NUL byte
            raise LoadError(path, f"line {len(lines) + 1} or after", f"not a readable CSV: {error}") from None
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise LoadError(path, f"line {line}", f"expected two columns (node, value), got {len(row)}")
        key, value = row[0].strip(), row[1].strip()
        if line == 1 and _number_or_none(value) is None:  # a header row
            continue
        keys.append(key)
        raw.append(value)
        lines.append(line)
    if not keys:
        raise LoadError(path, "", "no rows of node, value: neither JSON nor a two-column CSV")
    return _Table(keys, raw, lambda row: f"line {lines[row]}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number_or_none(value: Any) -> float | None:
    """The value as a float (an integer too large for one is infinite, so it is reported as not finite), or None
    when it is not a number."""
    if _is_number(value):
        try:
            return float(value)
        except OverflowError:
            return float("inf") if value > 0 else float("-inf")
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


class _Joiner:
    """Key → nodes (or a unit group), built once per model and data file: names at C speed (`dict(zip(...))`),
    the rarer kinds of key (a value's name, a duplicate name, an id) looked up only for keys names miss."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        labels = list(model.node_label)
        keys = model.node_values.get("data_key")
        if keys is not None:  # a schedule's workloads: core/workload
            labels += [str(k) for k in keys]
        nodes = list(range(model.n_nodes)) * (2 if keys is not None else 1)
        self.by_name = dict(zip(labels, nodes, strict=True))
        self.several: dict[str, list[int]] = {}
        if len(self.by_name) < len(labels):  # a name some nodes share: every one of them
            seen: dict[str, list[int]] = {}
            for label, node in zip(labels, nodes, strict=True):
                seen.setdefault(label, []).append(node)
            self.several = {label: found for label, found in seen.items() if len(found) > 1 and label}
            for label in self.several:
                del self.by_name[label]
        self.by_name.pop("", None)
        self._by_output: dict[str, int] | None = None
        self.units = {model.group_label[g]: g for g in range(model.n_groups) if model.group_unit[g]}

    @property
    def by_output(self) -> dict[str, int]:
        if self._by_output is None:  # a value's name → its producer (the first edge carrying it)
            model = self.model
            found = dict(zip(reversed(model.edge_label), reversed(model.edge_src.tolist()), strict=True))
            found.pop("", None)
            self._by_output = found
        return self._by_output

    def nodes(self, key: str) -> tuple[list[int], int]:
        """(nodes, unit group or ROOT) that `key` names."""
        found = self.by_name.get(key)
        if found is not None:
            return [found], ROOT
        if key in self.several:
            return self.several[key], ROOT
        if key in self.units:
            return [], self.units[key]
        if key in self.by_output:
            return [self.by_output[key]], ROOT
        if len(key) > 1 and key[0] in "ng" and key[1:].isdigit():
            ident = int(key[1:])
            if key[0] == "n" and ident < self.model.n_nodes:
                return [ident], ROOT
            if key[0] == "g" and ident < self.model.n_groups and self.model.group_unit[ident]:
                return [], ident
        return [], ROOT


def _numbers(raw: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(the values as floats, NaN where not a number; which rows are not numbers): at C speed when every
    value is an int or a float, as a JSON of numbers is."""
    if raw and set(map(type, raw)) <= {int, float}:
        try:
            return np.asarray(raw, dtype=np.float64), np.zeros(len(raw), dtype=bool)
        except OverflowError:  # an integer of hundreds of digits: one by one below
            pass
    parsed = [_number_or_none(v) for v in raw]
    bad = np.fromiter((v is None for v in parsed), dtype=bool, count=len(parsed))
    return np.asarray([np.nan if v is None else v for v in parsed], dtype=np.float64), bad


def _join(path: Path, graph_id: str, table: _Table, model: GraphModel, joiner: _Joiner,
          name: str) -> tuple[NodeDataSet, list[Problem]]:  # fmt: skip
    values = np.full(model.n_nodes, np.nan)
    unit_values = np.full(model.n_groups, np.nan)
    problems: dict[str, list[Problem]] = {"node-data-unknown-key": [], "node-data-not-numeric": [],
                                          "node-data-not-finite": []}  # fmt: skip
    counts = dict.fromkeys(problems, 0)

    def add(code: str, severity: Severity, message: Any, row: int) -> None:  # the first MAX_LISTED made, all counted
        counts[code] += 1
        if counts[code] <= MAX_LISTED:
            problems[code].append(Problem(severity, code, message(), table.locate(row)))

    where = f"{path.name}" + (f" graph {graph_id!r}" if graph_id else "")
    keys = table.keys if set(map(type, table.keys)) <= {str} else [str(k) for k in table.keys]
    numbers, not_numbers = _numbers(table.raw)
    finite = np.isfinite(numbers)
    node = np.fromiter(map(joiner.by_name.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    usable = finite & ~not_numbers
    direct = usable & (node >= 0)
    values[node[direct]] = numbers[direct]
    matched = int(direct.sum())
    for row in np.flatnonzero(~direct).tolist():  # the rest, one by one: problems, and the rarer kinds of key
        key = keys[row]
        if not_numbers[row]:
            add("node-data-not-numeric", "error",
                lambda k=key, r=row: f"{where}: the value of {k!r} is not a number ({table.raw[r]!r})",
                row)  # fmt: skip
            continue
        if not finite[row]:
            add("node-data-not-finite", "error",
                lambda k=key, r=row: f"{where}: the value of {k!r} is {numbers[r]} (not a finite number)",
                row)  # fmt: skip
            continue
        nodes, unit = joiner.nodes(key)
        if not nodes and unit == ROOT:
            add("node-data-unknown-key", "warning", lambda k=key: f"{where}: {k!r} names no node of this graph", row)
            continue
        matched += 1
        if nodes:
            values[nodes] = numbers[row]
        else:
            unit_values[unit] = numbers[row]
    listed = []
    for code, made in problems.items():
        listed += made
        if counts[code] > MAX_LISTED:
            listed.append(Problem(made[0].severity, code, f"{where}: {counts[code] - MAX_LISTED:,} more like the "
                                  f"above ({counts[code]:,} in all)", ""))  # fmt: skip
    if keys and matched == 0:
        listed.insert(0, Problem("error", "node-data-no-match", f"{where}: none of its {len(keys):,} keys names "
                                 "a node of this graph (keys are node names, output names, layer names, "
                                 "core/workload or graph --json ids)", ""))  # fmt: skip
    found = NodeDataSet(name, str(path), values, unit_values, len(keys), matched, table.thresholds, table.centre)
    return found, listed


def apply_node_data(model: GraphModel, data: NodeDataSet) -> None:
    """Add the data set's columns to the model (a new mode of the graph view; a set of the same name is
    replaced), its groups holding the aggregate of what they contain."""
    model.node_values[data.name] = data.values
    model.group_values[data.name] = group_aggregate(model, data)
    model.data_sets[data.name] = data


def group_aggregate(model: GraphModel, data: NodeDataSet) -> np.ndarray:
    """Per group: the sum, max or mean of the values of the nodes it holds at any depth (a value given to a
    unit group itself wins); NaN for a group holding none."""
    n_groups = model.n_groups
    if n_groups == 0:
        return np.zeros(0)
    finite = np.isfinite(data.values) & (model.node_group >= 0)
    groups, values = model.node_group[finite], data.values[finite]
    total = np.bincount(groups, weights=values, minlength=n_groups).astype(np.float64)
    count = np.bincount(groups, minlength=n_groups).astype(np.float64)
    top = np.full(n_groups, -np.inf)
    np.maximum.at(top, groups, values)
    parents = model.group_parent
    for g in np.argsort(-model.group_depth(), kind="stable").tolist():  # deepest first: push up to the parent
        parent = int(parents[g])
        if parent != ROOT:
            total[parent] += total[g]
            count[parent] += count[g]
            top[parent] = max(top[parent], top[g])
    with np.errstate(invalid="ignore", divide="ignore"):
        result = {"sum": total, "max": top, "mean": total / count}[data.aggregate]
    result = np.where(count > 0, result, np.nan)
    given = np.isfinite(data.unit_values)
    result[given] = data.unit_values[given]
    return result


def set_aggregate(model: GraphModel, name: str, aggregate: str) -> None:
    data = model.data_sets[name]
    data.aggregate = aggregate
    model.group_values[name] = group_aggregate(model, data)


def top_nodes(model: GraphModel, data: NodeDataSet, count: int = 20) -> list[tuple[int, int]]:
    """The boxes with the largest values of a data set (the largest distance from the centre for a diverging
    one), as (node, unit group or ROOT): a drawn node (a folded constant is no box of its own), or a schedule
    layer the file gave a value itself (with its first node, to find it by)."""
    centre = data.diverging_centre
    first = first_nodes(model)
    boxes = np.flatnonzero(np.isfinite(data.values) & ~model.node_constant)
    entries = [(float(data.values[n]), n, ROOT) for n in boxes.tolist()]
    entries += [(float(data.unit_values[g]), int(first[g]), g) for g in np.flatnonzero(np.isfinite(data.unit_values))
                .tolist() if first[g] >= 0]  # fmt: skip
    entries.sort(key=lambda e: -(abs(e[0] - centre) if centre is not None else e[0]))
    return [(node, unit) for _, node, unit in entries[:count]]


def value_of(data: NodeDataSet, node: int, unit: int) -> float:
    return float(data.unit_values[unit] if unit != ROOT else data.values[node])


def value_text(name: str, value: float) -> str:
    """A value of the top list as people read it: grouped digits (`9,437,184`, never `9.43718e+06`), and the size
    in words for a mode that counts bytes (`L2 peak`, `parameter bytes`)."""
    said = number(value) if float(value).is_integer() or abs(value) >= 1000 else f"{value:.4g}"
    lowered = name.lower()
    if float(value).is_integer() and ("bytes" in lowered or "l2" in lowered) and abs(value) >= 1024:
        said += f" ({human_bytes(value)})"
    return said


def numeric_mode_set(model: GraphModel, mode: str) -> NodeDataSet | None:
    """A built-in numeric colour mode (a schedule's time, a joined trace's measured time, L2 peak, parameter
    bytes, estimate error) as a data set of the same name, for the top list (not added to the model: its
    colours stay the mode's own); None for a mode that is not numbers (op type, dtype, core, problems)."""
    from explorer.graph.colours import MODE_KEYS

    key = MODE_KEYS.get(mode)
    if key is None:
        return None
    column = model.node_values.get(key) if key != "problems" else None
    if not isinstance(column, np.ndarray):
        return None
    groups = model.group_values.get(key)
    unit_values = np.full(model.n_groups, np.nan)
    if isinstance(groups, np.ndarray) and groups.size == model.n_groups:
        unit_values[model.group_unit] = groups[model.group_unit]
    centre = 1.0 if key == "estimate_error" else None  # a ratio: far from 1× either way is what stands out
    if np.isfinite(unit_values).any():  # a schedule: its layers (what the graph shows), not their workloads too
        column = np.full(model.n_nodes, np.nan)
    return NodeDataSet(mode, "", column, unit_values, centre=centre)


def data_rows(model: GraphModel, node: int) -> list[tuple[str, str]]:
    """The details panel's rows for a node: each data set's value ("—" where the file gives none)."""
    rows = []
    for name, data in model.data_sets.items():
        value = data.values[node]
        rows.append((name[len(MODE_PREFIX) :], f"{value:,.6g}" if np.isfinite(value) else "—"))
    return rows


def load_node_data(document: Document, paths: list[str | Path]) -> list[str]:
    """Read each node-data file against the document's graph (built here if it was not yet) and add its data
    sets to the graph and its problems to the document's; a file that cannot be read at all is one problem,
    and nothing else changes. Returns one line per file: what it joined, or why it was not read."""
    model = document.view.graph_model()
    if model is None:
        return [f"{Path(path).name}: not read (this file has no graph)" for path in paths]
    said = []
    for path in paths:
        try:
            sets, problems = read_node_data(path, model)
        except LoadError as error:
            document.problems.append(Problem("error", "node-data-unreadable", str(error), error.location))
            said.append(f"{Path(path).name}: not read ({error.message})")
            continue
        except Exception as error:  # a case the reader did not foresee: still the data file's problem, never the
            # model's end (the TUI keeps the model open, the CLI says it in words)
            message = f"could not be read: {type(error).__name__}: {str(error)[:200]}"
            document.problems.append(Problem("error", "node-data-unreadable", f"{Path(path).name}: {message}"))
            said.append(f"{Path(path).name}: not read ({message})")
            continue
        for data in sets:
            apply_node_data(model, data)
            said.append(data.summary() + (f" ({data.name[len(MODE_PREFIX) :]})" if len(sets) > 1 else ""))
        document.problems.extend(problems)
    return said
