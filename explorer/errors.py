"""The two ways the core reports trouble: a `LoadError` (nothing usable) and `Problem`s (found, kept, listed).

Both carry a location a person can act on: a JSON path, a byte/line position, a protobuf field or a tar member.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "location": self.location,
            **self.refs,
        }


def count_by_severity(problems: list[Problem]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0}
    for problem in problems:
        if problem.severity in counts:
            counts[problem.severity] += 1
    return counts
