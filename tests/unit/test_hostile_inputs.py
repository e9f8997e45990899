"""Inputs that are not byte strings: symbolic links in packages and folders (loops, absolute targets), and
files that change while they are read. Each ends in a document or a located LoadError, and nothing outside the
model is ever read."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from explorer.api import open_document
from explorer.errors import LoadError
from tests.conftest import SAMPLE_DATA
from tests.coreml_models import make_models

SECRET = "root:x:0:0:secret-outside-the-model"


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    folder = make_models(tmp_path_factory.mktemp("coreml"))
    found = sorted(folder.glob("*.mlpackage"))
    assert found, "the MIL builder made no package"
    return found[0]


@pytest.fixture
def outside(tmp_path) -> Path:
    path = tmp_path / "passwd"
    path.write_text(SECRET)
    return path


def copy_package(package: Path, tmp_path: Path) -> Path:
    copy = tmp_path / package.name
    shutil.copytree(package, copy)
    return copy


def relink(path: Path, target: str | Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    os.symlink(target, path)


def test_a_package_whose_model_is_a_link_loop_or_leads_outside_is_refused(package, tmp_path, outside):
    for target in ("model.mlmodel", outside):  # a loop onto itself, then an absolute link out of the package
        copy = copy_package(package, tmp_path / str(len(str(target))))
        relink(copy / "Data" / "com.apple.CoreML" / "model.mlmodel", target)
        with pytest.raises(LoadError) as caught:
            open_document(copy)
        assert caught.value.location and SECRET not in str(caught.value)


def test_weights_that_loop_or_leave_the_package_are_not_read(package, tmp_path, outside):
    weights = "Data/com.apple.CoreML/weights"
    for case, (where, target) in enumerate(((weights, "weights"), (weights + "/weight.bin", outside))):
        copy = copy_package(package, tmp_path / f"case{case}")
        (copy / weights).mkdir(parents=True, exist_ok=True)
        relink(copy / where, target)
        document = open_document(copy)
        assert "weights-not-read" in {p.code for p in document.problems}
        assert document.view.model.weights_dir is None


def test_a_compiled_folder_with_a_linked_model_mil_is_refused(tmp_path, outside):
    compiled = tmp_path / "m.mlmodelc"
    compiled.mkdir()
    os.symlink(outside, compiled / "model.mil")
    with pytest.raises(LoadError) as caught:
        open_document(compiled)
    assert "outside" in caught.value.message and SECRET not in str(caught.value)


def test_an_extracted_bundle_does_not_follow_links(tmp_path, outside):
    import tarfile

    folder = tmp_path / "bundle"
    folder.mkdir()
    with tarfile.open(SAMPLE_DATA / "two_modules_mlf.tar") as archive:
        members = {m.name.removeprefix("./"): archive.extractfile(m).read() for m in archive if m.isreg()}
    for name, data in members.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    os.symlink(outside, folder / "codegen" / "stolen.c")
    os.symlink(".", folder / "loop")  # a folder that contains itself
    document = open_document(folder)
    refused = {p.refs.get("member"): p.message for p in document.problems if p.code == "refused-member"}
    assert "symbolic link" in refused["codegen/stolen.c"] and "symbolic link" in refused["loop"]
    assert all(SECRET not in repr(v) for v in vars(document.view.mlf).values())


@pytest.mark.parametrize("name", ["clean_2x2_stschedule.json", "views_ark_model.json", "subgraphs_functions.onnx",
                                  "two_modules_mlf.tar"])  # fmt: skip
def test_a_file_that_changes_while_it_is_read(name, tmp_path):
    """Another process rewrites the file (cut short, emptied, whole again) while it is opened, again and again."""
    data = (SAMPLE_DATA / name).read_bytes()
    path = tmp_path / name
    path.write_bytes(data)
    stop = threading.Event()

    def rewrite() -> None:
        k = 0
        while not stop.is_set():
            with path.open("r+b") as handle:
                handle.truncate([len(data) // 2, 0, len(data)][k % 3])
                if k % 3 == 2:
                    handle.seek(0)
                    handle.write(data)
            k += 1

    writer = threading.Thread(target=rewrite, daemon=True)
    writer.start()
    outcomes = set()
    try:
        for _ in range(40):
            try:
                document = open_document(path)
                outcomes.add("loaded")
                document.describe(("summary",))
            except LoadError as error:
                assert error.location or "empty" in error.message
                outcomes.add("refused")
    finally:
        stop.set()
        writer.join()
    assert outcomes


def test_a_model_that_crashes_onnx_shape_inference_is_a_problem_not_a_dead_process(tmp_path):
    """onnx's C++ inference segfaults on these (issue #44 item 2): it runs in a child, so `check`, `graph` and
    `export` finish with their usual exit codes and say what happened; the model opens without inferred shapes."""
    import subprocess
    import sys

    from tests.conftest import ROOT
    from tests.hostile import onnx_that_crashes_shape_inference

    for model in onnx_that_crashes_shape_inference(tmp_path):
        check = subprocess.run([sys.executable, "-m", "explorer", "check", str(model)], capture_output=True,
                               text=True, cwd=ROOT)  # fmt: skip
        assert check.returncode == 1, check.stderr
        assert "shape inference failed: crashed (SIGSEGV)" in check.stdout
        graph = subprocess.run([sys.executable, "-m", "explorer", "graph", str(model), "--json"],
                               capture_output=True, text=True, cwd=ROOT)  # fmt: skip
        assert graph.returncode == 0, graph.stderr
        report = tmp_path / f"{model.stem}.html"
        export = subprocess.run([sys.executable, "-m", "explorer", "export", str(model), "--html", str(report)],
                                capture_output=True, text=True, cwd=ROOT)  # fmt: skip
        assert export.returncode == 0 and report.is_file(), export.stderr
