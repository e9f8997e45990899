"""SQL over schedules (issue #58): the tables against the loaded schedule (counts, L2 peaks), several files, the
locked-down connection, the row cap, the output forms and the Parquet export."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from explorer.api import open_document
from explorer.schedule.query import QueryError, run_query, tables_named
from explorer.schedule.tables import TABLES
from tests.conftest import ROOT, SAMPLE_DATA

CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"
PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def rows(sql: str, *paths) -> list[tuple]:
    documents = [(str(path), open_document(path)) for path in paths or (CLEAN,)]
    return list(run_query(documents, sql).rows)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT)


def test_the_tables_count_what_the_schedule_holds():
    s = open_document(CLEAN).scheduled()
    assert rows("select count(*) from workloads") == [(s.n_workloads,)]
    assert rows("select count(*) from transfers") == [(int(s.dst_core.size + s.dout_dst_core.size),)]
    assert rows("select count(*) from layers") == [(len(s.layers),)]
    assert rows("select count(*) from l2") == [(int(s.buf_tensor.size),)]
    assert rows("select sum(workloads) from layers") == [(s.n_workloads,)]
    assert rows("select count(*) from transfers where to_dram") == [(int((s.dst_core < 0).sum()),)]


def test_each_cores_l2_peak_from_the_entries_is_the_memory_analysis():
    document = open_document(PLANTED)
    from explorer.schedule.pressure import pressure_of

    expected = {c.core: c.to_json()["peak_bytes"] for c in pressure_of(document).cores}
    found = rows("select core, max(total) from (select core, workload, sum(bytes) as total from l2 group by 1, 2) "
                 "group by core order by core", PLANTED)  # fmt: skip
    assert dict(found) == expected


def test_several_files_are_one_table_with_a_file_column():
    found = rows("select file, count(*) from workloads group by file order by file", CLEAN, PLANTED)
    assert found == [(str(CLEAN), 48), (str(PLANTED), 48)]
    assert rows("select code, core, tensor from incidents order by code", PLANTED) == [("l2-overlap", 1, 90000),
                                                                                      ("wl0-overlap", 2, 18)]


def test_only_the_tables_a_query_names_are_built():
    assert tables_named('SELECT count(*) FROM L2 JOIN workloads USING (core)') == ["workloads", "l2"]
    assert set(TABLES) == {"workloads", "l2", "wl0", "transfers", "layers", "incidents", "instructions", "measured",
                           "problems"}


@pytest.mark.parametrize("sql", ["COPY workloads TO '/tmp/ir-explorer-query-leak.csv'",
                                 "SELECT * FROM read_csv('/etc/passwd')", "INSTALL httpfs", "LOAD httpfs",
                                 "SET enable_external_access = true",
                                 "ATTACH '/tmp/ir-explorer-query.db'"])  # fmt: skip
def test_a_query_reads_the_tables_and_nothing_else(sql):
    with pytest.raises(QueryError):
        rows(sql if "workloads" in sql else sql + " -- workloads")


def test_the_command_streams_caps_and_says_sql_errors_in_one_line(tmp_path):
    capped = run_cli("query", str(CLEAN), "select workload from workloads", "--format", "json", "--max-rows", "5")
    payload = json.loads(capped.stdout)
    assert capped.returncode == 0 and payload["schema_version"] == 2 and payload["capped"] is True
    assert len(payload["rows"]) == 5 and "stopped at 5 rows (--max-rows)" in capped.stderr
    assert payload["not_read"] == []
    csv_out = run_cli("query", str(CLEAN), "select core, count(*) as n from workloads group by core order by core",
                      "--format", "csv")  # fmt: skip
    assert csv_out.stdout == "core,n\n0,12\n1,12\n2,12\n3,12\n"
    table = run_cli("query", str(CLEAN), 'select layer, "end" from layers order by "end" desc limit 1')
    assert table.stdout.splitlines()[0].split() == ["layer", "end"] and len(table.stdout.splitlines()) == 3
    bad = run_cli("query", str(CLEAN), "select nonsense from workloads")
    assert bad.returncode == 2 and bad.stderr.startswith("ir-explorer query: Binder Error")
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    none = run_cli("query", str(CLEAN), "select 1")
    assert none.returncode == 2 and "names none of the tables" in none.stderr
    model = run_cli("query", str(SAMPLE_DATA / "residual_blocks.onnx"), "select * from workloads")
    assert model.returncode == 2 and "is not a schedule" in model.stderr


def test_the_parquet_export_holds_the_same_rows(tmp_path):
    import duckdb

    folder = tmp_path / "tables"
    done = run_cli("export", str(PLANTED), "--parquet", str(folder))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{name}.parquet" for name in TABLES)
    read = duckdb.sql(f"select core, count(*), sum(cycles) from '{folder}/workloads.parquet' group by core order by 1")
    assert read.fetchall() == rows("select core, count(*), sum(cycles) from workloads group by core order by 1",
                                   PLANTED)  # fmt: skip
    nulls = duckdb.sql(f"select count(*) from '{folder}/transfers.parquet' where to_dram and dst_core is null")
    assert nulls.fetchall() == rows("select count(*) from transfers where to_dram", PLANTED)


def test_the_readme_lists_every_table_and_column():
    text = (ROOT / "README.md").read_text()
    section = text.split('## `ir-explorer query FILE... "SQL"`', 1)[1].split("\n## ", 1)[0]
    for name, table in TABLES.items():
        line = next(line for line in section.splitlines() if line.startswith(f"- `{name}`: "))
        assert all(f"`{column}` {declared.text}" in line for column, declared in table.columns.items()), name


def test_an_output_with_no_destination_is_a_transfers_row(tmp_path):
    """Issue #74: outputs with `"destination": []` had no row (11,840 transfer ids where the file has 11,968)."""
    schedule = json.loads(CLEAN.read_text())
    dead = schedule["0"][-1]["ofmap"][0]
    dead["destination"] = []
    path = tmp_path / "dead_stschedule.json"
    path.write_text(json.dumps(schedule))
    outputs = {o["transfer_id"] for key, core in schedule.items() if key.isdigit() for w in core for o in w["ofmap"]}
    assert rows("select count(distinct transfer) from transfers where not from_dram", path) == [(len(outputs),)]
    assert rows(f"select dst_core, dst_workload, to_dram, bytes from transfers where transfer = {dead['transfer_id']}",
                path) == [(None, None, False, dead["size"])]  # fmt: skip


