"""Issue #72: the Query panel's query runs in a child process, so what it builds never grows the app, and a query
stopped or orphaned ends with its scratch removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from explorer.api import open_document
from explorer.schedule import query_child
from explorer.schedule.query import Interrupted, QueryError
from explorer.schedule.query_child import CELL_CHARS, ForkedQuery
from tests.conftest import ROOT, SAMPLE_DATA

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
LONG_SQL = "SELECT count(*) FROM range(1000000000000) -- workloads"


@pytest.fixture
def scratch_here(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    return tmp_path


def test_the_rows_come_back_plain_and_cut_to_a_cell():
    document = open_document(PLANTED)
    sql = ("SELECT core, workload, repeat('y', 5000) AS long, 2::HUGEINT ** 100 AS huge, 1.5::DECIMAL(4, 2) AS d, "
           "'\\x00\\xff'::BLOB AS b FROM workloads ORDER BY core, workload")  # fmt: skip
    answer = ForkedQuery([("f", document)], sql, 1000).answer()
    assert answer.columns == ["core", "workload", "long", "huge", "d", "b"] and not answer.capped
    assert len(answer.rows) == 48
    core, workload, long, huge, decimal, blob = answer.rows[0]
    assert (core, workload) == (0, 0)
    assert long == "y" * (CELL_CHARS - 1) + "…"
    assert (huge, decimal, blob) == (1.2676506002282294e30, "1.50", repr(b"\x00\xff"))


def test_the_row_cap_and_the_answer_cap(monkeypatch):
    document = open_document(PLANTED)
    answer = ForkedQuery([("f", document)], "SELECT * FROM workloads", 5).answer()
    assert (len(answer.rows), answer.capped) == (5, True)
    monkeypatch.setattr(query_child, "ANSWER_BYTES", 10_000)
    answer = ForkedQuery([("f", document)], "SELECT repeat('z', 1000) AS s FROM range(100) -- workloads", 1000).answer()
    assert (len(answer.rows), answer.capped) == (10, True)


def test_a_refusal_is_said_in_words():
    document = open_document(PLANTED)
    with pytest.raises(QueryError) as refused:
        ForkedQuery([("f", document)], "SELECT nonsense FROM workloads", 10).answer()
    assert str(refused.value).startswith("Binder Error") and "\n" not in str(refused.value)


def test_stop_ends_the_child_and_its_scratch(scratch_here):
    document = open_document(PLANTED)
    query = ForkedQuery([("f", document)], LONG_SQL, 10)
    children: list[int] = []

    def stop_when_running() -> None:
        for _ in range(500):
            if query._pid is not None and any(scratch_here.glob("ir-explorer-query-*")):
                break
            time.sleep(0.02)
        children.append(query._pid)
        time.sleep(0.3)
        query.stop()

    stopper = threading.Thread(target=stop_when_running)
    stopper.start()
    with pytest.raises(Interrupted):
        query.answer()
    stopper.join()
    assert children[0] is not None and not Path(f"/proc/{children[0]}").exists()
    assert list(scratch_here.iterdir()) == []
    with pytest.raises(Interrupted):  # stopped before it starts: no child at all
        query.answer()


def test_a_child_that_ignores_stop_is_killed_and_its_scratch_swept(scratch_here, monkeypatch):
    monkeypatch.setattr(query_child, "STOP_GRACE_SECONDS", 0.2)
    document = open_document(PLANTED)
    query = ForkedQuery([("f", document)], LONG_SQL, 10)
    real_detach = query_child._detach_from_parent

    def deaf(fd: int) -> None:
        real_detach(fd)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    monkeypatch.setattr(query_child, "_detach_from_parent", deaf)
    threading.Timer(1.0, query.stop).start()
    with pytest.raises(Interrupted):
        query.answer()
    assert list(scratch_here.iterdir()) == []


CHILD_PEAK = """
import os, sys
from explorer.api import open_document
from explorer.schedule.query import QueryError
from explorer.schedule.query_child import ForkedQuery
document = open_document(sys.argv[1])
try:
    said = repr(ForkedQuery([("f", document)], sys.argv[2], 10).answer().rows)
except QueryError as refused:
    said = str(refused)
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]
print(int(peak) * 1024, said)
"""


def test_a_2_gb_string_never_grows_the_app():
    """In the panel it ran in the app's own process: 3.9 GiB there, where the CLI's cap does not reach. The peak
    is this process's own (VmHWM): its rusage would carry the test worker's, inherited across fork and exec."""
    sql = "SELECT repeat(repeat('x', 1000000), 2000) AS s -- workloads"
    done = subprocess.run([sys.executable, "-c", CHILD_PEAK, str(PLANTED), sql], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    peak, answer = done.stdout.strip().split(" ", 1)
    assert answer.startswith("the query needs more than its") and "narrow it" in answer, answer
    assert int(peak) < 400 * 2**20


ORPHAN = """
import sys, threading
from explorer.api import open_document
from explorer.schedule.query_child import ForkedQuery
document = open_document(sys.argv[1])
query = ForkedQuery([("f", document)], sys.argv[2], 10)
threading.Thread(target=query.answer, daemon=True).start()
while query._pid is None:
    pass
print(query._pid, flush=True)
threading.Event().wait()
"""


def test_the_child_dies_with_its_parent(scratch_here):
    """The app killed (SIGKILL, no handler runs): its query's process goes too, and the next session sweeps its
    scratch."""
    env = {**os.environ, "TMPDIR": str(scratch_here)}
    parent = subprocess.Popen([sys.executable, "-c", ORPHAN, str(PLANTED), LONG_SQL], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT, env=env)  # fmt: skip
    child = int(parent.stdout.readline())
    for _ in range(500):
        if any(scratch_here.glob(f"ir-explorer-query-{child}-*")):
            break
        time.sleep(0.02)
    parent.kill()
    parent.wait()
    for _ in range(500):  # a hang guard
        if not Path(f"/proc/{child}").exists():
            break
        time.sleep(0.02)
    assert not Path(f"/proc/{child}").exists()
    from explorer.schedule.query import remove_abandoned_scratch

    remove_abandoned_scratch(scratch_here)
    assert list(scratch_here.iterdir()) == []
