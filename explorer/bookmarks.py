"""Review bookmarks: a note on a tree item and a view, kept in a sidecar file next to the input.

The input is never written: bookmarks of `model.onnx` live in `model.onnx.bookmarks.json` (or wherever
`--bookmarks PATH` says), so a reviewer can hand the file over and the next person walks the same points.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

VERSION = 1


@dataclass(frozen=True, slots=True)
class Bookmark:
    ref: Any  # a tree ref (tuple of str/int, possibly nested)
    view: str  # tree, timeline, buffers, layout or source
    note: str
    label: str  # what the item was called when it was marked


def sidecar_path(source: Path) -> Path:
    return source.with_name(source.name + ".bookmarks.json")


def _to_tuple(value: Any) -> Any:
    return tuple(_to_tuple(v) for v in value) if isinstance(value, list) else value


def load_bookmarks(path: Path) -> list[Bookmark]:
    """The bookmarks in `path`; [] when there is no such file. Malformed entries are skipped."""
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a bookmarks file ({error})") from None
    found = []
    for entry in data.get("bookmarks", []) if isinstance(data, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("ref"), list):
            found.append(
                Bookmark(
                    _to_tuple(entry["ref"]),
                    str(entry.get("view", "tree")),
                    str(entry.get("note", "")),
                    str(entry.get("label", "")),
                )
            )
    return found


def save_bookmarks(path: Path, source: Path, bookmarks: list[Bookmark]) -> None:
    payload = {"version": VERSION, "file": source.name, "bookmarks": [asdict(b) for b in bookmarks]}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
