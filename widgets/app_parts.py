"""What the app's parts (DocumentLoading, SelectionSync, ReviewActions) share: the app's state and the methods one
part calls on another, declared once, so each part is type-checked alone against the app it is mixed into. At
run time it is a plain class; to the type checker it is the Textual App with these members."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.widget import Widget

from explorer.document import Document
from explorer.errors import LoadError, Problem

if TYPE_CHECKING:
    from textual.app import App

    _Base = App[None]
else:
    _Base = object


class ShowsDocument(Protocol):
    """A view the app hands each loaded document to (views.py lists them; each is queried by its id)."""

    def show_document(self, document: Document) -> None: ...


def explorer_app(widget: Widget) -> AppParts:
    """The app a widget of ours runs in, with the app's own actions (a view asks for another view)."""
    return cast(AppParts, widget.app)


class AppParts(_Base):
    path: Path
    companions: dict[str, Path | None]
    node_data: list[str | Path]  # per-node data files, read against the graph once it loads
    dims: dict[str, int]  # symbolic dims bound for the counts (--dims)
    compare: Path | None  # a file whose graph is shown beside this one's once it loads (--compare)
    bookmarks_path: Path
    bookmarks: list[Any]
    author: str
    strict: bool
    document: Document | None
    load_error: LoadError | None
    incidents: list[Any] | None  # the overlap incidents, found by the load worker
    previous_document: Document | None  # the file shown before the diff opened another
    views_ready: bool  # every view of the loaded document is mounted and filled
    mounted_views: dict[str, Widget] | None  # the views by name once mounted
    selections: dict[str, tuple[Any, str]]  # view id → (ref, label) it last selected
    last_selection: str  # the view that selected last
    _last_progress: float
    _last_stage: str
    _preview_replaced: bool  # a first part of the file was shown and is replaced: collect it once
    _wanted_view: str | None  # a view asked for before its tab was added: shown once it is
    _jump_reason: tuple[Any, Problem, tuple[int, ...]] | None  # (ref, problem, tensors to mark)

    if TYPE_CHECKING:  # defined by the app or by another part (the views, or None: app.py types them)

        @property
        def timeline(self) -> Any: ...
        @property
        def buffers(self) -> Any: ...
        @property
        def memory_map(self) -> Any: ...
        @property
        def mesh(self) -> Any: ...
        @property
        def layout(self) -> Any: ...
        @property
        def source(self) -> Any: ...
        @property
        def graph(self) -> Any: ...
        def action_view(self, name: str) -> None: ...
        def show_document(self, document: Document, roles_pending: bool = False) -> None: ...
        @staticmethod
        def views_for(document: Document) -> tuple[str, ...]: ...
        def go_to_workload(self, row: int) -> None: ...
        def selected_item(self) -> tuple[Any, str]: ...
        def compare_with(self, other: str | Path | None) -> Any: ...
        def _load_bookmarks(self, then: Any = None) -> None: ...
        def _needs_whole_file(self, what: str) -> bool: ...
        def _when_views_ready(self, then: Any) -> None: ...
