"""Keeping every view on the same item: one `Selected` message in, every other view and the details out.

Each view (tree, timeline, buffers, memory map, graph) posts `Selected` when its selection moves; the app
records it as that view's selection and the others follow it. What `g` and `b` act on is the selection of the
view that has the keyboard (or, from the details or the problems, the last one made), so they work alike in
every view. Problems and search reach the same path through `RevealRef`.
"""

from __future__ import annotations

from typing import Any

from textual.dom import DOMNode
from textual.widgets import TabbedContent

from explorer.document import Document, Section, is_group_ref
from explorer.errors import Problem
from explorer.formatting import human_bytes
from explorer.schedule.refs import entry_of, workload_row
from widgets.app_parts import AppParts
from widgets.details import DetailsPanel
from widgets.doc_tree import DocumentTree
from widgets.messages import ItemActivated, ProblemChosen, RevealRef, Selected

ROW_VIEWS = ("timeline", "buffers", "memory", "mesh")  # views whose selection is a workload row (the time cursor)
BUFFER_PROBLEMS = ("l2-overlap", "wl0-overlap", "l2-out-of-range", "l2-over-capacity")
VIEWS_WITH_SELECTION = ("tree", "timeline", "buffers", "memory", "graph", "mesh")


def label_of(document: Document, ref: Any) -> str:
    """The tree's name for `ref`, found through the document's items (no widget moves): what a bookmark
    made from another view is called."""
    item = document.tree
    for step in document.ancestors(ref):
        children = item.get_children() if item.has_children else []
        match = next((child for child in children if child.ref == step), None)
        if match is None:
            break
        item = match
    return item.label if item.ref == ref else str(ref)


def with_core(document: Document | None, ref: Any, label: str) -> str:
    """A workload's (or its entries') label with its core in front: the tree says `#2 Conv_2` under a core's
    node, but a bookmark or a prompt read alone must say which core."""
    s = document.schedule if document is not None else None
    row = workload_row(ref)
    if s is None or row is None or not 0 <= row < s.n_workloads:
        return label
    core = s.core_label(int(s.wl_core[row]))
    return label if label.startswith(core) or "core" in label else f"{core} · {label}"


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


def room_section(document: Document, incidents: list[Any], problem: Problem) -> list[Section]:
    """For a problem of an L2 incident: the pressure where it starts, and where its tensor would have fitted
    (or how short memory was). Worked out when first shown (the load does not pay for it)."""
    incident = next((i for i in incidents if i.code == "l2-overlap" and any(m is problem for m in i.members)), None)
    if incident is None:
        return []
    from explorer.schedule.pressure import live_tensors, pressure_of

    pressure = pressure_of(document)
    if pressure is None:
        return []
    if incident.context is None:
        pressure.explain([incident])
    context = incident.context or {}
    words = incident.room_words() or "no snapshot holds the tensor where its incident starts"
    rows: list[tuple[str, Any]] = [("was there room?", words)]
    from explorer.schedule.touched import confirm_incidents, touched_words

    if incident.touched is None:
        confirm_incidents(document, [incident])
    if verdict := touched_words(incident.touched):  # an assembly or trace joined: did what ran write there?
        rows.append(("written by what ran?", verdict))
    if context:
        capacity = context["capacity"]
        share = f" of {human_bytes(capacity)} ({context['live_bytes'] / capacity:.0%})" if capacity > 0 else ""
        rows.append(("live bytes", f"{human_bytes(context['live_bytes'])}{share}"))
        if incident.region_largest_free is not None:
            rows.append((f"largest free block in {incident.region_words()}", human_bytes(incident.region_largest_free)))
        rows.append(("largest free block in L2", human_bytes(context["largest_free_block"])))
        s = document.scheduled()
        row = s.row_of(incident.core, incident.first_workload)
        if row is not None:  # named in words here: one incident at a time
            for t in live_tensors(s, row, pressure.entry_role(), document.vocabulary.entry_kinds, limit=5):
                rows.append((f"live: tensor {t['tensor_id']}", f"{human_bytes(t['bytes'])} at {t['address']:#x} "
                             f"{t['role']}".rstrip()))  # fmt: skip
    return [Section("Room for the misplaced tensor", ("property", "value"), rows)]


