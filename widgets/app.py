"""The application: composes the tree, the views, details, problems and summary around one Document, and
routes keys to the parts that do the work.

`make_app` is the single factory used by the CLI, `serve` and the tests. The parts, each in its own module:
loading (`document_loading`: the file in a thread worker with progress, the preview, mounting the views),
selection (`selection`: one `Selected` message in, every other view and the details out), review actions
(`review_actions`: bookmarks, links, exports, diff) and the palette and help (`palette`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Input, TabbedContent, TabPane, TextArea

from explorer.document import Capability, Document, Section
from explorer.errors import LoadError, Problem
from explorer.formatting import human_bytes
from explorer.open_ahead import OpenAhead
from widgets.details import DetailsPanel
from widgets.doc_tree import DocumentTree
from widgets.document_loading import DocumentLoading
from widgets.error_panel import ErrorPanel
from widgets.handing_back import hand_terminal_back
from widgets.help_screen import HelpScreen
from widgets.key_footer import KeyFooter
from widgets.loading import LoadingPanel
from widgets.messages import ProblemChosen, RevealRef
from widgets.palette import help_keys, system_commands
from widgets.problems import ProblemsTable
from widgets.review_actions import ReviewActions
from widgets.search_screen import SearchScreen
from widgets.selection import SelectionSync
from widgets.summary_bar import SummaryBar
from widgets.tab_labels import FittingTabs
from widgets.terminal_safety import InertText
from widgets.views import ALL_VIEWS, TREE, spec_named

if TYPE_CHECKING:  # the views are imported when a document offers them (widgets.views)
    from widgets.graph.view import GraphView
    from widgets.schedule.buffer_view import BufferView
    from widgets.schedule.memory_map import MemoryMapView
    from widgets.schedule.mesh import MeshView
    from widgets.schedule.timeline import Timeline
    from widgets.source_view import SourceView
    from widgets.tensors.stride_map import StrideMap

_INERT_TEXT = InertText()


class IrExplorerApp(DocumentLoading, SelectionSync, ReviewActions, App[None]):
    """Composes the panels and routes keys; loading, selection, review actions and the palette live in their
    own modules (document_loading, selection, review_actions, palette)."""

    TITLE = "ir-explorer"
    CSS = """
    #switcher { height: 1fr; }
    #main { height: 1fr; }
    #tabs { width: 62%; min-width: 40; }
    #tabs > ContentSwitcher { height: 1fr; }
    #tabs TabPane { padding: 0; height: 1fr; }
    Screen.-narrow #tabs { width: 66%; }  /* every view's tab stays readable at 80 columns */
    #right { width: 1fr; }
    #details { height: 1fr; }
    /* z: the maximised panel fills the screen (a panel's own height or max-height, the problems list's 12 rows
       and 45%, made it a box in hatching) */
    Screen.-maximized-view .-maximized {
        height: 1fr !important; max-height: 100% !important; width: 1fr !important; max-width: 100% !important;
    }
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal")]
    # the footer shows these in this order and an 80-column terminal cuts its end: the problem keys come before
    # the view keys, which the tabs name anyway
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("p", "focus('problems')", "Problems"),
        Binding("n", "next_problem(1)", "Next problem"),
        Binding("ctrl+f", "search", "Search"),
        *(Binding(spec.key, f"view('{spec.name}')", spec.title) for spec in ALL_VIEWS),
        Binding("t", "view('tree')", "Tree", show=False),
        Binding("e", "focus('details')", "Details", show=False),
        Binding("N", "next_problem(-1)", "Prev problem", show=False),
        Binding("h", "show_summary", "Summary", show=False),
        Binding("g", "links", "Go to linked", show=False),
        Binding("z", "maximize", "Maximize", show=False),
        # priority: run as the key arrives, so the keys typed right after it reach the note's prompt (bubbled, the
        # note's first letters went to the tree, and `n`, `e`, `t` of "note" ran their own actions)
        Binding("b", "bookmark", "Bookmark", priority=True),
        Binding("B", "bookmarks", "Bookmarks", show=False),
    ]
    HELP_KEYS = [
        ("Everywhere", "q", "quit"),
        ("Everywhere", "? / F1", "this help"),
        ("Everywhere", "Ctrl+F", "search by name or id"),
        ("Everywhere", "t / e / p", "focus the tree / the details (e: examine) / the problems"),
        ("Everywhere", "n / N", "jump to the next / previous problem"),
        ("Everywhere", "h", "show the file summary (h: home; s and d belong to the timeline's Perfetto keys)"),
        ("Everywhere", "b / B", "bookmark the selected item with a note / list the bookmarks and jump"),
        ("Everywhere", "g", "go to what feeds the selected item or what it feeds (producers, consumers)"),
        ("Everywhere", "z", "maximise the focused panel (the view, the details, the problems) / restore"),
    ]

    def __init__(
        self,
        path: Path,
        *,
        strict: bool = False,
        document: Document | None = None,
        bookmarks: Path | None = None,
        author: str | None = None,
        companions: dict[str, Path | None] | None = None,
        node_data: Sequence[str | Path] | None = None,
        compare: Path | None = None,
        dims: dict[str, int] | None = None,
        detach_writes: bool = False,
        open_ahead: OpenAhead | None = None,
    ) -> None:
        super().__init__()
        # No animations: a tab's underline slid for 300 ms after each view switch, 18 frames written over SSH
        # (BENCHMARKS.md, key latency); the view is there at once without it
        self.animation_level = "none"
        self.path = Path(path)
        self.companions = companions or {}
        self.node_data = list(node_data or [])  # per-node data files, read against the graph once it loads
        self.compare = compare  # a file whose graph is shown beside this one's once it loads (--compare)
        self.dims = dict(dims or {})  # symbolic dims bound for the counts (--dims), set on the graph once it loads
        # the file's cache entry pickled and written by a child process (explorer.cache.documents.keep's detach):
        # a copy of the document as it is when kept, so nothing waits for it nor shares the interpreter with it
        self.detach_writes = detach_writes
        self.open_ahead = open_ahead  # the file, being opened on a thread since the command started (a kept one)
        from explorer.bookmarks import default_author, sidecar_path

        self.bookmarks_path = Path(bookmarks) if bookmarks else sidecar_path(self.path)
        self.bookmarks: list[Any] = []
        self.author = author or default_author()
        self.strict = strict
        self.document: Document | None = document
        self.load_error: LoadError | None = None
        self._last_progress = 0.0
        self._last_stage = ""
        self.incidents: list[Any] | None = None  # the overlap incidents, found by the load worker
        self.previous_document: Document | None = None  # the file shown before the diff opened another
        self.views_ready = False  # True once every view of the loaded document is mounted and filled
        self.mounted_views: dict[str, Widget] | None = None  # the views by name once mounted (None: ask the DOM)
        self._preview_replaced = False  # a first part of the file was shown and is replaced: collect it once
        self._wanted_view: str | None = None  # a view asked for (its key) before its tab was added: shown then
        # Why the last jump happened: (ref, problem). Details always follow the tree's cursor; when the cursor
        # lands on that ref, the problem is shown above the item's tables.
        self._jump_reason: tuple[Any, Problem, tuple[int, ...]] | None = None  # (ref, problem, tensors to mark)
        self.selections: dict[str, tuple[Any, str]] = {}  # view id → (ref, label) it last selected
        self.last_selection = ""  # the view that selected last

    def get_line_filters(self) -> list:
        """Textual's filters, then the guard that no character of a file acts on the terminal (terminal_safety)."""
        return [*super().get_line_filters(), _INERT_TEXT]

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = False) -> None:
        """Toasts are plain text whatever the caller asked: a message naming a node of the file would otherwise be
        read as markup (a `[@click=app.screenshot(...)]` in a name became a link that wrote a file)."""
        if timeout is None:
            super().notify(message, title=title, severity=severity, markup=False)
        else:
            super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    async def _broker_event(self, event_name: str, event: Any, default_namespace: Any) -> bool:
        """Only a scrollbar runs actions from a style (its thumb and track): the app draws no links, so any other
        `@click`/`@mouse.down` can only come from a file's name that a view read as markup. The guard behind
        plain `Text`."""
        style = getattr(event, "style", None)
        if style is not None and f"@{event_name}" in style.meta and not isinstance(default_namespace, ScrollBar):
            return False
        return await super()._broker_event(event_name, event, default_namespace)

    def compose(self) -> ComposeResult:
        yield SummaryBar(id="summary")
        with ContentSwitcher(initial="loading", id="switcher"):
            yield LoadingPanel(id="loading")
            yield ErrorPanel(id="error")
            with Horizontal(id="main"):
                # Only the tree at first: the other views are added as tabs once the document says it offers
                # them; their modules (numpy and friends) are imported by the load worker, off the UI thread.
                with FittingTabs(id="tabs"), TabPane(f"{TREE.key} {TREE.title}", id="tab-tree"):
                    yield DocumentTree(id="tree")
                with Vertical(id="right"):
                    yield DetailsPanel(id="details")
                    yield ProblemsTable(id="problems")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(SummaryBar).show_loading(self.path.name)
        if self.document is not None:
            self.show_document(self.document)
        else:  # after the first paint: the loader's long decodes hold the interpreter and would delay it
            self.call_after_refresh(self._start_loading)

    def _view(self, name: str) -> Widget | None:
        """The view widget with this id, or None when the document does not offer it (or is not shown yet). Once
        the views are mounted, from what `_mount_views` noted: a query walks the whole DOM (1.3 ms, eleven times
        a key in the timeline)."""
        if self.mounted_views is not None:
            known = self.mounted_views.get(name)
            if known is None or known.is_attached:
                return known
        found = self.query(f"#{name}")
        return found.first() if found else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """View keys exist only for the views the document offers: others are neither shown nor bound."""
        if action == "view" and parameters and parameters[0] != "tree":
            return self.document is not None and parameters[0] in self.views_for(self.document)
        if action == "export_trace":
            return self.document is not None and self.document.offers(Capability.TIMELINE)
        if action == "bookmark":  # a priority key: typed into a prompt or a search box, it is a letter there
            return not isinstance(self.focused, Input | TextArea)
        return True

    @property
    def timeline(self) -> Timeline | None:
        """The timeline widget, or None before a schedule is shown."""
        return cast("Timeline | None", self._view("timeline"))  # the class is imported when offered

    @property
    def buffers(self) -> BufferView | None:
        return cast("BufferView | None", self._view("buffers"))  # the class is imported when offered

    @property
    def memory_map(self) -> MemoryMapView | None:
        return cast("MemoryMapView | None", self._view("memory"))  # the class is imported when offered

    @property
    def mesh(self) -> MeshView | None:
        return cast("MeshView | None", self._view("mesh"))  # the class is imported when offered

    @property
    def layout(self) -> StrideMap | None:
        return cast("StrideMap | None", self._view("layout"))  # the class is imported when offered

    @property
    def source(self) -> SourceView | None:
        return cast("SourceView | None", self._view("source"))  # the class is imported when offered

    @property
    def graph(self) -> GraphView | None:
        return cast("GraphView | None", self._view("graph"))  # the class is imported when offered

    async def action_quit(self) -> None:
        """The terminal first, then the shutdown (widgets.handing_back)."""
        hand_terminal_back(self)
        self.exit()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_keys()))

    def action_search(self) -> None:
        if self.document is None:
            return

        def chosen(ref: Any) -> None:
            if ref is not None:
                self.post_message(RevealRef(ref))

        self.push_screen(SearchScreen(self.document), chosen)

    def action_view(self, name: str) -> None:
        """Show the tree, the timeline or the buffer view, and give it the keyboard."""
        if self.document is None:
            return
        if name != "tree" and name not in self.views_for(self.document):
            return  # not offered: its key is not bound, and palette and bookmarks only name offered views
        # offered, its tab still to come (the views are being mounted): shown once it is there, unless another
        # view is asked for first
        self._wanted_view = None if self.query(f"#tab-{name}") else name
        if self._wanted_view is not None:
            return
        self.query_one(TabbedContent).active = f"tab-{name}"
        # Focus now, not via focus()'s call_later: keys typed right after `2` must reach the timeline.
        self.screen.set_focus(self.query_one(f"#{name}"))

    @on(TabbedContent.TabActivated)
    def focus_active_view(self, event: TabbedContent.TabActivated) -> None:
        widget_id = (event.pane.id or "").removeprefix("tab-")
        if self.document is not None and spec_named(widget_id) is not None:
            for widget in self.query(f"#{widget_id}"):  # empty while the app is shutting down
                widget.focus()

    def action_focus(self, widget_id: str) -> None:  # type: ignore[override]  # synchronous on purpose
        if self.document is not None:  # at once, not via focus()'s call_later: `p` then `l` must filter
            self.screen.set_focus(self.query_one(f"#{widget_id}"))

    def action_next_problem(self, delta: int) -> None:
        table = self.query_one(ProblemsTable)
        stepped = table.step(delta)
        if stepped is None:
            self.notify("no problems listed" if table.problems else "no problems in this file")
            return
        self.post_message(ProblemChosen(*stepped))

    def action_go_to_core(self) -> None:
        """The timeline, asking for a core by number (the palette's "Go to core")."""
        if self.timeline is None:
            return
        self.action_view("timeline")
        self.timeline.action_go_to_core()

    def action_show_summary(self) -> None:
        if self.document is not None:
            self.query_one(DetailsPanel).show_sections([*self.document.describe(("summary",)),
                                                        *pressure_sections(self.document)])  # fmt: skip

    def action_maximize(self) -> None:
        """The focused panel takes the whole screen, or everything comes back (Textual's maximize)."""
        screen = self.screen
        if screen.maximized is not None:
            panel = screen.maximized
            screen.minimize()
        elif self.focused is not None:
            panel = self.focused
            panel.ALLOW_MAXIMIZE = True  # type: ignore[misc]  # this panel only (Textual reads it from the instance)
            if not screen.maximize(panel, container=False):
                self.notify("this panel cannot be maximised")
        else:
            return
        if isinstance(panel, ProblemsTable):  # it sizes itself to its rows: told to fill the screen, or not
            panel.fit_height()

    def help_keys(self) -> list[tuple[str, str, str]]:
        return help_keys(self)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from system_commands(self)


