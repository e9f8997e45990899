"""The headless command line: JSON shapes, exit codes, and no traceback whatever the input."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from explorer.cli import main
from tests.conftest import ROOT, SAMPLE_DATA, samples_dir

CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"
PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_json_shape(capsys):
    code, out, _ = run(capsys, "info", str(CLEAN), "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["format"] == "scheduler-ir" and payload["file"] == str(CLEAN)
    assert set(payload["summary"]) == {
        "cores",
        "workloads",
        "layers",
        "transfers",
        "dram_reads",
        "dram_writes",
        "buffer_size",
        "makespan",
        "makespan_sequential",
        "peak_l2_bytes",
    }
    assert payload["summary"]["cores"] == 4 and payload["summary"]["workloads"] == 48
    assert payload["problems"] == {"error": 0, "warning": 0}


def test_info_on_real_sample(capsys):
    path = samples_dir("scheduler_ir") / "int8_resnet34.sim_quantized_b4_c1_bw16_stschedule.json"
    code, out, _ = run(capsys, "info", str(path), "--json")
    assert code == 0 and json.loads(out)["problems"] == {"error": 0, "warning": 0}


def test_only_info_opens_without_reading_ahead(capsys, monkeypatch):
    """`info` names no incidents, so it does not have the workers read their roles ahead (Document.read_ahead)."""
    import explorer.api

    opened = []

    def recording_open(*args, **kwargs):
        opened.append(kwargs["read_ahead"])
        return open_document(*args, **kwargs)

    open_document = explorer.api.open_document  # the CLI imports it from explorer.api when it runs
    monkeypatch.setattr(explorer.api, "open_document", recording_open)
    for command in ("info", "check"):
        run(capsys, command, str(PLANTED), "--json")
    assert opened == [False, True]


def test_check_exit_codes_and_json(capsys):
    assert run(capsys, "check", str(CLEAN))[0] == 0
    code, out, _ = run(capsys, "check", str(PLANTED), "--json")
    assert code == 1
    problems = json.loads(out)["problems"]
    assert {p["code"] for p in problems} == {"l2-overlap", "wl0-overlap", "unresolved-transfer"}
    for p in problems:
        assert {"severity", "code", "message", "location", "core", "workload_id"} <= set(p)
    overlap = next(p for p in problems if p["code"] == "l2-overlap")
    assert overlap["tensor_ids"] == [36, 90000]


def test_check_table_is_readable(capsys):
    code, out, _ = run(capsys, "check", str(PLANTED))
    assert code == 1
    assert "l2-overlap" in out and 'at $["1"][3].buffer[5]' in out and "3 errors, 0 warnings" in out


@pytest.mark.parametrize("content", [b"", b'{"-1": {', b"\x89PNG\r\n\x1a\n\x00\x00", b"[1]", b"null"])
def test_unusable_input_exits_2_with_one_line(tmp_path, capsys, content):
    path = tmp_path / "bad_stschedule.json"
    path.write_bytes(content)
    for command in ("info", "check"):
        code, out, err = run(capsys, command, str(path))
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_directory_and_missing_file(tmp_path, capsys):
    assert run(capsys, "check", str(tmp_path))[0] == 2
    code, _, err = run(capsys, "info", str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in err


def test_version_and_help_in_a_subprocess():
    version = subprocess.run(
        [sys.executable, "-m", "explorer", "--version"], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert version.stdout.startswith("ir-explorer ")
    helptext = subprocess.run(
        [sys.executable, "-m", "explorer", "--help"], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "info" in helptext.stdout and "check" in helptext.stdout
    bad = subprocess.run([sys.executable, "-m", "explorer", "check"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_values_read_as_words_and_numbers_everywhere():
    from explorer.formatting import human

    assert human(True) == "yes" and human(False) == "no" and human(None) == "none"
    assert human(71661.0) == "71,661" and human(2.5) == "2.50"
    assert human({"float32": (5738, 22952)}, "parameters_by_dtype") == "float32 5,738 elements, 22,952 bytes"
    assert human([71661.0, 70000.0], "makespan") == "71,661 → 70,000"
    assert human(-1661.0, "makespan_delta") == "-1,661" and human(12.0, "peak_l2_delta") == "+12"
    assert human(9216, "peak_l2_bytes") == "9,216 (9.0 KiB)" and human({"ai.onnx": 17}) == "ai.onnx 17"
    # ids as the file writes them (searchable), addresses in hex as every view shows them
    ids = [human(99999, "transfer"), human(90000, "tensor"), human(12345, "workload_id")]
    assert ids == ["99999", "90000", "12345"]
    assert human([36, 90000], "tensor_ids") == "36, 90000" and human([1, 2], "makespan") == "1 → 2"
    assert human(7232, "address") == "0x1c40" and human(20, "cores") == "20" and human(12345, "cores") == "12,345"


def test_diff_text_names_ids_and_addresses_as_the_problems_do(capsys):
    """The planted changes in the text diff are written so that a search for the problems' words finds them."""
    from explorer import cli

    planted = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
    assert cli.main(["diff", str(SAMPLE_DATA / "clean_2x2_stschedule.json"), str(planted)]) == 0
    text = capsys.readouterr().out
    assert "transfer 99999" in text and "tensor 90000, address 0x1c40, size 128" in text
    assert "99,999" not in text and "90,000" not in text


