"""The plan against what ran (issue #75, its first part): each instruction that writes L2 (its destination field,
in bytes) is checked against the L2 snapshot of the workload it belongs to. A destination in no entry of that
snapshot is a located warning, `address-outside-plan`, naming the instruction, the byte and the nearest entry:
either the scheduler's plan or the code generator is wrong there, and a buffer-overlap hunt starts from it."""

from __future__ import annotations

import numpy as np

from explorer.document import InstructionTable
from explorer.errors import Problem
from explorer.models.schedule import Schedule

CODE = "address-outside-plan"
BAD_ADDRESS = "bad-address"
MAX_LISTED = 200  # warnings listed one by one; the rest are counted in one more


WEIGHT_LOADS = ("ldw",)  # the instructions that load weights into L2: the only ones that write a weight entry


def outside_plan(schedule: Schedule, rows: np.ndarray, destination: np.ndarray, names: list[str],
                 lines: np.ndarray, file_name: str, memory: str = "L2", entry_kinds: tuple[str, ...] = (),
                 sizes: np.ndarray | None = None, reads: bool = False) -> list[Problem]:  # fmt: skip
    """Warnings for the instructions whose destination (`destination` ≥ 0) lies in no entry of their workload's
    snapshot of `memory` ("L2", else the side memory, WL0: its entries named by transfer), or (L2, with the
    entries' `entry_kinds` naming a "weight") in an entry of the wrong role: a weight load outside every weight
    entry there, anything else inside nothing but weight entries. Where `sizes` gives the operand's bytes (≥ 0),
    the whole range must lie in one entry: one that starts in an entry and runs past its end is a warning too.
    `reads`: these are sources (read, not written; no role rule). `rows`: each instruction's schedule row, -1 for
    none (an instruction of no workload is not checked: the join reports those)."""
    in_l2 = memory == "L2"
    verb = "reads" if reads else "writes"
    pointers, addresses, sizes_of, names_of = _entries(schedule, in_l2)
    weight = entry_kinds.index("weight") if in_l2 and "weight" in entry_kinds and not reads else None
    what, unit = _words(in_l2)
    checked = np.flatnonzero((destination >= 0) & (rows >= 0))
    found: list[Problem] = []
    outside = 0
    for k in checked.tolist():
        row, byte = int(rows[k]), int(destination[k])
        lo, hi = int(pointers[row]), int(pointers[row + 1])
        starts, lengths = addresses[lo:hi], sizes_of[lo:hi]
        inside = (starts <= byte) & (byte < starts + lengths)
        workload = f"core {int(schedule.wl_core[row])} workload {int(schedule.wl_id[row])}"
        span = int(sizes[k]) if sizes is not None else -1
        if inside.any():
            why = _wrong_role(names[k], schedule.buf_type[lo:hi][inside], weight) if weight is not None else ""
            where = int(np.flatnonzero(inside)[0])
            if why:
                tensor, role = int(names_of[lo + where]), entry_kinds[int(schedule.buf_type[lo + where])]
                said = (f"{names[k]} (line {int(lines[k])}) writes L2 byte {byte:,} in tensor {tensor}'s entry "
                        f"({role}) of {workload}'s snapshot: {why}")  # fmt: skip
            elif span > 0 and not ((starts <= byte) & (byte + span <= starts + lengths)).any():
                end = int(starts[where] + lengths[where])
                past = byte + span - end
                said = (f"{names[k]} (line {int(lines[k])}) {verb} {memory} {unit}s [{byte:,}, {byte + span:,}), which "
                        f"run {past:,} {unit}{'' if past == 1 else 's'} past the end of {what} "
                        f"{int(names_of[lo + where])}'s entry [{int(starts[where]):,}, {end:,}) in {workload}'s "
                        "snapshot: no one entry holds them")  # fmt: skip
            else:
                continue
        else:
            nearest = _nearest(starts, lengths, names_of[lo:hi], byte, what, unit)
            said = (f"{names[k]} (line {int(lines[k])}) {verb} {memory} {unit} {byte:,}, in no {memory} entry of "
                    f"{workload}'s snapshot{nearest}")
        outside += 1
        if outside > MAX_LISTED:
            continue
        found.append(Problem("warning", CODE, said, f"{file_name}: line {int(lines[k])}",
                             {"line": int(lines[k]), "row": row, "address": byte}))  # fmt: skip
    if outside > MAX_LISTED:
        found.append(Problem("warning", CODE, f"{outside - MAX_LISTED:,} more instructions {verb[:-1]} {memory} "
                             f"outside their workload's plan ({outside:,} in all)", file_name))  # fmt: skip
    return found


