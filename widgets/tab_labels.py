"""The views' tab row: each tab says its key and its title, or a shorter title when the row would not fit the
panel (at 80 columns a schedule's seven tabs need 58 cells of 50), so the last tab is never cut off."""

from __future__ import annotations

from textual import events
from textual.widgets import TabbedContent

from widgets.views import spec_named

TAB_PADDING = 2  # a tab's label has a cell of padding on each side


def tab_label(name: str, short: bool) -> str:
    spec = spec_named(name)
    if spec is None:
        return name
    return f"{spec.key} {spec.short if short and spec.short else spec.title}"


class FittingTabs(TabbedContent):
    """A TabbedContent whose labels shorten when the row is wider than the panel (and lengthen again)."""

    def on_resize(self, _event: events.Resize) -> None:
        self.fit_labels()

    def fit_labels(self) -> None:
        names = [pane.id.removeprefix("tab-") for pane in self.query("TabPane") if pane.id]
        if not names or self.size.width == 0:
            return
        full = sum(len(tab_label(name, False)) + TAB_PADDING for name in names)
        short = full > self.size.width
        for name in names:
            tab = self.get_tab(f"tab-{name}")
            label = tab_label(name, short)
            if tab.label_text != label:
                tab.label = label
