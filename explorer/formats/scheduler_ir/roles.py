"""What each L2 entry of a workload is (type, layer, first source), read again from the file: what incidents name
their tensors with. A big file's incidents ask for thousands of workloads, so worker processes can read them
(`roles_at`) while this process runs the remaining checks; the result is the same either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from explorer.file_spans import FileIdentity, FileSpans


class RoleSource(msgspec.Struct, gc=False):
    type: str | None = None
    core_id: int | None = None
    layer_name: str | None = None


class _RoleEntry(msgspec.Struct, gc=False):
    type: str = "?"
    layer_name: str | None = None
    source: list[RoleSource] | RoleSource | None = None


class _RoleWorkload(msgspec.Struct, gc=False):
    buffer: list[_RoleEntry] = []


_role_decoder = msgspec.json.Decoder(_RoleWorkload)
_DECODE_ERRORS = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)

Role = tuple[str, str | None, RoleSource | None]


def roles_of(raw: bytes | bytearray) -> list[Role]:
    """A workload's L2 entries, in file order, as (type, layer name, first source). Only those keys are decoded
    (typed, the rest skipped); an odd record is read as plain JSON, and one that is not JSON names nothing."""
    try:
        decoded = _role_decoder.decode(raw).buffer
    except _DECODE_ERRORS:
        return _plain_roles(raw)
    return [(e.type, e.layer_name, e.source[0] if isinstance(e.source, list) and e.source else
             (e.source if isinstance(e.source, RoleSource) else None)) for e in decoded]  # fmt: skip


def _plain_roles(raw: bytes | bytearray) -> list[Role]:
    try:
        value = msgspec.json.decode(raw)
    except _DECODE_ERRORS:
        return []
    roles: list[Role] = []
    for item in object_entries(value.get("buffer") if isinstance(value, dict) else None):
        sources = object_entries(item.get("source"))
        first = sources[0] if sources else None
        core = first.get("core_id") if first else None
        source = (RoleSource(str(first.get("type")), core if isinstance(core, int) else None,
                             first.get("layer_name") if isinstance(first.get("layer_name"), str) else None)
                  if first else None)  # fmt: skip
        roles.append((str(item.get("type", "?")), item.get("layer_name"), source))
    return roles


def object_entries(values: Any, keep_positions: bool = False) -> list:
    """The object entries of a JSON list; with keep_positions, non-objects become {} so indices still match.
    Shared with the document view, which reads the same lenient JSON."""
    if not isinstance(values, list):
        return []
    if keep_positions:
        return [v if isinstance(v, dict) else {} for v in values]
    return [v for v in values if isinstance(v, dict)]


def roles_at(path: str, stamp: FileIdentity, span: tuple[int, int], positions: list[int]) -> list[list[Role]]:
    """What a worker does for incidents: the roles of the workloads at `positions` of the core array at `span`
    (refused, as FileChanged, if the file changed since it was loaded). Module-level, found by name."""
    spans = FileSpans(Path(path), {0: span}, stamp)
    return [roles_of(spans.item(0, position)) for position in positions]
