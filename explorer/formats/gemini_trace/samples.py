"""Demo files for sample_data/ (`make samples`) and big generated traces for `make bench`: a small pipeline's
assembly and ZeBu trace, written the way the Gemini tools write them (Python-literal lines, enum reprs)."""

from __future__ import annotations

from pathlib import Path

TRACE_NAME = "demo_pipeline_b1_c1_bw16_sim.txt"
ASM_NAME = "demo_pipeline_b1_c1_bw16_asm.txt"
# (name, slyr/wkl, duration, params): a quantize, two convolutions and an add, one workload each
PROGRAM = (
    ("ct_st", 0, 30, "'Prev_Insts': [], 'Next_Insts': ['LD']"),
    ("lda_cfg", 0, 20, "'SME': 1, 'DF': <DataFmt.FP16: 3>, 'STile': [3, 32, 32]"),
    ("lda_mov", 0, 900, "'RS': 0, 'STaddr': 0, 'DTaddr': 4096, 'Prev_Insts': ['CT'], 'Next_Insts': ['VP']"),
    ("vp_cfg_gcs", 0, 12, "'CMPS': <CMPS.DEFAULT: 0>, 'SG0M': <SG0M.DEFAULT: 0>"),
    ("vp_ew", 0, 640, "'DF': <DataFmt.INT8: 1>, 'Prev_Insts': ['LD'], 'Next_Insts': ['PE']"),
    ("ldw_mov", 1, 400, "'STaddr': 8192, 'DTaddr': 0, 'Prev_Insts': [], 'Next_Insts': ['LW']"),
    ("lw_mov", 1, 220, "'SWaddr': 0, 'Wsize': 1728, 'Prev_Insts': ['LD'], 'Next_Insts': ['PE']"),
    ("pe_cfg", 1, 10, "'XYmode': <XCutMode.CUT_K: 3>, 'ACTMD': <ActMode.RELU: 1>"),
    ("pe_conv", 1, 2100, "'KERNEL': [3, 3], 'STRIDE': [1, 1], 'Prev_Insts': ['VP', 'LW'], 'Next_Insts': ['PE']"),
    ("lw_mov", 2, 260, "'SWaddr': 64, 'Wsize': 4608, 'Prev_Insts': [], 'Next_Insts': ['PE']"),
    ("pe_conv", 2, 2600, "'KERNEL': [3, 3], 'STRIDE': [1, 1], 'Prev_Insts': ['PE', 'LW'], 'Next_Insts': ['VP']"),
    ("vp_cfg_gms", 3, 14, "'USED': 1"),
    ("vp_ew", 3, 700, "'DF': <DataFmt.INT8: 1>, 'Prev_Insts': ['PE'], 'Next_Insts': ['ST']"),
    ("sta_mov", 3, 500, "'STaddr': 4096, 'DTaddr': 65536, 'Prev_Insts': ['VP'], 'Next_Insts': ['CT']"),
    ("ct_ed", 3, 25, "'Prev_Insts': ['ST'], 'Next_Insts': []"),
)


def _lines(timed: bool, repeat: int = 1) -> list[str]:
    """The program's lines; `repeat` > 1 makes a long trace (the program again and again, later in time)."""
    lines = []
    clock: dict[str, int] = {}
    index = 0
    for copy in range(repeat):
        for name, layer, duration, params in PROGRAM:
            unit = name.split("_", 1)[0]
            wkl = copy * 4 + layer
            start = max(clock.get(unit, 0), copy * 4000 + layer * 900)
            clock[unit] = start + duration
            index += 1
            mapping = (f"{{'slyr': {layer}, 'clyr': [{layer}], 's_flyr': {layer}, 'c_flyr': [{layer}], "
                       f"'wkl': {wkl}, 'tile': -1}}")  # fmt: skip
            timing = f"{{'inst_idx': {index}, 'time': [{start}, {start + duration}]}}, " if timed else ""
            lines.append(f"[{name}, {mapping}, {timing}{{{params}}}]")
    return lines


def write_samples(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, timed in ((TRACE_NAME, True), (ASM_NAME, False)):
        path = folder / name
        path.write_text("\n".join(_lines(timed)) + "\n", encoding="utf-8")
        written.append(path)
    return written


def write_long_trace(path: Path, instructions: int) -> int:
    """A trace of about `instructions` lines (for `make bench`); returns the bytes written."""
    repeat = max(instructions // len(PROGRAM), 1)
    text = "\n".join(_lines(True, repeat)) + "\n"
    path.write_text(text, encoding="utf-8")
    return len(text)
