"""The bundled demo files: reproducible from the generator, clean where clean, and exactly the planted problems."""

from __future__ import annotations

import numpy as np

from explorer.api import open_document
from explorer.formats.scheduler_ir.samples import CLEAN_NAME, PLANTED, PLANTED_NAME
from explorer.samples import write_samples
from tests.conftest import SAMPLE_DATA


def test_committed_samples_match_the_generator(tmp_path):
    for path in write_samples(tmp_path):
        assert path.read_bytes() == (SAMPLE_DATA / path.name).read_bytes(), path.name


def test_clean_sample_has_no_problems_and_really_wraps():
    doc = open_document(SAMPLE_DATA / CLEAN_NAME)
    assert doc.problems == []
    s = doc.schedule
    assert (s.xlen, s.ylen, s.core_ids.tolist()) == (2, 2, [0, 1, 2, 3])
    placement = doc.schedule_analysis.placement
    wrapped = placement.entry[s.buf_tensor.size :]
    assert wrapped.size > 0  # some entries cross a ring region's end ...
    assert set(np.unique(s.buf_type[wrapped]).tolist()) >= {0, 1}  # ... in both the fmap and weight regions


def test_checker_finds_exactly_what_was_planted():
    doc = open_document(SAMPLE_DATA / PLANTED_NAME)
    found = sorted((p.code, p.refs["core"], p.refs["workload_id"]) for p in doc.problems)
    assert found == sorted(PLANTED)
    assert all(p.severity == "error" for p in doc.problems)
