"""The application: wires the tree, details, problems and summary around one Document.

`make_app` is the single factory used by the CLI and by the tests. Loading runs in a thread worker that
reports progress, so the first screen appears at once whatever the file size.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Iterable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer, TabbedContent, TabPane
from textual.worker import get_current_worker

from explorer.api import CHECKING, open_document
from explorer.document import Capability, Document, Section
from explorer.errors import LoadError, Problem
from widgets.details import DetailsPanel
from widgets.doc_tree import DocumentTree
from widgets.error_panel import ErrorPanel
from widgets.help_screen import HelpScreen
from widgets.loading import LoadingPanel
from widgets.messages import CursorMoved, ItemActivated, ItemFocused, ProblemChosen, RevealRef
from widgets.problems import ProblemsTable
from widgets.search_screen import SearchScreen
from widgets.summary_bar import SummaryBar
from widgets.views import ALL_VIEWS, SYNC_GRAPH_NODES, TREE, ViewSpec, offered_views, spec_named

WORKLOAD_REFS = ("workload", "ifmap", "ofmap", "weight", "buffer", "wl0", "buffer-entry", "wl0-entry")
BUFFER_PROBLEMS = ("l2-overlap", "wl0-overlap", "l2-out-of-range", "l2-over-capacity")


class LoadCancelled(Exception):
    """Raised inside the loader's progress callback when the worker was cancelled (the app is closing)."""


