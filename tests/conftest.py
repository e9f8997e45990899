"""Shared fixtures: where the real samples are, and small hand-written schedules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
