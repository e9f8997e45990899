"""Files over 2 GiB (issue #43): one `pread` returns at most 2,147,479,552 bytes on Linux, so every whole-file or
large-span read loops until it has what it asked for. A sparse file (made without using the disk) is read
through each reading path; its last bytes prove the read reached the end."""

from __future__ import annotations

import os

import pytest

from explorer.file_spans import FileChanged, FileIdentity, FileSpans, read_fully

SIZE = 2**31 + 8192  # past the one-call limit (2,147,479,552) and past 2 GiB
END = b'"end of the file"'


@pytest.fixture(scope="module")
def sparse(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "sparse.bin"
    with path.open("wb") as handle:
        handle.truncate(SIZE)
        handle.seek(SIZE - len(END))
        handle.write(END)
    yield path
    path.unlink()


def stamp_of(path):
    return FileIdentity.of(path.stat())


def test_file_spans_read_a_whole_file_over_2_gib(sparse):
    data = FileSpans(sparse, {}, stamp_of(sparse)).read(0, SIZE)
    assert len(data) == SIZE and bytes(data[-len(END) :]) == END
    del data


def test_read_fully_across_the_2_gib_mark_and_at_the_end(sparse):
    fd = os.open(sparse, os.O_RDONLY)
    try:
        across = read_fully(fd, 2**31 - 16, 32)
        assert across == bytes(32)
        tail = read_fully(fd, SIZE - 100, 1000)  # asks past the end: the bytes there are, no more
        assert len(tail) == 100 and tail.endswith(END)
        big = read_fully(fd, 1, SIZE - 1)  # a span larger than one call returns, starting off a page boundary
        assert len(big) == SIZE - 1 and bytes(big[-len(END) :]) == END
    finally:
        os.close(fd)


def test_the_scheduler_reader_reads_a_file_over_2_gib_whole(sparse):
    from explorer.formats.scheduler_ir.load_progress import read_all

    class Meter:
        def __init__(self):
            self.seen = 0

        def stage(self, label, share, done, total):
            self.seen = done

    meter = Meter()
    with sparse.open("rb") as handle:
        data = read_all(handle, SIZE, meter)
    assert len(data) == SIZE and bytes(data[-len(END) :]) == END and meter.seen == SIZE
    del data


def test_a_file_that_shrank_since_it_was_opened_is_said_to_have_changed(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    spans = FileSpans(path, {}, stamp_of(path))
    path.write_bytes(b"x" * 10)
    with pytest.raises(FileChanged, match="changed on disk"):
        spans.read(0, 100)
