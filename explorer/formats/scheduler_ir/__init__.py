"""The multi-core Gemini scheduler IR (`*_stschedule.json`): per-core workloads, DRAM transfers, L2 and WL0
snapshots. Read into the neutral columnar `explorer.schedule.Schedule`, so the timeline and buffer views draw it."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.document import Document, ProgressCallback
from explorer.format import Format

_SNIFF = re.compile(rb'^\s*\{\s*"(-1|\d+|buffersize|top_batch_cut|xlen|ylen)"\s*:')


def match(path: Path, head: bytes) -> bool:
    return path.name.endswith("stschedule.json") or bool(_SNIFF.match(head))


def load(path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.formats.scheduler_ir.reader import load as read

    return read(path, progress=progress, strict=strict)


def write_samples(folder: Path) -> list[Path]:
    from explorer.formats.scheduler_ir.samples import write_samples as write

    return write(folder)


FORMATS = (
    Format(
        name="scheduler-ir",
        title="Gemini scheduler IR",
        endings=("stschedule.json", ".json"),
        match=match,
        load=load,
        write_samples=write_samples,
    ),
)
