"""The key footer: the screen's shown bindings drawn as one line by one widget.

Textual's `Footer` rebuilds a widget per key on every focus change (a recompose, then a layout pass), and a view
switch moves the focus three or four times: each rebuild was another paint after the view was already drawn
(BENCHMARKS.md, key latency). This footer recomputes its line when the bindings change and repaints only when the
line differs; it looks and clicks like Textual's."""

from __future__ import annotations

from typing import NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget


class ShownKey(NamedTuple):
    """One key as the footer shows it."""

    key: str  # what a click on it simulates
    display: str
    description: str
    enabled: bool


class KeyFooter(Widget, can_focus=False):
    """The shown bindings of the focused chain, in one line; the command palette's key at the right."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"key-footer--key", "key-footer--description", "key-footer--palette-edge"}
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .key-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .key-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .key-footer--palette-edge {
            color: $foreground 20%;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002  # Textual's own name
        super().__init__(id=id)
        self.keys: tuple[ShownKey, ...] = ()
        self.palette_key: ShownKey | None = None
        self._spans: list[tuple[int, int, ShownKey]] = []  # (start, end, key) of the last line drawn

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        """Read the shown keys again; repaint only when they differ from those drawn."""
        if not self.is_attached or screen is not self.screen:
            return
        keys, palette = self.shown_keys(screen)
        if keys != self.keys or palette != self.palette_key:
            self.keys, self.palette_key = keys, palette
            self.refresh()

    def shown_keys(self, screen: Screen) -> tuple[tuple[ShownKey, ...], ShownKey | None]:
        """The keys Textual's footer would show (one per action, first binding wins) and the palette's key."""
        active = screen.active_bindings
        by_action: dict[str, ShownKey] = {}
        for _node, binding, enabled, _tooltip in active.values():
            if binding.show and binding.action not in by_action:
                shown = ShownKey(binding.key, self.app.get_key_display(binding), binding.description, enabled)
                by_action[binding.action] = shown
        palette = None
        if self.app.ENABLE_COMMAND_PALETTE and self.app.COMMAND_PALETTE_BINDING in active:
            _node, binding, enabled, _tooltip = active[self.app.COMMAND_PALETTE_BINDING]
            palette = ShownKey(binding.key, self.app.get_key_display(binding), binding.description, enabled)
        return tuple(by_action.values()), palette

    def key_spans(self) -> dict[str, tuple[int, int]]:
        """Each drawn key's columns (start, end) by its display, as last drawn: what a click or a test finds."""
        return {key.display: (start, end) for start, end, key in self._spans}

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        key_style = self.get_component_rich_style("key-footer--key")
        description_style = self.get_component_rich_style("key-footer--description")
        edge_style = self.get_component_rich_style("key-footer--palette-edge")
        right: list[Segment] = []
        spans: list[tuple[int, int, ShownKey]] = []
        if self.palette_key is not None:
            palette = self.palette_key
            # as Textual draws it: an edge, the key without padding, the description after a space
            dim = Style(dim=True) if not palette.enabled else Style()
            right = [
                Segment("▏", edge_style),
                Segment(palette.display, base + key_style + dim),
                Segment(f" {palette.description}", base + description_style + dim),
                Segment(" ", base),
            ]
        right_width = sum(segment.cell_length for segment in right)
        room = max(0, width - right_width)
        left: list[Segment] = []
        used = 0
        for key in self.keys:
            pieces = self._key_segments(key, key_style, description_style, base)
            size = sum(piece.cell_length for piece in pieces)
            if used >= room:
                break
            spans.append((used, min(room, used + size), key))
            left.extend(pieces)
            used += size
        line = Strip(left).crop(0, room).extend_cell_length(room, base)
        if right:
            start = width - right_width
            if self.palette_key is not None and start >= 0:
                spans.append((start, width, self.palette_key))
            line = Strip([*line, *right])
        self._spans = spans
        return line.crop(0, width).extend_cell_length(width, base)

    @staticmethod
    def _key_segments(key: ShownKey, key_style: Style, description_style: Style, base: Style) -> list[Segment]:
        dim = Style(dim=True) if not key.enabled else Style()
        if not key.description:
            return [Segment(f" {key.display} ", base + key_style + dim)]
        return [Segment(f" {key.display} ", base + key_style + dim),
                Segment(f"{key.description} ", base + description_style + dim)]  # fmt: skip

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                if key.enabled:
                    self.app.simulate_key(key.key)
                else:
                    self.app.bell()
                return
