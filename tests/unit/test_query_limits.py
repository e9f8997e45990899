"""Issue #72: a query stops when asked and stays inside its bounds, whatever the SQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from explorer.api import open_document
from explorer.schedule import query
from explorer.schedule.query import QueryError, remove_abandoned_scratch, run_query
from tests.conftest import ROOT, SAMPLE_DATA

CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"


def start_query(tmp_path, sql: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.Popen([sys.executable, "-m", "explorer", "query", str(CLEAN), sql, *extra], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


@pytest.mark.parametrize("sql", [
    "SELECT count(*) FROM range(1000000000000) -- workloads",  # an aggregate of hours
    "SELECT * FROM range(400000000) ORDER BY random() -- workloads",  # a sort that spills
])  # fmt: skip
def test_ctrl_c_stops_the_query_exit_130_no_message_no_spill_left(tmp_path, sql):
    process = start_query(tmp_path, sql)
    for _ in range(600):  # until its session's scratch exists, then a moment into the query
        if any(tmp_path.glob("ir-explorer-query-*")):
            break
        time.sleep(0.05)
    time.sleep(1.5)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)  # a hang guard: make bench times the stop
    assert (process.returncode, err) == (130, "")
    assert list(tmp_path.iterdir()) == []


def test_a_killed_session_scratch_is_removed_by_the_next(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"ir-explorer-query-{gone.pid}-abc"
    (dead / "spill").mkdir(parents=True)
    (dead / "spill" / "block").write_bytes(b"x" * 100)
    alive = tmp_path / f"ir-explorer-query-{os.getppid()}-def"
    alive.mkdir()
    other = tmp_path / "ir-explorer-query-notapid-x"
    other.mkdir()
    assert remove_abandoned_scratch(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name])


def test_the_spill_is_capped_and_a_query_that_needs_more_is_refused_in_words(monkeypatch):
    monkeypatch.setattr(query, "MEMORY_LIMIT_BYTES", 64 * 2**20)
    monkeypatch.setattr(query, "SPILL_LIMIT_BYTES", 32 * 2**20)
    document = open_document(CLEAN)
    sql = "SELECT * FROM range(30000000) ORDER BY random() -- workloads"
    with pytest.raises(QueryError) as refused, run_query([("f", document)], sql) as result:
        list(result.rows)
    assert "scratch disk" in str(refused.value) and "narrow it" in str(refused.value)


def test_a_row_over_the_cap_is_refused_in_words(monkeypatch):
    monkeypatch.setattr(query, "ROW_LIMIT_BYTES", 2**20)
    document = open_document(CLEAN)
    sql = "SELECT 1 AS a, repeat('x', 3000000) AS s -- workloads"
    with pytest.raises(QueryError) as refused, run_query([("f", document)], sql) as result:
        list(result.rows)
    assert str(refused.value) == "row 1 holds 3 MiB, over the 1 MiB a row may hold: select less"


def test_a_2_gb_string_stays_within_the_memory_cap(tmp_path):
    """The CLI bounds its address space once the file is loaded: the 2 GB string stays under DuckDB's 2 GiB and the
    load, where it reached 3.9 GiB."""
    peak, said = peak_of(tmp_path, "SELECT repeat(repeat('x', 1000000), 2000) AS s -- workloads", status=2)
    assert said.startswith("ir-explorer query: the") and "Traceback" not in said, said
    assert peak < query.MEMORY_LIMIT_BYTES + 600 * 2**20, peak


def peak_of(tmp_path, *args: str, status: int = 0) -> tuple[int, str]:
    """(peak resident bytes, what it said) of one `query` process, measured by a parent of its own (a test worker's
    own children would be counted with it); the output's tail on stdout, else its stderr."""
    code = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, len(done.stdout), done.returncode); "
            "sys.stderr.write(done.stdout[-200:] or done.stderr[-400:])")  # fmt: skip
    command = [sys.executable, "-c", code, sys.executable, "-m", "explorer", "query", str(CLEAN), *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp_path)})  # noqa: E501
    peak, _, returned = done.stdout.split()
    assert returned == str(status), done
    return int(peak) * 1024, done.stderr


def test_json_streams_as_csv_does(tmp_path):
    """Rows as JSON: the rows were all gathered first (2.6 GiB for a million on the 480 MB file; here 400,000 rows of
    300 characters, over 150 MiB gathered)."""
    sql = "SELECT range AS n, repeat('x', 300) AS s FROM range(400000) -- workloads"
    csv_peak, _ = peak_of(tmp_path, sql, "--format", "csv")
    json_peak, tail = peak_of(tmp_path, sql, "--format", "json")
    assert tail.endswith('"row_cap":1000000,"capped":false,"not_read":[]}\n')
    assert json_peak < csv_peak + 64 * 2**20, (json_peak, csv_peak)


def test_json_output_is_the_contract(tmp_path):
    done = subprocess.run([sys.executable, "-m", "explorer", "query", str(CLEAN),
                           "SELECT core, count(*) AS n FROM workloads GROUP BY core ORDER BY core", "--format", "json",
                           "--max-rows", "3"], capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    payload = json.loads(done.stdout)
    assert payload == {"schema_version": 2, "columns": ["core", "n"], "rows": [[0, 12], [1, 12], [2, 12]],
                       "row_cap": 3, "capped": True, "not_read": []}  # fmt: skip


def test_the_parquet_export_never_writes_over_its_input(tmp_path):
    """The schedule named DIR/l2.parquet was replaced by the l2 table (every other output refuses this)."""
    folder = tmp_path / "out"
    folder.mkdir()
    schedule = folder / "l2.parquet"
    schedule.write_bytes(CLEAN.read_bytes())
    done = subprocess.run([sys.executable, "-m", "explorer", "export", str(schedule), "--parquet", str(folder)],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 2, done
    assert "l2.parquet: is the input file: an output never overwrites it" in done.stderr, done.stderr
    assert schedule.read_bytes() == CLEAN.read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["l2.parquet"]  # no table written before the refusal


def test_the_parquet_export_says_an_os_error_in_words(tmp_path, monkeypatch):
    from pathlib import Path

    from explorer.errors import LoadError
    from explorer.exports.parquet import write_parquet

    def refused(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refused)  # a read-only parent (root may write any folder: simulated)
    with pytest.raises(LoadError) as error:
        write_parquet(open_document(CLEAN), tmp_path / "tables")
    assert error.value.message == "cannot make the folder: permission denied (the folder or the file is not writable)"
