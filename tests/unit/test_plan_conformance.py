"""Issue #75, its first part: each instruction that writes L2 is checked against its workload's L2 snapshot;
a destination in no entry is a located warning. The real ResNet-34 pipelines come out clean, in bytes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import numpy as np

from explorer.formats.gemini_trace.operands import format_bytes, operands
from explorer.formats.gemini_trace.program import read_program
from explorer.schedule.plan_conformance import _nearest
from tests.conftest import ROOT, samples_dir


def check(schedule, *companions: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "explorer", "check", str(schedule), *companions, "--json"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def pipeline(batch: str):
    folder, schedules = samples_dir("gemini_pipeline"), samples_dir("scheduler_ir")
    return (schedules / f"int8_resnet34.sim_quantized_{batch}_c1_bw16_stschedule.json",
            folder / f"int8_resnet34.sim_quanti_{batch}_c1_bw16_asm.txt",
            folder / f"int8_resnet34.sim_quantized_{batch}_c1_bw16_sim.txt")


def asm_lines() -> list[str]:
    """The real b1 assembly's lines (0-based here; the file's line numbers are one more)."""
    return pipeline("b1")[1].read_text().split("\n")


def checked_with(tmp_path, destinations: dict[int, str], field: str = "DTaddr") -> dict:
    """`check --json` of the real b1 schedule beside its assembly with the `field` at these lines replaced."""
    return edited(tmp_path, {at: (rf"'{field}': [^,]+,", f"'{field}': {value},") for at, value in destinations.items()})


def edited(tmp_path, edits: dict[int, tuple[str, str]]) -> dict:
    """`check --json` of the real b1 schedule beside its assembly with, at each line, a pattern replaced once."""
    schedule, asm, _ = pipeline("b1")
    shutil.copy(schedule, tmp_path / "s.json")
    lines = asm.read_text().split("\n")
    for at, (pattern, replacement) in edits.items():
        lines[at], done = re.subn(pattern, replacement, lines[at], count=1)
        assert done == 1, lines[at]
    (tmp_path / "a_asm.txt").write_text("\n".join(lines))
    return check(tmp_path / "s.json", "--asm", str(tmp_path / "a_asm.txt"))


def test_the_instructions_that_write_l2_and_where():
    _, asm, _ = pipeline("b1")
    program = read_program(asm, asm.read_bytes(), False)
    where = operands(program)
    found, wl0, unreadable = where.l2_destination, where.wl0_destination, where.unreadable
    assert unreadable == {} and where.unreadable_size == {}
    assert int((wl0 >= 0).sum()) == program.name.count("lw_mov") == 108
    checked: dict[str, int] = {}
    for name, byte in zip(program.name, found.tolist(), strict=True):
        if byte >= 0:
            checked[name] = checked.get(name, 0) + 1
    assert checked == {"lda_mov": 4, "ldw_mov": 17, "pe_conv": 108, "vp_self": 30, "vp_pool": 2, "dt_cal": 1}
    assert int(found[program.name.index("lda_mov")]) == 401408  # DTaddr, bytes
    sized: dict[str, int] = {}
    for name, size in zip(program.name, where.l2_destination_size.tolist(), strict=True):
        if size >= 0:
            sized[name] = sized.get(name, 0) + 1
    assert sized == {"lda_mov": 4, "ldw_mov": 17, "pe_conv": 108, "vp_self": 30, "vp_pool": 2, "dt_cal": 1}
    conv = program.name.index("pe_conv")  # pe_cfg_tp's Tile [1, 64, 3, 112, 112]: N·K·H·W outputs × INT8
    assert int(where.l2_destination_size[conv]) == 1 * 64 * 112 * 112
    assert int(where.l2_destination_size[program.name.index("lda_mov")]) == 3 * 224 * 224 * 2  # Tile × FP16
    assert int(where.l2_destination_size[program.name.index("ldw_mov")]) == 256 * 256 * 3 * 3  # Wsize × INT8
    reads = {name for name, byte in zip(program.name, where.l2_source.tolist(), strict=True) if byte >= 0}
    assert reads == {"sta_mov", "vp_self", "pe_conv", "dt_cal", "vp_pool"}
    pools = [k for k, name in enumerate(program.name) if name == "vp_pool"]  # the stem's max pool and the head's
    # average: STaddr 394,176 is (-112 - 1) pixels of 64 channels before conv1's output (tensor 3, 802,816 bytes)
    assert [(int(where.l2_source[k]), int(where.l2_source_size[k])) for k in pools] == [(401408, 802816),
                                                                                        (50176, 25088)]
    assert (where.l2_source_size[where.l2_source >= 0] > 0).all()
    transform = program.name.index("dt_cal")  # Tile [1, 512, 7, 7] × INT8, read and written: tensors 92 and 93 exactly
    assert [int(a[transform]) for a in (where.l2_source, where.l2_source_size, where.l2_destination,
                                        where.l2_destination_size)] == [2501120, 25088, 100352, 25088]  # fmt: skip
    # the first convolution reads its whole input: STaddr -5400 is the padded window's corner, (-3·224 - 3) pixels
    # of 8 grouped channels (3 used) before byte 0; 1 image × 8 channels × 224 × 224 × INT8
    assert (int(where.l2_source[conv]), int(where.l2_source_size[conv])) == (0, 8 * 224 * 224)
    assert int(where.l2_source[program.name.index("sta_mov")]) == 250880  # STaddr, bytes
    assert int(where.l2_source_size[program.name.index("sta_mov")]) == 256 * 14 * 14  # Tile × INT8


TILED = """\
[vp_cfg_fm, {'slyr': 66, 'clyr': [], 's_flyr': 1, 'c_flyr': [], 'wkl': 68, 'tile': 0}, {'IDF': <DataFmt.INT8: 1>, \
'ODF': <DataFmt.INT8: 1>, 'STile': [2048, 2, 3], 'DTile': [2048, 7, 7]}]
[vp_cfg_tp, {'slyr': 66, 'clyr': [], 's_flyr': 1, 'c_flyr': [], 'wkl': 68, 'tile': 0}, {'STRIDE': [1, 1], \
'KERNEL': [1, 1], 'Tile': [2048, 2, 3]}]
[vp_self, {'slyr': 66, 'clyr': [], 's_flyr': 1, 'c_flyr': [], 'wkl': 68, 'tile': 0}, {'STaddr': 12288, \
'STaddr1': 0, 'DTaddr': 40960}]
[pe_cfg_fm, {'slyr': 67, 'clyr': [], 's_flyr': 1, 'c_flyr': [], 'wkl': 82, 'tile': 0}, {'SF': <DataFmt.INT8: 1>, \
'DF': <DataFmt.INT8: 1>, 'STile': [2048, 7, 7], 'DTile': [512, 7, 7]}]
[pe_cfg_pm, {'slyr': 67, 'clyr': [], 's_flyr': 1, 'c_flyr': [], 'wkl': 82, 'tile': 0}, {'STRIDE': [1, 1]}]
[pe_cfg_tp, {'slyr': 67, 'clyr': [], 's_flyr': 1, 'c_flyr': [], 'wkl': 82, 'tile': 0}, {'KERNEL': [1, 1], \
'Tile': [1, 128, 2048, 3, 7]}]
[pe_conv, {'slyr': 67, 'clyr': [], 's_flyr': 1, 'c_flyr': [], 'wkl': 82, 'tile': 0}, {'SPHI': 0, 'SPWI': 0, \
'STaddr': 90112, 'DTaddr': 14336}]
"""


def test_a_tile_spans_its_place_in_the_output_frame_and_a_row_tile_reads_its_window(tmp_path):
    """Issue #75 on the public ResNet-50 b1 pipeline (these lines are its 587-589 and 656-668, trimmed): its last
    layer runs in tiles of 2-4 of 7 rows and 128 of 512 channels. A vector op writes its Tile [2048, 2, 3] into the
    frame DTile [2048, 7, 7], channels innermost: from DTaddr to the tile's last element, ((2-1)·7 + 3-1)·2048 + 2048
    bytes (the whole DTile, 100,352 bytes, ran past tensor 141's entry on 7 of its vp_self). A convolution's
    K-tile of 128 channels × 3 × 7 spans ((3-1)·7 + 7-1)·512 + 128 bytes of its 512-channel frame, and reads the
    3 input rows its 1×1 window needs, not the whole 7-row input (which ran past on 4 convolutions)."""
    path = tmp_path / "tiled_asm.txt"
    path.write_text(TILED)
    program = read_program(path, path.read_bytes(), False)
    where = operands(program)
    vector, conv = program.name.index("vp_self"), program.name.index("pe_conv")
    assert (int(where.l2_destination[vector]), int(where.l2_destination_size[vector])) == (40960, 9 * 2048 + 2048)
    assert (int(where.l2_destination[conv]), int(where.l2_destination_size[conv])) == (14336, 20 * 512 + 128)
    assert (int(where.l2_source[conv]), int(where.l2_source_size[conv])) == (90112, 2048 * 3 * 7)


def test_the_span_of_a_tile_in_its_frame():
    from explorer.formats.gemini_trace.operands import framed_span

    assert framed_span(1, [2048, 7, 7], [2048, 7, 7]) == 2048 * 49  # the whole frame: its elements
    assert framed_span(2, [4, 1, 1], [8, 2, 3]) == (1 * 2 * 3 + 0) * 8 + 4  # the second image's first pixel
    assert framed_span(1, [9, 1, 1], [8, 2, 3]) is None  # a tile wider than its frame
    assert framed_span(1, [1, -1, 1], [8, 2, 3]) is None and framed_span(1, [1, 1], [8, 2, 3]) is None


def test_data_formats_in_bytes():
    assert [format_bytes(v) for v in ("<DataFmt.INT8: 1>", "<DataFmt.FP16: 3>", "<DataFmt.FP32: 5>")] == [1, 2, 4]
    assert format_bytes("<DataFmt.FP8E4: 9>") is None and format_bytes(3) is None


def test_a_load_that_runs_past_its_entry_and_a_store_that_reads_outside_the_plan_are_located_warnings(tmp_path):
    """Issue #75, sizes and sources: lda_mov's range (Tile × the format lda_cfg set) lies in one entry on the
    real pipelines (b1: 4 of 4, b4: 1 of 1), as do ldw_mov's (Wsize × DF: 17 of 17, 7 of 7), the vector ops'
    (DTile × ODF: 32 of 32, 128 of 128), and the stores' L2 sources (sta_mov: Tile × DF, 4 of 4, 1 of 1). A
    load made wider than its tensor, and a store moved off every tensor, are each a warning at its line."""
    lines = asm_lines()
    load = next(k for k, line in enumerate(lines) if line.startswith("[lda_mov"))
    store = next(k for k, line in enumerate(lines) if line.startswith("[sta_mov"))
    said = edited(tmp_path, {load: (r"'Tile': \[1, 3, 224, 224\]", "'Tile': [1, 5, 224, 224]"),
                             store: (r"'STaddr': \d+", "'STaddr': 9000000")})  # fmt: skip
    found = {p["location"]: p["message"] for p in said["problems"] if p["code"] == "address-outside-plan"}
    assert found[f"a_asm.txt: line {load + 1}"] == (
        f"lda_mov (line {load + 1}) writes L2 bytes [401,408, 903,168), which run 100,352 bytes past the end of "
        "tensor 0's entry [401,408, 802,816) in core 0 workload 0's snapshot: no one entry holds them")
    assert found[f"a_asm.txt: line {store + 1}"].startswith(
        f"sta_mov (line {store + 1}) reads L2 byte 9,000,000, in no L2 entry of core 0 workload 34's snapshot; "
        "nearest: tensor ")
    assert len(found) == 2


def test_a_size_that_is_none_is_a_located_warning_and_its_first_byte_is_still_checked(tmp_path):
    lines = asm_lines()
    loads = [k for k, line in enumerate(lines) if line.startswith("[lda_mov")][:2]
    said = edited(tmp_path, {loads[0]: (r"'Tile': \[[^]]*\]", "'Tile': [1, -3, 224, 224]"),
                             loads[1]: (r"'Tile': \[[^]]*\]", "'Tile': [4294967296, 4294967296, 4]")})  # fmt: skip
    bad = [p for p in said["problems"] if p["code"] == "bad-address"]
    assert [p["location"] for p in bad] == [f"a_asm.txt: line {k + 1}" for k in loads]
    assert bad[0]["message"] == (f"lda_mov (line {loads[0] + 1}) names size Tile [1, -3, 224, 224], which is no "
                                 "number of bytes (whole dims from 0, their product under 2**62); only its first "
                                 "byte is checked against the plan")  # fmt: skip
    assert [p for p in said["problems"] if p["code"] == "address-outside-plan"] == []


def test_the_real_pipelines_write_l2_only_where_the_plan_put_tensors():
    for batch in ("b1", "b4"):
        schedule, asm, trace = pipeline(batch)
        said = check(schedule, "--asm", str(asm), "--trace", str(trace))
        assert [p for p in said["problems"] if p["code"] == "address-outside-plan"] == [], batch


def test_a_destination_outside_the_snapshot_is_a_located_warning(tmp_path):
    at = next(k for k, line in enumerate(asm_lines()) if line.startswith("[pe_conv"))
    said = checked_with(tmp_path, {at: "9000000"})
    [found] = [p for p in said["problems"] if p["code"] == "address-outside-plan"]
    assert found["severity"] == "warning" and found["location"] == f"a_asm.txt: line {at + 1}"
    assert found["message"] == (f"pe_conv (line {at + 1}) writes L2 byte 9,000,000, in no L2 entry of core 0 "
                                "workload 1's snapshot; nearest: tensor 3 at [401,408, 1,204,224), 7,795,777 bytes "
                                "after it")  # fmt: skip


def test_a_destination_that_names_no_byte_is_a_located_warning_and_nothing_else_changes(tmp_path):
    """Issue #75, hostile input: a DTaddr past 2**63, negative or not a whole number is a `bad-address` warning at
    its line; the other instructions are checked as before (the real b1 pipeline: nothing outside the plan)."""
    convs = [k for k, line in enumerate(asm_lines()) if line.startswith("[pe_conv")][:3]
    said = checked_with(tmp_path, dict(zip(convs, ("1180591620717411303424", "-77", "'0x40'"), strict=True)))
    bad = [p for p in said["problems"] if p["code"] == "bad-address"]
    assert [(p["severity"], p["location"]) for p in bad] == [("warning", f"a_asm.txt: line {k + 1}") for k in convs]
    assert bad[0]["message"] == (f"pe_conv (line {convs[0] + 1}) names destination 1180591620717411303424, which "
                                 "is no address (a whole number of bytes from 0 to 2**62); not checked against the "
                                 "plan")  # fmt: skip
    assert "names destination -77," in bad[1]["message"] and "names destination '0x40'," in bad[2]["message"]
    assert [p for p in said["problems"] if p["code"] == "address-outside-plan"] == []


def test_a_weight_load_outside_its_wl0_snapshot_is_a_located_warning(tmp_path):
    """`lw_` instructions write the side memory (WL0; these files name it `wl1_buffer`, and the warning says WL1): their
    DTaddr, in the unit of the schedule's WL0 entries, lies in one of its entries for the workload (b1: 108 of 108,
    b4: 82 of 82; in 256-bit units, the format notes' reading, 50 and 39). That unit is 64 bytes: a load covers its
    Wsize [K, C, kh, kw] in DF, K rounded up to 64, and 32 bytes a kernel (every range in one entry, 108 / 82,
    filling it or its half exactly 107 / 81 times: the 7×7 stem's 179 units sit in an entry of 448). One moved
    past every entry is found, and one moved within its entry so that it runs past the end."""
    lines = asm_lines()
    at = next(k for k, line in enumerate(lines) if line.startswith("[lw_mov"))
    said = checked_with(tmp_path, {at: "70000"})
    [found] = [p for p in said["problems"] if p["code"] == "address-outside-plan"]
    assert found["location"] == f"a_asm.txt: line {at + 1}"
    assert found["message"].startswith(f"lw_mov (line {at + 1}) writes WL1 unit 70,000, in no WL1 entry of core 0 "
                                       "workload ")  # fmt: skip
    assert "; nearest: transfer " in found["message"] and found["message"].endswith("units after it")
    second = next(k for k, line in enumerate(lines) if line.startswith("[lw_mov") and "'DTaddr': 608" in line)
    said = checked_with(tmp_path, {second: "640"})
    [found] = [p for p in said["problems"] if p["code"] == "address-outside-plan"]
    assert found["message"].startswith(f"lw_mov (line {second + 1}) writes WL1 units [640, 1,248), which run 32 "
                                       "units past the end of transfer ")  # fmt: skip


def test_a_destination_in_an_entry_of_the_wrong_role_is_a_located_warning(tmp_path):
    """Issue #75, roles: on the real pipelines every weight load (ldw_) writes a weight entry and nothing else does
    (b1: 17 of 17 ldw_mov in weight entries; no lda_, pe_, vp_ or dt_ destination in one). A weight load moved into
    an ifmap's entry and a vector op moved into a weight's entry are each a warning at its line."""
    lines = asm_lines()
    vp, ldw = 146, 148  # workload 25: weight tensor 75 at 501,760; ifmap tensor 40 at 0
    assert lines[vp].startswith("[vp_self") and lines[ldw].startswith("[ldw_mov") and "'wkl': 25," in lines[vp]
    said = checked_with(tmp_path, {vp: "501760", ldw: "0"})
    found = [(p["location"], p["message"]) for p in said["problems"] if p["code"] == "address-outside-plan"]
    assert found == [
        ("a_asm.txt: line 147", "vp_self (line 147) writes L2 byte 501,760 in tensor 75's entry (weight) of core 0 "
                                "workload 25's snapshot: only weight loads write weight entries"),
        ("a_asm.txt: line 149", "ldw_mov (line 149) writes L2 byte 0 in tensor 40's entry (ifmap) of core 0 workload "
                                "25's snapshot: a weight load writes outside every weight entry there"),
    ]  # fmt: skip


def test_the_nearest_entry_in_words():
    starts, sizes, tensors = np.array([100, 1000]), np.array([50, 24]), np.array([7, 8])
    assert _nearest(starts, sizes, tensors, 99) == "; nearest: tensor 7 at [100, 150), 1 byte before it"
    assert _nearest(starts, sizes, tensors, 160) == "; nearest: tensor 7 at [100, 150), 11 bytes after it"
    assert _nearest(starts, sizes, tensors, 990) == "; nearest: tensor 8 at [1,000, 1,024), 10 bytes before it"
    assert _nearest(starts[:0], sizes[:0], tensors[:0], 5) == " (the snapshot holds no entry)"


def query(schedule, sql: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", "query", str(schedule), sql, "--format", "csv", *flags],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip


def test_the_instructions_table_joins_what_ran_to_the_plan(tmp_path):
    """Issue #75, the chain in SQL: the joined assembly's and trace's instructions, each with its workload's lane
    and the L2 byte it writes; `workloads` holds the measured cycles, so one query finds the workloads that ran
    over their estimate and what their instructions did."""
    for path in pipeline("b1"):
        shutil.copy(path, tmp_path / path.name)
    schedule = tmp_path / pipeline("b1")[0].name
    done = query(schedule, "SELECT companion, count(*), count(l2_address), count(start), count(core) FROM "
                           "instructions GROUP BY companion ORDER BY companion")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["asm,544,162,0,544", "trace,544,162,544,544"]
    done = query(schedule, "SELECT w.workload, round(w.measured_cycles / w.cycles, 2) AS ratio, count(*) AS pe FROM "
                           "workloads w JOIN instructions i ON i.workload = w.workload AND i.companion = 'trace' AND "
                           "i.unit = 'PE' GROUP BY ALL ORDER BY ratio DESC LIMIT 2")  # fmt: skip
    assert done.stdout.splitlines()[1:] == ["55,3.9,4", "56,3.35,7"]
    many = subprocess.run([sys.executable, "-m", "explorer", "query", str(schedule), str(schedule),
                           "select count(*) from instructions", "--format", "csv"], capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip
    assert many.returncode == 0 and many.stdout.splitlines()[1] == str(2 * 2 * 544)  # each file: asm and trace


def test_the_instructions_table_names_tiles_trace_indices_and_the_units_waited_for():
    """Issue #75's columns: `inst_idx` (the trace's, NULL in the assembly), `tile` (NULL for -1) and the units each
    instruction waits for and that wait for it, as the b1 files write them (counted in the files: 383 of 544 name a
    tile, 253 a Prev_Insts, 258 a Next_Insts; 89 wait for PE alone, 67 for PE and LW)."""
    schedule, asm, trace = pipeline("b1")
    done = query(schedule, "select companion, count(inst_idx), min(inst_idx), max(inst_idx), count(tile), "
                           "count(prev_units), count(next_units) from instructions group by all order by 1",
                 "--asm", str(asm), "--trace", str(trace))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["asm,0,,,383,253,258", "trace,544,1,544,383,253,258"]
    done = query(schedule, "select prev_units, count(*) from instructions where companion = 'trace' and prev_units "
                           "is not null group by all order by 2 desc limit 2", "--trace", str(trace))  # fmt: skip
    assert done.stdout.splitlines()[1:] == ["PE,89", "\"PE,LW\",67"]


def test_an_instruction_naming_a_tile_its_workload_lacks(tmp_path):
    """Issue #75's hostile input: a tile number past the workload's `tile_info` is an `unknown-tile` warning at its
    line naming the tiles there are; the real assembly names none (every tile it names is listed)."""
    schedule, asm, trace = pipeline("b1")
    joined = check(schedule, "--asm", str(asm), "--trace", str(trace))
    assert [p for p in joined["problems"] if p["code"] == "unknown-tile"] == []
    at = next(k for k, line in enumerate(asm_lines()) if "'wkl': 3, 'tile': 0" in line)
    found = edited(tmp_path, {at: (r"'tile': 0", "'tile': 7")})
    [tile] = [p for p in found["problems"] if p["code"] == "unknown-tile"]
    assert tile["location"] == f"a_asm.txt: line {at + 1}"
    assert tile["message"].endswith("names tile 7 of workload 3, which has tile 0")


def test_the_tiles_a_workload_lists():
    from explorer.formats.scheduler_ir.tiles import tiles_of

    assert tiles_of(b'{"tile_info": {"tile_num_0": {"x": [1]}, "tile_num_3": 5, "other": 1}}') == {0, 3}
    assert tiles_of(b'{"tile_info": {}}') == frozenset()
    assert tiles_of(b'{"buffer": []}') is None and tiles_of(b'{"tile_info": [1]}') is None
    assert tiles_of(b"not json") is None


def test_no_companion_no_instructions_said_in_words():
    done = query(ROOT / "sample_data" / "clean_2x2_stschedule.json", "select count(*) from instructions")
    assert done.returncode == 2 and "has no assembly or trace joined for table instructions" in done.stderr


def test_companions_given_by_name_to_one_schedule_only():
    schedule, asm, trace = pipeline("b1")
    done = subprocess.run([sys.executable, "-m", "explorer", "query", str(schedule), "select companion, count(*) "
                           "from instructions group by all order by 1", "--asm", str(asm), "--trace", str(trace),
                           "--format", "csv"], capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0 and done.stdout.splitlines()[1:] == ["asm,544", "trace,544"], done.stderr
    done = subprocess.run([sys.executable, "-m", "explorer", "query", str(schedule), str(schedule),
                           "select count(*) from instructions", "--asm", str(asm)], capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip
    assert done.returncode == 2 and "--asm name one schedule's companions: give one FILE" in done.stderr


def test_the_measured_table_is_each_measured_workload_against_its_estimate():
    """Issue #75: `measured`, one row per workload the trace measured (estimate, span, ratio, instructions), joins
    `workloads` by (file, core, workload); its counts are the trace's (69 workloads, the 544 instructions the
    instructions table lists) and those `info` gives; without a trace it is refused in words."""
    schedule, _asm, trace = pipeline("b1")
    done = query(schedule, "select count(*), sum(instructions), count(ratio), round(max(ratio), 2) from measured",
                 "--trace", str(trace))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "69,544,69,87.6"
    info = subprocess.run([sys.executable, "-m", "explorer", "info", str(schedule), "--trace", str(trace), "--json"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert json.loads(info.stdout)["measured"]["workloads"] == 69
    joined = query(schedule, "select count(*) from measured m join workloads w using (file, core, workload) where "
                             "w.measured_cycles = m.measured_cycles and w.cycles = m.cycles", "--trace", str(trace))
    assert joined.stdout.splitlines()[1] == "69"
    worst = query(schedule, "select workload, round(measured_cycles / cycles, 1) = round(ratio, 1) from measured "
                            "order by ratio desc limit 1", "--trace", str(trace))  # fmt: skip
    assert worst.stdout.splitlines()[1] == "61,True"
    bare = query(ROOT / "sample_data" / "clean_2x2_stschedule.json", "select count(*) from measured")
    assert bare.returncode == 2 and "has no trace joined for table measured" in bare.stderr


def planted_overlap(tmp_path, conv_address: int):
    """The real b1 pipeline with tensor 1 moved onto tensor 3 in workload 1's snapshot ([401,408, 701,408)
    shared) and workload 1's pe_conv writing at `conv_address` (the file's own: 401,408)."""
    schedule, asm, trace = pipeline("b1")
    plan = json.loads(schedule.read_text())
    workload = next(w for w in plan["0"] if w["workload_id"] == 1)
    next(b for b in workload["buffer"] if b["tensor_id"] == 1)["address"] = 300000
    (tmp_path / "s.json").write_text(json.dumps(plan))
    for source, name in ((asm, "a_asm.txt"), (trace, "t_sim.txt")):
        lines = source.read_text().split("\n")
        at = next(k for k, line in enumerate(lines) if line.startswith("[pe_conv") and "'wkl': 1," in line)
        lines[at] = lines[at].replace("'DTaddr': 401408", f"'DTaddr': {conv_address}", 1)
        (tmp_path / name).write_text("\n".join(lines))
    return tmp_path / "s.json", at + 1


def test_an_overlap_written_by_an_instruction_is_touched_and_one_written_elsewhere_is_not(tmp_path):
    """Issue #75, overlaps confirmed or cleared: the incident names the instruction that wrote into the shared
    bytes, with its measured cycles from the trace; the same write moved out of them clears it (the write, 802,816
    bytes since pe_conv's size is read from its tile, then runs past its tensor: a warning of its own). Said in
    `check`'s text and JSON."""
    schedule, line = planted_overlap(tmp_path, 401408)
    said = check(schedule, "--trace", str(tmp_path / "t_sim.txt"))
    [incident] = said["incidents"]
    assert incident["ranges"] == [[401408, 701408]] and incident["first_workload"] == 1
    touched = incident["touched"]
    assert touched["companion"] == "trace" and touched["basis"] == "byte ranges" and touched["more"] == 0
    [by] = touched["instructions"]
    assert (by["line"], by["name"], by["workload"], by["address"]) == (line, "pe_conv", 1, 401408)
    assert by["end"] > by["start"] > 0
    text = subprocess.run([sys.executable, "-m", "explorer", "check", str(schedule), "--trace",
                           str(tmp_path / "t_sim.txt")], capture_output=True, text=True, cwd=ROOT).stdout  # fmt: skip
    cycles = f"{by['start']:,.0f}–{by['end']:,.0f}"
    assert f"touched by pe_conv (line {line}, cycles {cycles}) at 0x62000 (the trace)" in text

    schedule, _ = planted_overlap(tmp_path, 800000)
    said = check(schedule, "--asm", str(tmp_path / "a_asm.txt"))
    [incident] = said["incidents"]
    assert incident["touched"]["instructions"] == [] and incident["touched"]["checked"] >= 1
    text = subprocess.run([sys.executable, "-m", "explorer", "check", str(schedule), "--asm",
                           str(tmp_path / "a_asm.txt")], capture_output=True, text=True, cwd=ROOT).stdout  # fmt: skip
    assert ("not touched: no instruction of these workloads in the asm writes in the overlapping bytes (1 "
            "instruction checked, by the bytes each writes)") in text
    assert incident["touched"]["checked"] == 1 and incident["touched"]["basis"] == "byte ranges"


def test_without_an_assembly_or_trace_an_incident_says_nothing_of_what_ran():
    said = check(ROOT / "sample_data" / "planted_problems_2x2_stschedule.json")
    assert said["incidents"] and all(incident.get("touched") is None for incident in said["incidents"])


def test_a_write_whose_range_meets_the_overlap_past_its_first_byte_touches_it(tmp_path):
    """Issue #75: with the sizes read, an instruction touches an overlap when the bytes it writes meet it, not only
    its first byte. The real b1 plan with tensor 4 moved onto the middle of tensor 5 in workload 3's snapshot
    ([300,000, 500,704) shared): workload 3's vp_self writes [200,704, 602,112) (DTile × ODF), starting before the
    overlap, and touches it."""
    schedule, asm, _ = pipeline("b1")
    plan = json.loads(schedule.read_text())
    workload = next(w for w in plan["0"] if w["workload_id"] == 3)
    next(b for b in workload["buffer"] if b["tensor_id"] == 4)["address"] = 300000
    (tmp_path / "s.json").write_text(json.dumps(plan))
    said = check(tmp_path / "s.json", "--asm", str(asm))
    [incident] = [i for i in said["incidents"] if i["first_workload"] == 3]
    assert incident["ranges"] == [[300000, 500704]]
    touched = incident["touched"]
    assert touched["basis"] == "byte ranges" and touched["checked"] == 1
    [by] = touched["instructions"]
    assert (by["line"], by["name"], by["address"]) == (34, "vp_self", 200704)


def test_the_instructions_table_says_each_operands_memory_and_bytes():
    """Issue #75, the chain in SQL: each instruction's destination and source memory, and the byte ranges where
    the size is settled, with counts equal to the real b1 assembly's instructions (544: 4 stores to DRAM, 162
    writes to L2, 108 weight loads into WL0, 270 that name no destination)."""
    schedule, asm, _ = pipeline("b1")
    done = query(schedule, "SELECT dst_memory, src_memory, count(*), count(l2_bytes), count(wl0_address), "
                 "count(l2_source_bytes) FROM instructions GROUP BY ALL ORDER BY ALL", "--asm", str(asm))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "dst_memory,src_memory,count_star(),count(l2_bytes),count(wl0_address),count(l2_source_bytes)",
        "DRAM,L2,4,0,0,4", "L2,DRAM,21,21,0,0", "L2,L2,141,141,0,141", "WL0,,108,0,108,0", ",,270,0,0,0"]
    sizes = query(schedule, "SELECT name, l2_bytes FROM instructions WHERE name IN ('lda_mov', 'ldw_mov') "
                  "ORDER BY line LIMIT 2", "--asm", str(asm))  # fmt: skip
    assert sizes.stdout.split()[1:] == ["lda_mov,301056", "ldw_mov,589824"]  # 3·224·224 × FP16, 256·256·3·3 × INT8
    weights = query(schedule, "SELECT count(wl0_units), sum(wl0_units) FILTER (WHERE line = 18) FROM instructions "
                    "WHERE name = 'lw_mov'", "--asm", str(asm))  # fmt: skip
    assert weights.stdout.splitlines()[1:] == ["108,179"]  # every weight load; the stem: 64·3·7·7 + 32·64 bytes


