"""The problems list as reviewed: overlaps grouped by incident, the rest by code and core, filters that narrow
before grouping so the counts say what is listed."""

from __future__ import annotations

from explorer.api import open_document
from explorer.errors import Problem
from explorer.problem_groups import ProblemFilter, cycle, filter_choices, group_problems
from explorer.schedule.incidents import incidents_of
from tests.unit.test_incidents import planted


def test_overlap_pairs_are_grouped_by_incident_and_the_rest_by_code_and_core(tmp_path):
    path, _, _ = planted(tmp_path)
    document = open_document(path)
    incidents = incidents_of(document)
    groups = group_problems(document.problems, incidents)
    overlap_pairs = [p for p in document.problems if p.code == "l2-overlap"]
    l2 = [g for g in groups if g.code == "l2-overlap"]
    assert [g.incident.introduced_by for g in l2] == [77777, 88888]
    assert sum(len(g.problems) for g in l2) == len(overlap_pairs)  # every pair in exactly one group
    assert len(l2[0].problems) == l2[0].incident.pairs > 1
    assert l2[0].title.startswith("core 0: tensor 77777") and f"{l2[0].incident.pairs} pairs" in l2[0].title
    assert l2[0].tensor_ids[0] == 77777 and set(l2[0].tensor_ids) == {77777, 7, 8, 10}
    assert groups[0].severity == "error"  # errors first


def test_filters_narrow_before_grouping_and_cycle_through_what_is_present(tmp_path):
    path, _, _ = planted(tmp_path)
    document = open_document(path)
    incidents = incidents_of(document)
    only_core_1 = group_problems(document.problems, incidents, ProblemFilter(core=1))
    assert {g.core for g in only_core_1} == {1}
    assert [g.incident.introduced_by for g in only_core_1 if g.incident] == [88888]
    by_text = group_problems(document.problems, incidents, ProblemFilter(text="77777"))
    assert [g.incident.introduced_by for g in by_text] == [77777]
    assert group_problems(document.problems, incidents, ProblemFilter(severity="info")) == []
    severities, codes, cores = filter_choices(document.problems)
    assert "l2-overlap" in codes and cores == sorted(cores) and severities[0] == "error"
    assert cycle(codes, None) == codes[0] and cycle(codes, codes[-1]) is None and cycle(codes, None, -1) == codes[-1]
    assert ProblemFilter(severity="error", core=1, text="x").said() == 'errors · core 1 · "x"'


def test_problems_of_one_code_on_one_core_are_one_group_with_their_count():
    problems = [Problem("warning", "odd", f"odd {k}", refs={"core": 2}) for k in range(5)]
    problems.append(Problem("warning", "odd", "odd elsewhere", refs={"core": 3}))
    groups = group_problems(problems)
    assert [(g.core, len(g.problems), g.title) for g in groups] == [
        (2, 5, "5 problems on core 2"), (3, 1, "odd elsewhere")]  # fmt: skip