class IrExplorerApp(App[None]):
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
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal")]
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("ctrl+f", "search", "Search"),
        *(Binding(spec.key, f"view('{spec.name}')", spec.title) for spec in ALL_VIEWS),
        Binding("t", "view('tree')", "Tree", show=False),
        Binding("e", "focus('details')", "Details", show=False),
        Binding("p", "focus('problems')", "Problems"),
        Binding("n", "next_problem(1)", "Next problem"),
        Binding("N", "next_problem(-1)", "Prev problem", show=False),
        Binding("h", "show_summary", "Summary", show=False),
        Binding("g", "links", "Go to linked", show=False),
        Binding("z", "maximize", "Maximize", show=False),
        Binding("b", "bookmark", "Bookmark"),
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
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.companions = companions or {}
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
        self._preview_replaced = False  # a first part of the file was shown and is replaced: collect it once
        # Why the last jump happened: (ref, problem). Details always follow the tree's cursor; when the cursor
        # lands on that ref, the problem is shown above the item's tables.
        self._jump_reason: tuple[Any, Problem, tuple[int, ...]] | None = None  # (ref, problem, tensors to mark)

    def compose(self) -> ComposeResult:
        yield SummaryBar(id="summary")
        with ContentSwitcher(initial="loading", id="switcher"):
            yield LoadingPanel(id="loading")
            yield ErrorPanel(id="error")
            with Horizontal(id="main"):
                # Only the tree at first: the other views are added as tabs once the document says it offers
                # them; their modules (numpy and friends) are imported by the load worker, off the UI thread.
                with TabbedContent(id="tabs"), TabPane(f"{TREE.key} {TREE.title}", id="tab-tree"):
                    yield DocumentTree(id="tree")
                with Vertical(id="right"):
                    yield DetailsPanel(id="details")
                    yield ProblemsTable(id="problems")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(SummaryBar).show_loading(self.path.name)
        if self.document is not None:
            self.show_document(self.document)
        else:  # after the first paint: the loader's long decodes hold the interpreter and would delay it
            self.call_after_refresh(self._start_loading)

    def _start_loading(self) -> None:
        """The whole file's load and, beside it, the preview of its first part: the load does not wait for the
        preview, so a big schedule's cores are being decoded while its first core is shown."""
        self.load_preview()
        self.load_document()

    # ---- loading --------------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, name="load")
    def load_document(self) -> None:
        worker = get_current_worker()

        def progress(done: float, total: float, stage: str) -> None:
            if worker.is_cancelled:
                raise LoadCancelled
            now = time.monotonic()
            if now - self._last_progress > 0.05 or done >= total or stage != self._last_stage:
                self._last_progress, self._last_stage = now, stage
                self.call_from_thread(self._show_progress, done / max(total, 1), stage)

        try:
            document = open_document(self.path, strict=self.strict, progress=progress, companions=self.companions)
            progress(0.99, 1, CHECKING)
            document.run_deep_checks()
            from explorer.analysis.incidents import incidents_of, name_incident_roles

            # The problems panel lists overlaps by incident. What each tensor is (its role) is read again from
            # the file, a big file's thousands by worker processes: they are named once the file is on screen
            # (on the 519 MB benchmark file the reads kept it off screen 0.5-0.8 s longer)
            incidents = self.incidents = incidents_of(document, with_roles=False)
            in_wl0 = [incident for incident in incidents if incident.code == "wl0-overlap"]
            name_incident_roles(document, in_wl0)  # named from the loaded columns, nothing read: at once
            for spec in offered_views(document):
                spec.import_widget()  # here, off the UI thread
        except LoadCancelled:
            return
        except LoadError as error:
            self.call_from_thread(self.show_error, error)
            return
        except Exception as error:  # a loader bug must still not crash the app
            self.call_from_thread(self.show_error, LoadError(self.path, "", f"internal error: {error!r}"))
            return
        if worker.is_cancelled:
            return
        self.call_from_thread(self.show_document, document, roles_pending=bool(incidents))
        if incidents:
            # after the views are mounted: naming is Python work that would slow their first paint (the workers'
            # reads it waits for go on meanwhile)
            mounting_ends = time.monotonic() + 30  # a view that failed to mount does not hold the naming back
            while not self.views_ready and not worker.is_cancelled and time.monotonic() < mounting_ends:
                time.sleep(0.01)
            with contextlib.suppress(Exception):  # roles are words beside the incidents: the lines stand without
                name_incident_roles(document, incidents)
            if not worker.is_cancelled:
                self.call_from_thread(self._roles_named, incidents)

    def _roles_named(self, incidents: list[Any]) -> None:
        if self.incidents is incidents:  # still the file shown
            self.query_one(ProblemsTable).roles_named()

    @work(thread=True, exclusive=True, group="preview", name="preview")
    def load_preview(self) -> None:
        """A big file's first part (a schedule's first core), shown while the rest loads, when its format can
        give one (`Format.preview`) and the whole file is not on screen first."""
        from explorer.registry import pick_format

        worker = get_current_worker()
        try:
            found = pick_format(self.path)
            early = found.preview(self.path) if found.preview is not None else None
            if early is None or worker.is_cancelled:
                return
            for spec in offered_views(early):
                spec.import_widget()
        except Exception:  # a preview is a bonus: whatever fails here, the full load that follows reports
            return
        self.call_from_thread(self._show_preview, early)

    def _show_preview(self, preview: Document) -> None:
        if self.document is None and self.load_error is None:  # else the load ended first: nothing to add
            self.show_document(preview)

    @work(thread=True, group="graph-prebuild", description="build the graph")
    def _prebuild_graph(self, document: Document) -> None:
        """A big graph is built in the background once the file is on screen: `6` soon finds it ready, and the
        first look at the file does not wait for it (the graph view shows its progress if `6` comes first)."""
        try:
            document.view.graph_model()
        except Exception:  # the graph view builds it again when shown, and says what went wrong
            return

    def _show_progress(self, fraction: float, stage: str) -> None:
        if self.document is None:
            self.query_one(LoadingPanel).set_progress(fraction, stage)
        elif self.document.partial:  # the loading panel is hidden by the preview: the bar says how far
            self.query_one(SummaryBar).show_progress(fraction, stage)

    def _needs_whole_file(self, what: str) -> bool:
        """True (and says so) while only a first part of the file is shown: `what` waits for the whole file."""
        if self.document is not None and self.document.partial:
            self.notify(f"{what} waits until the whole file is loaded (see the bar at the top)", severity="warning")
            return True
        return False

    def show_document(self, document: Document, roles_pending: bool = False) -> None:
        """Show a loaded document (or a first part of one). `roles_pending`: its incidents' roles are being named
        (`_roles_named` follows)."""
        after_preview = self.document is not None and bool(self.document.partial) and self.timeline is not None
        row = self.timeline.selected if after_preview else 0
        self._preview_replaced = self._preview_replaced or after_preview
        self.document = document
        self._load_bookmarks()
        self.query_one(SummaryBar).show_document(document)
        self.query_one(ContentSwitcher).current = "main"
        tree = self.query_one(DocumentTree)
        tree.show_document(document)
        if self.incidents is None:  # a document handed over (tests, serve): the load worker did not run
            from explorer.analysis.incidents import incidents_of

            self.incidents = incidents_of(document)
        self.query_one(ProblemsTable).show_problems(document.problems, self.incidents, roles_pending)
        self.query_one(DetailsPanel).show_sections(document.describe(("summary",)))
        views = offered_views(document)
        self.views_ready = not views
        self.refresh_bindings()  # the view keys follow what the document offers
        big_graph = document.offers(Capability.GRAPH) and document.view.graph_size_hint() > SYNC_GRAPH_NODES
        prebuild = big_graph and not document.partial
        # A first part of a big file opens on its first view (a schedule's first core's timeline): that is what
        # there is to see while the rest loads; the whole file then keeps whichever view the user is on.
        lead = views[0].name if views and document.partial and not after_preview else None
        if views:
            self.run_worker(self._mount_views(document, views, prebuild, lead), group="views")
        if not after_preview:  # after a preview, the keyboard stays where the user put it
            tree.focus()
        if row > 0:  # the workload chosen in the first part stays chosen in the whole file
            self._when_views_ready(lambda: self.go_to_workload(row))

    async def _painted(self) -> None:
        """Returns once the screen has been drawn with what is mounted now."""
        drawn = asyncio.Event()
        self.call_after_refresh(drawn.set)
        await drawn.wait()

    @staticmethod
    def views_for(document: Document) -> tuple[str, ...]:
        """The names of the views beside the tree that this document offers."""
        return tuple(spec.name for spec in offered_views(document))

    async def _mount_views(
        self, document: Document, views: tuple[ViewSpec, ...], prebuild: bool = False, lead: str | None = None
    ) -> None:
        """Add a tab for each view the document offers (their modules were imported by the load worker), then,
        with `prebuild`, start building the graph once they are on screen: its pure-Python build holds the
        interpreter, and begun beside the mounting it delayed the whole file's first paint (seen with py-spy).
        The `lead` view is shown and painted before the other tabs are added (each costs a layout pass)."""
        tabs = self.query_one(TabbedContent)
        for k, spec in enumerate(views):
            if not self.query(f"#{spec.name}"):
                pane = TabPane(f"{spec.key} {spec.title}", spec.make(), id=f"tab-{spec.name}")
                # in the views' order, also when a first part of the file offered fewer (a preview has no graph)
                later = [f"tab-{other.name}" for other in views[k + 1 :] if self.query(f"#tab-{other.name}")]
                await tabs.add_pane(pane, before=later[0] if later else None)
            self.query_one(f"#{spec.name}").show_document(document)
            if spec.name == lead and self.document is document:
                self.action_view(lead)
                await self._painted()
        self.views_ready = True
        # The document lives as long as the app: moved out of the collector's sight, so a full collection
        # during a pan or a zoom scans only what views make since (a 20,000-node model otherwise costs one
        # frame in sixty a 100 ms pause; see BENCHMARKS.md)
        if self._preview_replaced:  # a replaced first part sits in reference cycles: free it, not freeze it
            self._preview_replaced = False
            gc.collect()
        gc.freeze()
        if prebuild:
            self.call_after_refresh(self._prebuild_graph, document)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """View keys exist only for the views the document offers: others are neither shown nor bound."""
        if action == "view" and parameters and parameters[0] != "tree":
            return self.document is not None and parameters[0] in self.views_for(self.document)
        if action == "export_trace":
            return self.document is not None and self.document.offers(Capability.TIMELINE)
        return True

    @property
    def timeline(self) -> Any:
        """The timeline widget, or None before a schedule is shown."""
        found = self.query("#timeline")
        return found.first() if found else None

    @property
    def buffers(self) -> Any:
        found = self.query("#buffers")
        return found.first() if found else None

    @property
    def memory_map(self) -> Any:
        found = self.query("#memory")
        return found.first() if found else None

    @property
    def layout(self) -> Any:
        found = self.query("#layout")
        return found.first() if found else None

    @property
    def source(self) -> Any:
        found = self.query("#source")
        return found.first() if found else None

    def show_error(self, error: LoadError) -> None:
        self.load_error = error
        if self.document is not None and self.document.partial:  # a first part shown is not the file: let go
            self.document = None
            self.refresh_bindings()
        self.query_one(SummaryBar).show_error(self.path.name)
        self.query_one(ErrorPanel).show_error(error)
        self.query_one(ContentSwitcher).current = "error"

    # ---- wiring ---------------------------------------------------------------------------------------------
    @on(ItemFocused)
    def follow_tree(self, message: ItemFocused) -> None:
        self.show_details(message.item.ref)
        ref = message.item.ref
        if isinstance(ref, tuple) and ref and ref[0] in WORKLOAD_REFS and self.document.schedule is not None:
            highlight = None
            if self._jump_reason is not None and self._jump_reason[0] == ref:
                highlight = self._jump_reason[2]
            self._select_row(ref[1], highlight)
            if ref[0] in ("buffer-entry", "wl0-entry") and self.memory_map is not None:
                self.memory_map.select_entry(ref[1], ref[2], "l2" if ref[0] == "buffer-entry" else "wl0")
        tensor_id = self.document.tensor_of(ref)
        if tensor_id is not None and self.layout is not None:
            self.layout.show_tensor(tensor_id)
        if isinstance(ref, tuple) and ref and ref[0] == "source" and self.source is not None:
            self.source.show(ref[1], ref[2])
        for graph in self.query("#graph"):
            graph.select_ref(ref)

    @on(ItemActivated)
    def open_item_view(self, message: ItemActivated) -> None:
        """Enter on a link jumps to its target; on a source file opens the source view; on an ARK tensor, its
        layout."""
        ref = message.item.ref
        if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "goto":  # a link: a value's producer, a consumer
            self.post_message(RevealRef(ref[1]))
        elif isinstance(ref, tuple) and ref and ref[0] == "source" and self.source is not None:
            self.action_view("source")
        elif self.document is not None and self.document.tensor_of(ref) is not None and self.layout is not None:
            self.action_view("layout")

    @on(CursorMoved)
    def follow_cursor(self, message: CursorMoved) -> None:
        """The time cursor moved in one view: the others follow, and the details show the workload."""
        self._select_row(message.row, source=message.view)
        self.show_details(("workload", message.row))

    # Handlers named after the messages (BufferView.TensorSelected, ...) so this module need not import them.

    def on_graph_view_node_selected(self, message: Any) -> None:
        """A box chosen in the graph: the tree's cursor follows (so `g` and bookmarks work), and the details."""
        self.query_one(DocumentTree).reveal(message.ref)
        self.show_details(message.ref)

    def on_buffer_view_tensor_selected(self, message: Any) -> None:
        self.show_details(("buffer-entry", message.row, message.entry))
        if self.memory_map is not None:
            self.memory_map.select_entry(message.row, message.entry, "l2")

    def on_memory_map_view_tensor_selected(self, message: Any) -> None:
        """A band chosen in the memory map: the tree's cursor goes to its entry (and the details with it)."""
        self.query_one(DocumentTree).reveal(message.ref)
        self.show_details(message.ref)

    def show_details(self, ref: Any) -> None:
        if self.document is None:
            return
        sections = self.document.describe(ref)
        if self._jump_reason is not None and self._jump_reason[0] == ref:
            sections = [problem_section(self._jump_reason[1]), *sections]
        self.query_one(DetailsPanel).show_sections(sections)

    @on(ProblemChosen)
    def jump_to_problem(self, message: ProblemChosen) -> None:
        if self.document is None:
            return
        ref = self.document.find_ref({**message.problem.refs, "location": message.problem.location})
        if ref is None:
            self.notify(f"{message.problem.code}: nothing in the tree to jump to", severity="warning")
            return
        self.post_message(RevealRef(ref, because=message.problem, highlight=message.highlight))
        problem = message.problem
        s = self.document.schedule
        if s is not None and "core" in problem.refs and "workload_id" in problem.refs:
            row = s.row_of(int(problem.refs["core"]), int(problem.refs["workload_id"]))
            if row is not None and self.timeline is not None:
                self._select_row(row, message.highlight or tuple(problem.refs.get("tensor_ids") or ()))
                if problem.code in BUFFER_PROBLEMS and self.buffers is not None:
                    self.query_one(TabbedContent).active = "tab-buffers"

    @on(RevealRef)
    def reveal(self, message: RevealRef) -> None:
        tree = self.query_one(DocumentTree)
        before = tree.cursor_node
        self._jump_reason = (message.ref, message.because, message.highlight) if message.because is not None else None
        tree.reveal(message.ref)
        if tree.cursor_node is before:  # no highlight event will come: refresh the details ourselves
            self.show_details(message.ref)
        if self.query_one(TabbedContent).active == "tab-tree":
            tree.focus()

    # ---- actions --------------------------------------------------------------------------------------------
    def help_keys(self) -> list[tuple[str, str, str]]:
        """(where, key, what) for the keys of this document: the app's, then each offered view's, in the
        document's own words."""
        views = offered_views(self.document) if self.document is not None else ()
        keys = [("Everywhere", spec.key, f"{spec.title.lower()}: {spec.about}") for spec in (TREE, *views)]
        keys += self.HELP_KEYS
        for spec in views:
            keys += getattr(spec.widget_class(), "HELP_KEYS", [])
        keys += ProblemsTable.HELP_KEYS
        words = asdict(self.document.vocabulary) if self.document is not None else {}
        return [(where, key, what.format(**words) if words else what) for where, key, what in keys]

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_keys()))

    def action_search(self) -> None:
        if self.document is None:
            return

        def chosen(ref: Any) -> None:
            if ref is not None:
                self.post_message(RevealRef(ref))

        self.push_screen(SearchScreen(self.document), chosen)

    def go_to_workload(self, row: int) -> None:
        """Show one workload everywhere: the tree, the timeline, the buffer view and the details."""
        self._select_row(row)
        self.post_message(RevealRef(("workload", row)))

    def _select_row(self, row: int, highlight: tuple | None = None, source: Any = None) -> None:
        """A block selected in the timeline, the buffer view and the memory map, whichever the document has
        (all but `source`, the view the selection came from)."""
        if self.timeline is not None and self.timeline is not source:
            self.timeline.select(row)
        if self.buffers is not None and self.buffers is not source:
            self.buffers.show_row(row, highlight=highlight)
        if self.memory_map is not None and self.memory_map is not source:
            self.memory_map.show_row(row, highlight=highlight)

    def action_view(self, name: str) -> None:
        """Show the tree, the timeline or the buffer view, and give it the keyboard."""
        if self.document is None:
            return
        if name != "tree" and name not in self.views_for(self.document):
            return  # not offered: its key is not bound, and palette and bookmarks only name offered views
        self.query_one(TabbedContent).active = f"tab-{name}"
        # Focus now, not via focus()'s call_later: keys typed right after `2` must reach the timeline.
        self.screen.set_focus(self.query_one(f"#{name}"))

    @on(TabbedContent.TabActivated)
    def focus_active_view(self, event: TabbedContent.TabActivated) -> None:
        widget_id = (event.pane.id or "").removeprefix("tab-")
        if self.document is not None and spec_named(widget_id) is not None:
            for widget in self.query(f"#{widget_id}"):  # empty while the app is shutting down
                widget.focus()

    def action_focus(self, widget_id: str) -> None:
        if self.document is not None:  # at once, not via focus()'s call_later: `p` then `l` must filter
            self.screen.set_focus(self.query_one(f"#{widget_id}"))

    def action_next_problem(self, delta: int) -> None:
        table = self.query_one(ProblemsTable)
        stepped = table.step(delta)
        if stepped is None:
            self.notify("no problems listed" if table.problems else "no problems in this file")
            return
        self.post_message(ProblemChosen(*stepped))

    def action_show_summary(self) -> None:
        if self.document is not None:
            self.query_one(DetailsPanel).show_sections(self.document.describe(("summary",)))

    # ---- review: bookmarks, exports, diff --------------------------------------------------------------------
    def _load_bookmarks(self) -> None:
        from explorer.bookmarks import BookmarksError, load

        try:
            loaded = load(self.bookmarks_path)
        except BookmarksError as error:
            self.notify(str(error), severity="warning")
            self.bookmarks = []
            return
        self.bookmarks = loaded.bookmarks
        for problem in loaded.problems:
            self.notify(problem, severity="warning")

    def _change_bookmarks(self, change: Any, done: Any = None) -> None:
        """Apply a change to the sidecar (merged with what is on disk now). When it cannot be written (a
        read-only folder, a file that is not ours), say why and offer another path, then try again there."""
        from explorer.bookmarks import BookmarksError, UnsavableNote
        from widgets.review_screens import PromptScreen

        try:
            self.bookmarks = change(self.bookmarks_path).bookmarks
        except UnsavableNote as error:
            self.notify(str(error), severity="error")
            return
        except BookmarksError as error:
            self.notify(str(error), severity="error")
            fallback = Path.home() / self.bookmarks_path.name

            def retry(answer: str | None) -> None:
                if answer:
                    self.bookmarks_path = Path(answer).expanduser()
                    self._change_bookmarks(change, done)

            self.push_screen(PromptScreen(f"{error}. Save the bookmarks to:", str(fallback)), retry)
            return
        if done is not None:
            done()

    def action_maximize(self) -> None:
        """The focused panel takes the whole screen, or everything comes back (Textual's maximize)."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
        elif self.focused is not None:
            target = self.focused
            target.ALLOW_MAXIMIZE = True  # every panel of ours may fill the screen when asked
            if not screen.maximize(target, container=False):
                self.notify("this panel cannot be maximised")

    def action_links(self) -> None:
        """The selected item's producers and consumers (as the details panel lists them); Enter jumps."""
        if self.document is None:
            return
        from widgets.review_screens import LinksScreen

        ref, label = _selected_item(self)
        links = self.document.links(ref)
        if not links:
            self.notify(f"nothing links to or from {label}")
            return

        def go(index: int | None) -> None:
            if index is not None:
                self.post_message(RevealRef(links[index][1]))

        self.push_screen(
            LinksScreen(f"Linked to {label}  (Enter: go there · Escape: close)", [t for t, _ in links]), go
        )

    def action_bookmark(self) -> None:
        """Mark the tree's selected item (and the view on screen) with a note, saved in the sidecar file."""
        if self.document is None or self._needs_whole_file("Bookmarking"):
            return
        from explorer.bookmarks import add_bookmark, new_bookmark
        from widgets.review_screens import PromptScreen

        ref, label = _selected_item(self)
        view = (self.query_one(TabbedContent).active or "tab-tree").removeprefix("tab-")

        def add(note: str | None) -> None:
            if note is None:
                return
            bookmark = new_bookmark(ref, view, note, label, self.author)
            self._change_bookmarks(
                lambda path: add_bookmark(path, self.path, bookmark),
                lambda: self.notify(f"bookmarked {label} ({len(self.bookmarks)} in {self.bookmarks_path.name})"),
            )

        self.push_screen(PromptScreen(f"Note for {label}:"), add)

    def action_bookmarks(self) -> None:
        if self.document is None:
            return
        from explorer.bookmarks import delete_bookmark
        from widgets.review_screens import BookmarksScreen

        self._load_bookmarks()  # others may have added theirs since

        def delete(index: int) -> list[Any]:
            gone = self.bookmarks[index].id
            self._change_bookmarks(lambda path: delete_bookmark(path, self.path, gone))
            return self.bookmarks

        def go(index: int | None) -> None:
            if index is None or not 0 <= index < len(self.bookmarks):
                return
            self.go_to_bookmark(self.bookmarks[index])

        self.push_screen(BookmarksScreen(self.bookmarks, delete), go)

    def go_to_bookmark(self, bookmark: Any) -> None:
        self.post_message(RevealRef(bookmark.ref))
        if bookmark.view != "tree" and bookmark.view in self.views_for(self.document):
            self.call_after_refresh(self.action_view, bookmark.view)

    def action_export_report(self) -> None:
        if self._needs_whole_file("The report"):
            return
        from explorer.exports.html_report import write_report

        self._ask_and_export("Write the HTML report to:", ".report.html", write_report)

    def action_export_trace(self) -> None:
        if self.document is None or not self.document.offers(Capability.TIMELINE):
            return
        if self._needs_whole_file("The trace export"):
            return
        import json

        from explorer.exports.trace_event import trace_events

        def write_trace(document: Document, target: Path) -> None:
            target.write_text(json.dumps(trace_events(document)), encoding="utf-8")

        self._ask_and_export("Write the Chrome trace (Perfetto) to:", ".trace.json", write_trace)

    def _ask_and_export(self, question: str, suffix: str, write: Any) -> None:
        """Ask where (a default beside the input), then write in a thread so the UI keeps answering."""
        from widgets.review_screens import PromptScreen

        default = str(self.path.with_name(self.path.name + suffix))
        self.push_screen(PromptScreen(question, default), lambda target: self._export(target, write))

    @work(thread=True, group="export", description="export")
    def _export(self, target: str | None, write: Any) -> None:
        if not target or self.document is None:
            return
        try:
            write(self.document, Path(target))
        except OSError as error:
            self.call_from_thread(self.notify, f"cannot write {target}: {error.strerror or error}", severity="error")
            return
        self.call_from_thread(self.notify, f"wrote {target}")

    def action_screenshot_svg(self) -> None:
        path = self.save_screenshot()
        self.notify(f"saved {path}")

    def action_diff(self) -> None:
        if self._needs_whole_file("Comparing"):
            return
        from widgets.review_screens import PromptScreen

        self.push_screen(PromptScreen("Compare with which file (same format)?"), self._diff_with)

    @work(thread=True, group="diff", description="compare")
    def _diff_with(self, other: str | None) -> None:
        if not other or self.document is None:
            return
        from explorer.diff import NotComparable, change_lines, change_target, diff_documents, summary_lines

        try:
            other_document = open_document(other, strict=self.strict)
            other_document.run_deep_checks()
            result = diff_documents(self.document, other_document)
        except (LoadError, NotComparable) as error:
            self.call_from_thread(self.notify, str(error), severity="error")
            return
        from widgets.review_screens import DiffScreen

        targets = [change_target(change) for change in result["changes"]]
        screen = DiffScreen(summary_lines(result), change_lines(result), targets)
        documents = {"a": self.document, "b": other_document}
        self.call_from_thread(self.push_screen, screen, lambda chosen: self._go_to_change(chosen, documents))

    def _go_to_change(self, chosen: tuple[str, Any] | None, documents: dict[str, Document]) -> None:
        """A change chosen in the diff: its workload or layer here, or in the other file (opened in its place;
        the palette's "Back to the previous file" returns)."""
        if chosen is None:
            return
        side, where = chosen
        document = documents[side]
        if document is not self.document:
            self.switch_document(document)
        s = document.schedule
        if s is None:
            return
        if isinstance(where, str):
            rows = [r for r in range(s.n_workloads) if s.layers[s.wl_layer[r]] == where]
            row = rows[0] if rows else None
        else:
            row = s.row_of(*where)
        if row is None:
            self.notify(f"{document.meta.source.name} has no {where}", severity="warning")
            return
        self._when_views_ready(lambda: self.go_to_workload(row))

    def switch_document(self, document: Document) -> None:
        """Show another loaded file in place of this one (the diff's other file), keeping this one for Back."""
        from explorer.bookmarks import sidecar_path

        self.previous_document = self.document
        self.path = Path(document.meta.source)
        self.bookmarks_path = sidecar_path(self.path)
        self.incidents = None
        self.views_ready = False
        self.show_document(document)
        self.notify(f'opened {self.path.name}; the palette\'s "Back to the previous file" returns')

    def action_back(self) -> None:
        if self.previous_document is not None:
            self.switch_document(self.previous_document)

    def _when_views_ready(self, then: Any) -> None:
        if self.views_ready:
            then()
        else:
            self.set_timer(0.05, lambda: self._when_views_ready(then))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Search", "Find items by name or id (Ctrl+F)", self.action_search)
        yield SystemCommand("Help: keys", "Every key the explorer understands (?)", self.action_help)
        yield SystemCommand("Next problem", "Jump to the next problem (n)", lambda: self.action_next_problem(1))
        yield SystemCommand(
            "Previous problem", "Jump to the previous problem (N)", lambda: self.action_next_problem(-1)
        )
        yield SystemCommand("Summary", "Show the file summary (h)", self.action_show_summary)
        yield SystemCommand(
            "Focus details", "Move the focus to the details panel (e)", lambda: self.action_focus("details")
        )
        yield SystemCommand(
            "Maximise panel", "The focused panel fills the screen, or comes back (z)", self.action_maximize
        )
        words = asdict(self.document.vocabulary) if self.document is not None else {}
        for spec in (TREE, *(offered_views(self.document) if self.document is not None else ())):
            about = spec.about.format(**words) if words else spec.about
            yield SystemCommand(
                spec.title, f"{about[0].upper()}{about[1:]} ({spec.key})", partial(self.action_view, spec.name)
            )
        yield SystemCommand(
            "Focus problems", "Move the focus to the problems list (p)", lambda: self.action_focus("problems")
        )
        yield SystemCommand("Go to linked item", "Producers and consumers of the selection (g)", self.action_links)
        yield SystemCommand("Bookmark this item", "Mark the selected item with a note (b)", self.action_bookmark)
        yield SystemCommand("Bookmarks", "List the bookmarks and jump to one (B)", self.action_bookmarks)
        yield SystemCommand("Export HTML report", "A self-contained report with plots", self.action_export_report)
        if self.document is not None and self.document.offers(Capability.TIMELINE):
            yield SystemCommand("Export Chrome trace", "Trace Event JSON for Perfetto", self.action_export_trace)
        yield SystemCommand("Screenshot", "Save an SVG of the screen", self.action_screenshot_svg)
        yield SystemCommand("Diff with another file", "What changed from this file to another", self.action_diff)
        if self.previous_document is not None:
            yield SystemCommand(
                "Back to the previous file", f"Show {self.previous_document.meta.source.name} again", self.action_back
            )


