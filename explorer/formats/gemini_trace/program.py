"""An assembly or ZeBu trace as columns: one row per instruction in file order, with its unit, its place in the
network (frontend layer, schedule workload, tile) and, for the trace, its measured start and end in cycles."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from explorer.errors import LoadError, Problem
from explorer.formats.gemini_trace.lines import (
    ENUM,
    MAX_BAD_LINES,
    MEMORY_PER_LINE,
    MEMORY_PER_TEXT_BYTE,
    decode_lines,
)
from explorer.memory_guard import ensure_fits

# Units in pipeline order; an instruction's unit comes from the prefix of its name.
UNITS = ("CT", "LD", "LW", "PE", "VP", "DT", "ST", "SI", "SO")
UNIT_OF_PREFIX = {"ct": "CT", "lda": "LD", "ldw": "LD", "ld": "LD", "lw": "LW", "pe": "PE", "vp": "VP",
                  "dt": "DT", "sta": "ST", "st": "ST", "si": "SI", "so": "SO"}  # fmt: skip
UNIT_TITLES = {"CT": "control", "LD": "load DRAM→L2", "LW": "weights L2→WL0", "PE": "tensor engine",
               "VP": "vector processor", "DT": "data transform", "ST": "store L2→DRAM", "SI": "sync in",
               "SO": "sync out"}  # fmt: skip
# Enum reprs seen in the published files (type → {name: value}); others are reported, not guessed at.
KNOWN_ENUMS = {
    "ACCD": {"DEFAULT": 0}, "ActMode": {"DISABLE": 0, "RELU": 1}, "CMPD": {"DEFAULT": 0},
    "CMPS": {"DEFAULT": 0, "MAX": 1}, "DataFmt": {"INT8": 1, "INT16": 2, "FP16": 3, "FP32": 4},
    "DataSign": {"UNSIGNED": 0, "SIGNED": 1}, "Float2Fixed": {"CEIL": 0, "FLOOR": 1, "ROUND": 2},
    "MG0S": {"DEFAULT": 0}, "QSMD": {"DEFAULT": 0}, "SG0M": {"DEFAULT": 0}, "SG1M": {"DEFAULT": 0},
    "SUMM": {"DEFAULT": 0}, "SWRS": {"DEFAULT": 0}, "TREED": {"DEFAULT": 0},
    "XCutMode": {"CUT_W": 0, "CUT_H": 1, "CUT_C": 4, "CUT_K": 3},
    "YCutMode": {"CUT_W": 0, "CUT_H": 1, "CUT_C": 4, "CUT_K": 3},
}  # fmt: skip


@dataclass
class Program:
    """The instructions of one file. `timed` says whether it is a trace (measured times) or an assembly."""

    path: Path
    timed: bool
    name: list[str]
    prefix: list[str]  # the name up to its first "_": ct, lda, ldw, lw, pe, vp, dt, sta, si, so
    unit: np.ndarray  # index into `units`
    units: list[str]
    line: np.ndarray  # 1-based line in the file
    slyr: np.ndarray
    s_flyr: np.ndarray
    wkl: np.ndarray
    tile: np.ndarray
    clyr: list[list[int]]
    c_flyr: list[list[int]]
    inst_idx: np.ndarray  # trace only (else -1)
    start: np.ndarray  # cycles (trace) or the instruction's position (assembly)
    end: np.ndarray
    params: list[msgspec.Raw]
    problems: list[Problem] = field(default_factory=list)

    @property
    def n(self) -> int:
        return int(self.unit.size)

    def __getstate__(self) -> dict[str, Any]:
        """Kept (explorer.cache) as columns: the per-instruction texts and lists dictionary-coded (the prefix is the
        name's: not kept), the params as one JSON array read back as views into it. As a million Python objects
        each, a 342 MB trace took 7.8 s to pickle and 3.8 s to read back."""
        state = self.__dict__.copy()
        del state["prefix"]
        state["name"] = _coded(self.name)
        for name in ("clyr", "c_flyr"):
            state[name] = _coded(list(map(tuple, state[name])))
        state["params"] = np.frombuffer(msgspec.json.encode(self.params), dtype=np.uint8)  # (out of the pickle)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        values, codes = state["name"]
        rows = codes.tolist()
        state["name"] = list(map(values.__getitem__, rows))
        state["prefix"] = list(map([prefix_of(value) for value in values].__getitem__, rows))
        for name in ("clyr", "c_flyr"):  # rows with one list share it (read, never changed)
            values, codes = state[name]
            state[name] = list(map([list(value) for value in values].__getitem__, codes.tolist()))
        state["params"] = msgspec.json.decode(state["params"], type=list[msgspec.Raw])
        self.__dict__.update(state)

    def location(self, k: int) -> str:
        return f"line {int(self.line[k])}"


def _coded(values: Sequence[Hashable]) -> tuple[list[Hashable], np.ndarray]:
    """Each distinct value once and each row's index into them (the smallest unsigned type that holds it)."""
    index = {value: k for k, value in enumerate(dict.fromkeys(values))}
    return list(index), np.array(list(map(index.__getitem__, values)), dtype=np.min_scalar_type(max(len(index) - 1, 0)))


def prefix_of(name: str) -> str:
    """An instruction's name up to its first "_", lowercased: what says its unit."""
    return name.split("_", 1)[0].lower()


def read_program(path: Path, data: bytes, timed: bool) -> Program:
    if not data.strip():
        raise LoadError(path, "byte 0", "the file is empty")
    # what the lines become: about 7× the text for real lines (decoded mappings), plus a floor per line that a file
    # of one-character lines reaches (tests/unit/test_memory_estimates.py)
    lines = data.count(b"\n") + 1
    ensure_fits(path, len(data), MEMORY_PER_TEXT_BYTE + MEMORY_PER_LINE * lines / len(data), "instruction file")
    decoded, bad = decode_lines(data, timed)
    numbers = [k + 1 for k, line in enumerate(data.split(b"\n")) if line.strip()]
    problems = [Problem("error", "malformed-line", f"line {b.line} cannot be read: {b.message}",
                        f"line {b.line}, column {b.column}", {"line": b.line})
                for b in bad[:MAX_BAD_LINES]]  # fmt: skip
    if len(bad) > MAX_BAD_LINES:
        problems.append(Problem("error", "malformed-line", f"{len(bad) - MAX_BAD_LINES:,} more lines cannot be read "
                                f"({len(bad):,} in all)", f"line {bad[MAX_BAD_LINES].line}"))  # fmt: skip
    kept = [(number, row) for number, row in zip(numbers, decoded, strict=True) if row is not None]
    if not kept:
        raise LoadError(path, "line 1", "no line reads as an instruction [name, {mapping}, ...]")
    names = [row[0] for _, row in kept]
    prefixes = list(map(prefix_of, names))
    unit_names = [UNIT_OF_PREFIX.get(p, p.upper()) for p in prefixes]
    units = [u for u in UNITS if u in set(unit_names)] + sorted(set(unit_names) - set(UNITS))
    unit_index = {u: k for k, u in enumerate(units)}
    mappings = [row[1] for _, row in kept]
    n = len(kept)
    if timed:
        timings = [row[2] for _, row in kept]
        start = np.fromiter((t.time[0] for t in timings), dtype=np.int64, count=n)
        end = np.fromiter((t.time[1] for t in timings), dtype=np.int64, count=n)
        inst_idx = np.fromiter((t.inst_idx for t in timings), dtype=np.int64, count=n)
        params = [row[3] for _, row in kept]
    else:
        start = np.arange(n, dtype=np.int64)
        end = start + 1
        inst_idx = np.full(n, -1, dtype=np.int64)
        params = [row[2] for _, row in kept]
    program = Program(
        path=path, timed=timed, name=names, prefix=prefixes,
        unit=np.fromiter((unit_index[u] for u in unit_names), dtype=np.int64, count=n), units=units,
        line=np.asarray([number for number, _ in kept], dtype=np.int64),
        slyr=np.fromiter((m.slyr for m in mappings), dtype=np.int64, count=n),
        s_flyr=np.fromiter((m.s_flyr for m in mappings), dtype=np.int64, count=n),
        wkl=np.fromiter((m.wkl for m in mappings), dtype=np.int64, count=n),
        tile=np.fromiter((m.tile for m in mappings), dtype=np.int64, count=n),
        clyr=[m.clyr for m in mappings], c_flyr=[m.c_flyr for m in mappings],
        inst_idx=inst_idx, start=start, end=end, params=params, problems=problems,
    )  # fmt: skip
    program.problems += _checks(program, data)
    return program


def _checks(program: Program, data: bytes) -> list[Problem]:
    problems: list[Problem] = []
    if program.timed:
        reversed_rows = np.flatnonzero(program.end < program.start)
        for k in reversed_rows[:1000].tolist():
            problems.append(Problem("error", "time-reversed", f"{program.name[k]} ends ({int(program.end[k])}) "
                                    f"before it starts ({int(program.start[k])})", program.location(k),
                                    {"line": int(program.line[k])}))  # fmt: skip
        order = np.argsort(program.inst_idx, kind="stable")  # lines with one inst_idx end up side by side
        groups = np.split(order, np.flatnonzero(np.diff(program.inst_idx[order])) + 1) if program.n else []
        for rows in [g for g in groups if g.size > 1][:1000]:
            value, count = int(program.inst_idx[rows[0]]), int(rows.size)
            problems.append(Problem("error", "duplicate-inst-idx", f"inst_idx {value} is used by {count} lines "
                                    f"(lines {', '.join(str(int(program.line[r])) for r in rows[:5])})",
                                    program.location(int(rows[1])), {"line": int(program.line[rows[1]])}))  # fmt: skip
    unknown_units = sorted({p for p in program.prefix if p not in UNIT_OF_PREFIX})
    for prefix in unknown_units:
        k = program.prefix.index(prefix)
        problems.append(Problem("warning", "unknown-unit", f"instructions named {prefix}_… belong to no known unit "
                                f"(drawn on a lane of their own)", program.location(k)))  # fmt: skip
    line_starts = None
    unknown = {
        found for found in set(ENUM.findall(data))  # the distinct enum values, a few dozen: checked once each
        if KNOWN_ENUMS.get(found[0].decode(), {}).get(found[1].decode()) != int(found[2])
    }  # fmt: skip
    for match in ENUM.finditer(data) if unknown else ():
        if match.groups() not in unknown:
            continue
        kind, name, value = match.group(1).decode(), match.group(2).decode(), int(match.group(3))
        known = KNOWN_ENUMS.get(kind)
        if line_starts is None:
            line_starts = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1
        line = int(np.searchsorted(line_starts, match.start(), side="right")) + 1
        column = match.start() - (int(line_starts[line - 2]) if line > 1 else 0) + 1
        why = "an enum type" if known is None else ("a value" if name in known else "a name")
        problems.append(Problem("warning", "unknown-enum", f"<{kind}.{name}: {value}>: {why} not seen in the "
                                "published files; kept as written", f"line {line}, column {column}",
                                {"line": line}))  # fmt: skip
        if len(problems) > 10_000:
            break
    return problems
