"""Screens for reviews: a one-line prompt, the bookmark list, and the diff of two files."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line (a bookmark note, a path); Enter answers, Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 80; height: auto; border: round $accent; padding: 1 2; background: $panel; }
    """

    def __init__(self, question: str, value: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.question))
            yield Input(value=self.value, id="prompt-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def on_key(self, event: events.Key) -> None:
        """Keys typed right after the key that opened the prompt reach the screen before its input has the
        focus: they go into the input (a quick typist's first words were lost)."""
        field = self.query_one("#prompt-input", Input)
        if self.focused is field:
            return
        if event.is_printable and event.character:
            field.insert_text_at_cursor(event.character)
        elif event.key == "backspace":
            field.action_delete_left()
        elif event.key == "enter":
            self.dismiss(field.value)
        else:
            return
        event.stop()
        field.focus()

    def action_cancel(self) -> None:
        self.dismiss(None)


MAX_LISTED = 2_000  # bookmarks listed at once


class BookmarksScreen(ModalScreen[int | None]):
    """The bookmarks of this file: Enter jumps to one, Delete removes it, Escape closes."""

    BINDINGS = [Binding("escape", "cancel", "Close"), Binding("delete", "delete", "Delete bookmark")]
    DEFAULT_CSS = """
    BookmarksScreen { align: center middle; }
    BookmarksScreen > Vertical { width: 100; height: 70%; border: round $accent; padding: 0 1; background: $panel; }
    BookmarksScreen OptionList { height: 1fr; }
    """

    def __init__(self, bookmarks: list[Any], on_delete: Any) -> None:
        super().__init__()
        self.bookmarks = bookmarks
        self.on_delete = on_delete

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Bookmarks  (Enter: go there · Delete: remove · Escape: close)")
            yield OptionList(*self._options(), id="bookmark-list")

    def _options(self) -> list[Option]:
        if not self.bookmarks:
            return [Option("No bookmarks yet: press b on an item to mark it with a note.", disabled=True)]
        listed = [
            Option(
                Text.assemble(
                    (f"{k + 1}. ", "bold"),
                    (b.note or "(no note)", "bold cyan"),
                    f"  {b.label}  [{b.view}]",
                    (f"  {b.author} {b.created[:16].replace('T', ' ')}" if b.author or b.created else "", "dim"),
                )
            )
            for k, b in enumerate(self.bookmarks[:MAX_LISTED])
        ]
        if len(self.bookmarks) > MAX_LISTED:  # another reviewer's 200,000 took 35 s to list
            more = len(self.bookmarks) - MAX_LISTED
            listed.append(Option(Text(f"… and {more:,} more, not listed (the first {MAX_LISTED:,} are)", "dim"),
                                 disabled=True))  # fmt: skip
        return listed

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.bookmarks:
            self.dismiss(event.option_index)

    def action_delete(self) -> None:
        index = self.query_one(OptionList).highlighted
        if index is None or not self.bookmarks:
            return
        self.show(self.on_delete(index))  # what the sidecar holds after the delete

    def show(self, bookmarks: list[Any]) -> None:
        """List `bookmarks` instead (read again, or after a delete), the highlight kept where it was."""
        option_list = self.query_one(OptionList)
        highlighted = option_list.highlighted
        self.bookmarks = bookmarks
        option_list.clear_options()
        option_list.add_options(self._options())
        if highlighted is not None and option_list.option_count:
            option_list.highlighted = min(highlighted, option_list.option_count - 1)

    def action_cancel(self) -> None:
        self.dismiss(None)


class LinksScreen(ModalScreen[int | None]):
    """Where the selected item's data comes from and goes to; Enter jumps there."""

    BINDINGS = [Binding("escape", "cancel", "Close")]
    DEFAULT_CSS = """
    LinksScreen { align: center middle; }
    LinksScreen > Vertical { width: 100; max-width: 100%; height: auto; max-height: 80%; border: round $accent;
                             padding: 0 1; background: $panel; }
    LinksScreen OptionList { height: auto; max-height: 30; }
    """

    def __init__(self, title: str, labels: list[str]) -> None:
        super().__init__()
        self.title_text = title
        self.labels = labels

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text))
            yield OptionList(*(Option(Text(label)) for label in self.labels), id="link-list")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)

    def action_cancel(self) -> None:
        self.dismiss(None)


class DiffScreen(ModalScreen[tuple[str, Any] | None]):
    """The diff `ir-explorer diff A B` prints: its summary, then one line per change. Enter on a change jumps to
    its workload (or layer) in this file, `o` opens the other file there (a workload only B has opens B)."""

    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("o", "open_other", "Open in the other file"),
    ]
    DEFAULT_CSS = """
    DiffScreen { align: center middle; }
    DiffScreen > Vertical { width: 90%; height: 85%; border: round $accent; background: $panel; padding: 0 1; }
    DiffScreen #diff-summary { height: auto; max-height: 40%; }
    DiffScreen OptionList { height: 1fr; }
    """

    def __init__(self, summary: list[str], changes: list[str], targets: list[Any]) -> None:
        super().__init__()
        self.summary = summary
        self.changes = changes
        self.targets = targets  # per change: ("a" | "b", (core, workload_id) | layer name) or None

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll(id="diff-summary"):
                yield Static(Text("\n".join(self.summary)), id="diff-text")
            yield Label(Text("Enter: go there in this file · o: open the other file there · Esc: close", style="dim"))
            yield OptionList(*(Option(Text(line)) for line in self.changes), id="diff-changes")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _chosen(self) -> Any:
        index = self.query_one(OptionList).highlighted
        return self.targets[index] if index is not None and 0 <= index < len(self.targets) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        target = self._chosen()
        if target is None:
            self.notify("this change names no workload or layer to go to")
            return
        self.dismiss(target)

    def action_open_other(self) -> None:
        target = self._chosen()
        if target is None:
            self.notify("this change names no workload or layer to go to")
            return
        self.dismiss(("b" if target[0] == "a" else "a", target[1]))

    def action_close(self) -> None:
        self.dismiss(None)
