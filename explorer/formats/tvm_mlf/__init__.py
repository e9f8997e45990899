"""TVM Model Library Format bundles: tars read in memory, or extracted folders (metadata, graph, params,
Relay/TIR/C sources, the graph executor's storage plan)."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback
from explorer.format import Format

TAR_ENDINGS = (".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz")


def match(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return (path / "metadata.json").is_file()
    if path.name.endswith(TAR_ENDINGS):
        return True
    return len(head) >= 512 and head[257:262] == b"ustar"  # a tar without the usual name


def load(path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.formats.tvm_mlf.reader import load as read

    return read(path, progress=progress, strict=strict)


def write_samples(folder: Path) -> list[Path]:
    from explorer.formats.tvm_mlf.samples import write_samples as write

    return write(folder)


FORMATS = (
    Format(
        "tvm-mlf",
        "TVM Model Library Format",
        TAR_ENDINGS,
        match,
        load,
        accepts_directories=True,
        write_samples=write_samples,
    ),
)