def test_info_and_diff_print_no_raw_values(capsys):
    from explorer import cli

    onnx_file = SAMPLE_DATA / "subgraphs_functions.onnx"
    assert cli.main(["info", str(onnx_file)]) == 0
    text = capsys.readouterr().out
    assert "elements" in text and "(2, 8)" not in text and "True" not in text
    clean = SAMPLE_DATA / "clean_2x2_stschedule.json"
    assert cli.main(["diff", str(clean), str(clean)]) == 0
    text = capsys.readouterr().out
    assert "71,661.0" not in text and "71,661 → 71,661" in text and "makespan delta: 0" in text


def test_the_demo_is_made_in_the_users_cache_never_beside_the_code(tmp_path, monkeypatch):
    """Issue #59 item 8: installed from a wheel, `ir-explorer` with no FILE wrote the demo files into
    site-packages/sample_data. Without a checkout's samples they are made once under $XDG_CACHE_HOME."""
    from explorer.cli import DEMO, default_sample

    package = tmp_path / "site-packages" / "sample_data"  # what the code's folder would be in a wheel install
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = default_sample(package)
    assert path == tmp_path / "cache" / "ir-explorer" / "samples" / DEMO and path.is_file()
    assert not package.exists() and not package.parent.exists()
    made = path.stat().st_mtime_ns
    assert default_sample(package) == path and path.stat().st_mtime_ns == made  # made once
    package.mkdir(parents=True)
    (package / DEMO).write_text("{}")
    assert default_sample(package) == package / DEMO  # a checkout's own samples come first


@pytest.mark.parametrize("name", ["demo_pipeline_b1_c1_bw16_sim.txt", "demo_pipeline_b1_c1_bw16_asm.txt"])
def test_info_of_a_trace_or_an_assembly_says_nothing_of_l2(capsys, name):
    """Issue #59 item 6: their lanes are units, not buffers; `info` printed 'L2 at its fullest: 0 bytes'."""
    assert main(["info", str(SAMPLE_DATA / name)]) == 0
    out = capsys.readouterr().out
    assert "lanes:" in out and "fullest" not in out
    assert main(["info", "--json", str(SAMPLE_DATA / name)]) == 0
    assert json.loads(capsys.readouterr().out)["memory"] is None


def test_help_lists_every_subcommand_as_its_parser_takes_it():
    """Issue #74: `--help` left out query and relocate; the list is now made from SUBCOMMANDS, held here to each
    subcommand's parser (its positional arguments, in order)."""
    from explorer.cli_parsers import SUBCOMMANDS, base_parser, command_parser

    epilog = " ".join(base_parser().epilog.split())
    for name, takes in SUBCOMMANDS.items():
        assert f"{name} {takes}" in epilog, name
        parser = command_parser(name)
        positional = [a for a in parser._actions if not a.option_strings]
        shown = [(a.metavar or a.dest) + ("..." if a.nargs == "+" else "") for a in positional]
        options = re.findall(r"\[(--[a-z-]+)\]", takes)  # an option in brackets (`cache [--clear]`) is one it has
        assert all(option in parser._option_string_actions for option in options), (name, options)
        takes = re.sub(r"\s*\[--[a-z-]+\]", "", takes)
        assert " ".join(shown).upper().replace("FILES", "FILE") == takes.upper(), (name, shown)


def test_export_help_names_every_output():
    helptext = command_parser_help("export")
    for option in ("--html", "--trace-event", "--parquet"):
        assert option in helptext
    assert "Parquet" in helptext.split("positional arguments")[0]  # said in its description too


def command_parser_help(name: str) -> str:
    from explorer.cli_parsers import command_parser

    return command_parser(name).format_help()
