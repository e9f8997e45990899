"""Shared fixtures: where the real samples are, and small hand-written schedules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# Every test reads its file, never what an earlier test (or the developer's own use) left in the derived-data
# cache; the cache's tests turn it on in a folder of their own. Set here, before any test, so the CLI's child
# processes inherit it too.
os.environ["IR_EXPLORER_CACHE"] = "off"

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
SAMPLE_DATA = ROOT / "sample_data"


def samples_dir(kind: str) -> Path:
    folder = SAMPLES / kind
    if not folder.is_dir():
        pytest.skip(f"real samples not found at {folder} (a user's clone has no ../shared)")
    return folder


@pytest.fixture
def write_json(tmp_path: Path):
    """Write a JSON value as a *_stschedule.json file and return its path."""

    def write(value, name: str = "t_stschedule.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(value))
        return path

    return write


@pytest.fixture
def cache_on(tmp_path, monkeypatch):
    """The derived-data cache on, in a folder of the test's own, keeping every file however quick its first
    open; the folder entries are written to."""
    from explorer.cache import documents as derived
    from explorer.cache import folder as cache_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "on")
    monkeypatch.setattr(derived, "MIN_SECONDS", 0.0)
    return tmp_path / "xdg" / "ir-explorer" / "derived"


def entry_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.entry"))


def settled(folder: Path, seconds: float = 120.0) -> Path:
    """`folder` once the entries being written there (by a detached writer, say) are finished."""
    from explorer.cache.entry import wait_for_writers

    wait_for_writers(folder, seconds)
    return folder


def written(folder: Path) -> list[tuple[str, int]]:
    """Each cache entry and its inode: an entry written again (renamed over the old one) has a new inode."""
    return [(entry.name, entry.stat().st_ino) for entry in entry_files(folder)] if folder.exists() else []


def named_relu_chain(path: Path, names: list[str]):
    """x → one Relu per name (the node's name, so its scopes: `/blocks.0/op3`) → the last one's output, saved at
    `path`; its graph model."""
    import onnx
    from onnx import TensorProto, helper

    from explorer.api import open_document

    nodes, last = [], "x"
    for k, name in enumerate(names):
        nodes.append(helper.make_node("Relu", [last], [f"v{k}"], name=name))
        last = f"v{k}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(last, TensorProto.FLOAT, [4])])  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return open_document(path).view.graph_model()

