"""SQL over many schedules (issue #58): files read in parallel worker processes give the rows the loaded documents
give; memory is bounded by what is in flight; a file that cannot be read is named and the others answer; DuckDB's
spill goes to the session's own scratch folder, removed with it."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile

import pytest

from explorer.api import open_document
from explorer.schedule import query
from explorer.schedule.query import QueryError, run_query
from explorer.schedule.query_files import NOT_READ, query_files, startable
from explorer.schedule.tables import TABLES
from tests.conftest import ROOT, SAMPLE_DATA

CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"
PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def plain(rows: list[tuple]) -> list[tuple]:
    """Rows with NaN as None, so two runs' rows compare equal."""
    return [tuple(None if isinstance(v, float) and math.isnan(v) else v for v in row) for row in rows]


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "query", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **env})  # fmt: skip


@pytest.mark.parametrize("workers", ["2", "0"])  # worker processes, and the one-CPU way in this process
def test_many_files_give_the_rows_their_loaded_documents_give(monkeypatch, workers):
    monkeypatch.setenv("IR_EXPLORER_WORKERS", workers)
    paths = [CLEAN, PLANTED, CLEAN]
    documents = [(str(path), open_document(path)) for path in paths]
    for name in TABLES:
        if TABLES[name].companions:  # these files have none (tests/unit/test_plan_conformance.py has)
            continue
        sql = f"select * from {name} order by all"
        found, not_read = query_files(paths, sql)
        assert not_read == [] and found is not None
        with found:
            expected = run_query(documents, sql)
            assert found.columns == expected.columns and found.columns[0] == "file"
            assert plain(list(found.rows)) == plain(list(expected.rows)), name
    counted, _ = query_files(paths, "select file, count(*) from workloads group by all order by all")
    assert counted is not None and list(counted.rows) == [(str(CLEAN), 96), (str(PLANTED), 48)]


def test_a_file_not_read_is_named_and_the_others_still_answer(tmp_path):
    broken = tmp_path / "cut_stschedule.json"
    broken.write_bytes(CLEAN.read_bytes()[:5000])
    model = SAMPLE_DATA / "residual_blocks.onnx"
    done = run_cli(str(CLEAN), str(broken), str(model), "select file, code, location from problems order by file",
                   "--format", "json", IR_EXPLORER_WORKERS="2")  # fmt: skip
    assert done.returncode == 1, done.stderr
    payload = json.loads(done.stdout)
    assert [row[1] for row in payload["rows"]] == [NOT_READ, NOT_READ]
    cut_at = 'line 232, column 16 (byte 5000) in $["-1"].out[5].destination[0]'  # the cut file's end, its path
    assert sorted(row[2] for row in payload["rows"]) == ["", cut_at]
    assert sorted(row[0] for row in payload["rows"]) == sorted([str(broken), str(model)])
    assert [entry["file"] for entry in payload["not_read"]] == [str(broken), str(model)]
    assert "is not a schedule" in payload["not_read"][1]["error"]
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith(f"ir-explorer query: not read: {broken}") and "Traceback" not in done.stderr
    assert lines[-1] == "ir-explorer query: 2 of 3 files not read: the rows are the others'"
    rows = run_cli(str(broken), str(CLEAN), "select count(*) from workloads", "--format", "csv")
    assert rows.returncode == 1 and rows.stdout == "count_star()\n48\n"
    nothing = run_cli(str(broken), str(model), "select count(*) from workloads")
    assert nothing.returncode == 2 and nothing.stdout == ""
    assert nothing.stderr.strip().splitlines()[-1] == "ir-explorer query: no file could be read"


@pytest.mark.parametrize("sql", ["COPY workloads TO '/tmp/ir-explorer-query-leak.csv'",
                                 "SELECT * FROM read_csv('/etc/passwd') -- workloads",
                                 "ATTACH '/tmp/ir-explorer-query.db' -- workloads",
                                 "CREATE TABLE store.mine AS SELECT 1 -- workloads",
                                 "INSERT INTO store.workloads SELECT * FROM workloads", "DELETE FROM workloads",
                                 "SET enable_external_access = true -- workloads"])  # fmt: skip
def test_the_files_databases_are_read_only_and_the_connection_locked(monkeypatch, sql):
    monkeypatch.setenv("IR_EXPLORER_WORKERS", "0")
    with pytest.raises(QueryError):
        query_files([CLEAN, PLANTED], sql)


def test_files_start_while_a_worker_is_free_and_their_estimates_fit():
    assert startable([5, 5, 5], [], None, 2) == 2  # no budget known: as many as there are workers
    assert startable([5, 5, 5], [5], None, 2) == 1
    assert startable([5, 5, 5], [], 12, 4) == 2  # 5 + 5 fit in 12, a third would not
    assert startable([5, 5], [8], 12, 4) == 0  # 8 in flight: 8 + 5 > 12
    assert startable([20, 1], [], 12, 4) == 1  # nothing in flight: the first starts even when too big, alone
    assert startable([1, 20, 1], [], 12, 4) == 1  # in order: the big one waits, and so does the file after it
    assert startable([], [3], 12, 4) == 0


def test_a_query_that_spills_writes_only_in_its_own_scratch_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(query, "MEMORY_LIMIT_BYTES", 64 * 2**20)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    sql = "select v from (select r.range as v, random() as k from workloads, range(200000) r) order by k"
    result = run_query([(str(CLEAN), open_document(CLEAN))], sql)
    first = next(result.rows)
    spilled = [name for _, _, names in os.walk(scratch) for name in names]
    assert first[0] in range(200000) and any(name.startswith("duckdb_temp") for name in spilled)
    result.close()
    assert list(scratch.iterdir()) == [] and list(work.iterdir()) == []  # DuckDB's default is ./.tmp


def test_the_readme_says_the_types_the_code_and_the_memory_cap_the_code_uses():
    from explorer.schedule.query import MEMORY_LIMIT_BYTES
    from explorer.schedule.tables import BIGINT, sql_types

    section = (ROOT / "README.md").read_text().split('## `ir-explorer query FILE... "SQL"`', 1)[1].split("\n## ")[0]
    section = " ".join(section.split())  # the text's line breaks are not the claim
    types = "; ".join(f"{kind} " + ", ".join(f"`{c}`" for c in columns) for kind, columns in sql_types().items()
                      if kind != BIGINT)  # fmt: skip
    assert f"one SQL type in every file: {types}; every other column BIGINT." in section
    assert f"code `{NOT_READ}`" in section and f"capped at {MEMORY_LIMIT_BYTES // 2**30} GiB" in section
    assert "`IR_EXPLORER_WORKERS=0`" in section and "`not_read`" in section


def test_the_writers_connection_spills_into_the_sessions_folder(tmp_path):
    from explorer.schedule.query_files import _writer

    first, second = tmp_path / "a", tmp_path / "b"
    connection = _writer(first)
    assert _writer(first) is connection  # made once for a folder
    assert connection.execute("select current_setting('temp_directory')").fetchone() == (str(first / "spill-writer"),)
    other = _writer(second)  # another session's folder: a connection of its own
    assert other is not connection
    assert other.execute("select current_setting('temp_directory')").fetchone() == (str(second / "spill-writer"),)