class SelectionSync(AppParts):
    """The app's part that routes selections (mixed into the App; handlers by Textual's naming convention).

    `selections` holds what each view shows selected: set by the view's own `Selected`, and again whenever
    the app makes it follow another view (so after a jump, `g` in the timeline starts from where it jumped)."""

    document: Document | None
    _jump_reason: tuple[Any, Problem, tuple[int, ...]] | None
    selections: dict[str, tuple[Any, str]]
    last_selection: str

    # ---- one message in ---------------------------------------------------------------------------------------
    def on_selected(self, message: Selected) -> None:
        if self.document is None or not self.query(DetailsPanel):  # closing: the views are being taken down
            return
        ref, view = message.ref, message.view
        name = getattr(view, "id", None) or ""
        self.selections[name] = (ref, message.label)
        self.last_selection = name
        kind = ref[0] if isinstance(ref, tuple) and ref else None
        if isinstance(view, DocumentTree):
            self._follow_tree(ref, message.following)
        elif is_group_ref(ref):  # a graph group the tree has no item for: the details only (the document asks
            self.show_details(ref)  # the graph), no tree item to reveal
        elif ref is not None and kind == "workload" and name in ROW_VIEWS:
            self.select_row(ref[1], source=view)  # the shared time cursor
            self.show_details(ref)
            self.query_one(DocumentTree).reveal(ref, following=name)  # the tree follows every view
        elif ref is not None and entry_of(ref) is not None and name == "buffers":
            self.show_details(ref)
            self._select_entry(ref)
        else:  # a graph box, a memory map band: the tree's cursor goes there (and the details with it)
            self.query_one(DocumentTree).reveal(ref, following=name)
            self.show_details(ref)

    def _follow_tree(self, ref: Any, following: str = "") -> None:
        """Every view follows the tree's cursor but `following`, the view the cursor itself followed (a view of
        rows has set the details and the other views' rows already; any view that moved the cursor has shown the
        same ref's details: drawn again, a graph key cost two details paints)."""
        if following in ROW_VIEWS:
            return
        if not following:
            self.show_details(ref)
        if self.document is None:
            return
        row = workload_row(ref)
        if row is not None and self.document.schedule is not None:
            highlight = None
            if self._jump_reason is not None and self._jump_reason[0] == ref:
                highlight = self._jump_reason[2]
            self.select_row(row, highlight)
            self._select_entry(ref)
        tensor_id = self.document.tensor_of(ref)
        if tensor_id is not None and self.layout is not None:
            self.layout.show_tensor(tensor_id)
        if isinstance(ref, tuple) and ref and ref[0] == "source" and self.source is not None:
            self.source.show(ref[1], ref[2])
        if following != "graph" and self.graph is not None and self.graph.select_ref(ref):
            self.selections["graph"] = (ref, "")

    def _select_entry(self, ref: Any) -> None:
        """The memory map's band of an L2 or WL0 entry (explorer.schedule.refs.entry_of); nothing for other refs."""
        found = entry_of(ref)
        if self.memory_map is not None and found is not None:
            self.memory_map.select_entry(*found)
            self.selections["memory"] = (ref, "")

    def select_row(self, row: int, highlight: tuple | None = None, source: Any = None) -> None:
        """A block selected in the timeline, the buffer view and the memory map, whichever the document has
        (all but `source`, the view the selection came from)."""
        if self.timeline is not None and self.timeline is not source:
            self.timeline.select(row)
            self.selections["timeline"] = (("workload", row), "")
        if self.buffers is not None and self.buffers is not source:
            self.buffers.show_row(row, highlight=highlight)
            self.selections["buffers"] = (("workload", row), "")
        if self.memory_map is not None and self.memory_map is not source:
            self.memory_map.show_row(row, highlight=highlight)
            self.selections["memory"] = (("workload", row), "")
        if self.mesh is not None and self.mesh is not source:
            self.mesh.show_row(row)
            self.selections["mesh"] = (("workload", row), "")

    def selected_item(self) -> tuple[Any, str]:
        """(ref, label) of what the view with the keyboard has selected: the tree's cursor in the tree; in the
        timeline, buffers, memory map or graph, their own selection; from elsewhere (the details, the problems)
        the last selection made. What `b` bookmarks and `g` starts from."""
        name = ""
        widget: DOMNode | None = self.focused
        while widget is not None and name == "":
            if widget.id in VIEWS_WITH_SELECTION:
                name = widget.id
            widget = widget.parent
        if name != "tree" and (name or self.last_selection) in self.selections and self.document is not None:
            ref, label = self.selections[name or self.last_selection]
            return ref, with_core(self.document, ref, label or label_of(self.document, ref))
        node = self.query_one(DocumentTree).cursor_node
        if node is None or node.data is None:
            return ("summary",), "summary"
        return node.data.ref, with_core(self.document, node.data.ref, node.data.label)

    # ---- what follows -----------------------------------------------------------------------------------------
    def show_details(self, ref: Any) -> None:
        if self.document is None:
            return
        sections = self.document.describe(ref)
        if self._jump_reason is not None and self._jump_reason[0] == ref:
            room = room_section(self.document, getattr(self, "incidents", None) or [], self._jump_reason[1])
            sections = [problem_section(self._jump_reason[1]), *room, *sections]
        self.query_one(DetailsPanel).show_sections(sections)

    def go_to_workload(self, row: int) -> None:
        """Show one workload everywhere: the tree, the timeline, the buffer view and the details."""
        self.select_row(row)
        self.post_message(RevealRef(("workload", row)))

    def on_item_activated(self, message: ItemActivated) -> None:
        """Enter on a link jumps to its target; on a source file opens the source view; on an ARK tensor, its
        layout."""
        ref = message.item.ref
        if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "goto":  # a link: a value's producer, a consumer
            self.post_message(RevealRef(ref[1]))
        elif isinstance(ref, tuple) and ref and ref[0] == "source" and self.source is not None:
            self.action_view("source")
        elif (ref is not None and self.document is not None and self.document.tensor_of(ref) is not None
              and self.layout is not None):  # fmt: skip
            self.action_view("layout")

    def on_problem_chosen(self, message: ProblemChosen) -> None:
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
                self.select_row(row, message.highlight or tuple(problem.refs.get("tensor_ids") or ()))
                in_graph = (self.query_one(TabbedContent).active == "tab-graph" and self.graph is not None
                            and self.graph.select_ref(ref))  # `n` from the graph stays there when it has a box for it
                if problem.code in BUFFER_PROBLEMS and self.buffers is not None and not in_graph:
                    self.query_one(TabbedContent).active = "tab-buffers"

    def on_reveal_ref(self, message: RevealRef) -> None:
        tree = self.query_one(DocumentTree)
        before = tree.cursor_node
        self._jump_reason = (message.ref, message.because, message.highlight) if message.because is not None else None
        tree.reveal(message.ref)
        if tree.cursor_node is before:  # no highlight event will come: refresh the details ourselves
            self.show_details(message.ref)
        if self.query_one(TabbedContent).active == "tab-tree":
            tree.focus()
