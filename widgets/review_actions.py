"""What a reviewer does with a file beside looking: bookmarks (b, B), the links of the selection (g), exports
(the HTML report, a Perfetto trace, a screenshot), and a diff with another file, which can open that file in
this one's place and come back.

Each writes only what the user asked for, where they said (bookmarks merge, never overwrite; exports run in a
thread so the UI keeps answering).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import work
from textual.widgets import TabbedContent

from explorer.api import open_document
from explorer.document import Capability, Document, is_group_ref
from explorer.errors import LoadError
from explorer.writing import write_atomically
from widgets.app_parts import AppParts
from widgets.messages import RevealRef


class ReviewActions(AppParts):
    """The app's review actions (mixed into the App)."""

    document: Document | None
    path: Path
    bookmarks_path: Path
    bookmarks: list[Any]
    author: str
    strict: bool
    previous_document: Document | None

    def _load_bookmarks(self, then: Any = None) -> None:
        """Read the sidecar in a thread (a FIFO or another user's lock planted there must never hold the UI),
        then show what it holds; `then()` runs on the UI thread once the bookmarks are in."""
        self._read_bookmarks(self.bookmarks_path, then)

    @work(thread=True, group="bookmarks", description="read bookmarks")
    def _read_bookmarks(self, path: Path, then: Any) -> None:
        from textual.worker import get_current_worker

        from explorer.bookmarks import BookmarksError, Stopped, load

        worker = get_current_worker()
        try:
            loaded, error = load(path, stop=lambda: worker.is_cancelled), None
        except Stopped:  # the app is quitting: nobody waits for the list
            return
        except BookmarksError as failure:
            loaded, error = None, failure
        self.call_from_thread(self._bookmarks_read, path, loaded, error, then)

    def _bookmarks_read(self, path: Path, loaded: Any, error: Any, then: Any) -> None:
        if path != self.bookmarks_path:  # another sidecar was chosen meanwhile
            return
        if error is not None:
            self.notify(str(error), severity="warning")
            self.bookmarks = []
        else:
            self.bookmarks = loaded.bookmarks
            for problem in loaded.problems:
                self.notify(problem, severity="warning")
        if then is not None:
            then()

    def _change_bookmarks(self, change: Any, done: Any = None) -> None:
        """Apply a change to the sidecar (merged with what is on disk now), in a thread: the sidecar's lock may be
        held by another process. When it cannot be written (a read-only folder, a file that is not ours, a lock
        held too long), say why and offer another path, then try again there."""
        self._write_bookmarks(self.bookmarks_path, change, done)

    @work(thread=True, group="bookmarks", description="save bookmarks")
    def _write_bookmarks(self, path: Path, change: Any, done: Any) -> None:
        from explorer.bookmarks import BookmarksError

        try:
            loaded, error = change(path), None
        except BookmarksError as failure:
            loaded, error = None, failure
        self.call_from_thread(self._bookmarks_written, change, loaded, error, done)

    def _bookmarks_written(self, change: Any, loaded: Any, error: Any, done: Any) -> None:
        from explorer.bookmarks import UnsavableNote
        from widgets.review_screens import PromptScreen

        if isinstance(error, UnsavableNote):
            self.notify(str(error), severity="error")
            return
        if error is not None:
            self.notify(str(error), severity="error")
            fallback = Path.home() / self.bookmarks_path.name

            def retry(answer: str | None) -> None:
                if answer:
                    self.bookmarks_path = Path(answer).expanduser()
                    self._change_bookmarks(change, done)

            self.push_screen(PromptScreen(f"{error}. Save the bookmarks to:", str(fallback)), retry)
            return
        self.bookmarks = loaded.bookmarks
        if done is not None:
            done()

    def action_links(self) -> None:
        """The selected item's producers and consumers (as the details panel lists them); Enter jumps."""
        if self.document is None:
            return
        from widgets.review_screens import LinksScreen

        ref, label = self.selected_item()
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
        """Mark the tree's selected item (and the view on screen) with a note, saved in the sidecar file; on a
        screen of rows that bookmarks its own (the query panel), its selected row."""
        own = getattr(self.screen, "bookmark_row", None)
        if own is not None:
            own()
            return
        if self.document is None or self._needs_whole_file("Bookmarking"):
            return
        ref, label = self.selected_item()
        if is_group_ref(ref):  # a name scope of the graph: nothing in the file to point back at
            self.notify(f"{label} is a group of the graph, not an item of the file: bookmark one of its boxes",
                        severity="warning")  # fmt: skip
            return
        self.bookmark_item(ref, label)

    def bookmark_item(self, ref: Any, label: str) -> None:
        """Ask for a note and bookmark `ref` (shown as `label`) with the view on screen."""
        from explorer.bookmarks import add_bookmark, new_bookmark
        from widgets.review_screens import PromptScreen

        view = (self.query_one(TabbedContent).active or "tab-tree").removeprefix("tab-")

        def add(note: str | None) -> None:
            if note is None:
                return
            if not note.strip():  # Enter on an empty prompt: a bookmark that says nothing is not saved
                self.notify("an empty note: nothing was bookmarked", severity="warning")
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

        def delete(index: int) -> list[Any]:
            gone = self.bookmarks[index].id
            self._change_bookmarks(lambda path: delete_bookmark(path, self.path, gone))
            self.bookmarks = [b for b in self.bookmarks if b.id != gone]  # as the sidecar will hold it
            return self.bookmarks

        screen = BookmarksScreen(self.bookmarks, delete)

        def go(index: int | None) -> None:
            if index is None or not 0 <= index < len(screen.bookmarks):
                return
            self.go_to_bookmark(screen.bookmarks[index])

        def read_again() -> None:
            if screen.is_attached:
                screen.show(self.bookmarks)

        # listed at once with what was read before, then read again (others may have added theirs since), off the
        # UI thread, and listed anew: 300,000 bookmarks take a second or two to read
        self.push_screen(screen, go)
        self._load_bookmarks(read_again)

    def go_to_bookmark(self, bookmark: Any) -> None:
        self.post_message(RevealRef(bookmark.ref))
        if self.document is None:
            return
        if bookmark.view != "tree" and bookmark.view in self.views_for(self.document):
            if bookmark.view == "graph" and self.graph is not None:  # its box, the groups hiding it opened
                self.graph.reveal_ref(bookmark.ref)  # (now, or once built)
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
            write_atomically(target, json.dumps(trace_events(document)).encode("utf-8"))

        self._ask_and_export("Write the Chrome trace (Perfetto) to:", ".trace.json", write_trace)

    def _ask_and_export(self, question: str, suffix: str, write: Any) -> None:
        """Ask where (a default beside the input), then write in a thread so the UI keeps answering."""
        from widgets.review_screens import PromptScreen

        default = str(self.path.with_name(self.path.name + suffix))

        def chosen(target: str | None) -> None:
            self._export(target, write)

        self.push_screen(PromptScreen(question, default), chosen)

    @work(thread=True, group="export", description="export")
    def _export(self, target: str | None, write: Any) -> None:
        if not target or self.document is None:
            return
        from explorer.writing import refuse_inputs

        try:  # the input, its companions and weights, and the per-node data files it was coloured by
            refuse_inputs(Path(target), [self.path, *self.document.files_read(), *map(Path, self.node_data)])
        except LoadError as error:
            self.call_from_thread(self.notify, str(error), severity="error")
            return
        try:
            write(self.document, Path(target))
        except LoadError as error:  # said in words: a folder, a missing folder, no permission, a full disk
            self.call_from_thread(self.notify, str(error), severity="error")
            return
        self.call_from_thread(self.notify, f"wrote {target}")

    def action_screenshot_svg(self) -> None:
        path = self.save_screenshot()
        self.notify(f"saved {path}")

    def action_query(self, sql: str = "") -> None:
        """The palette's "Query" (and its canned queries): SQL over the schedule's tables; a chosen row's
        workload is selected everywhere."""
        if self._needs_whole_file("Querying") or self.document is None or self.document.schedule is None:
            return
        from widgets.query_screen import QueryScreen

        document = self.document

        def chosen(choice: tuple[str, tuple[int, int]] | None) -> None:
            if choice is None or document is not self.document:
                return
            action, target = choice
            s = document.scheduled()
            row = s.row_of(*target)
            if row is None:
                self.notify(f"no workload {target[1]} on {document.vocabulary.lane} {target[0]}", severity="warning")
                return
            self.go_to_workload(row)
            if action == "bookmark":  # the row's workload, whatever the tree shows while it follows
                self.bookmark_item(("workload", row), s.wl_label(row))

        self.push_screen(QueryScreen(document, sql), chosen)

    def action_add_node_data(self) -> None:
        """The palette's "Add per-node data": a node-data file read against the graph, each of its data sets a
        colour mode of the graph view (shown at once), its problems added to the list."""
        if self._needs_whole_file("Per-node data"):
            return
        from widgets.review_screens import PromptScreen

        prompt = 'Per-node data file (Model Explorer JSON, {"node": number} JSON, or node,value CSV)?'

        def chosen(path: str | None) -> None:
            self._add_node_data(path)

        self.push_screen(PromptScreen(prompt), chosen)

    @work(thread=True, group="node-data", description="read per-node data")
    def _add_node_data(self, path: str | None) -> None:
        if not path or self.document is None:
            return
        from explorer.graph.node_data import load_node_data

        document = self.document
        before = set(document.view.drawn_graph().data_sets)
        count = len(document.problems)
        lines = load_node_data(document, [path])
        added = [name for name in document.view.drawn_graph().data_sets if name not in before]
        self.call_from_thread(self._node_data_added, document, lines, added, len(document.problems) > count)

    def _node_data_added(self, document: Document, lines: list[str], added: list[str], new_problems: bool) -> None:
        if document is not self.document:
            return
        for line in lines:
            self.notify(line, title="per-node data", severity="information" if added else "error", timeout=10)
        if new_problems:
            from widgets.problems import ProblemsTable

            self.query_one(ProblemsTable).show_problems(document.problems, self.incidents or ())
        if added and self.graph is not None:
            self.graph.add_data_sets(added)
            self.action_view("graph")

    def action_compare(self) -> None:
        """The palette's "Compare graphs side by side": another file's graph beside this one's."""
        if self._needs_whole_file("Comparing"):
            return
        from widgets.review_screens import PromptScreen


        def chosen(other: str | None) -> None:
            self.compare_with(other)

        self.push_screen(PromptScreen("Compare the graph with which file (same format)?"), chosen)

    @work(thread=True, group="compare", description="compare graphs")
    def compare_with(self, other: str | Path | None) -> None:
        """Open `other`, match its graph with this file's and show both side by side (a message when the two
        cannot be compared)."""
        if not other or self.document is None:
            return
        from explorer.graph.compare import NotComparableGraphs, compare_documents

        try:
            other_document = open_document(other, strict=self.strict)
            other_document.run_deep_checks()  # shape inference, as the graph view runs it: the same box texts
            comparison = compare_documents(self.document, other_document)
        except (LoadError, NotComparableGraphs) as error:
            self.call_from_thread(self.notify, str(error), severity="error", timeout=10)
            return
        self.call_from_thread(self._show_comparison, comparison, (self.document, other_document))

    def _show_comparison(self, comparison: Any, documents: tuple[Document, Document]) -> None:
        """On the UI thread: a screen (and its widgets) is made where it runs."""
        from widgets.graph.compare_screen import CompareScreen

        self.push_screen(CompareScreen(comparison, documents))

    def action_diff(self) -> None:
        if self._needs_whole_file("Comparing"):
            return
        from widgets.review_screens import PromptScreen


        def chosen(other: str | None) -> None:
            self._diff_with(other)

        self.push_screen(PromptScreen("Compare with which file (same format)?"), chosen)

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
        targets = [change_target(change) for change in result["changes"]]
        documents = {"a": self.document, "b": other_document}
        self.call_from_thread(self._show_diff, summary_lines(result), change_lines(result), targets, documents)

    def _show_diff(self, summary: list[str], changes: list[str], targets: list[Any],
                   documents: dict[str, Document]) -> None:  # fmt: skip
        """On the UI thread: a screen (and its widgets) is made where it runs."""
        from widgets.review_screens import DiffScreen

        self.push_screen(DiffScreen(summary, changes, targets), lambda chosen: self._go_to_change(chosen, documents))

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

    def action_back(self) -> None:  # type: ignore[override]  # Textual's is a coroutine; ours switches at once
        if self.previous_document is not None:
            self.switch_document(self.previous_document)

    def _when_views_ready(self, then: Any) -> None:
        if self.views_ready:
            then()
        else:
            self.set_timer(0.05, lambda: self._when_views_ready(then))
