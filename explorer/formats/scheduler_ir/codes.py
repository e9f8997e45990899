"""The scheduler IR's names for the neutral table's codes, and the words its views use."""

from __future__ import annotations

from explorer.document import Vocabulary

LAYER_TYPES = ("pe", "vp", "dt")  # Schedule.wl_type codes
BUFFER_TYPES = ("ifmap", "weight", "ofmap")  # Schedule.buf_type codes (ENTRY_INPUT, ENTRY_WEIGHT, ENTRY_OUTPUT)
WL_SOURCES = ("DDR", "CORE", "DRAM")  # Schedule.w0_src codes
DRAM_OUT_TYPES = ("weight", "fmap")  # Schedule.dout_type codes


def vocabulary(wl0_key: str) -> Vocabulary:
    """The words of a Gemini schedule; its WL0 column is named as the file names it (wl0_buffer or wl1_buffer)."""
    return Vocabulary(
        lane="core",
        block="workload",
        time_label="time (cycles)",
        time_unit="cycles",
        block_kinds=LAYER_TYPES,
        memory="L2",
        entry_kinds=BUFFER_TYPES,
        side_memory=wl0_key.removesuffix("_buffer").upper(),
        search_hint="layer name, workload id, tensor id, transfer id",
    )
