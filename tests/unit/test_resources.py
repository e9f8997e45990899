"""What a hostile or odd input must not do to the box or the terminal: eat memory past a known multiple of its
size, hang on a pipe, drive the terminal with its text, hide a repeated key, wrap an int64, read a sidecar
whole, or leave the details panel blank once the file changed (issue #30, items 5-7 and 9-14)."""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import warnings
from pathlib import Path

import pytest

from explorer import cli, jsonpath, memory_guard
from explorer.api import open_document
from explorer.errors import MAX_LISTED_PER_CODE, LoadError
from tests.conftest import ROOT, SAMPLE_DATA
from tests.schedules import entry, two_core

SCHEDULE = SAMPLE_DATA / "clean_2x2_stschedule.json"


# ---- 9. a pipe is refused before it is opened ------------------------------------------------------------------
def test_a_fifo_given_as_the_file_is_refused_at_once(tmp_path):
    fifo = tmp_path / "x_stschedule.json"
    os.mkfifo(fifo)
    result = subprocess.run([sys.executable, "-m", "explorer", "info", str(fifo)], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)  # fmt: skip
    assert result.returncode == 2 and "not a regular file" in result.stderr
    with pytest.raises(LoadError, match="not a regular file"):
        open_document(fifo)


# ---- 10. text from the input never drives the terminal ---------------------------------------------------------
def test_control_characters_from_the_input_are_escaped_in_text_output(tmp_path, capsys):
    evil = tmp_path / "evil\x1b]0;pwned\x07\x1b[2J\x9b31m_stschedule.json"
    shutil.copyfile(SCHEDULE, evil)
    assert cli.main(["info", str(evil)]) == 0
    assert cli.main(["info", str(tmp_path / "gone\x1b[2J_stschedule.json")]) == 2
    out, err = capsys.readouterr()
    for text in (out, err):
        assert not any(ch in text for ch in "\x1b\x07\x9b")
    assert "\\u001b]0;pwned\\u0007" in out and "gone\\u001b[2J" in err
    assert cli.main(["info", str(evil), "--json"]) == 0
    assert Path(json.loads(capsys.readouterr().out)["file"]) == evil  # JSON still carries the very name


def test_the_escape_finds_exactly_the_characters_it_escapes():
    """`escape_controls` returns text as it is when a search finds none of the characters it would escape: the
    search's set is the escape table's, character for character (tab and newline stay)."""
    from explorer.formatting import _CONTROLS, _ESCAPED, escape_controls

    assert [code for code in range(0x3000) if _ESCAPED.search(chr(code))] == sorted(_CONTROLS)
    assert escape_controls("a\tb\n") == "a\tb\n" and escape_controls("x\u202ey") == "x\\u202ey"


# ---- 11. a repeated key is an error at its path ----------------------------------------------------------------
def test_a_repeated_key_is_reported_where_it_is(tmp_path, write_json):
    model = tmp_path / "model.json"  # an ARK model whose last key empties it
    text = (SAMPLE_DATA / "views_ark_model.json").read_text()
    model.write_text(text.rstrip().rstrip("}") + ', "Nodes": []}')
    problems = open_document(model).problems
    assert [(p.code, p.location) for p in problems if p.code == "duplicate-key"] == [("duplicate-key", "$.Nodes")]

    doc_json = two_core()
    second = json.dumps(doc_json)[:-1] + ', "0": [], "xlen": 2}'  # a second core "0" replaces the first
    path = write_json(None)
    path.write_text(second)
    found = [(p.severity, p.location) for p in open_document(path).problems if p.code == "duplicate-key"]
    assert found == [("error", '$["0"]'), ("error", "$.xlen")]

    frontend = tmp_path / "demo_pipeline_b1.json"
    layers = json.loads((SAMPLE_DATA / "demo_pipeline_b1.json").read_text())
    name = next(iter(layers))
    frontend.write_text(json.dumps(layers)[:-1] + f", {json.dumps(name)}: {json.dumps(layers[name])}}}")
    problems = open_document(frontend).problems
    assert any(p.code == "duplicate-key" and p.location == "$" + jsonpath.key(name) for p in problems)


