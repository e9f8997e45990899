"""The plan against what ran (issue #75, its first part): each instruction that writes L2 (its destination field,
in bytes) is checked against the L2 snapshot of the workload it belongs to. A destination in no entry of that
snapshot is a located warning, `address-outside-plan`, naming the instruction, the byte and the nearest entry:
either the scheduler's plan or the code generator is wrong there, and a buffer-overlap hunt starts from it."""

from __future__ import annotations

import numpy as np

from explorer.errors import Problem
from explorer.models.schedule import Schedule

CODE = "address-outside-plan"
BAD_ADDRESS = "bad-address"
MAX_LISTED = 200  # warnings listed one by one; the rest are counted in one more


def outside_plan(schedule: Schedule, rows: np.ndarray, destination: np.ndarray, names: list[str],
                 lines: np.ndarray, file_name: str) -> list[Problem]:  # fmt: skip
    """Warnings for the instructions whose L2 destination (`destination` ≥ 0) lies in no L2 entry of their
    workload (`rows`: each instruction's schedule row, -1 for none); an instruction of no workload is not
    checked (the join reports those)."""
    checked = np.flatnonzero((destination >= 0) & (rows >= 0))
    found: list[Problem] = []
    outside = 0
    for k in checked.tolist():
        row, byte = int(rows[k]), int(destination[k])
        lo, hi = int(schedule.buf_ptr[row]), int(schedule.buf_ptr[row + 1])
        starts, sizes = schedule.buf_addr[lo:hi], schedule.buf_size[lo:hi]
        if ((starts <= byte) & (byte < starts + sizes)).any():
            continue
        outside += 1
        if outside > MAX_LISTED:
            continue
        workload = f"core {int(schedule.wl_core[row])} workload {int(schedule.wl_id[row])}"
        nearest = _nearest(starts, sizes, schedule.buf_tensor[lo:hi], byte)
        found.append(Problem(
            "warning", CODE,
            f"{names[k]} (line {int(lines[k])}) writes L2 byte {byte:,}, in no L2 entry of {workload}'s snapshot"
            f"{nearest}", f"{file_name}: line {int(lines[k])}",
            {"line": int(lines[k]), "row": row, "address": byte},
        ))  # fmt: skip
    if outside > MAX_LISTED:
        found.append(Problem("warning", CODE, f"{outside - MAX_LISTED:,} more instructions write L2 outside their "
                             f"workload's snapshot ({outside:,} in all)", file_name))  # fmt: skip
    return found


def unreadable_addresses(unreadable: dict[int, str], names: list[str], lines: np.ndarray,
                         file_name: str) -> list[Problem]:  # fmt: skip
    """A warning for each destination field that names no L2 byte (negative, past 2**62, not a whole number),
    at its line; the rest of the file is checked as if that instruction named no address."""
    found = [Problem("warning", BAD_ADDRESS, f"{names[k]} (line {int(lines[k])}) names destination {value}, which "
                     "is no L2 byte (an address is a whole number from 0 to 2**62); not checked against the plan",
                     f"{file_name}: line {int(lines[k])}", {"line": int(lines[k])})
             for k, value in sorted(unreadable.items())[:MAX_LISTED]]  # fmt: skip
    if len(unreadable) > MAX_LISTED:
        found.append(Problem("warning", BAD_ADDRESS, f"{len(unreadable) - MAX_LISTED:,} more destinations name no "
                             f"L2 byte ({len(unreadable):,} in all)", file_name))  # fmt: skip
    return found


def _nearest(starts: np.ndarray, sizes: np.ndarray, tensors: np.ndarray, byte: int) -> str:
    """`; nearest: tensor 12 at [4,096, 8,192), 100 bytes before it`, or that the snapshot is empty."""
    if not starts.size:
        return " (the snapshot holds no entry)"
    ends = starts + sizes
    gaps = np.where(byte < starts, starts - byte, byte - ends + 1)
    k = int(np.argmin(gaps))
    side = "before" if byte < int(starts[k]) else "after"
    return (f"; nearest: tensor {int(tensors[k])} at [{int(starts[k]):,}, {int(ends[k]):,}), {int(gaps[k]):,} "
            f"byte{'' if int(gaps[k]) == 1 else 's'} {side} it")
