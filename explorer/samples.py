"""``python -m explorer.samples DIR``: every format's demo files for sample_data/ (what `make samples` runs).

Each format package generates its own (Format.write_samples); this only asks the registry for them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from explorer.registry import builtin_formats


def write_samples(folder: Path) -> list[Path]:
    written: list[Path] = []
    for found in builtin_formats():
        if found.write_samples is not None:
            written += found.write_samples(folder)
    return written


if __name__ == "__main__":
    for written_path in write_samples(Path(sys.argv[1] if len(sys.argv) > 1 else "sample_data")):
        print(written_path)
