"""Mutated files either load or raise a located LoadError: never another exception, never a traceback.

`make test` runs a fixed-seed round of 120 mutations per format (tests/fuzzing.py has the classes);
`make fuzz` runs the long campaign (tests/fuzz_campaign.py) and writes RELIABILITY.md. Files that once broke a
loader are kept under tests/data/fuzz/ and loaded by every run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.api import open_document
from explorer.errors import LoadError
from tests.conftest import ROOT
from tests.fuzzing import KINDS, NODE_DATA_SEEDS, SAVE_AS, SEED_FILES, exercise, mutated_bytes, mutated_node_data

EXAMPLES = int(os.environ.get("IR_EXPLORER_FUZZ_EXAMPLES", "120"))
REGRESSIONS = Path(__file__).resolve().parent.parent / "data" / "fuzz"


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def load_or_fail_cleanly(path: Path, deep: bool = False) -> None:
    before = path.read_bytes() if path.is_file() else None
    try:
        doc = open_document(path)
    except LoadError as error:
        assert error.path == str(path)
        assert error.message
        assert error.location or "empty" in error.message or "no such" in error.message
    else:
        exercise(doc, deep=deep)
    if before is not None:
        assert path.read_bytes() == before


@pytest.mark.parametrize("fmt", sorted(SEED_FILES))
def test_mutated_files_load_or_fail_cleanly(fuzz_dir, fmt):
    """The round's mutations of one format, counted where they ran: the round must not end early unseen."""
    ran = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
    @given(data=st.data(), seed=st.integers(0, 2**32), kind=st.sampled_from(KINDS))
    def one_mutation(data, seed, kind):
        name = data.draw(st.sampled_from([str(path) for path in SEED_FILES[fmt]]))
        ran.append(kind)
        path = fuzz_dir / SAVE_AS[fmt].format(kind=kind)
        path.write_bytes(mutated_bytes(name, seed, kind))
        load_or_fail_cleanly(path, deep=kind == "graph")  # a broken graph also meets shape inference, as in `check`

    one_mutation()
    print(f"\nfuzz: {len(ran)} mutated {fmt} files checked")
    assert len(ran) >= min(EXAMPLES, 100), fmt


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*")) if REGRESSIONS.is_dir() else [], ids=lambda p: p.name)
def test_files_that_once_broke_a_loader(path, tmp_path):
    copy = tmp_path / path.name.split("__", 1)[-1]  # saved as <what it broke>__<name the loader expects>
    copy.write_bytes(path.read_bytes())
    load_or_fail_cleanly(copy)


def test_check_never_prints_a_traceback(tmp_path):
    for index, kind in enumerate(list(KINDS) * 2):
        fmt = sorted(SEED_FILES)[index % len(SEED_FILES)]
        path = tmp_path / SAVE_AS[fmt].format(kind=f"{index}_{kind}")
        path.write_bytes(mutated_bytes(str(SEED_FILES[fmt][0]), index, kind))
        result = subprocess.run(
            [sys.executable, "-m", "explorer", "check", str(path)], capture_output=True, text=True, cwd=ROOT
        )
        assert result.returncode in (0, 1, 2)
        assert "Traceback" not in result.stderr + result.stdout


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(name=st.sampled_from(sorted(NODE_DATA_SEEDS)), seed=st.integers(0, 2**32), kind=st.sampled_from(KINDS))
def test_mutated_node_data_is_a_problem_never_an_exception(node_data_model, fuzz_dir, name, seed, kind):
    """A broken per-node data file ends in data sets and problems, or one LoadError about the file; the model
    it is read against is never touched beyond its data columns (issue #44 item 5)."""
    from explorer.graph.node_data import apply_node_data, read_node_data

    path = fuzz_dir / f"nd_{kind}_{name}"
    path.write_bytes(mutated_node_data(name, seed, kind))
    try:
        sets, problems = read_node_data(path, node_data_model)
    except LoadError as error:
        assert error.message and error.path == str(path)
        return
    for data in sets:
        apply_node_data(node_data_model, data)
    assert all(problem.code.startswith("node-data") for problem in problems)


@pytest.fixture(scope="module")
def node_data_model():
    from tests.conftest import SAMPLE_DATA

    return open_document(SAMPLE_DATA / "clean_2x2_stschedule.json").view.graph_model()