def _selected_item(app: IrExplorerApp) -> tuple[Any, str]:
    """The tree cursor's ref and label: what a bookmark marks and what `g` starts from."""
    tree = app.query_one(DocumentTree)
    node = tree.cursor_node
    if node is None or node.data is None:
        return ("summary",), "summary"
    return node.data.ref, node.data.label


def problem_section(problem: Problem) -> Section:
    rows = [
        ("severity", problem.severity),
        ("code", problem.code),
        ("message", problem.message),
        ("location", problem.location),
    ]
    for key, value in problem.refs.items():
        if key == "range" and isinstance(value, list) and len(value) == 2:
            value = f"{value[0]:#x}-{value[1]:#x}"
        elif isinstance(value, list):
            value = ", ".join(map(str, value))
        rows.append((key.replace("_", " "), value))
    return Section("Problem", ("property", "value"), rows)


def make_app(
    path: str | Path,
    *,
    strict: bool = False,
    document: Document | None = None,
    bookmarks: str | Path | None = None,
    author: str | None = None,
    companions: dict[str, Path | None] | None = None,
) -> IrExplorerApp:
    """The one way to build the app: the CLI, the tests and `serve` all call this."""
    return IrExplorerApp(
        Path(path),
        strict=strict,
        document=document,
        bookmarks=Path(bookmarks) if bookmarks else None,
        author=author,
        companions=companions,
    )
