"""Issue #76: the derived-data cache. A second open gives what the first gave (the same `--json` outputs, byte for
byte); an entry is never trusted over the file: a file changed in place with its size and time kept, an entry cut
short, replaced by a symbolic link, owned by another user or written by a newer version are each read as if there
were no cache; the folder is private and bounded."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from explorer.api import open_document
from explorer.cache import documents as derived
from explorer.cache import folder as cache_folder
from explorer.cache import key as cache_key
from explorer.cache.entry import PREFIX, pickled, read_entry, read_header, write_entry
from explorer.cli import main
from explorer.registry import pick_format
from tests.conftest import SAMPLE_DATA, SAMPLES, entry_files, settled, written

SCHEDULE = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
MODEL = SAMPLE_DATA / "residual_blocks.onnx"
KEPT_FORMATS = [SCHEDULE, MODEL]  # one file of each format that keeps its documents


def opened_and_kept(path: Path):
    document = open_document(path)
    if document.offers("graph"):  # a model as the TUI keeps it: inferred and drawn
        document.run_deep_checks()
        document.view.drawn_graph()
    derived.keep(document)
    derived.wait_for_writes()
    return document


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def every_file() -> list[Path]:
    """The bundled samples, and the real ones where they are (a user's clone has no ../shared)."""
    files = sorted(p for p in SAMPLE_DATA.iterdir() if p.suffix in (".json", ".onnx", ".tar", ".txt"))
    if SAMPLES.is_dir():  # a Core ML package is one input (a folder), its members none
        files += sorted(p for p in SAMPLES.rglob("*") if (p.is_file() and not p.name.endswith(".data") and
                                                          ".mlpackage" not in str(p.parent) and p.name != "README.md")
                        or p.suffix == ".mlpackage")  # fmt: skip
    return files


@pytest.mark.parametrize("path", every_file(), ids=lambda p: p.name)
def test_a_second_open_gives_the_first_ones_outputs_byte_for_byte(path, cache_on, capsys, monkeypatch):
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "off")
    without = [run(capsys, command, str(path), "--json") for command in ("info", "check")]
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "on")
    first = [run(capsys, command, str(path), "--json") for command in ("info", "check")]
    kept = written(cache_on)
    second = [run(capsys, command, str(path), "--json") for command in ("info", "check")]
    assert first == without and second == without
    if pick_format(path).cacheable:  # formats that keep their documents
        assert len(kept) == 1 and written(cache_on) == kept  # read back, not written again


def test_a_kept_document_is_read_back_and_answers_as_the_file_does(cache_on):
    first = opened_and_kept(SCHEDULE)
    [entry] = entry_files(cache_on)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600 and stat.S_IMODE(cache_on.stat().st_mode) == 0o700
    slot = derived.slot_for(cache_key_format(), SCHEDULE, False, None)
    second = derived.lookup(slot)
    assert second is not None and second is not first
    assert [p.to_json() for p in second.problems] == [p.to_json() for p in first.problems]
    assert second.summary == first.summary and second.headline == first.headline
    assert (second.schedule.wl_time == first.schedule.wl_time).all() and second.schedule.wl_time.size > 0
    second.schedule.wl_time[0] += 0  # arrays read back are writable (a private mapping), the entry unchanged
    assert derived.lookup(slot) is not None
    assert second.view.describe(("workload", 0)) == first.view.describe(("workload", 0))


def cache_key_format(path: Path = SCHEDULE):
    from explorer.registry import pick_format

    return pick_format(path)