def unreadable_sizes(unreadable: dict[int, str], names: list[str], lines: np.ndarray,
                     file_name: str) -> list[Problem]:  # fmt: skip
    """A warning for each size that is none (a dim negative or not whole, a product past 2**62), at its line: that
    instruction's first byte alone is checked."""
    return [Problem("warning", BAD_ADDRESS, f"{names[k]} (line {int(lines[k])}) names size {value}, which is no "
                    "number of bytes (whole dims from 0, their product under 2**62); only its first byte is checked "
                    "against the plan", f"{file_name}: line {int(lines[k])}", {"line": int(lines[k])})
            for k, value in sorted(unreadable.items())[:MAX_LISTED]]  # fmt: skip


def _wrong_role(name: str, kinds: np.ndarray, weight: int) -> str:
    """Why an instruction's destination is in the wrong entries (`kinds`: those holding the byte), or ""."""
    if name.split("_")[0] in WEIGHT_LOADS:
        return "" if (kinds == weight).any() else "a weight load writes outside every weight entry there"
    return "only weight loads write weight entries" if (kinds == weight).all() else ""


def unreadable_addresses(unreadable: dict[int, str], names: list[str], lines: np.ndarray,
                         file_name: str) -> list[Problem]:  # fmt: skip
    """A warning for each destination field that names no byte (negative, past 2**62, not a whole number),
    at its line; the rest of the file is checked as if that instruction named no address."""
    found = [Problem("warning", BAD_ADDRESS, f"{names[k]} (line {int(lines[k])}) names destination {value}, which "
                     "is no address (a whole number of bytes from 0 to 2**62); not checked against the plan",
                     f"{file_name}: line {int(lines[k])}", {"line": int(lines[k])})
             for k, value in sorted(unreadable.items())[:MAX_LISTED]]  # fmt: skip
    if len(unreadable) > MAX_LISTED:
        found.append(Problem("warning", BAD_ADDRESS, f"{len(unreadable) - MAX_LISTED:,} more destinations name no "
                             f"address ({len(unreadable):,} in all)", file_name))  # fmt: skip
    return found


# The format notes' reading of each memory's address field, which the real pipelines measured against (README):
# an L2 address in 64-bit units, a WL0 one in 256-bit units (32 of the schedule's); where an operand's address so
# read lies in an entry too, the details show both readings
OTHER_UNITS = {True: (8, "64-bit units"), False: (32, "256-bit units")}  # in L2?


