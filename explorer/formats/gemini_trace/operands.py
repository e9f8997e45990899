"""Where an instruction's operands lie in L2 and WL0, in bytes, and how many bytes (issue #75): what the plan's
check (`explorer.schedule.plan_conformance`) holds against each workload's snapshot.

Addresses are bytes and sizes are elements × the data format's bytes, each reading chosen by measuring the real
ResNet-34 pipelines (README, "the plan against what ran"): a destination's range is known for the loads from DRAM
(`lda_mov`: its `Tile` in the format `lda_cfg` set; `ldw_mov`: its `Wsize` in `ldw_cfg`'s) and the vector ops
(`vp_*`: the last `vp_cfg_tp`'s `Tile` placed in the output frame `DTile` of the last `vp_cfg_fm`, in its output
format `ODF`: `framed_span`), data transforms (`dt_cal`: its `Tile` in `dt_cfg`'s `DF`, read and written) and the
tensor engine's convolutions (`pe_conv`: the last `pe_cfg_tp`'s `Tile` [N, K, C, H, W] writes N images of K·H·W
outputs, placed in the last `pe_cfg_fm`'s frame `DTile`, in its `DF`), a source's for
stores (`sta_mov` reads L2: `Tile` in `sta_cfg`'s format), `vp_self` (`STile` in `IDF`) and convolutions (their
whole input, `_whole_input_source`; a pooling's too). Weight loads into WL0
(`lw_mov`) cover their `Wsize` [K, C, kh, kw] in `lw_cfg`'s `DF`, K rounded up to 64, plus 32 bytes a kernel,
counted in WL0's unit of 64 bytes (the unit of the schedule's WL0 entries and of `lw_mov`'s `DTaddr`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from explorer.formats.gemini_trace.lines import decode_params
from explorer.formats.gemini_trace.program import Program

WRITES_L2 = ("lda", "ldw", "pe", "vp", "dt")
WRITES_WL0 = ("lw",)  # weights L2 → WL0
LARGEST = 2**62  # an address or a size past this names no byte of any memory
FORMAT_BYTES = {"INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2, "FP16": 2, "BF16": 2, "INT32": 4, "FP32": 4}
# instruction → (its field of elements, the configuring instruction's prefix, that one's data-format field) for
# the destination's range, then for the source's (an L2 source only)
DESTINATION_SIZE = {"lda_mov": ("Tile", "lda", "DF"), "ldw_mov": ("Wsize", "ldw", "DF"), "dt_cal": ("Tile", "dt", "DF")}
READS_DRAM = ("lda", "ldw")  # loads: their STaddr is in DRAM
WRITES_DRAM = ("sta",)  # stores: their DTaddr is in DRAM
SOURCE_SIZE = {"sta_mov": ("Tile", "sta", "DF"), "dt_cal": ("Tile", "dt", "DF")}  # a data transform reads its Tile
VECTOR_DESTINATION = ("DTile", "ODF")  # vp_*: the last vp_cfg_fm's output tile and format
CONVOLUTION = "pe_conv"  # writes the outputs of the last pe_cfg_tp's Tile [N, K, C, H, W] in pe_cfg_fm's DF
CONVOLUTION_OUTPUT = (0, 1, 3, 4)  # N, K, H, W: the tile's dims the outputs span (C is summed over)
# instructions that read their whole input from the padded window's corner: (the input's format field, the
# padding fields, whether the image count comes from the configured Tile's N; else one image)
WHOLE_INPUT = {"pe_conv": ("SF", "SPHI", "SPWI", True), "vp_pool": ("IDF", "IPH", "IPW", False)}
CHANNEL_GROUP = 8  # a convolution's input channels are stored in groups of this many (3 take the room of 8)
# WL0's addresses and sizes (the schedule's and lw_mov's DTaddr) count units of this many bytes; a weight load
# covers its Wsize [K, C, kh, kw] in DF with K rounded up to WL0_KERNELS, and WL0_PER_KERNEL bytes per kernel more
WL0_UNIT, WL0_KERNELS, WL0_PER_KERNEL = 64, 64, 32
VECTOR_SOURCE = {"vp_self": ("STile", "IDF")}


@dataclass
class Operands:
    l2_destination: np.ndarray  # first byte written in L2, -1 for none
    l2_destination_size: np.ndarray  # bytes from it, -1 where not known
    wl0_destination: np.ndarray
    wl0_destination_size: np.ndarray  # in WL0's units (WL0_UNIT bytes), -1 where not known
    l2_source: np.ndarray  # first byte read from L2 (stores, vector ops), -1 for none
    l2_source_size: np.ndarray
    destination_memory: list[str] = field(default_factory=list)  # "L2", "WL0", "DRAM" or "" (none named)
    source_memory: list[str] = field(default_factory=list)
    unreadable: dict[int, str] = field(default_factory=dict)  # an address field that names no byte, as written
    unreadable_size: dict[int, str] = field(default_factory=dict)  # a size that is none (negative, too big)


def format_bytes(value: Any) -> int | None:
    """`<DataFmt.INT8: 1>` → 1; None for a format not known."""
    if not isinstance(value, str):
        return None
    name = value.strip("<>").split(":")[0].split(".")[-1]
    return FORMAT_BYTES.get(name)


def elements(value: Any) -> int | None:
    """The product of a list of whole numbers (a tile's dims), or None when it is no size."""
    if not isinstance(value, list) or not value or not all(type(d) is int and 0 <= d < LARGEST for d in value):
        return None
    product = math.prod(value)
    return product if product < LARGEST else None


def operands(program: Program) -> Operands:
    n = program.n
    def unknown() -> np.ndarray:
        return np.full(n, -1, dtype=np.int64)

    found = Operands(unknown(), unknown(), unknown(), unknown(), unknown(), unknown(), [""] * n, [""] * n)
    configured: dict[str, dict[str, Any]] = {}  # per unit prefix: what its last configuring instructions set
    for k, prefix in enumerate(program.prefix):
        name = program.name[k]
        moves_l2 = prefix in WRITES_L2 or name in SOURCE_SIZE or name in VECTOR_SOURCE
        if not (moves_l2 or prefix in WRITES_WL0 or prefix in READS_DRAM or prefix in WRITES_DRAM or "_cfg" in name):
            continue
        try:
            params = decode_params(program.params[k])
        except msgspec.DecodeError:
            continue
        if "_cfg" in name:
            configured.setdefault(prefix, {}).update(params)
            continue
        setting = configured.get(prefix, {})
        if prefix in WRITES_DRAM and "DTaddr" in params:
            found.destination_memory[k] = "DRAM"
        if prefix in READS_DRAM and "STaddr" in params:
            found.source_memory[k] = "DRAM"
        if prefix in WRITES_L2 or prefix in WRITES_WL0:
            byte = _address(found, k, params.get("DTaddr"))
            if byte is not None:
                (found.wl0_destination if prefix in WRITES_WL0 else found.l2_destination)[k] = byte
                found.destination_memory[k] = "WL0" if prefix in WRITES_WL0 else "L2"
                if prefix in WRITES_WL0:
                    found.wl0_destination_size[k] = _weights_in_wl0(params.get("Wsize"), setting.get("DF"))
                if prefix in WRITES_L2:
                    framed = _framed_destination(name, prefix, setting)
                    found.l2_destination_size[k] = (framed if framed is not None else
                                                     _size(found, k, params, setting, *_destination_size(name, prefix)))
        if name in WHOLE_INPUT and "STaddr" in params:
            _whole_input_source(found, k, params, setting, *WHOLE_INPUT[name])
        if name in SOURCE_SIZE or name in VECTOR_SOURCE:
            byte = _address(found, k, params.get("STaddr"))
            if byte is not None:
                found.l2_source[k] = byte
                found.source_memory[k] = "L2"
                found.l2_source_size[k] = _size(found, k, params, setting, *_source_size(name))
    return found


def framed_span(images: int, tile: Any, frame: Any) -> int | None:
    """Elements from a tile's first to its last, the tile [C, H, W] placed in a frame [Cf, Hf, Wf] stored channels
    innermost (pixel after pixel, row after row), `images` frames one after another: the bounding range of what a
    tile of some channels or rows writes into its output (ResNet-50's last layer in row tiles, K in tiles of 128).
    None when the dims are no sizes or the tile does not fit its frame."""
    dims = [images, *(tile if isinstance(tile, list) else []), *(frame if isinstance(frame, list) else [])]
    if len(dims) != 7 or not all(type(d) is int and 0 < d < 2**31 for d in dims):
        return None
    _, channels, rows, columns, frame_channels, frame_rows, frame_columns = dims
    if channels > frame_channels or rows > frame_rows or columns > frame_columns:
        return None
    span = ((images - 1) * frame_rows * frame_columns + (rows - 1) * frame_columns + columns - 1) * frame_channels
    return span + channels


def _framed_destination(name: str, prefix: str, setting: dict[str, Any]) -> int | None:
    """Bytes a vector op or a convolution spans in its output frame (`framed_span`): a vector op's `vp_cfg_tp` Tile
    [C, H, W] in `vp_cfg_fm`'s DTile, in ODF; a convolution's Tile [N, K, C, H, W] as N images of [K, H, W] in
    `pe_cfg_fm`'s DTile, in DF. None where that does not read (the whole tile's elements are taken then)."""
    tile, frame = setting.get("Tile"), setting.get("DTile")
    if prefix == "vp":
        width = format_bytes(setting.get(VECTOR_DESTINATION[1]))
        span = framed_span(1, tile if tile is not None else frame, frame)
    elif name == CONVOLUTION and isinstance(tile, list) and len(tile) == 5:
        width = format_bytes(setting.get("DF"))
        span = framed_span(tile[0], [tile[1], tile[3], tile[4]], frame)
    else:
        return None
    if span is None or width is None:
        return None
    return span * width


def _weights_in_wl0(size: Any, data_format: Any) -> int:
    """WL0 units a weight load covers (module docstring), -1 when its Wsize or DF does not read so."""
    width = format_bytes(data_format)
    if width is None or not isinstance(size, list) or len(size) != 4 or elements(size) is None:
        return -1
    kernels = -(-size[0] // WL0_KERNELS) * WL0_KERNELS
    covered = kernels * math.prod(size[1:]) * width + WL0_PER_KERNEL * kernels
    return covered // WL0_UNIT if covered % WL0_UNIT == 0 and covered < LARGEST else -1


def _whole_input_source(found: Operands, k: int, params: dict[str, Any], setting: dict[str, Any], format_field: str,
                        pad_rows_field: str, pad_columns_field: str, counted: bool) -> None:  # fmt: skip
    """A convolution reads its whole input: the last `pe_cfg_fm`'s `STile` [C, H, W] stored channels innermost
    with C rounded up to CHANNEL_GROUP, N of them (`pe_cfg_tp`'s `Tile`), in `SF`; its `STaddr` is the padded
    window's first byte, (SPHI·W + SPWI) pixels before the input's (negative at the top-left corner); a tile of some
    output rows reads the rows its window needs (`_window_rows`). A pooling
    (`vp_pool`) reads so too: `vp_cfg_fm`'s `STile` in `IDF`, one image, padded by `IPH`/`IPW` (WHOLE_INPUT).
    What does not read as that leaves the source unchecked."""
    tile, width = setting.get("STile"), format_bytes(setting.get(format_field))
    window = setting.get("Tile") if counted else [1]
    pads = (params.get(pad_rows_field), params.get(pad_columns_field))
    whole = [*(tile if isinstance(tile, list) else []), *(window[:1] if isinstance(window, list) else []), *pads]
    if width is None or len(whole) != 6 or not all(type(v) is int and abs(v) < 2**31 for v in whole):
        return
    channels, height, columns, count, pad_rows, pad_columns = whole
    grouped = -(-channels // CHANNEL_GROUP) * CHANNEL_GROUP
    if counted:
        height = _window_rows(setting, height)
    start = params["STaddr"]
    if type(start) is not int:
        _address(found, k, start)  # noted as naming no byte
        return
    byte = _address(found, k, start - (pad_rows * columns + pad_columns) * grouped * width)
    if byte is None:
        return
    found.l2_source[k] = byte
    found.source_memory[k] = "L2"
    size = elements([count, grouped, height, columns])
    found.l2_source_size[k] = size * width if size is not None and size * width < LARGEST else -1


def _window_rows(setting: dict[str, Any], height: int) -> int:
    """The input rows a convolution reads: all `height` when its Tile covers the output frame's rows (DTile),
    else the rows its window needs, (H - 1)·stride + kh (the last `pe_cfg_pm`'s STRIDE, `pe_cfg_tp`'s KERNEL), at
    most `height`: ResNet-50's last layer convolves 2 to 4 of 7 output rows at a time."""
    tile, frame = setting.get("Tile"), setting.get("DTile")
    kernel, stride = setting.get("KERNEL", [1, 1]), setting.get("STRIDE", [1, 1])
    dims = [*(tile if isinstance(tile, list) else []), *(frame if isinstance(frame, list) else []),
            *(kernel[:1] if isinstance(kernel, list) else []), *(stride[:1] if isinstance(stride, list) else [])]
    if len(dims) != 10 or not all(type(d) is int and 0 < d < 2**31 for d in dims) or dims[3] >= dims[6]:
        return height
    rows, kernel_rows, stride_rows = dims[3], dims[8], dims[9]
    return min(height, (rows - 1) * stride_rows + kernel_rows)


def _destination_size(name: str, prefix: str) -> tuple[str, str, bool, tuple[int, ...]]:
    """(the elements' field, the format's field, whether both come from the configuration, the tile's dims the
    operand spans: all when empty), or empty fields."""
    if name in DESTINATION_SIZE:
        return DESTINATION_SIZE[name][0], DESTINATION_SIZE[name][2], False, ()
    if prefix == "vp":
        return (*VECTOR_DESTINATION, True, ())
    if name == CONVOLUTION:
        return "Tile", "DF", True, CONVOLUTION_OUTPUT
    return "", "", False, ()


def _source_size(name: str) -> tuple[str, str, bool]:
    """As `_destination_size`, for an L2 source (a store's, a vector op's)."""
    if name in SOURCE_SIZE:
        return SOURCE_SIZE[name][0], SOURCE_SIZE[name][2], False
    return (*VECTOR_SOURCE[name], True)


def _address(found: Operands, k: int, value: Any) -> int | None:
    if type(value) is int and 0 <= value < LARGEST:
        return value
    if value is not None:
        found.unreadable[k] = repr(value)[:80]
    return None


def _picked(written: Any, dims: tuple[int, ...]) -> Any:
    """The dims of a tile that an operand spans (a convolution's N, K, H, W of [N, K, C, H, W]); None when the
    tile has not as many dims."""
    if not isinstance(written, list) or len(written) <= max(dims):
        return None
    return [written[d] for d in dims]


def _size(found: Operands, k: int, params: dict[str, Any], setting: dict[str, Any], count_field: str,
          format_field: str, configured_count: bool, dims: tuple[int, ...] = ()) -> int:  # fmt: skip
    """Bytes of the operand (elements × the format's bytes; of the tile's `dims` only, when named), -1 when not
    known; a size that is none is noted."""
    if not count_field:
        return -1
    written = (setting if configured_count else params).get(count_field)
    width = format_bytes(setting.get(format_field))
    if written is None or width is None:
        return -1
    count = elements(_picked(written, dims) if dims else written)
    if count is None or count * width >= LARGEST:
        found.unreadable_size[k] = f"{count_field} {repr(written)[:80]}"
        return -1
    return count * width