def test_a_joined_instructions_details_say_where_its_operands_lie_in_the_plan(tmp_path):
    """Issue #75, addresses per instruction: the details of a joined instruction name each operand's memory, its
    bytes, and the entry of its workload's snapshot holding them (tensor, role), or the nearest when none does."""
    from explorer.api import open_document
    from explorer.companions import companions_of

    schedule, asm, _ = pipeline("b1")
    shutil.copy(schedule, tmp_path / "s.json")
    document = open_document(tmp_path / "s.json", companions={"asm": asm})
    view = companions_of(document).documents["asm"].view

    def in_plan(line: int) -> list[tuple]:
        k = int(np.flatnonzero(view.program.line == line)[0])
        row = int(np.flatnonzero(view.order == k)[0])
        sections = document.view.describe(("companion", "asm", ("workload", row)))
        [section] = [s for s in sections if s.title == "In the plan"]
        return section.rows

    assert in_plan(7) == [("destination", "L2", "[401,408, 702,464)", "tensor 0 (ifmap) [401,408, 802,816)")]
    assert in_plan(18) == [("destination", "WL1", "[0, 179)", "transfer 0 [0, 448)")]  # 64·3·7·7 + 32·64 bytes
    assert in_plan(34) == [("destination", "L2", "[200,704, 602,112)", "tensor 5 (ifmap) [200,704, 602,112)"),
                           ("source", "L2", "[0, 200,704)", "tensor 4 (ifmap) [0, 200,704)")]  # fmt: skip
    # where the format notes' reading (DTaddr in 64-bit units) lies in an entry too, both are shown
    assert in_plan(329) == [("destination", "L2", "[200,704, 790,528)", "tensor 83 (weight) [200,704, 798,720)"),
                            ("destination in 64-bit units", "L2", "1,605,632 (first byte)",
                             "tensor 80 [1,099,776, 1,697,792): fits too")]  # fmt: skip


