"""TVM's `.params` binary (`tvm.relay.save_param_dict`): an index of named arrays, values read on demand.

Layout (little-endian): u64 magic 0xF7E58D4F05049CB7, u64 reserved, u64 n, n × (u64 length, name bytes),
u64 m, then m arrays, each: u64 magic 0xDD5E40F096B4A13F, u64 reserved, i32 device_type, i32 device_id,
i32 ndim, dtype (u8 code, u8 bits, u16 lanes), i64 shape[ndim], i64 nbytes, data. Every length is checked
against the bytes that are really there before it is used.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

LIST_MAGIC = 0xF7E58D4F05049CB7
ARRAY_MAGIC = 0xDD5E40F096B4A13F
MAX_NDIM = 32
MAX_STATS_BYTES = 256 * 1024 * 1024  # an array bigger than this is not read for its value statistics
MAX_NAME_BYTES = 1 << 16  # a parameter's name: longer is not a params file (and would be read whole)
# DLPack type codes
_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}


class ParamsError(Exception):
    """The file breaks the format at `offset`: (offset, message)."""


@dataclass(frozen=True, slots=True)
class ParamArray:
    name: str
    dtype: str  # e.g. float32, int8, bfloat16, float32x4
    shape: tuple[int, ...]
    nbytes: int
    offset: int  # where the data starts in the file
    device_type: int

    @property
    def elements(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count


def dtype_name(code: int, bits: int, lanes: int) -> str:
    base = _CODES.get(code, f"code{code}")
    name = "bool" if base == "bool" else f"{base}{bits}"
    return name + (f"x{lanes}" if lanes != 1 else "")


ReadAt = Callable[[int, int], bytes]  # (offset, length) → at most that many bytes from there


class _Cursor:
    def __init__(self, read_at: ReadAt, size: int) -> None:
        self.read_at, self.size = read_at, size
        self.offset = 0

    def take(self, fmt: str, what: str) -> tuple:
        size = struct.calcsize(fmt)
        if self.offset + size > self.size:
            raise ParamsError(self.offset, f"the file ends inside {what} (needs {size} bytes, {self.remaining} left)")
        values = struct.unpack(fmt, self.read_at(self.offset, size))
        self.offset += size
        return values

    @property
    def remaining(self) -> int:
        return self.size - self.offset


def parse_params(data: bytes) -> list[ParamArray]:
    """The arrays of a params file in memory, without copying their data. Raises ParamsError with the byte offset."""
    return index_params(lambda offset, length: data[offset : offset + length], len(data))


def index_params(read_at: ReadAt, size: int) -> list[ParamArray]:
    """The arrays of a params file of `size` bytes, reading only their headers (in order, so a stream that can
    only seek forward serves); each array's data is skipped. Raises ParamsError with the byte offset."""
    cursor = _Cursor(read_at, size)
    (magic, _reserved) = cursor.take("<QQ", "the header")
    if magic != LIST_MAGIC:
        raise ParamsError(0, f"not a TVM params file (magic {magic:#018x}, expected {LIST_MAGIC:#018x})")
    (count,) = cursor.take("<Q", "the name count")
    if count * 8 > cursor.remaining:
        raise ParamsError(cursor.offset - 8, f"{count:,} names cannot fit in the {cursor.remaining:,} bytes left")
    names = []
    for index in range(count):
        (length,) = cursor.take("<Q", f"the length of name {index}")
        if length > cursor.remaining:
            raise ParamsError(cursor.offset - 8, f"name {index} claims {length:,} bytes, {cursor.remaining:,} left")
        if length > MAX_NAME_BYTES:
            raise ParamsError(cursor.offset - 8, f"name {index} claims {length:,} bytes (over {MAX_NAME_BYTES:,})")
        names.append(read_at(cursor.offset, length).decode("utf-8", errors="replace"))
        cursor.offset += length
    (arrays,) = cursor.take("<Q", "the array count")
    if arrays != count:
        raise ParamsError(cursor.offset - 8, f"{count} names but {arrays} arrays")
    result = []
    for index, name in enumerate(names):
        start = cursor.offset
        (magic, _reserved, device_type, _device_id, ndim) = cursor.take("<QQiii", f"array {name!r}'s header")
        if magic != ARRAY_MAGIC:
            raise ParamsError(start, f"array {index} ({name!r}): bad magic {magic:#018x}")
        if not 0 <= ndim <= MAX_NDIM:
            raise ParamsError(start + 24, f"array {name!r}: {ndim} dimensions")
        code, bits, lanes = cursor.take("<BBH", f"array {name!r}'s dtype")
        shape = cursor.take(f"<{ndim}q", f"array {name!r}'s shape") if ndim else ()
        if any(dim < 0 for dim in shape):
            raise ParamsError(cursor.offset - 8 * ndim, f"array {name!r}: negative dimension in {list(shape)}")
        (nbytes,) = cursor.take("<q", f"array {name!r}'s size")
        if not 0 <= nbytes <= cursor.remaining:
            raise ParamsError(cursor.offset - 8, f"array {name!r} claims {nbytes:,} bytes, {cursor.remaining:,} left")
        array = ParamArray(name, dtype_name(code, bits, lanes), tuple(shape), nbytes, cursor.offset, device_type)
        cursor.offset += nbytes
        result.append(array)
    return result


_NUMPY = {
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "bool": np.bool_,
}


def array_values(data: bytes, array: ParamArray) -> np.ndarray | None:
    """The array's values (a view, no copy), or None for dtypes numpy cannot show (bfloat16, vector lanes)."""
    numpy_type = _NUMPY.get(array.dtype)
    if numpy_type is None:
        return None
    itemsize = np.dtype(numpy_type).itemsize
    if array.nbytes != array.elements * itemsize:
        return None
    values = np.frombuffer(
        data, dtype=np.dtype(numpy_type).newbyteorder("<"), count=array.elements, offset=array.offset
    )
    return values.reshape(array.shape) if array.shape else values.reshape(())


def array_stats(data: bytes, array: ParamArray) -> dict[str, str]:
    """The value statistics of one array; explains when they cannot be computed (bfloat16, vector lanes)."""
    from explorer.tensors.value_stats import value_stats

    values = array_values(data, array)
    if values is None:
        return {"values": f"not shown: {array.dtype} data ({array.nbytes:,} bytes)"}
    return value_stats(values)
