"""The TUI's file, opened as the TUI shows it (`open_checked`), and opened ahead (`OpenAhead`): when the
derived-data cache holds the file, its entry is hashed and read on a thread from the moment the command starts,
while Textual and the app's modules are imported, so the document is there about when the app can first show
it. Only the hash runs beside the imports (xxhash lets go of the interpreter); the rest shares the interpreter."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.api import CHECKING, open_document
from explorer.document import Document, ProgressCallback, no_progress
from explorer.load_turn import load_turn

if TYPE_CHECKING:
    from explorer.schedule.incidents import Incident

Opened = tuple[Document, list["Incident"]]


def open_checked(
    path: Path,
    *,
    strict: bool = False,
    companions: dict[str, Path | None] | None = None,
    dims: Mapping[str, int] | None = None,
    progress: ProgressCallback | None = None,
) -> Opened:
    """The file as the TUI first shows it: opened, deep-checked, its overlap incidents found. The WL0 incidents'
    roles are named from the loaded columns (at once); the others' are read again from the file, a big file's
    by worker processes, so the TUI names them once the file is on screen (`name_incident_roles`)."""
    progress = progress or no_progress
    document = open_document(path, strict=strict, progress=progress, companions=companions, dims=dims)
    progress(0.99, 1, CHECKING)
    document.run_deep_checks()  # (open_document bound the dims it starts from)
    from explorer.schedule.incidents import incidents_of, name_incident_roles

    incidents = incidents_of(document, with_roles=False)
    name_incident_roles(document, [incident for incident in incidents if incident.code == "wl0-overlap"])
    return document, incidents


class OpenAhead:
    """`open_checked` on a daemon thread, started at once. Whoever waits for it (`result`) also hears its progress
    (an entry that turns out stale is read from the file, a long load) and may stop it through that callback."""

    def __init__(self, path: Path, *, strict: bool = False, companions: dict[str, Path | None] | None = None,
                 dims: Mapping[str, int] | None = None) -> None:  # fmt: skip
        self._done = threading.Event()
        self._opened: Opened | None = None
        self._error: BaseException | None = None
        self._listener: ProgressCallback | None = None
        arguments = {"strict": strict, "companions": companions, "dims": dims, "progress": self._progress}
        threading.Thread(target=self._open, args=(path, arguments), name="ir-explorer open ahead",
                         daemon=True).start()  # fmt: skip

    def _open(self, path: Path, arguments: dict[str, Any]) -> None:
        try:
            with load_turn(lambda: None, lambda: False):  # (serve's tabs: one load at a time, this one too)
                self._opened = open_checked(path, **arguments)
        except BaseException as error:  # handed to whoever waits, as if the open had run there
            self._error = error
        finally:
            self._done.set()

    def _progress(self, done: float, total: float, stage: str) -> None:
        listener = self._listener
        if listener is not None:
            listener(done, total, stage)

    def ready(self) -> bool:
        """Whether the open has ended (opened, or failed: `result` says which) without anyone waiting."""
        return self._done.is_set()

    def result(self, progress: ProgressCallback | None = None, cancelled: Callable[[], bool] = lambda: False
               ) -> Opened | None:  # fmt: skip
        """The opened file, or the open's exception raised here; None when `cancelled()` while waiting. From now on
        `progress` hears the open's progress, and whatever it raises ends the open."""
        self._listener = progress
        while not self._done.wait(0.05):
            if cancelled():
                return None
        if self._error is not None:
            raise self._error
        return self._opened


def open_ahead_if_kept(path: Path, *, strict: bool, companions: dict[str, Path | None] | None,
                       dims: Mapping[str, int] | None) -> OpenAhead | None:  # fmt: skip
    """An OpenAhead of `path` when the cache holds an entry written from the file as it is now (a file read from
    scratch is opened by the app's load worker, which shows its first part meanwhile), else None."""
    from explorer.cache import documents as derived
    from explorer.errors import LoadError
    from explorer.registry import pick_format

    try:
        found = pick_format(path)
    except LoadError:
        return None  # the load says it, in its place
    if not derived.has_entry(found, path, strict, companions, dims):
        return None
    return OpenAhead(path, strict=strict, companions=companions, dims=dims)