# ---- 12. every loader's problems are capped per code ------------------------------------------------------------
def test_loader_problems_are_capped_per_code_with_the_rest_counted(write_json):
    broken = {"0": [{}] * (MAX_LISTED_PER_CODE + 2_500), "-1": {}, "xlen": 1, "ylen": 1, "buffersize": 0}
    problems = open_document(write_json(broken)).problems
    codes = [p.code for p in problems]
    assert codes.count("bad-workload") == MAX_LISTED_PER_CODE
    (note,) = [p for p in problems if p.code == "bad-workload-truncated"]
    assert note.message.startswith(f"{MAX_LISTED_PER_CODE + 2_500:,} bad-workload problems")


def test_capped_lists_of_several_workers_add_up():
    from explorer.errors import CappedProblems, Problem, cap_per_code

    parts = []
    for _ in range(3):  # three workers, each past the cap on its own
        part = CappedProblems(limit=10)
        for k in range(25):
            part.add(Problem("error", "bad-x", f"x{k}"))
        parts.append(part)
    joined = cap_per_code([p for part in parts for p in part], limit=10)
    assert [p.code for p in joined].count("bad-x") == 10
    assert [p.message for p in joined if p.code == "bad-x-truncated"] == ["75 bad-x problems; the first 10 are listed"]


