"""The floor of the TUI's second open (BENCHMARKS.md, issue #76): the least a Textual app takes to show a kept
document. One `Static`, no panels or views; the file's cache entry read on a thread from the first line, as
`ir-explorer` reads it (explorer.open_ahead), and the document's problem count written once it is read. What
`ir-explorer FILE` takes beyond this is its own: its modules, panels and views.

    python benchmarks/second_open_floor.py FILE   (the cache folder and switch from the environment)
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

path = Path(sys.argv[1])
opened: dict[str, Any] = {}


def read() -> None:
    from explorer.api import open_document

    opened["document"] = open_document(path)


reading = threading.Thread(target=read, daemon=True)
reading.start()

from textual.app import App, ComposeResult  # noqa: E402  (imported while the entry is read, as the explorer does)
from textual.widgets import Static  # noqa: E402


class Floor(App[None]):
    def compose(self) -> ComposeResult:
        yield Static(f"{path.name} · reading", id="bar")

    def on_mount(self) -> None:
        self.run_worker(self.shown, thread=True)

    def shown(self) -> None:
        reading.join()
        problems = len(opened["document"].problems)
        self.call_from_thread(self.query_one("#bar", Static).update, f"{path.name} · {problems:,} problems read")


if __name__ == "__main__":
    Floor().run()
