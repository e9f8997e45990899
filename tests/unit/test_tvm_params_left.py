"""TVM params are never held (issue #56): indexed from their headers as the member streams by, each value read
from the bundle when asked, in a plain tar, a compressed one and a folder; hostile params are located problems."""

from __future__ import annotations

import gzip
import os
import struct

import numpy as np
import pytest

from explorer.api import open_document
from explorer.errors import LoadError
from explorer.formats.tvm_mlf.params import MAX_NAME_BYTES, array_stats, parse_params
from explorer.formats.tvm_mlf.samples import bundle_members, tar_bytes

PARAMS = "parameters/classifier.params"


def write_bundle(tmp_path, kind: str, members: dict[str, bytes] | None = None):
    members = members or bundle_members()
    if kind == "folder":
        root = tmp_path / "bundle"
        for name, data in members.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        return root
    path = tmp_path / ("bundle.tar.gz" if kind == "gz" else "bundle.tar")
    data = tar_bytes(members)
    path.write_bytes(gzip.compress(data, mtime=0) if kind == "gz" else data)
    return path


@pytest.mark.parametrize("kind", ["tar", "gz", "folder"])
def test_params_are_indexed_not_held_and_their_values_read_when_asked(tmp_path, kind):
    data = bundle_members()[PARAMS]
    path = write_bundle(tmp_path, kind)
    document = open_document(path)
    bundle = document.view.mlf.bundle
    assert PARAMS not in bundle.members and bundle.left[PARAMS].size == len(data)
    module = document.view.modules[0]
    assert module.params == parse_params(data)  # the same arrays, offsets included
    where = {"gz": None, "folder": 0, "tar": path.read_bytes().find(data) if kind == "tar" else -1}[kind]
    assert bundle.left[PARAMS].data_offset == where  # read again by pread where the bytes lie as they are
    for k, array in enumerate(module.params):
        assert document.describe(("param", 0, k))[1].rows == list(array_stats(data, array).items())
    assert bundle.head(PARAMS, 8) == data[:8] and bundle.size(PARAMS) == len(data)
    assert document.summary["members"] == len(bundle_members())


def test_a_bundle_changed_since_it_was_opened_is_not_read_again(tmp_path):
    path = write_bundle(tmp_path, "tar")
    document = open_document(path)
    os.utime(path, ns=(1, 1))
    rows = dict(document.describe(("param", 0, 0))[1].rows)
    assert rows == {"values": "not read: the file changed since it was opened: open it again"}


def test_a_name_longer_than_a_name_can_be_is_a_located_problem(tmp_path):
    members = bundle_members()
    data = bytearray(members[PARAMS])
    struct.pack_into("<Q", data, 24, MAX_NAME_BYTES + 1)  # the first name's length
    members[PARAMS] = bytes(data) + bytes(MAX_NAME_BYTES + 1)
    document = open_document(write_bundle(tmp_path, "gz", members))
    (problem,) = [p for p in document.problems if p.code == "bad-params"]
    assert problem.location == f"{PARAMS}: byte 24" and "over 65,536" in problem.message
    assert document.view.modules[0].params == []


def test_a_tar_cut_inside_the_params_headers_names_the_member(tmp_path):
    path = write_bundle(tmp_path, "tar")
    data = path.read_bytes()
    start = data.index(bundle_members()[PARAMS][:16])
    path.write_bytes(data[: start + 40])
    with pytest.raises(LoadError) as caught:
        open_document(path)
    assert caught.value.location == f"tar member './{PARAMS}'" and "truncated" in caught.value.message


def test_a_big_params_file_is_indexed_without_reading_its_data(tmp_path, monkeypatch):
    """Only the headers are read: a 64 MiB array's bytes are skipped (seek), never returned by a read."""
    from explorer.formats.tvm_mlf import archive

    members = bundle_members()
    weights = {"big": np.zeros(16 << 20, dtype=np.float32)}
    from explorer.formats.tvm_mlf.samples import params_bytes

    members[PARAMS] = params_bytes(weights)
    path = write_bundle(tmp_path, "tar", members)
    read: list[int] = []
    real = archive.index_params

    def counting(read_at, size):
        if size != len(members[PARAMS]):
            return real(read_at, size)
        return real(lambda offset, length: read.append(length) or read_at(offset, length), size)

    monkeypatch.setattr(archive, "index_params", counting)
    document = open_document(path)
    # the list header 16, count 8, name length 8, "big" 3, array count 8, array header 28, dtype 4, shape 8, size 8
    assert read == [16, 8, 8, 3, 8, 28, 4, 8, 8]
    assert document.view.modules[0].params[0].nbytes == 64 << 20
