"""The bookmarks sidecar never loses a reviewer's notes: atomic saves that survive a kill at any point, merges
between concurrent writers, entries it cannot read kept verbatim, version-1 files migrated, and a file that is
not ours left alone."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.bookmarks import (
    BookmarksError,
    add_bookmark,
    delete_bookmark,
    load,
    new_bookmark,
    schema_version,
)
from tests.conftest import ROOT

WRITER = """
import sys
from pathlib import Path
from explorer.bookmarks import add_bookmark, new_bookmark
path, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for k in range(count):
    add_bookmark(path, Path("model.onnx"), new_bookmark(("node", "graph", k), "tree", f"{who} {k}", f"n{k}", who))
    print(k, flush=True)
"""


def writer(path: Path, who: str, count: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), who, str(count)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )


def notes(path: Path) -> list[str]:
    return [b.note for b in load(path).bookmarks]


def test_a_kill_in_the_middle_of_saving_never_loses_a_saved_bookmark(tmp_path):
    path = tmp_path / "model.onnx.bookmarks.json"
    rng = random.Random(7)
    confirmed: list[str] = []
    for attempt in range(12):
        process = writer(path, f"run{attempt}", 10_000)
        first = process.stdout.readline()  # its first save returned: up and saving, however slow the start
        time.sleep(rng.uniform(0.0, 0.45))  # then somewhere inside a later save
        process.send_signal(signal.SIGKILL)
        out, _ = process.communicate()
        confirmed += [f"run{attempt} {k}" for k in (first + out).split()]  # adds that returned before the kill
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)  # always a whole, valid file
        assert data["schema_version"] == schema_version()
        saved = set(notes(path))
        assert set(confirmed) <= saved, "a bookmark whose save had returned is gone"
    assert confirmed  # the writers did get through some saves
    add_bookmark(path, Path("model.onnx"), new_bookmark(("summary",), "tree", "after", "Summary", "ana"))
    assert not list(tmp_path.glob(".*.tmp"))  # a killed writer's temporary file is cleared by the next save


def test_two_writers_at_once_keep_all_two_hundred(tmp_path):
    path = tmp_path / "model.onnx.bookmarks.json"
    first, second = writer(path, "ana", 100), writer(path, "ben", 100)
    assert first.wait(120) == 0 and second.wait(120) == 0
    saved = notes(path)
    assert len(saved) == 200
    assert {f"ana {k}" for k in range(100)} | {f"ben {k}" for k in range(100)} == set(saved)
    assert len({b.id for b in load(path).bookmarks}) == 200  # stable, distinct ids
    assert {b.author for b in load(path).bookmarks} == {"ana", "ben"}


def test_entries_this_version_cannot_read_are_kept_verbatim(tmp_path):
    path = tmp_path / "x.bookmarks.json"
    strange = {"ref": "not a list", "note": 3, "from_the_future": {"keep": ["me"]}}
    path.write_text(json.dumps({"schema_version": 2, "file": "x", "bookmarks": [strange]}))
    loaded = load(path)
    assert loaded.bookmarks == [] and loaded.unreadable == 1 and "kept" in loaded.problems[0]
    added = add_bookmark(path, Path("x"), new_bookmark(("summary",), "tree", "look here", "Summary", "ana"))
    assert [b.note for b in added.bookmarks] == ["look here"]
    assert json.loads(path.read_text())["bookmarks"][0] == strange  # untouched, in its place
    gone = delete_bookmark(path, Path("x"), added.bookmarks[0].id)
    assert gone.bookmarks == [] and json.loads(path.read_text())["bookmarks"] == [strange]


def test_version_one_files_are_migrated(tmp_path):
    path = tmp_path / "x.bookmarks.json"
    old = {"ref": ["tensor-id", 10], "view": "layout", "note": "window", "label": "tensor 10"}
    path.write_text(json.dumps({"version": 1, "file": "x", "bookmarks": [old]}))
    first = load(path).bookmarks[0]
    assert first.ref == ("tensor-id", 10) and first.id.startswith("v1-") and load(path).bookmarks[0].id == first.id
    add_bookmark(path, Path("x"), new_bookmark(("summary",), "tree", "second", "Summary", "ben"))
    data = json.loads(path.read_text())
    assert data["schema_version"] == schema_version() and data["bookmarks"][0]["id"] == first.id
    assert delete_bookmark(path, Path("x"), first.id).bookmarks[0].note == "second"


def test_a_file_that_is_not_ours_is_never_overwritten(tmp_path):
    path = tmp_path / "x.bookmarks.json"
    path.write_text("my own notes, not JSON")
    with pytest.raises(BookmarksError, match="not a bookmarks file"):
        add_bookmark(path, Path("x"), new_bookmark(("summary",), "tree", "n", "l", "a"))
    assert path.read_text() == "my own notes, not JSON"
    newer = tmp_path / "y.bookmarks.json"
    newer.write_text(json.dumps({"schema_version": 99, "bookmarks": []}))
    with pytest.raises(BookmarksError, match="newer"):
        add_bookmark(newer, Path("y"), new_bookmark(("summary",), "tree", "n", "l", "a"))


def test_an_unwritable_place_says_so(tmp_path):
    """Where the sidecar cannot be written (here its folder is a file; as another user, a read-only folder)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with pytest.raises(BookmarksError, match="cannot save bookmarks"):
        add_bookmark(blocker / "x.bookmarks.json", Path("x"), new_bookmark(("s",), "tree", "n", "l", "a"))
    assert blocker.read_text() == "x"