def test_a_file_changed_in_place_with_its_size_and_time_kept_is_read_again(cache_on, tmp_path, monkeypatch):
    path = tmp_path / "s_stschedule.json"
    shutil.copy(SCHEDULE, path)
    before = os.stat(path)
    opened_and_kept(path)
    [entry] = entry_files(cache_on)
    kept_key = read_header(entry)[0].key
    changed = bytearray(path.read_bytes())
    at = changed.index(b'"address" : ') + len(b'"address" : ')  # the file stays valid, its size the same
    changed[at] = ord("9") if changed[at] != ord("9") else ord("8")
    path.write_bytes(bytes(changed))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert not derived.has_entry(pick_format(path), path)  # (its change time moved: said without hashing it)
    second = open_document(path)
    # the entry has the file's name (its identity is unchanged) but not its key: a miss, read from the file
    assert second.cache_slot.path == entry and second._kept_state is None
    assert second.cache_slot.key() not in (None, kept_key)
    derived.keep(second)
    derived.wait_for_writes()
    assert entry_files(cache_on) == [entry] and read_header(entry)[0].key == second.cache_slot.key()  # replaced
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "off")
    fresh = open_document(path)
    assert [p.to_json() for p in second.problems] == [p.to_json() for p in fresh.problems]
    assert second.summary == fresh.summary


def test_a_file_whose_change_time_alone_moved_is_read_from_its_entry_and_kept_again(cache_on, tmp_path):
    """A `chmod` moves the file's change time, not its bytes: the entry answers (its key is the same), and is
    written again with the new change time, so that `has_entry` says yes again for the next opens."""
    path = tmp_path / "s_stschedule.json"
    shutil.copy(SCHEDULE, path)
    opened_and_kept(path)
    found = pick_format(path)
    assert derived.has_entry(found, path)
    before = written(cache_on)
    os.chmod(path, 0o600)
    assert not derived.has_entry(found, path)
    assert derived.lookup(derived.slot_for(found, path, False, None)) is not None  # (the same key: a hit)
    again = open_document(path)
    assert again._kept_state is None  # (to be kept again)
    assert written(cache_on) == before  # (read back, not written yet)
    derived.keep(again)
    derived.wait_for_writes()
    assert written(cache_on) != before and derived.has_entry(found, path)


def damaged(cache_on: Path, damage, path: Path = SCHEDULE) -> None:
    """Keep the file's document (a model's with its shape inference and graph), damage its entry with
    `damage(entry)`, then open again: the file is read (the answer is the file's) and a good entry written in its
    place."""
    expected = opened_and_kept(path)
    [entry] = entry_files(cache_on)
    slot = derived.slot_for(cache_key_format(path), path, False, None)
    damage(entry)
    assert derived.lookup(slot) is None
    again = open_document(path)
    assert again.cache_slot is not None and again._kept_state is None  # read from the file, to be kept again
    assert [p.to_json() for p in again.problems] == [p.to_json() for p in expected.problems]
    derived.keep(again)
    derived.wait_for_writes()
    assert derived.lookup(slot) is not None


