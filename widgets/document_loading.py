"""Loading a file into the app: the whole file in a thread worker with progress, a big file's first part
shown meanwhile (`Format.preview`), the views mounted once it is there, the graph prebuilt in the background.

The first screen appears at once whatever the file's size; nothing here blocks the UI thread on a decode.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import time
from typing import Any, cast

from textual import work
from textual.css.query import NoMatches
from textual.widgets import ContentSwitcher, TabPane
from textual.worker import get_current_worker

from explorer.document import Capability, Document
from explorer.errors import LoadError
from explorer.load_turn import TurnCancelled, load_turn
from explorer.open_ahead import OpenAhead, open_checked
from widgets.app_parts import AppParts, ShowsDocument
from widgets.details import DetailsPanel
from widgets.doc_tree import DocumentTree
from widgets.error_panel import ErrorPanel
from widgets.loading import LoadingPanel
from widgets.problems import ProblemsTable
from widgets.summary_bar import SummaryBar
from widgets.tab_labels import FittingTabs
from widgets.views import ALL_VIEWS, SYNC_GRAPH_NODES, ViewSpec, import_widgets, offered_views


class LoadCancelled(Exception):
    """Raised inside the loader's progress callback when the worker was cancelled (the app is closing)."""


class DocumentLoading(AppParts):
    """The app's part that loads and shows documents (mixed into the App)."""

    document: Document | None
    selections: dict[str, tuple[Any, str]]
    last_selection: str
    node_data: list[Any]
    compare: Any
    detach_writes: bool
    open_ahead: OpenAhead | None

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

        def waiting() -> None:
            self.call_from_thread(self._show_progress, 0.0, "waiting for another tab to finish loading")

        try:
            ahead, self.open_ahead = self.open_ahead, None
            if ahead is not None:  # opened on a thread since the command started (a kept file): its result
                opened = ahead.result(progress, lambda: worker.is_cancelled)
                if opened is None:
                    return
                # out of the collector's sight now, not once the views are mounted (`_mount_views`): a full
                # collection walked it twice before then (no first part was shown: nothing of it is frozen too)
                gc.freeze()
            else:  # one tab of `serve` loads at a time: each memory guard sees what the tabs before it took
                with load_turn(waiting, lambda: worker.is_cancelled):
                    opened = open_checked(self.path, strict=self.strict, progress=progress,
                                          companions=self.companions, dims=self.dims)  # fmt: skip
            document, incidents = opened
            self.incidents = incidents
            if self.dims and document.offers(Capability.GRAPH):  # --dims: the counts bind them (the graph is built)
                from explorer.graph.metrics import unknown_dims

                model = document.view.drawn_graph()
                # a misspelt name binds nothing: said, not ignored
                if refused := unknown_dims(model, self.dims, document.view.input_dims()):
                    self.call_from_thread(self.notify, refused, title="--dims", severity="error", timeout=20)
                model.metric_dims = dict(self.dims)
            if self.node_data and document.offers(Capability.GRAPH):  # the user's numbers: the graph is built now
                from explorer.graph.node_data import load_node_data

                for line in load_node_data(document, self.node_data):
                    self.call_from_thread(self.notify, line, title="per-node data", timeout=10)
        except (LoadCancelled, TurnCancelled):
            return
        except LoadError as error:
            self.call_from_thread(self.show_error, error)
            return
        except Exception as error:  # a loader bug must still not crash the app
            self.call_from_thread(self.show_error, LoadError(self.path, "", f"internal error: {error!r}"))
            return
        if worker.is_cancelled:
            return
        from explorer.cache import documents as derived
        from explorer.schedule.incidents import name_incident_roles

        # incidents kept from an earlier open (the cache) come with their roles named: nothing is read again
        unnamed = any(not incident.roles for incident in incidents)
        # a big file's cache entry, before any view may touch the document; a model's once its graph is built
        # (GraphView.Built, the prebuild), or as the app ends
        if not unnamed and not document.view.KEEPS_GRAPH:
            derived.keep(document, self._cache_warning, detach=self.detach_writes)
        self.call_from_thread(self.show_document, document, roles_pending=unnamed)
        if unnamed:
            # after the views are mounted: naming is Python work that would slow their first paint (the workers'
            # reads it waits for go on meanwhile)
            mounting_ends = time.monotonic() + 30  # a view that failed to mount does not hold the naming back
            while not self.views_ready and not worker.is_cancelled and time.monotonic() < mounting_ends:
                time.sleep(0.01)
            with contextlib.suppress(Exception):  # roles are words beside the incidents: the lines stand without
                name_incident_roles(document, incidents)
                # with the roles the next open will not read again; the views only read the document meanwhile
                # (what they remember of it is left out of the entry), a change seen while it is walked skips it
                derived.keep(document, self._cache_warning, detach=self.detach_writes)
            if not worker.is_cancelled:
                self.call_from_thread(self._roles_named, incidents)

    def _roles_named(self, incidents: list[Any]) -> None:
        if self.incidents is incidents:  # still the file shown (and the table too: the app may be ending)
            for table in self.query(ProblemsTable):
                table.roles_named()

    @work(thread=True, exclusive=True, group="preview", name="preview")
    def load_preview(self) -> None:
        """A big file's first parts (a schedule's first core's first workloads, then the whole first core), each
        shown while the rest loads, when its format can give them (`Format.preview`) and the whole file is not
        on screen first."""
        from explorer.cache import documents as derived
        from explorer.registry import pick_format

        worker = get_current_worker()
        try:
            found = pick_format(self.path)
            if found.preview is None or derived.has_entry(found, self.path, self.strict, self.companions):
                return  # (kept: the whole file is on screen sooner than its first part would be)
            for early in found.preview(self.path):
                if worker.is_cancelled:
                    return
                self.call_from_thread(self._show_preview, early)
        except Exception:  # a preview is a bonus: whatever fails here, the full load that follows reports
            return

    def _cache_warning(self, message: str) -> None:
        """A cache entry that could not be written (a full disk), heard from the thread writing it."""
        with contextlib.suppress(RuntimeError):  # the app has ended: nobody to tell
            self.call_from_thread(self.notify, message, title="cache", severity="warning", timeout=10)

    def _show_preview(self, preview: Document) -> None:
        shown = self.document
        if (shown is None or shown.partial) and self.load_error is None:  # else the load ended first: nothing to add
            self.show_document(preview)

    @work(thread=True, group="graph-prebuild", description="build the graph")
    def _prebuild_graph(self, document: Document) -> None:
        """A big graph is built in the background once the file is on screen: `6` soon finds it ready, and the
        first look at the file does not wait for it (the graph view shows its progress if `6` comes first)."""
        try:
            document.view.graph_model()
        except Exception:  # the graph view builds it again when shown, and says what went wrong
            return  # (built, it is frozen out of the collector's sight by graph_model itself)
        self._keep_derived(document)

    def on_graph_view_built(self, message: Any) -> None:
        """The graph view built the document's graph: a big model's cache entry holds it from now on."""
        shown = self.document
        if shown is not None and message.document is shown:
            self.run_worker(functools.partial(self._keep_derived, shown), thread=True, group="cache",
                            description="keep the graph for the next open")  # fmt: skip

    def _keep_derived(self, document: Document) -> None:
        """Keep the document with what it holds now (in the calling worker's thread: the pickling walks it)."""
        from explorer.cache import documents as derived

        with contextlib.suppress(Exception):  # a cache entry is a bonus: the app goes on without it
            derived.keep(document, self._cache_warning, detach=self.detach_writes)

    def _panels_gone(self) -> bool:
        """Whether the app's panels are gone (it is ending): what a worker hands over then has nowhere to go."""
        return not self.query(SummaryBar)

    def _show_progress(self, fraction: float, stage: str) -> None:
        if self._panels_gone():
            return
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
        if self._panels_gone():
            return
        after_preview = self.document is not None and bool(self.document.partial) and self.timeline is not None
        row = self.timeline.selected if after_preview else 0
        self._preview_replaced = self._preview_replaced or after_preview
        self.document = document
        self.selections, self.last_selection = {}, ""  # refs of what was shown before may not name anything here
        self._load_bookmarks()
        self.query_one(SummaryBar).show_document(document)
        self.query_one(ContentSwitcher).current = "main"
        tree = self.query_one(DocumentTree)
        tree.show_document(document)
        if self.incidents is None:  # a document handed over (tests, serve): the load worker did not run
            from explorer.schedule.incidents import incidents_of

            self.incidents = incidents_of(document)
        self.query_one(ProblemsTable).show_problems(document.problems, self.incidents, roles_pending)
        self.query_one(DetailsPanel).show_sections(document.describe(("summary",)))
        views = offered_views(document)
        self.views_ready = not views
        self.mounted_views = {} if not views else None  # noted again once they are mounted
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
        """Add a tab for each view the document offers (their modules imported in a thread first), then,
        with `prebuild`, start building the graph once they are on screen: its pure-Python build holds the
        interpreter, and begun beside the mounting it delayed the whole file's first paint (seen with py-spy).
        The `lead` view is shown and painted before the other tabs are added (each costs a layout pass). The app
        may end meanwhile (`q` while the views mount): its widgets are gone, and so is the work."""
        # the views' modules (numpy and friends), imported off the UI thread once the document is on screen (the
        # import holds the interpreter: begun at once, it delayed that paint); the keys are answered meanwhile
        await self._painted()
        await asyncio.to_thread(import_widgets, views)
        try:
            tabs = self.query_one(FittingTabs)
            for k, spec in enumerate(views):
                if not self.query(f"#{spec.name}"):
                    pane = TabPane(f"{spec.key} {spec.title}", spec.make(), id=f"tab-{spec.name}")
                    # in the views' order, also when a first part of the file offered fewer (a preview: no graph)
                    later = [f"tab-{other.name}" for other in views[k + 1 :] if self.query(f"#tab-{other.name}")]
                    await tabs.add_pane(pane, before=later[0] if later else None)
                cast(ShowsDocument, self.query_one(f"#{spec.name}")).show_document(document)
                if spec.name == lead and self.document is document:
                    self.action_view(lead)
                    await self._painted()
                elif spec.name == self._wanted_view:  # its key was pressed before its tab was there
                    self._wanted_view = None
                    self.action_view(spec.name)
        except NoMatches:
            return
        tabs.fit_labels()
        self.mounted_views = {spec.name: found.first() for spec in ALL_VIEWS if (found := self.query(f"#{spec.name}"))}
        self.views_ready = True
        # The document lives as long as the app: moved out of the collector's sight, so a full collection
        # during a pan or a zoom scans only what views make since (a 20,000-node model otherwise costs one
        # frame in sixty a 100 ms pause; see BENCHMARKS.md)
        if self._preview_replaced:  # a replaced first part sits in reference cycles: free it, not freeze it
            self._preview_replaced = False
            gc.collect()
        gc.freeze()
        if self.compare is not None and not document.partial:  # --compare: the two graphs side by side
            compare, self.compare = self.compare, None
            self.compare_with(compare)
        elif prebuild:
            self.call_after_refresh(self._prebuild_graph, document)

    def show_error(self, error: LoadError) -> None:
        self.load_error = error  # (the command line says it as the app ends, panels or not)
        if self._panels_gone():
            return
        if self.document is not None and self.document.partial:  # a first part shown is not the file: let go
            self.document = None
            self.refresh_bindings()
        self.query_one(SummaryBar).show_error(self.path.name)
        self.query_one(ErrorPanel).show_error(error)
        self.query_one(ContentSwitcher).current = "error"