def mark(note: str = "n") -> object:
    return new_bookmark(("summary",), "tree", note, "l", "a")


def test_the_input_and_json_that_is_not_a_bookmarks_file_are_never_written(tmp_path):
    """`--bookmarks model.json` once turned an ARK model into a bookmarks file."""
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"Nodes": [], "bookmarks_note": "a model, not bookmarks"}))
    before = model.read_bytes()
    with pytest.raises(BookmarksError, match="input file"):
        add_bookmark(model, model, mark())
    link = tmp_path / "link.json"
    link.symlink_to(model)
    with pytest.raises(BookmarksError, match="input file"):
        add_bookmark(link, model, mark())  # the input reached through a link
    with pytest.raises(BookmarksError, match="not a bookmarks file"):
        add_bookmark(model, tmp_path / "other.onnx", mark())  # an object without a bookmarks list
    for version in ('"3"', "3.0", "true", "null"):
        odd = tmp_path / f"odd{len(version)}.json"
        odd.write_text(f'{{"schema_version": {version}, "bookmarks": []}}')
        text = odd.read_text()
        with pytest.raises(BookmarksError, match="schema_version"):
            add_bookmark(odd, model, mark())  # never read as version 1 and downgraded
        assert odd.read_text() == text
    assert model.read_bytes() == before


def test_unknown_top_level_keys_are_kept_and_a_linked_sidecar_is_written_through(tmp_path):
    shared = tmp_path / "team" / "review.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps({"schema_version": 2, "file": "m.onnx", "bookmarks": [], "owner": "ana",
                                  "settings": {"colour": "red"}}))  # fmt: skip
    sidecar = tmp_path / "m.onnx.bookmarks.json"
    sidecar.symlink_to(shared)
    add_bookmark(sidecar, tmp_path / "m.onnx", mark("first"))
    assert sidecar.is_symlink()  # still a link, and the target got the bookmark
    data = json.loads(shared.read_text())
    assert data["owner"] == "ana" and data["settings"] == {"colour": "red"}
    assert [entry["note"] for entry in data["bookmarks"]] == ["first"]


def test_a_note_that_is_not_text_is_a_clear_error_and_nothing_is_written(tmp_path):
    from explorer.bookmarks import UnsavableNote

    path = tmp_path / "x.bookmarks.json"
    add_bookmark(path, Path("x"), mark("kept"))
    before = path.read_bytes()
    with pytest.raises(UnsavableNote, match="not text"):
        add_bookmark(path, Path("x"), mark("bad \udc80 byte"))
    assert path.read_bytes() == before


def test_the_sidecar_keeps_the_mode_of_the_file_it_replaces_else_the_umasks(tmp_path):
    import os
    import stat

    new = tmp_path / "new.bookmarks.json"
    add_bookmark(new, Path("x"), mark())
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~mask  # not mkstemp's 0600
    shared = tmp_path / "shared.bookmarks.json"
    add_bookmark(shared, Path("x"), mark())
    shared.chmod(0o664)
    add_bookmark(shared, Path("x"), mark("again"))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o664


