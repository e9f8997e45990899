"""Navigation keys pressed while the graph is still being built: kept, and run in order once the first frame is
drawn (the window placed), instead of being lost."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from textual.widget import Widget

KEPT_KEYS = 16  # keys kept while building; more are dropped


class KeptKeys:
    def __init__(self) -> None:
        self.kept: list[tuple[Callable[..., Any], tuple, dict]] = []
        self.replaying = False

    def clear(self) -> None:
        self.kept.clear()
        self.replaying = False

    def keep(self, action: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        if len(self.kept) < KEPT_KEYS:
            self.kept.append((action, args, kwargs))

    def replay(self, widget: Widget) -> None:
        """Start running the kept keys on `widget` (its first frame is drawn), unless they run already."""
        if self.kept and not self.replaying:
            self.replaying = True
            widget.call_later(self._next, widget)

    def _next(self, widget: Widget) -> None:
        """One kept key, then the rest after the screen has caught up: what each key selects reaches the other
        views (and comes back) before the next runs, as when they are pressed one by one."""
        if not self.kept:
            self.replaying = False
            return
        action, args, kwargs = self.kept.pop(0)
        action(widget, *args, **kwargs)
        if self.kept:
            widget.call_after_refresh(self._next, widget)
        else:
            self.replaying = False


def kept_until_drawn(action: Any) -> Any:
    """An action of a view with `kept_keys`, `model`, `error` and `document`: pressed while the model is still
    being built, it is kept (KeptKeys) and runs once the first frame is drawn."""

    @functools.wraps(action)
    def keeping(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.model is None and not self.error and self.document is not None:
            self.kept_keys.keep(action, args, kwargs)
            return None
        return action(self, *args, **kwargs)

    return keeping
