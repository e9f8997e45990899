"""The two ways the core reports trouble: a `LoadError` (nothing usable) and `Problem`s (found, kept, listed).

Both carry a location a person can act on: a JSON path, a byte/line position, a protobuf field or a tar member.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from explorer.formatting import visible

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


class LoadError(Exception):
    """The file cannot be opened as any supported format, or its structure is too broken to keep anything.

    The message always names the file, where it broke and what was expected, so the CLI can print it as is.
    """

    def __init__(self, path: str | Path, location: str, message: str) -> None:
        self.path = str(path)
        self.location = location
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return f"{self.path}{where}: {self.message}"

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        """Rebuilt from its three parts: a worker process's error reaches the loader as it was raised."""
        return type(self), (self.path, self.location, self.message)


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong or suspicious that was found while loading or analysing; the data around it is kept.

    `refs` holds machine-usable references (core, workload_id, tensor_ids, transfer_id, ...) so the UI can
    jump to the item and the JSON output can be filtered.
    """

    severity: Severity
    code: str
    message: str
    location: str = ""
    refs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # names from the file, shown inert by every view (formatting.visible)
        object.__setattr__(self, "message", visible(self.message, lines=True))
        object.__setattr__(self, "location", visible(self.location))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its five values (the derived-data cache keeps thousands of problems): read back without the
        dataclass machinery's walk over its fields for each one, and its text already made visible."""
        return (_problem_of, (self.severity, self.code, self.message, self.location, self.refs))

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "location": self.location,
            **self.refs,
        }


def _problem_of(severity: Severity, code: str, message: str, location: str, refs: dict[str, Any]) -> Problem:
    problem = object.__new__(Problem)
    for name, value in (("severity", severity), ("code", code), ("message", message), ("location", location),
                        ("refs", refs)):  # fmt: skip
        object.__setattr__(problem, name, value)
    return problem


ADDED_FILE_CODES = ("node-data-",)  # problems of a file the user added to the model (per-node data), not its own


def from_added_file(problem: Problem) -> bool:
    """Whether `problem` is about a file the user added (a per-node data CSV), not the model: listed apart from
    the model's own and never counted as the model's (a bad CSV does not turn the model red)."""
    return problem.code.startswith(ADDED_FILE_CODES)


def count_by_severity(problems: list[Problem]) -> dict[str, int]:
    """The model's own errors and warnings (problems of files the user added are not the model's)."""
    counts = {"error": 0, "warning": 0}
    for problem in problems:
        if problem.severity in counts and not from_added_file(problem):
            counts[problem.severity] += 1
    return counts


MAX_LISTED_PER_CODE = 10_000
TRUNCATED = "-truncated"


def _truncation(code: str, total: int, omitted: int, limit: int) -> Problem:
    message = f"{total:,} {code} problems; the first {limit:,} are listed"
    return Problem("info", code + TRUNCATED, message, "", {"omitted": omitted})


class CappedProblems(list):
    """A problem list that stops growing past `limit` problems of one code while a loader is still decoding:
    a file of a million broken records costs a count, not a million messages (15 MB of `{}` workloads once
    took 2.5 GiB that way). The rest are counted in one `CODE-truncated` note, which `cap_per_code` adds up
    when the lists of several workers are joined."""

    def __init__(self, limit: int = MAX_LISTED_PER_CODE) -> None:
        super().__init__()
        self.limit = limit
        self._counts: dict[str, int] = {}
        self._notes: dict[str, Problem] = {}

    def add(self, problem: Problem) -> None:
        count = self._counts[problem.code] = self._counts.get(problem.code, 0) + 1
        if count <= self.limit:
            self.append(problem)
            return
        note = self._notes.get(problem.code)
        if note is None:
            note = self._notes[problem.code] = _truncation(problem.code, count, 0, self.limit)
            self.append(note)
        note.refs["omitted"] += 1


def cap_per_code(problems: list[Problem], limit: int = MAX_LISTED_PER_CODE) -> list[Problem]:
    """The first `limit` problems of each code, then one `CODE-truncated` note saying how many there were (the
    notes of lists capped while decoding are added in): a systematically broken file stays readable. The list
    is returned as it is when nothing passes the limit."""
    omitted: dict[str, int] = {}
    counts: dict[str, int] = {}
    for problem in problems:
        if problem.code.endswith(TRUNCATED) and "omitted" in problem.refs:
            base = problem.code[: -len(TRUNCATED)]
            omitted[base] = omitted.get(base, 0) + int(problem.refs["omitted"])
        else:
            counts[problem.code] = counts.get(problem.code, 0) + 1
    if not omitted and all(count <= limit for count in counts.values()):
        return problems
    seen: dict[str, int] = {}
    kept = []
    for problem in problems:
        if problem.code.endswith(TRUNCATED) and "omitted" in problem.refs:
            continue
        seen[problem.code] = seen.get(problem.code, 0) + 1
        if seen[problem.code] <= limit:
            kept.append(problem)
    for code in dict.fromkeys([*counts, *omitted]):
        listed = min(counts.get(code, 0), limit)
        total = counts.get(code, 0) + omitted.get(code, 0)
        if total > listed:
            kept.append(_truncation(code, total, total - listed, limit))
    return kept