def test_a_convolution_reads_its_whole_input_and_one_moved_off_it_is_a_located_warning(tmp_path):
    """Issue #75, pe_conv's source: its input (pe_cfg_fm's STile [C, H, W], channels in groups of 8, N images of
    pe_cfg_tp's Tile, in SF) starts (SPHI·W + SPWI) grouped pixels after STaddr, the padded window's corner. So
    read, every convolution's source fills an entry of its workload's snapshot exactly (b1: 108 of 108, b4: 82 of
    82; STaddr as a byte: 53 of 108 and 25 of 82 in an entry, never a whole one). One moved 64 bytes on runs past
    its entry; one moved off every entry is said so."""
    from explorer.api import open_document

    for batch, count in (("b1", 108), ("b4", 82)):
        schedule, asm, _ = pipeline(batch)
        document = open_document(schedule, companions={"asm": asm})
        assert [p for p in document.problems if p.code == "address-outside-plan"] == []
        program = read_program(asm, asm.read_bytes(), False)
        where = operands(program)
        convs = [k for k, name in enumerate(program.name) if name == "pe_conv"]
        assert len(convs) == count and all(where.l2_source[k] >= 0 and where.l2_source_size[k] > 0 for k in convs)
    lines = asm_lines()
    first, second = [k for k, line in enumerate(lines) if line.startswith("[pe_conv")][:2]
    said = edited(tmp_path, {first: (r"'STaddr': -5400", "'STaddr': -5336"),
                             second: (r"'STaddr': -?\d+", "'STaddr': 9000000")})  # fmt: skip
    found = {p["location"]: p["message"] for p in said["problems"] if p["code"] == "address-outside-plan"}
    assert found[f"a_asm.txt: line {first + 1}"].startswith(
        f"pe_conv (line {first + 1}) reads L2 bytes [64, 401,472), which run 64 bytes past the end of tensor ")
    assert f"pe_conv (line {second + 1}) reads L2 byte " in found[f"a_asm.txt: line {second + 1}"]
    assert len(found) == 2