@pytest.mark.parametrize("path", KEPT_FORMATS, ids=lambda p: p.suffix)
def test_an_entry_cut_short_is_read_as_no_entry(cache_on, path):
    damaged(cache_on, lambda entry: os.truncate(entry, entry.stat().st_size // 2), path)


@pytest.mark.parametrize("path", KEPT_FORMATS, ids=lambda p: p.suffix)
def test_an_entry_with_a_changed_byte_is_read_as_no_entry(cache_on, path):
    def flip(entry: Path) -> None:
        data = bytearray(entry.read_bytes())
        data[-10] ^= 0xFF
        entry.write_bytes(bytes(data))
        entry.chmod(0o600)

    damaged(cache_on, flip, path)


@pytest.mark.parametrize("path", KEPT_FORMATS, ids=lambda p: p.suffix)
def test_an_entry_replaced_by_a_symbolic_link_is_not_followed(cache_on, tmp_path, path):
    def link(entry: Path) -> None:
        real = tmp_path / "elsewhere.entry"
        shutil.copy(entry, real)
        entry.unlink()
        entry.symlink_to(real)

    damaged(cache_on, link, path)


@pytest.mark.parametrize("path", KEPT_FORMATS, ids=lambda p: p.suffix)
def test_an_entry_of_a_newer_layout_or_a_foreign_file_is_read_as_no_entry(cache_on, path):
    def newer(entry: Path) -> None:
        data = bytearray(entry.read_bytes())
        magic, layout, length = PREFIX.unpack_from(data)
        PREFIX.pack_into(data, 0, magic, layout + 1, length)
        entry.write_bytes(bytes(data))

    damaged(cache_on, newer, path)
    damaged(cache_on, lambda entry: entry.write_bytes(b"not an entry at all"), path)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root (CI runs as root)")
@pytest.mark.parametrize("path", KEPT_FORMATS, ids=lambda p: p.suffix)
def test_an_entry_owned_by_another_user_is_read_as_no_entry(cache_on, path):
    damaged(cache_on, lambda entry: os.chown(entry, 65534, 65534), path)


@pytest.mark.parametrize("path", KEPT_FORMATS, ids=lambda p: p.suffix)
def test_an_entry_others_may_write_is_read_as_no_entry(cache_on, path):
    damaged(cache_on, lambda entry: entry.chmod(0o622), path)


def test_a_folder_that_is_not_private_is_neither_read_nor_written(cache_on, tmp_path):
    cache_on.parent.mkdir(parents=True)
    cache_on.mkdir(mode=0o755)
    cache_on.chmod(0o755)  # (open to others)
    assert derived.slot_for(cache_key_format(), SCHEDULE, False, None) is None
    opened_and_kept(SCHEDULE)
    assert entry_files(cache_on) == []
    cache_on.rmdir()
    elsewhere = tmp_path / "theirs"
    elsewhere.mkdir(mode=0o700)
    cache_on.symlink_to(elsewhere)  # a link where the folder should be: never used
    assert derived.slot_for(cache_key_format(), SCHEDULE, False, None) is None
    opened_and_kept(SCHEDULE)
    assert list(elsewhere.iterdir()) == []


def test_off_by_the_environment_nothing_is_read_or_written(cache_on, monkeypatch, capsys):
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "off")
    opened_and_kept(SCHEDULE)
    assert not cache_on.exists() or entry_files(cache_on) == []
    monkeypatch.setenv(cache_folder.CACHE_VARIABLE, "on")
    assert run(capsys, "info", str(SCHEDULE), "--no-cache")[0] in (0, 1)
    assert entry_files(cache_on) == []
    assert os.environ[cache_folder.CACHE_VARIABLE] == "off"  # --no-cache reaches worker processes and sessions


def test_companions_beside_a_schedule_keep_it_out_of_the_cache(cache_on, tmp_path):
    path = tmp_path / "model_b1_c1_bw16_stschedule.json"
    shutil.copy(SCHEDULE, path)
    (tmp_path / "model_b1_c1_bw16_asm.txt").write_text("")
    assert derived.slot_for(cache_key_format(), path, False, None) is None
    assert derived.slot_for(cache_key_format(), SCHEDULE, False, {"asm": path}) is None


def test_the_least_recently_used_entries_go_first_past_the_cap(cache_on, tmp_path):
    made = []
    for k in range(3):
        path = tmp_path / f"s{k}_stschedule.json"
        shutil.copy(SCHEDULE, path)
        before = set(entry_files(cache_on)) if cache_on.exists() else set()
        opened_and_kept(path)
        [entry] = set(entry_files(cache_on)) - before
        os.utime(entry, (1000 + k, 1000 + k))
        made.append(entry)
    derived.lookup(derived.slot_for(cache_key_format(), tmp_path / "s0_stschedule.json", False, None))  # used now
    total = sum(entry.stat().st_size for entry in made)
    assert cache_folder.evict(cache_on, total - 1) == [made[1]]  # the least recently used
    assert entry_files(cache_on) == sorted([made[0], made[2]])


def test_a_write_that_would_fill_the_disk_is_skipped_with_one_warning(cache_on, monkeypatch):
    said = []
    monkeypatch.setattr(derived, "_warned", derived.threading.Event())
    monkeypatch.setattr(derived.shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    for _ in range(2):
        document = open_document(SCHEDULE)
        derived.keep(document, said.append)
        derived.wait_for_writes()
    assert len(said) == 1 and "was not written: the disk is full" in said[0]
    assert entry_files(cache_on) == []


def test_a_command_about_to_end_leaves_its_entry_to_a_child_of_its_own(cache_on, monkeypatch):
    """`detach` (the console script): no thread writes it here; a child process pickles and writes the entry, and
    the entry's temporary file is locked before keep returns, so an open right after waits for it."""
    document = open_document(SCHEDULE)
    slot = document.cache_slot
    derived.keep(document, detach=True)
    assert not derived.pending_writes()
    assert derived.has_entry(pick_format(SCHEDULE), SCHEDULE)  # (its entry, or its locked temporary file)
    looked_up = []
    monkeypatch.setattr(derived, "lookup", lambda slot, real=derived.lookup: looked_up.append(real(slot)) or
                        looked_up[-1])  # fmt: skip
    again = open_document(SCHEDULE)  # waits for the child's entry instead of reading the file
    assert looked_up == [again] and written(cache_on) and again.problems == document.problems
    assert not zombie_children()  # (the writer, done, was a grandchild: nothing here waits to be reaped)
    assert read_entry(slot.path, slot.key()) is not None and not list(cache_on.glob(".*.partial"))


@pytest.mark.parametrize("variable", ["", "off"])
def test_the_console_script_detaches_its_writes_unless_told_not_to(cache_on, monkeypatch, capsys, variable):
    """The console script's commands keep with `detach`; with IR_EXPLORER_DETACH=off (serve's sessions) they
    write the entry themselves, before they end."""
    asked: list[bool] = []
    monkeypatch.setattr(derived, "keep", lambda document, warn=None, detach=False: asked.append(detach))
    monkeypatch.setenv(cache_folder.DETACH_VARIABLE, variable)
    assert main(["info", str(SCHEDULE)], detach_writes=True) == 0
    assert asked == [variable != "off"]


def zombie_children() -> list[int]:
    """This process's children that ended and were not waited for (Linux: /proc)."""
    found = []
    for listing in Path("/proc/self/task").glob("*/children"):
        for child in listing.read_text().split():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    found.append(int(child))
    return found


def test_a_detached_write_that_would_fill_the_disk_is_skipped_with_one_warning(cache_on, monkeypatch):
    said: list[str] = []
    monkeypatch.setattr(derived, "_warned", derived.threading.Event())
    monkeypatch.setattr(derived.shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    for _ in range(2):
        derived.keep(open_document(SCHEDULE), said.append, detach=True)
    assert len(said) == 1 and "was not written" in said[0] and not list(settled(cache_on).iterdir())


def test_an_open_waits_for_the_entry_another_writer_is_writing(cache_on):
    """While a writer holds the entry's locked temporary file, an open waits and reads what it wrote rather than
    the whole file; the wait ends when the writer's lock goes."""
    import threading
    import time

    from explorer.cache.entry import open_locked, write_parts

    first = open_document(SCHEDULE)
    slot = first.cache_slot
    locked = open_locked(slot.path)
    stream, views = pickled(first)

    def write_later() -> None:
        time.sleep(0.5)
        write_parts(slot.path, slot.key(), slot.source, slot.format, stream, views, locked)

    writer = threading.Thread(target=write_later)
    writer.start()
    try:
        assert not slot.path.exists() and derived.has_entry(pick_format(SCHEDULE), SCHEDULE)
        kept = derived.lookup(slot)
    finally:
        writer.join()
    assert kept is not None and kept.problems == first.problems


def test_a_write_cut_short_is_not_waited_for(cache_on):
    """A temporary file nobody holds (its writer ended) is no entry: the open reads the file at once."""
    import tempfile

    from explorer.cache.entry import wait_for_writer

    document = open_document(SCHEDULE)
    slot = document.cache_slot
    handle, _ = tempfile.mkstemp(dir=cache_on, prefix=f".{slot.path.stem}.", suffix=cache_folder.TEMPORARY_SUFFIX)
    os.close(handle)
    assert not wait_for_writer(slot.path, 30.0) and derived.lookup(slot) is None
    assert not derived.has_entry(pick_format(SCHEDULE), SCHEDULE)


def test_the_hash_is_of_every_byte_and_the_key_of_the_options(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"x" * (cache_key.WINDOW + 5))
    b.write_bytes(b"x" * (cache_key.WINDOW + 4) + b"y")  # differs in the last byte, past the first window
    assert cache_key.content_hash(a) != cache_key.content_hash(b)
    import xxhash

    data = a.read_bytes()  # the size, then each window's hash
    windows = [xxhash.xxh3_128(data[k : k + cache_key.WINDOW]).digest() for k in range(0, len(data), cache_key.WINDOW)]
    assert cache_key.content_hash(a) == xxhash.xxh3_128(len(data).to_bytes(8, "little") + b"".join(windows)).hexdigest()
    assert cache_key.entry_key("f", a, {"strict": False}) != cache_key.entry_key("f", a, {"strict": True})
    assert cache_key.entry_key("f", a, {}) != cache_key.entry_key("g", a, {})


def test_an_entry_round_trips_its_arrays_without_copying_them_into_the_pickle(tmp_path):
    import numpy as np

    kept = {"column": np.arange(1_000_000, dtype=np.int64), "words": ["a", "b"]}
    target = tmp_path / "k.entry"
    size = write_entry(target, "key", "src", "fmt", kept)
    header, _ = read_header(target)
    assert header.pickle[1] < 10_000 and header.buffers[0][1] == 8_000_000 and size == target.stat().st_size
    back = read_entry(target, "key")
    assert back["words"] == ["a", "b"] and (back["column"] == kept["column"]).all()
    assert read_entry(target, "another key") is None


def test_the_cache_command_lists_and_clears(cache_on, capsys):
    opened_and_kept(SCHEDULE)
    code, out = run(capsys, "cache", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["enabled"] and len(listed["entries"]) == 1
    assert listed["entries"][0]["source"] == str(SCHEDULE) and listed["entries"][0]["format"] == "scheduler-ir"
    code, out = run(capsys, "cache")
    assert code == 0 and "1 entry" in out and SCHEDULE.name in out
    code, out = run(capsys, "cache", "--clear", "--json")
    assert json.loads(out)["cleared"] == 1 and json.loads(out)["entries"] == [] and entry_files(cache_on) == []



def test_the_readme_says_what_the_cache_commands_take():
    from explorer.cli_parsers import command_parser, tui_parser
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "ir-explorer cache [--clear] [--json]" in readme and f"{cache_folder.CACHE_VARIABLE}=off" in readme
    for parser in (tui_parser(), command_parser("info"), command_parser("check"), command_parser("serve")):
        assert {"--no-cache", "--cache-size"} <= set(parser._option_string_actions)
    assert {"--clear", "--json"} <= set(command_parser("cache")._option_string_actions)
    assert "`~/.cache/ir-explorer/derived`" in readme and str(cache_folder.DEFAULT_CAP // 2**30) + " GiB" in readme


def test_a_kept_document_is_kept_again_only_when_more_was_worked_out(cache_on):
    from explorer.schedule.pressure import pressure_of

    opened_and_kept(SCHEDULE)  # as opened: nothing worked out since
    first = written(cache_on)
    opened_and_kept(SCHEDULE)  # read back, nothing new: not written again
    assert written(cache_on) == first
    document = open_document(SCHEDULE)
    assert "pressure" not in document.analysed().cached
    assert pressure_of(document).cores  # `info`'s memory pressure, remembered on the analysis
    derived.keep(document)
    derived.wait_for_writes()
    again = written(cache_on)
    assert len(again) == 1 and again != first  # written again, with it
    assert "pressure" in open_document(SCHEDULE).analysed().cached


def test_the_incidents_are_kept_with_their_roles_and_their_problems(cache_on, monkeypatch):
    """Issue #76: the incidents (worked out from the document alone, 0.47 s on the 480 MB file) and the roles named
    for them (read again from the file) come back with the kept document: nothing is grouped or read again, and
    each incident's problems are the document's own (the problems panel and the selection find them by identity)."""
    from explorer.schedule import incidents as incidents_module
    from explorer.schedule.incidents import incidents_of, name_incident_roles

    document = open_document(SCHEDULE)
    first = incidents_of(document, with_roles=False)
    assert first and all(not incident.roles for incident in first)
    name_incident_roles(document, first)  # as the TUI does once its views are up
    derived.keep(document)
    derived.wait_for_writes()
    monkeypatch.setattr(incidents_module, "find_incidents", lambda *args, **kwargs: pytest.fail("grouped again"))
    monkeypatch.setattr(incidents_module, "name_roles", lambda *args, **kwargs: pytest.fail("named again"))
    again = open_document(SCHEDULE)
    again.run_deep_checks()
    second = incidents_of(again, with_roles=False)
    assert [i.to_json() for i in second] == [i.to_json() for i in first] and all(i.roles for i in second)
    kept = {id(problem) for problem in again.problems}
    assert all(id(member) in kept for incident in second for member in incident.members)


def test_kept_incidents_are_unpacked_only_when_asked(cache_on):
    """An open that lists no incidents (`info`) builds none of their objects: they come back packed (their fields
    one msgpack string, their problems the document's own) and are unpacked by `incidents_of`; kept again before
    that, they stay packed; a field msgpack cannot hold keeps them as objects."""
    import pickle

    from explorer.schedule.incidents import KeptIncidents, incidents_of

    document = open_document(SCHEDULE)
    first = incidents_of(document)
    derived.keep(document)
    derived.wait_for_writes()
    again = open_document(SCHEDULE)
    overlaps, kept = again.schedule_analysis.cached["incidents"]
    assert isinstance(kept, KeptIncidents) and kept._found is None and overlaps == len(
        [p for p in again.problems if p.code.endswith("overlap")]
    )
    assert pickle.loads(pickle.dumps(kept))._found is None  # (kept again as it was read)
    second = incidents_of(again)
    assert [i.to_json() for i in second] == [i.to_json() for i in first] and kept.found() is second
    second[0].context = {"a value": object()}  # (not one msgpack holds)
    assert pickle.loads(pickle.dumps(kept))._found is not None


def test_a_schedules_graph_is_not_kept(cache_on):
    """A schedule's graph (168,000 boxes on the 480 MB file) would make every second open read it, `info`'s too:
    the entry holds the document without it, and the graph is built again when asked."""
    document = open_document(SCHEDULE)
    document.view.graph_model()
    derived.keep(document)
    derived.wait_for_writes()
    again = open_document(SCHEDULE)
    assert again._kept_state is not None and not again.view.graph_ready()
    assert again.view.graph_model().n_nodes == document.view.graph_model().n_nodes


def test_a_trace_is_kept_as_columns_and_reads_back_the_same():
    """A ZeBu trace's per-instruction texts, lists and params pickle as columns (a 342 MB trace took 7.8 s as a
    million objects each) and read back equal, row for row."""
    import pickle

    import msgspec

    document = open_document(SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt")
    program = document.view.program
    back = pickle.loads(pickle.dumps(program, protocol=5))
    assert program.n > 10 and back.n == program.n
    for name in ("name", "prefix", "clyr", "c_flyr", "params", "units"):
        assert getattr(back, name) == getattr(program, name), name
    assert all(isinstance(raw, msgspec.Raw) for raw in back.params)
    assert (back.start == program.start).all() and back.path == program.path
    state = program.__getstate__()
    assert "prefix" not in state  # (the name's: worked out again)
    assert state["params"].dtype == np.uint8 and not any(isinstance(v, msgspec.Raw) for v in state.values())
    assert msgspec.json.decode(state["params"], type=list[msgspec.Raw]) == program.params
    names, codes = state["name"]
    assert codes.dtype == np.uint8 and [names[k] for k in codes] == program.name
    stream, buffers = pickled(program)  # the params are one buffer out of the pickle, not copied into it
    assert len(stream) < state["params"].nbytes and state["params"].nbytes in {b.nbytes for b in buffers}


COREML_PACKAGE = SAMPLES / "coreml" / "mil_builder_while_cond_ios16.mlpackage"  # nested blocks (a while, a cond)
needs_coreml_sample = pytest.mark.skipif(not COREML_PACKAGE.is_dir(), reason="../shared/samples is absent")


@needs_coreml_sample
def test_a_core_ml_package_is_kept_with_its_spec_and_nested_blocks_found_again(cache_on, tmp_path, capsys):
    """A package (a folder) is kept: the spec as its protobuf bytes (coremltools' classes do not pickle), each
    block, nested ones too, found again in the parsed spec by its key; the graph and its counts kept."""
    package = tmp_path / COREML_PACKAGE.name
    shutil.copytree(COREML_PACKAGE, package)
    first = opened_and_kept(package)
    [entry] = entry_files(cache_on)
    kept = derived.lookup(first.cache_slot)
    assert kept is not None and kept.view.derived_state() == first.view.derived_state() and kept.view._graph_cache
    model, again = first.view.model, kept.view.model
    assert again.model == model.model  # (equal messages: a map's serialized order is not fixed)
    assert any(block.parent is not None for block in model.blocks.values())
    assert list(again.blocks) == list(model.blocks)
    for key, block in model.blocks.items():
        assert again.blocks[key].proto == block.proto, key
        assert again.blocks[key].producer == block.producer
    outputs = [run(capsys, "graph", str(package), "--json") for _ in range(2)]
    assert outputs[0] == outputs[1] and entry_files(cache_on) == [entry]


@needs_coreml_sample
def test_a_package_member_changed_in_place_is_another_key(cache_on, tmp_path):
    """A folder's key covers each member's bytes: weight.bin changed in place, its size and time kept, is a
    miss under the same name; a member added is another name."""
    package = tmp_path / COREML_PACKAGE.name
    shutil.copytree(COREML_PACKAGE, package)
    first = opened_and_kept(package)
    name, kept_key = first.cache_slot.path, first.cache_slot.key()
    weights = next(package.rglob("weight.bin"))
    before = os.stat(weights)
    changed = bytearray(weights.read_bytes())
    changed[-1] ^= 0xFF
    weights.write_bytes(bytes(changed))
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = open_document(package)
    assert second.cache_slot.path == name and second._kept_state is None  # the same name, read from the folder
    assert second.cache_slot.key() not in (None, kept_key)
    (package / "notes.txt").write_text("added")
    assert derived.slot_for(pick_format(package), package, False, None).path != name


def test_a_folders_hash_opens_no_link_nor_special_file(tmp_path):
    """Links in a folder are hashed as their targets' names (never followed: /dev/zero, a FIFO or a file outside
    it are not read) and a FIFO as its kind; a regular file by its bytes."""
    folder = tmp_path / "package"
    folder.mkdir()
    (folder / "data.bin").write_bytes(b"abc")
    os.mkfifo(folder / "pipe")
    os.symlink(folder / "pipe", folder / "to_pipe")
    os.symlink("/dev/zero", folder / "zero")
    first = cache_key.content_hash(folder)
    (folder / "data.bin").write_bytes(b"abd")
    cache_key._hashes.clear()  # (remembered per process by time stamps: these writes may share one clock tick)
    second = cache_key.content_hash(folder)
    os.unlink(folder / "zero")
    os.symlink("/dev/null", folder / "zero")
    cache_key._hashes.clear()
    assert len({first, second, cache_key.content_hash(folder)}) == 3