def test_a_planted_fifo_folder_lock_or_dangling_link_is_refused_not_waited_on(tmp_path, monkeypatch):
    """Issue #44 item 7: a FIFO as the sidecar is refused at once (it used to block the reader until someone
    wrote to it); another process's lock on the folder makes a save give up after LOCK_SECONDS with a message;
    a dangling link planted as the sidecar is never followed to create its target."""
    import fcntl
    import os

    import explorer.bookmarks as bookmarks_module
    from explorer.bookmarks import BookmarksError, load

    source = tmp_path / "model.onnx"
    source.write_bytes(b"input")
    fifo = tmp_path / "fifo.bookmarks.json"
    os.mkfifo(fifo)
    opened: list[int] = []  # the flags of every open of the FIFO: a blocking one would wait for a writer
    real_open = os.open

    def watching_open(path, flags, *args, **kwargs):
        if Path(path) == fifo:
            opened.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", watching_open)
    with pytest.raises(BookmarksError, match="not a regular file"):
        load(fifo)
    with pytest.raises(BookmarksError, match="not a regular file"):
        add_bookmark(fifo, source, new_bookmark(("x",), "tree", "note", "x", "me"))
    monkeypatch.setattr(os, "open", real_open)
    assert opened and all(flags & os.O_NONBLOCK for flags in opened)

    monkeypatch.setattr(bookmarks_module, "LOCK_SECONDS", 0.3)
    sidecar = tmp_path / "model.onnx.bookmarks.json"
    held = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # as another user's process would hold it
        with pytest.raises(BookmarksError, match="held the bookmarks lock"):
            add_bookmark(sidecar, source, new_bookmark(("x",), "tree", "note", "x", "me"))
    finally:
        os.close(held)
    assert not sidecar.exists()
    add_bookmark(sidecar, source, new_bookmark(("x",), "tree", "note", "x", "me"))  # free again: saved
    assert [b.note for b in load(sidecar).bookmarks] == ["note"]

    target = tmp_path / "elsewhere" / "planted.json"
    (tmp_path / "elsewhere").mkdir()
    dangling = tmp_path / "other.onnx.bookmarks.json"
    dangling.symlink_to(target)
    with pytest.raises(BookmarksError, match="does not exist"):
        add_bookmark(dangling, source, new_bookmark(("x",), "tree", "note", "x", "me"))
    assert not target.exists()


def test_a_save_never_writes_what_the_reader_refuses(tmp_path, monkeypatch):
    """Issue #60 item 7: a 55 MB file from another reviewer was saved back indented at 88 MB, over the reader's
    cap, and every later session refused it. Indented while it fits, compact when that fits, else refused."""
    from explorer import bookmarks

    path, source = tmp_path / "m.json.bookmarks.json", tmp_path / "m.json"
    entries = [{"ref": ["workload", k], "view": "tree", "note": "x" * 40, "label": f"w{k}", "id": f"{k:08x}"}
               for k in range(200)]  # fmt: skip
    path.write_text(json.dumps({"schema_version": 2, "file": "m.json", "bookmarks": entries}))
    compact = path.stat().st_size
    monkeypatch.setattr(bookmarks, "MAX_SIDECAR_BYTES", compact + 400)  # indented would be larger
    add_bookmark(path, source, mark("one more"))
    saved = path.read_bytes()
    assert len(saved) <= compact + 400 and b"\n  " not in saved  # compact
    assert len(bookmarks.load(path).bookmarks) == 201
    before = path.read_bytes()
    monkeypatch.setattr(bookmarks, "MAX_SIDECAR_BYTES", len(before) + 10)  # no room for another
    with pytest.raises(BookmarksError, match=r"over the .* a bookmarks file may hold; nothing was saved"):
        add_bookmark(path, source, mark("too many"))
    assert path.read_bytes() == before
    monkeypatch.setattr(bookmarks, "MAX_SIDECAR_BYTES", 64 * 2**20)
    add_bookmark(path, source, mark("room again"))
    assert b'\n  "bookmarks": [' in path.read_bytes()  # indented as people read it, when it fits


def test_the_bookmarks_list_shows_the_first_two_thousand_and_says_how_many_more():
    from explorer.bookmarks import Bookmark
    from widgets.review_screens import MAX_LISTED, BookmarksScreen

    many = [Bookmark(("workload", k), "tree", f"note {k}", f"w{k}") for k in range(MAX_LISTED + 500)]
    options = BookmarksScreen(many, on_delete=None)._options()
    assert len(options) == MAX_LISTED + 1
    assert str(options[-1].prompt) == "… and 500 more, not listed (the first 2,000 are)" and options[-1].disabled


def test_a_read_stops_when_asked(tmp_path):
    """The TUI's read of the sidecar stops when the app quits (300,000 bookmarks held `q` for 11 s)."""
    from dataclasses import asdict

    from explorer.bookmarks import Stopped, load, new_bookmark

    path = tmp_path / "x.json.bookmarks.json"
    entries = [asdict(new_bookmark(("workload", k), "tree", f"n{k}", "w", "me")) for k in range(5_000)]
    path.write_text(json.dumps({"schema_version": 2, "bookmarks": entries}))
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(Stopped):
        load(path, stop)
    assert len(asked) == 3  # asked every 1,000 entries
    assert [b.note for b in load(path).bookmarks][:3] == ["n0", "n1", "n2"]
