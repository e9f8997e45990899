"""JSON paths and readable messages for decoding errors.

msgspec reports `Expected `int`, got `str` - at `$.buffer[3].address``; users want
`$["0"][17].buffer[3].address: expected an integer, got "0x100"`. These helpers do that translation.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from explorer.errors import Problem

_AT = re.compile(r"^(?P<what>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
_TOKEN = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[\.\.\.\]")
_EXPECTED = re.compile(r"^Expected `(?P<type>[^`]+)`(?P<rest>.*?), got `(?P<got>[^`]+)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")

_TYPE_WORDS = {
    "int": "an integer",
    "str": "a string",
    "float": "a number",
    "bool": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def key(name: str) -> str:
    """One path step for an object key: `.name` for identifiers, `["0"]` for anything else."""
    return f".{name}" if name.isidentifier() else f"[{json.dumps(name)}]"


def join(base: str, relative: str) -> str:
    """Append a msgspec-relative path (`$.a[1]`) to an absolute base path (`$["0"][17]`)."""
    return base + relative[1:] if relative.startswith("$") else base + relative


def value_at(root: Any, relative: str) -> tuple[bool, Any]:
    """Follow a msgspec path inside plain decoded JSON; (found, value)."""
    node = root
    for match in _TOKEN.finditer(relative[1:] if relative.startswith("$") else relative):
        name, index = match.group(1), match.group(2)
        try:
            if name is not None:
                node = node[name]
            elif index is not None:
                node = node[int(index)]
            else:
                return False, None
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, node


def short_json(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explain_validation_error(error: msgspec.ValidationError, root: Any, base_path: str) -> tuple[str, str]:
    """(location, message) for a msgspec validation error raised while converting `root`."""
    match = _AT.match(str(error))
    what = match.group("what") if match else str(error)
    relative = (match.group("path") if match else None) or "$"
    location = join(base_path, relative)
    found, value = value_at(root, relative)
    expected = _EXPECTED.match(what)
    if expected:
        type_word = " or ".join(_TYPE_WORDS.get(t.strip(), t.strip()) for t in expected["type"].split("|"))
        got = short_json(value) if found else expected["got"]
        return location, f"expected {type_word}{expected['rest']}, got {got}"
    missing = _MISSING.match(what)
    if missing:
        return location, f'missing required key "{missing["field"]}"'
    if what.startswith("Invalid enum value"):
        return location, f"unexpected value {short_json(value) if found else what[19:]}"
    return location, what[:1].lower() + what[1:]


class _Pairs(dict[str, Any]):
    """A decoded object that remembers the keys it saw more than once (a JSON reader keeps the last)."""

    __slots__ = ("repeated",)
    repeated: dict[str, int]


def duplicate_keys(
    data: bytes | str, base: str = "$", limit: int = 1_000, top_only: bool = False
) -> list[tuple[str, int]]:
    """(path, times) of every key that appears more than once in its object, in document order, up to `limit`.

    JSON readers keep the last copy silently: an ARK file ending in a second `"Nodes": []` read as a model with
    no nodes. The standard library's decoder is the one that hands over an object's pairs before they become a
    dict; it is only asked for files decoded whole anyway (and for a schedule's top level without its cores).
    Unparsable text (the loader's own decoder reports it) gives []. `top_only`: the outermost object's keys.
    The paths are worked out only when some object repeats a key (a file without any is one decode).
    """
    repeating: list[_Pairs] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(pairs)
        if len(found) == len(pairs):
            return found
        counts: dict[str, int] = {}
        for name, _ in pairs:
            counts[name] = counts.get(name, 0) + 1
        marked = _Pairs(found)
        marked.repeated = {name: count for name, count in counts.items() if count > 1}
        repeating.append(marked)
        return marked

    try:
        root = json.loads(data, object_pairs_hook=pairs_hook)
    except (ValueError, RecursionError):
        return []
    if not repeating:
        return []
    found: list[tuple[str, int]] = []
    stack: list[tuple[str, Any]] = [(base, root)]
    while stack and len(found) < limit:
        path, value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value, _Pairs):
                found += [(path + key(name), count) for name, count in value.repeated.items()]
            if top_only:
                break
            stack += [(path + key(name), child) for name, child in reversed(value.items())
                      if isinstance(child, dict | list)]  # fmt: skip
        elif isinstance(value, list):
            stack += [(f"{path}[{i}]", child) for i, child in reversed(list(enumerate(value)))
                      if isinstance(child, dict | list)]  # fmt: skip
    return found[:limit]


def duplicate_problems(data: bytes | str, where: str = "", base: str = "$", top_only: bool = False) -> list[Problem]:
    """`duplicate-key` errors for `duplicate_keys`, located `where` + path (a tar member's name, say)."""
    return [
        Problem("error", "duplicate-key", f"the key appears {count} times; only the last is read", where + path)
        for path, count in duplicate_keys(data, base, top_only=top_only)
    ]
