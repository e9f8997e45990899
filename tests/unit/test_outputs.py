"""No output overwrites another input (issue #44 item 4): every file a command read (the input, its external
weights, a per-node data file, an auto-found companion, a compared file) and everything inside an input folder
is refused as an output: exit 2, one line, the file unchanged."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_DATA, SAMPLES


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip


def refused(result: subprocess.CompletedProcess, *kept: Path, before: list[bytes]) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "never" in result.stderr, result.stderr
    assert [path.read_bytes() for path in kept] == before


@pytest.fixture
def external_model(tmp_path) -> Path:
    """A model whose weights live in `m.onnx.data` beside it."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((64, 64), dtype=np.float32), "W")
    node = helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [weight])  # fmt: skip
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph), model, save_as_external_data=True, location="m.onnx.data",
              size_threshold=0)  # fmt: skip
    assert (tmp_path / "m.onnx.data").is_file()
    return model


def test_external_weights_are_never_an_output(external_model):
    data = external_model.with_name("m.onnx.data")
    before = [data.read_bytes()]
    refused(run("graph", external_model, "--svg", data), data, before=before)
    refused(run("export", external_model, "--html", data), data, before=before)
    link = external_model.with_name("link.svg")
    link.symlink_to(data)
    refused(run("graph", external_model, "--svg", link), data, before=before)


def test_a_node_data_file_is_never_an_output(external_model):
    csv = external_model.with_name("data.csv")
    csv.write_text("mm,1.5\n")
    before = [csv.read_bytes()]
    refused(run("graph", external_model, "--node-data", csv, "--svg", csv), csv, before=before)
    refused(run("export", external_model, "--node-data", csv, "--html", csv), csv, before=before)


def test_the_compared_file_is_never_the_screenshot(tmp_path):
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    shutil.copy(SAMPLE_DATA / "residual_blocks.onnx", a)
    shutil.copy(SAMPLE_DATA / "residual_blocks_renamed.onnx", b)
    before = [b.read_bytes()]
    refused(run("screenshot", a, "--compare", b, "-o", b), b, before=before)


def test_nothing_is_written_inside_an_input_folder(tmp_path):
    folder = tmp_path / "bundle"
    with tarfile.open(SAMPLE_DATA / "two_modules_mlf.tar") as archive:
        archive.extractall(folder, filter="data")
    members = sorted(p for p in folder.rglob("*") if p.is_file())
    before = [p.read_bytes() for p in members]
    result = run("graph", folder, "--svg", folder / "new.svg")
    refused(result, *members, before=before)
    assert not (folder / "new.svg").exists()
    refused(run("export", folder, "--html", members[0]), *members, before=before)


def test_an_auto_found_companion_is_never_an_output(tmp_path):
    if not (SAMPLES / "gemini_pipeline").is_dir():
        pytest.skip("real samples not found (a user's clone has no ../shared)")
    from tests.unit.test_gemini_pipeline import pipeline_folder

    schedule = pipeline_folder(tmp_path, 1)
    frontend = schedule.with_name("int8_resnet34.sim_quantized_b1.json")
    before = [frontend.read_bytes()]
    refused(run("export", schedule, "--trace-event", frontend), frontend, before=before)


def test_write_failures_say_what_failed_in_words(tmp_path, monkeypatch, capsys):
    """Issue #44 item 8: a folder, a missing folder, a full disk: one line in words, exit 2, never `internal
    error: IsADirectoryError`; a read-only output is refused unless --force."""
    import errno
    import os

    from explorer import cli

    model = SAMPLE_DATA / "residual_blocks.onnx"
    cases = [
        (tmp_path, "is a folder"),
        (tmp_path / "missing" / "g.svg", "does not exist"),
    ]
    for target, words in cases:
        assert cli.main(["graph", str(model), "--svg", str(target)]) == 2
        err = capsys.readouterr().err
        assert words in err and "internal error" not in err, err

    locked = tmp_path / "locked.svg"
    locked.write_text("keep me")
    locked.chmod(0o444)
    assert cli.main(["graph", str(model), "--svg", str(locked)]) == 2
    assert "read-only" in capsys.readouterr().err and locked.read_text() == "keep me"
    assert cli.main(["graph", str(model), "--svg", str(locked), "--force"]) == 0
    assert locked.read_text().startswith("<svg") or "<svg" in locked.read_text()[:500]

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", lambda fd: full(fd, b""))
    assert cli.main(["graph", str(model), "--svg", str(tmp_path / "full.svg")]) == 2
    err = capsys.readouterr().err
    assert "the disk is full" in err and not (tmp_path / "full.svg").exists()
    assert not list(tmp_path.glob(".full.svg.*.tmp"))  # no half-written temporary file left


def test_names_in_the_reports_figures_are_plain_text_never_plotly_markup(tmp_path):
    """Issue #44 item 8: a layer named `<a href=...>` or `<span style="font-size:300px">` is shown as those
    characters: plotly reads its own markup in names, categories and customdata, so each is escaped."""
    import json as json_module

    from explorer.api import open_document
    from explorer.exports.html_report import figures
    from tests.schedules import two_core

    evil = '<a href="https://example.invalid">x</a><span style="font-size:300px;color:red">big</span>'
    schedule = tmp_path / "markup_stschedule.json"
    schedule.write_text(json_module.dumps(two_core()).replace('"layer_name": "', '"layer_name": "' +
                                                               evil.replace('"', '\\"')))  # fmt: skip
    document = open_document(schedule)
    drawn = json_module.dumps([figure.to_plotly_json() for figure in figures(document)], default=str)
    assert "<a href" not in drawn and "<span" not in drawn
    assert "&lt;a href=" in drawn and "&lt;span style=" in drawn


def _specials(folder: Path) -> dict[str, Path]:
    """A FIFO, a socket, a link and (as root) a character device: nothing that an output may replace."""
    import os
    import socket
    import stat

    made = {"fifo": folder / "fifo.svg", "socket": folder / "sock.svg", "link": folder / "link.svg"}
    os.mkfifo(made["fifo"])
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(made["socket"]))
    server.close()
    (folder / "real.svg").write_text("kept")
    made["link"].symlink_to(folder / "real.svg")
    if os.geteuid() == 0:  # a device node of our own (1, 3 is /dev/null's number): never the real one
        made["device"] = folder / "null.svg"
        os.mknod(made["device"], 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return made


@pytest.mark.parametrize("option", ["--svg", "--html", "--trace-event", "-o"])
def test_outputs_never_replace_a_special_file(tmp_path, option):
    """Issue #60 item 5: every output option renamed over its target, so a FIFO or a device became a file."""
    import stat

    command = {"--svg": ["graph"], "--html": ["export"], "--trace-event": ["export"],
               "-o": ["relocate", "--core", "0", "--tensor", "1", "--to", "suggested"]}[option]  # fmt: skip
    schedule = str(SAMPLE_DATA / "clean_2x2_stschedule.json")
    for kind, target in _specials(tmp_path).items():
        mode = target.lstat().st_mode
        done = subprocess.run([sys.executable, "-m", "explorer", *command, schedule, option, str(target)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 2, (kind, done.stderr)
        assert "it is not replaced" in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert target.lstat().st_mode == mode, kind  # the same kind of file, untouched
        assert not stat.S_ISREG(mode)
    assert (tmp_path / "real.svg").read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
