"""TVM Model Library Format bundles: tars read in memory, or extracted folders (metadata, graph, params,
Relay/TIR/C sources, the graph executor's storage plan)."""

from __future__ import annotations

from pathlib import Path

from explorer.format import Format, lazy

TAR_ENDINGS = (".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz")


def match(path: Path, head: bytes) -> bool:
    if path.is_dir():  # a compiled Core ML folder has a metadata.json too (an array): not a bundle
        compiled_coreml = path.suffix == ".mlmodelc" or (path / "coremldata.bin").exists()
        return (path / "metadata.json").is_file() and not compiled_coreml
    if path.name.endswith(TAR_ENDINGS):
        return True
    return len(head) >= 512 and head[257:262] == b"ustar"  # a tar without the usual name


LIMITS = (  # the README's Limits section lists these (tested)
    (
        "archive: 512 MiB per member, 2 GiB in all, 100,000 members; links, devices and paths leaving the "
        "bundle are refused; members are read in memory, so their decompressed sizes go through the memory guard"
    ),
    (
        "params: never held in memory, whatever their size: each file's arrays are indexed from their headers "
        "(names up to 64 KiB) and a value is read from the bundle when asked (arrays over 256 MiB are not "
        "summarised); they do not count towards the caps above"
    ),
    "metadata: 16 MiB and 1,000,000 JSON values (counted before decoding)",
    (
        "graph: 256 MiB and 8,000,000 JSON values per graph file (counted before decoding), 1,000,000 nodes, "
        "1,000,000 node outputs, 32 dimensions per tensor, storage ids below 2^31; refused (the bundle still "
        "opens) when its JSON objects at 5,000 bytes each pass the memory available"
    ),
)

FORMATS = (
    Format(
        "tvm-mlf",
        "TVM Model Library Format",
        TAR_ENDINGS,
        match,
        lazy("explorer.formats.tvm_mlf.reader", "load"),
        accepts_directories=True,
        write_samples=lazy("explorer.formats.tvm_mlf.samples", "write_samples"),
        limits=LIMITS,
        cacheable=True,
    ),
)