def pressure_sections(document: Document) -> list[Section]:
    """A schedule's L2 per core at its fullest (what `info` says of the worst), for the summary (`h`)."""
    from explorer.schedule.pressure import packing_text, pressure_of

    pressure = pressure_of(document) if document.schedule is not None and not document.partial else None
    if pressure is None:
        return []
    schedule = document.scheduled()
    rows = []
    for core in pressure.cores:
        share = f" ({core.peak_bytes / core.capacity:.0%})" if core.capacity > 0 else ""
        peak = f"{human_bytes(core.peak_bytes)}{share} at #{core.peak_workload}"
        rows.append((schedule.core_label(core.core), peak, f"{core.high_water:#x}", packing_text(core.packing),
                     f"{core.max_fragmentation:.2f} at #{core.max_fragmentation_workload}"))  # fmt: skip
    columns = ("core", "peak", "high water", "packing", "worst fragmentation")
    return [Section(f"{document.vocabulary.memory} at its fullest, per core", columns, rows)]


SIGNAL_GRACE_SECONDS = 3.0  # after SIGTERM or SIGHUP the shutdown gets this long, then the process ends anyway


@contextlib.contextmanager
def stopping_on_signals(app: App) -> Iterator[EndedBy]:
    """SIGTERM (serve ending a tab, `kill`) and SIGHUP (the SSH session gone) end the app as `q` does while it
    runs, so a query running in the Query panel is interrupted and its scratch removed (by default Python died at
    once and left both); the handlers before are put back after. Signals can be set in the main thread only.

    After SIGHUP the terminal is gone: Textual's output thread dies on its first write there, and every write
    after it waited forever for room in its queue (the app stayed behind, every thread asleep, after tmux's
    kill-server or a dropped SSH session). So the standard streams are detached first (`_detach_from_terminal`),
    and whatever the shutdown still waits for, the process ends SIGNAL_GRACE_SECONDS later; what it yields says
    which signal ended the app, for the command line to end the process once the app is down."""
    if threading.current_thread() is not threading.main_thread():
        yield EndedBy()
        return
    previous = {each: signal.getsignal(each) for each in (signal.SIGTERM, signal.SIGHUP)}
    finished = threading.Event()

    def stop(signum: int, _frame: Any) -> None:
        if signum == signal.SIGHUP:
            _detach_from_terminal()
        ended.signal = ended.signal or signum
        _end_unless(finished, SIGNAL_GRACE_SECONDS, 128 + signum)
        app.call_later(app.action_quit)

    ended = EndedBy()
    for each in previous:
        signal.signal(each, stop)
    try:
        yield ended
    finally:
        finished.set()
        for each, handler in previous.items():
            signal.signal(each, handler)