def operands_in_plan(schedule: Schedule, row: int, table: InstructionTable, k: int, entry_kinds: tuple[str, ...],
                     side_memory: str) -> list[tuple[str, str, str, str]]:  # fmt: skip
    """Instruction `k`'s operands in its workload's snapshot (schedule row `row`, -1 for none), for the details:
    (operand, memory, its bytes, the entry holding them: `tensor 3 (ifmap) [0, 200,704)`, or why none does)."""
    found = []
    wanted = [("destination", "L2", table.l2_destination, table.l2_destination_size),
              ("destination", side_memory or "WL0", table.wl0_destination, table.wl0_destination_size),
              ("source", "L2", table.l2_source, table.l2_source_size)]  # fmt: skip
    for operand, memory, addresses, sizes in wanted:
        if addresses is None or int(addresses[k]) < 0:
            continue
        byte, span = int(addresses[k]), int(sizes[k]) if sizes is not None else -1
        in_l2 = memory == "L2"
        what, unit = _words(in_l2)
        bytes_text = (f"[{byte:,}, {byte + span:,})" if span > 0
                      else f"{byte:,} (first {unit}: the size is not settled)")  # fmt: skip
        if row < 0:
            found.append((operand, memory, bytes_text, "no workload of the schedule"))
            continue
        pointers, starts_of, sizes_of, names_of = _entries(schedule, in_l2)
        lo, hi = int(pointers[row]), int(pointers[row + 1])
        starts, lengths = starts_of[lo:hi], sizes_of[lo:hi]
        inside = np.flatnonzero((starts <= byte) & (byte < starts + lengths))
        if not inside.size:
            found.append((operand, memory, bytes_text, "none" + _nearest(starts, lengths, names_of[lo:hi], byte,
                                                                          what, unit)))
            continue
        j = int(inside[0])
        role = f" ({entry_kinds[int(schedule.buf_type[lo + j])]})" if in_l2 and entry_kinds else ""
        end = int(starts[j] + lengths[j])
        entry = f"{what} {int(names_of[lo + j])}{role} [{int(starts[j]):,}, {end:,})"
        if span > 0 and byte + span > end:
            entry += f": the range runs {byte + span - end:,} {unit}s past its end"
        found.append((operand, memory, bytes_text, entry))
        found += _other_reading(operand, memory, in_l2, byte, starts, lengths, names_of[lo:hi])
    return found


def _other_reading(operand: str, memory: str, in_l2: bool, address: int, starts: np.ndarray, lengths: np.ndarray,
                   names: np.ndarray) -> list[tuple[str, str, str, str]]:  # fmt: skip
    """The row of the format notes' reading of an address (OTHER_UNITS) when it lies in an entry too: both
    readings fit this instruction, so both are shown; [] when it does not."""
    factor, words = OTHER_UNITS[in_l2]
    what, unit = _words(in_l2)
    other = address * factor
    if other == address:  # address 0: both readings name the same byte
        return []
    inside = np.flatnonzero((starts <= other) & (other < starts + lengths))
    if not inside.size:
        return []
    j = int(inside[0])
    return [(f"{operand} in {words}", memory, f"{other:,} (first {unit})",
             f"{what} {int(names[j])} [{int(starts[j]):,}, {int(starts[j] + lengths[j]):,}): fits too")]


def _words(in_l2: bool) -> tuple[str, str]:
    """What an entry of the memory is and what its addresses count: L2's tensors in bytes, the side memory's
    (WL0's) transfers in its units of 64 bytes (README)."""
    return ("tensor", "byte") if in_l2 else ("transfer", "unit")


def _entries(schedule: Schedule, in_l2: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The snapshots' entries of L2 or of the side memory: (row pointers, first bytes, sizes, tensor or transfer
    ids)."""
    if in_l2:
        return schedule.buf_ptr, schedule.buf_addr, schedule.buf_size, schedule.buf_tensor
    return schedule.w0_ptr, schedule.w0_addr, schedule.w0_size, schedule.w0_tid


def _nearest(starts: np.ndarray, sizes: np.ndarray, tensors: np.ndarray, byte: int, what: str = "tensor",
             unit: str = "byte") -> str:  # fmt: skip
    """`; nearest: tensor 12 at [4,096, 8,192), 100 bytes before it`, or that the snapshot is empty."""
    if not starts.size:
        return " (the snapshot holds no entry)"
    ends = starts + sizes
    gaps = np.where(byte < starts, starts - byte, byte - ends + 1)
    k = int(np.argmin(gaps))
    side = "before" if byte < int(starts[k]) else "after"
    return (f"; nearest: {what} {int(tensors[k])} at [{int(starts[k]):,}, {int(ends[k]):,}), {int(gaps[k]):,} "
            f"{unit}{'' if int(gaps[k]) == 1 else 's'} {side} it")
