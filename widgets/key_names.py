"""The key the TUI's bindings give an action, as a person types it: what the panels write where a core text
points at a key (explorer.document.KeyHint) and where a message names one. The core never names keys."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.binding import Binding

NAMES = {"enter": "Enter", "escape": "Esc", "space": "Space", "tab": "Tab"}  # words read better than ⏎ in prose


def key_for(app: Any, action: str, owners: Iterable[type] = ()) -> str:
    """The first key bound to `action` by the app or by one of `owners` (widget classes, their bases' bindings
    included), or "" when none is."""
    for owner in (type(app), *owners):
        for cls in owner.__mro__:
            for item in vars(cls).get("BINDINGS", []):
                binding = item if isinstance(item, Binding) else Binding(*item)
                if binding.action == action:
                    first = binding.key.split(",")[0]
                    return binding.key_display or NAMES.get(first) or app.get_key_display(Binding(first, action))
    return ""


def keys_said(app: Any, actions: Iterable[tuple[str, str]], owners: Iterable[type] = ()) -> str:
    """`p: problems, n: next` for [(action, what)]: the bound ones, in order."""
    said = [f"{key}: {what}" for action, what in actions if (key := key_for(app, action, owners))]
    return ", ".join(said)