# ---- 13. sums that do not fit int64 are refused -------------------------------------------------------------------
def test_an_address_and_size_whose_end_passes_int64_are_refused_without_overflow(write_json):
    doc_json = two_core()
    doc_json["0"][0]["buffer"] = [entry(1, 2**62, 2**62)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning would raise here
        document = open_document(write_json(doc_json))
    assert any(p.code.startswith("bad-") and p.location == '$["0"][0].buffer[0].address' for p in document.problems)
    ends = document.schedule.buf_addr + document.schedule.buf_size
    assert (ends >= document.schedule.buf_addr).all()


# ---- 14. a file changed on disk says so in the details ------------------------------------------------------------
def test_the_details_say_the_file_changed_instead_of_showing_empty_sections(write_json):
    path = write_json(two_core())
    document = open_document(path)
    path.write_text(path.read_text() + "\n")
    sections = document.describe(("workload", 1))
    assert sections[0].title == "File changed on disk" and "changed on disk" in str(sections[0].rows)
    assert all(section.rows for section in sections)


# ---- 7. external data is read as far as the dims say ----------------------------------------------------------------
def test_external_data_reads_the_declared_bytes_only(tmp_path, monkeypatch):
    import onnx

    from explorer.formats.onnx import details as onnx_details
    from explorer.formats.onnx.samples import linear_model, save_with_external_data

    path = save_with_external_data(linear_model(4, 4), tmp_path)
    model = onnx.load(path, load_external_data=False)
    weight = next(t for t in model.graph.initializer if t.name == "weight")
    for field in list(weight.external_data):
        if field.key == "length":
            weight.external_data.remove(field)
    sidecar = tmp_path / "external.onnx.data"
    with sidecar.open("r+b") as handle:
        handle.truncate(1 << 30)  # a 1 GiB sidecar (sparse): the tensor is 64 bytes of it
    reads: list[int] = []
    real_open = Path.open

    def spying_open(self, *args, **kwargs):
        handle = real_open(self, *args, **kwargs)
        if self.name == sidecar.name:
            read = handle.read
            handle = _Spy(handle, lambda size=-1: reads.append(size) or read(size))
        return handle

    monkeypatch.setattr(Path, "open", spying_open)
    stats = onnx_details.weight_stats(weight, tmp_path)
    assert set(stats) == {"min", "max", "mean", "std", "sparsity", "first values"}, stats  # summarised, not refused
    assert reads == [4 * 4 * 4]
    weight.external_data.add(key="length", value="1000")
    assert "the dims say 64" in str(onnx_details.weight_stats(weight, tmp_path))


class _Spy:
    def __init__(self, handle, read) -> None:
        self._handle, self.read = handle, read

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._handle.close()


# ---- 5. a tiny archive cannot become gigabytes -----------------------------------------------------------------
def test_a_graph_of_ten_million_empty_nodes_is_refused_before_decoding(tmp_path):
    graph = b'{"nodes": [' + b",".join([b"{}"] * 10_000_000) + b'], "arg_nodes": [], "heads": []}'
    metadata = json.dumps({"version": 5, "model_name": "m", "executors": ["graph"], "style": "full-model"}).encode()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for name, data in (("metadata.json", metadata), ("executor-config/graph/graph.json", graph)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    bundle = tmp_path / "bomb.tar.gz"
    bundle.write_bytes(gzip.compress(raw.getvalue()))
    assert bundle.stat().st_size < 200_000
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    problems = open_document(bundle).problems
    assert any("JSON values, over the cap" in p.message for p in problems)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before  # KiB
    assert grown < 400 * 1024, f"{grown} KiB"  # decoding those nodes took gigabytes


def test_json_memory_bound_covers_the_worst_small_values():
    for text in (b"[" + b",".join([b"{}"] * 1000) + b"]", b"[" + b",".join([b"[[]]"] * 1000) + b"]"):
        assert memory_guard.json_memory_bound(text) >= 20 * len(text)
    real = (SAMPLE_DATA / "views_ark_model.json").read_bytes()
    assert memory_guard.json_memory_bound(real) < 40 * len(real)


# ---- 6. the memory guard sees the container's limit and ulimit -v ----------------------------------------------
def fake_tree(tmp_path: Path, cgroup_line: str, files: dict[str, str]) -> tuple[Path, Path]:
    proc, root = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text(cgroup_line + "\n")
    (proc / "meminfo").write_text("MemTotal: 25000000 kB\nMemAvailable: 20000000 kB\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return proc, root


def test_the_guard_takes_the_cgroup_v2_limit_and_its_parents(tmp_path):
    proc, root = fake_tree(tmp_path, "0::/user.slice/job", {
        "user.slice/job/memory.max": "max\n", "user.slice/job/memory.current": "100\n",
        "user.slice/memory.max": str(500 << 20), "user.slice/memory.current": str(100 << 20),
    })  # fmt: skip
    assert memory_guard.available_bytes(proc, root) == 400 << 20  # not the host's 19 GiB


def test_the_guard_takes_the_cgroup_v1_limit_inside_a_container(tmp_path):
    proc, root = fake_tree(tmp_path, "4:memory:/docker/abc", {
        "memory/memory.limit_in_bytes": str(500 << 20), "memory/memory.usage_in_bytes": str(200 << 20),
    })  # fmt: skip
    assert memory_guard.available_bytes(proc, root) == 300 << 20
    proc, root = fake_tree(tmp_path / "unlimited", "4:memory:/", {
        "memory/memory.limit_in_bytes": "9223372036854771712", "memory/memory.usage_in_bytes": "1",
    })  # fmt: skip
    assert memory_guard.available_bytes(proc, root) == 20000000 * 1024


def test_a_file_over_a_cgroup_limit_is_refused_not_killed(tmp_path, monkeypatch):
    proc, root = fake_tree(tmp_path, "0::/job", {"job/memory.max": str(300 << 20), "job/memory.current": "0"})
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: memory_guard.cgroup_available(proc, root))
    big = tmp_path / "big_stschedule.json"
    big.write_bytes(SCHEDULE.read_bytes())
    os.truncate(big, 100 << 20)  # 100 MB (sparse): 1.75x + 200 MiB passes 300 MiB
    with pytest.raises(LoadError, match="is available: refused"):
        open_document(big)


def test_the_guard_takes_ulimit_v():
    script = (
        "import resource; from explorer.memory_guard import address_space_available, available_bytes\n"
        "size = int(open('/proc/self/status').read().split('VmSize:')[1].split()[0]) * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (300 << 20), resource.RLIM_INFINITY))\n"
        "print(available_bytes(), address_space_available(__import__('pathlib').Path('/proc')))"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    least, own = map(int, result.stdout.split())
    assert least == own and 200 << 20 < own <= 300 << 20
