"""The load's progress bar: its stages' shares of the bar, the bytes read, and each core's decode moving it."""

from __future__ import annotations

from typing import Any

from explorer.document import ProgressCallback

# Shares of the progress bar: reading the file, decoding the cores (by bytes), building the columns.
READ_SHARE = (0.0, 0.2)


DECODE_SHARE = (0.2, 0.75)


BUILD_SHARE = (0.75, 1.0)


READ_CHUNK = 32 << 20


class ByteMeter:
    """Turns (bytes done, bytes total) within a stage into the loader's overall fraction, so a one-core file's
    bar moves as steadily as a 16-core one's."""

    def __init__(self, progress: ProgressCallback) -> None:
        self.progress = progress

    def stage(self, label: str, share: tuple[float, float], done: float, total: float) -> None:
        lo, hi = share
        self.progress(lo + (hi - lo) * min(done / max(total, 1), 1.0), 1, label)


class CoreProgress:
    """One core's part of the decode stage, by its bytes: its workloads fill the first half, its L2 entries
    (decoded afterwards) the second."""

    def __init__(self, meter: ByteMeter, label: str, before: int, size: int, total: int) -> None:
        self.meter, self.label, self.before, self.size, self.total = meter, label, before, size, total

    def workloads(self, bytes_done: int) -> None:
        self._at(0.5 * bytes_done / max(self.size, 1))

    def entries(self, done: int, count: int) -> None:
        self._at(0.5 + 0.5 * done / max(count, 1))

    def _at(self, fraction: float) -> None:
        self.meter.stage(self.label, DECODE_SHARE, self.before + fraction * self.size, self.total)


def read_all(handle: Any, size: int, meter: ByteMeter) -> bytes | bytearray:
    """The whole file, read in chunks into one buffer (no second copy) so the bar moves while a large file comes
    off the disk. A file that grows while it is read keeps what was there when it was opened; one that shrinks
    is cut where it ended."""
    if size <= READ_CHUNK:
        return handle.read()
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        got = handle.readinto(view[done : done + READ_CHUNK])
        if not got:
            break
        done += got
        meter.stage("reading", READ_SHARE, done, size)
    view.release()
    if done < size:
        del buffer[done:]
    return buffer
