"""The problems list as people review it: grouped, filtered and counted.

A file with one misplaced tensor can hold hundreds of per-pair overlap problems; a reviewer wants one line that
says who collided with what, then the pairs on demand. So overlap problems are grouped by their incident and
every other problem by its code and core; a filter (severity, code, core, free text) narrows the problems
before grouping, so the counts always say what is listed. Pure functions over `Problem`s: the TUI panel,
tests and any other view read the same groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from explorer.errors import SEVERITY_RANK, Problem, Severity
from explorer.formatting import plural
from explorer.models.schedule import Schedule

if TYPE_CHECKING:  # the schedule wing's incidents, grouped here as data: the core imports no wing to run
    from explorer.schedule.incidents import Incident

T = TypeVar("T")


@dataclass(frozen=True)
class ProblemFilter:
    """What the problems list keeps: None means any. `text` matches the code, message or location."""

    severity: str | None = None
    code: str | None = None
    core: int | None = None
    text: str = ""

    def keeps(self, problem: Problem) -> bool:
        if self.severity is not None and problem.severity != self.severity:
            return False
        if self.code is not None and problem.code != self.code:
            return False
        if self.core is not None and problem_core(problem) != self.core:
            return False
        if self.text:
            needle = self.text.lower()
            return any(needle in part.lower() for part in (problem.code, problem.message, problem.location))
        return True

    @property
    def active(self) -> bool:
        return self != ProblemFilter()

    def said(self) -> str:
        """The filter in words, for the panel's title: "errors · l2-overlap · core 1 · "tensor 36"."""
        parts = []
        if self.severity:
            parts.append(f"{self.severity}s")
        if self.code:
            parts.append(self.code)
        if self.core is not None:
            parts.append(f"core {self.core}" if self.core >= 0 else "DRAM")
        if self.text:
            parts.append(f'"{self.text}"')
        return " · ".join(parts)


@dataclass
class ProblemGroup:
    """One line of the problems list: an incident, or every problem of one code on one core."""

    code: str
    severity: str
    core: int | None
    problems: list[Problem]
    incident: Incident | None = None
    said: str = ""  # the line shown for a group of one code and core
    tensor_ids: list[int] = field(default_factory=list)  # what to highlight when the group is chosen

    @property
    def first(self) -> Problem:
        return self.problems[0]

    @property
    def title(self) -> str:
        """The line shown for the group. An incident's is written when asked: a file with thousands lists only
        the first ones (a fifth of the problems panel's first fill went into lines never shown)."""
        if self.incident is None:
            return self.said
        pairs = len(self.problems)
        return self.incident.line() + (f" · {pairs} pairs" if pairs > 1 else "")


def problem_core(problem: Problem) -> int | None:
    core = problem.refs.get("core")
    try:
        return int(core) if core is not None else None
    except (TypeError, ValueError):
        return None


def rows_with_problems(s: Schedule, problems: list[Problem], severities: tuple[str, ...]) -> dict[int, list[Problem]]:
    """Schedule row → its problems of these severities (those that name a lane and a block): what the timeline
    marks with "!" and the report's Gantt with ✗."""
    named = [
        problem
        for problem in problems
        if problem.severity in severities
        and isinstance(problem.refs.get("core"), int)
        and isinstance(problem.refs.get("workload_id"), int)
    ]
    rows = s.rows_of([p.refs["core"] for p in named], [p.refs["workload_id"] for p in named]).tolist()
    found: dict[int, list[Problem]] = {}
    for problem, row in zip(named, rows, strict=True):
        if row >= 0:
            found.setdefault(row, []).append(problem)
    return found


def group_problems(
    problems: list[Problem], incidents: Sequence[Incident] = (), chosen: ProblemFilter = ProblemFilter()
) -> list[ProblemGroup]:
    """Groups of the problems `chosen` keeps, errors first, then by code, core and where they start.

    An incident's group keeps only its member problems that pass the filter, and is dropped when none do.
    Problems of the same code and core form one group; a group of one is shown as the problem itself."""
    kept = [p for p in problems if chosen.keeps(p)] if chosen.active else problems
    kept_ids = set(map(id, kept))
    grouped: set[int] = set()
    groups: list[ProblemGroup] = []
    for incident in incidents:
        members = [p for p in incident.members if id(p) in kept_ids]
        if not members:
            continue
        grouped.update(id(p) for p in members)
        worst = members[0].severity
        if len(members) > 1:
            worst = min((p.severity for p in members), key=lambda s: SEVERITY_RANK.get(s, 3))
        groups.append(
            ProblemGroup(incident.code, worst, incident.core, members, incident, tensor_ids=list(incident.tensor_ids))
        )
    by_key: dict[tuple[str, str, int | None], list[Problem]] = {}
    for problem in kept:
        if id(problem) not in grouped:
            by_key.setdefault((problem.severity, problem.code, problem_core(problem)), []).append(problem)
    for (severity, code, core), members in by_key.items():
        where = "" if core is None else (f" on core {core}" if core >= 0 else " in DRAM")
        # the code is shown beside the title (its column, or before it in a narrow panel): not said twice
        title = members[0].message if len(members) == 1 else f"{plural(len(members), 'problem')}{where}"
        ids = [int(t) for t in members[0].refs.get("tensor_ids", ()) if isinstance(t, int)]
        groups.append(ProblemGroup(code, severity, core, members, None, title, ids))
    groups.sort(
        key=lambda g: (
            SEVERITY_RANK.get(g.severity, 3),
            g.code,
            -1 if g.core is None else g.core,
            g.incident.first_workload if g.incident else 0,
        )
    )
    return groups


def filter_choices(problems: list[Problem]) -> tuple[list[Severity], list[str], list[int]]:
    """The severities, codes and cores present, in the order the filter keys cycle through them."""
    severities = sorted({p.severity for p in problems}, key=lambda s: SEVERITY_RANK.get(s, 3))
    codes = sorted({p.code for p in problems})
    cores = sorted({c for p in problems if (c := problem_core(p)) is not None})
    return severities, codes, cores


def cycle(choices: list[T], current: T | None, step: int = 1) -> T | None:
    """The next of `choices` after `current`, with None ("any") before the first and after the last."""
    options = [None, *choices]
    index = options.index(current) if current in options else 0
    return options[(index + step) % len(options)]