@dataclass
class EndedBy:
    """The signal that ended the app (`stopping_on_signals`), or None: the command line ends the process at once
    after such an app, whatever thread is left (Textual's input thread, reading a terminal that is gone, kept the
    interpreter from exiting: at 100% of a core, for as long as nobody noticed)."""

    signal: int | None = None


_NEVER_READABLE: list[int] = []  # the write end of standard input's new pipe, kept open so reads wait, never end


def _detach_from_terminal() -> None:
    """Standard output and error onto /dev/null (writes meant for a terminal that is gone succeed), standard input
    onto a pipe nothing writes (reads wait, where /dev/null's end-of-file made Textual's input thread spin)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.close(null)
        read, write = os.pipe()
        os.dup2(read, 0)
        os.close(read)
        _NEVER_READABLE.append(write)


def _end_unless(finished: threading.Event, seconds: float, status: int) -> None:
    """A daemon thread that ends the process with `status` unless the app has `finished` within `seconds` (a
    query's child dies with it, and its scratch is swept by the next query: explorer.schedule.query_child)."""

    def end() -> None:
        if not finished.wait(seconds):
            os._exit(status)

    threading.Thread(target=end, name="end-after-signal", daemon=True).start()


def make_app(
    path: str | Path,
    *,
    strict: bool = False,
    document: Document | None = None,
    bookmarks: str | Path | None = None,
    author: str | None = None,
    companions: dict[str, Path | None] | None = None,
    node_data: Sequence[str | Path] | None = None,
    compare: str | Path | None = None,
    dims: dict[str, int] | None = None,
    detach_writes: bool = False,
    open_ahead: OpenAhead | None = None,
) -> IrExplorerApp:
    """The one way to build the app: the CLI, the tests and `serve` all call this."""
    return IrExplorerApp(
        Path(path),
        strict=strict,
        document=document,
        bookmarks=Path(bookmarks) if bookmarks else None,
        author=author,
        companions=companions,
        node_data=[Path(p) for p in node_data or []],
        compare=Path(compare) if compare else None,
        dims=dims,
        detach_writes=detach_writes,
        open_ahead=open_ahead,
    )