@pytest.mark.parametrize("sql", ["SET memory_limit = '100GB'", "SET threads = 64", "RESET memory_limit",
                                 "SET max_temp_directory_size = '1TB'", "SET temp_directory = '/tmp'"])  # fmt: skip
def test_a_query_cannot_move_its_own_bounds(sql):
    """Issue #74: with the configuration lock removed a query raised its memory to 100 GB and 27 tests passed."""
    with pytest.raises(QueryError):
        rows(sql + " -- workloads")
    from explorer.schedule import query

    (found,) = rows("SELECT current_setting('memory_limit'), current_setting('threads') -- workloads")
    assert found == ("2.0 GiB", 2)
    assert query.MEMORY_LIMIT_BYTES == 2 * 2**30


def test_a_table_the_file_has_no_part_for_is_an_error_in_words():
    """Issue #74: a trace (lanes only) answered `0 rows` from `l2` instead of saying it has no L2."""
    trace = SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt"
    for name, part in (("l2", "address space"), ("wl0", "side space"), ("transfers", "transfers"),
                       ("incidents", "address space")):  # fmt: skip
        with pytest.raises(QueryError) as refused:
            rows(f"select count(*) from {name}", trace)
        assert str(refused.value) == f"this gemini-trace file has no {part} for table {name} (it has: lanes)"
    assert rows("select count(*) from workloads", trace) == [(15,)]
    assert rows("select count(*) from l2 where file like '%clean%'", trace, CLEAN) == [(len(rows("select * from l2")),)]
    done = run_cli("query", str(trace), "select count(*) from l2")
    assert done.returncode == 2 and "has no address space for table l2" in done.stderr
    done = run_cli("query", str(trace), str(trace), "select count(*) from l2")  # many files, none with L2
    assert done.returncode == 2 and "has no address space for table l2" in done.stderr
    done = run_cli("query", str(trace), str(CLEAN), "select count(*) from l2", "--format", "csv")  # one has it
    assert done.returncode == 0 and done.stdout.splitlines()[1] == str(len(rows("select * from l2")))


def test_each_column_is_declared_once_and_built_as_declared():
    """Issue #74 item 8: a column's text, SQL type and NULL rule are one declaration; each builder gives exactly
    the declared columns, and a name has one SQL type in every table."""
    from explorer.schedule.tables import build_table

    document = open_document(PLANTED)
    for name, table in TABLES.items():
        assert list(build_table(name, document, "f")) == list(table.columns), name
    types: dict[str, set[str]] = {}
    for table in TABLES.values():
        for column, declared in table.columns.items():
            types.setdefault(column, set()).add(declared.sql)
    assert {column: kinds for column, kinds in types.items() if len(kinds) > 1} == {}
    nulls = rows("select count(*) from transfers where core is null", PLANTED)
    assert nulls == rows("select count(*) from transfers where from_dram", PLANTED)  # -1 read as NULL
