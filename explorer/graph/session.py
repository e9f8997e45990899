"""The graph view's state without a screen: which groups are open, what is selected, at which zoom level and in
which direction, each state laid out once. The TUI's graph view, `graph --open` and `screenshot --open` drive
one session, so Enter gives the same picture everywhere: opening or closing a group lays it out with the picture
before as the one to keep, and the cursor lands where a reader would look next.

A window (left, top, width, height) is the part of the layout a screen shows, in layout cells: the session only
reads it (which members of an opened group are on screen) and says how far it should move (`Toggled.shift`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from explorer.arrays import distinct
from explorer.graph.layout import FULL, layout_graph
from explorer.graph.picture import Layout
from explorer.graph.visible import expand_all, visible_graph
from explorer.graph.walk import SHAPE_READERS, above_or_below, beside, next_along
from explorer.models.graph import ROOT, GraphModel

Key = tuple[int, int]  # (kind, id) of a drawn item: 0 a node, 1 a group; stays valid from one layout to the next
Window = tuple[int, int, int, int]  # (left, top, width, height) in layout cells
LAYOUTS_KEPT = 24  # laid-out states kept for going back (past it the cache starts again)
ARROWS = {"down": "↓", "up": "↑", "left": "←", "right": "→"}


@dataclass(frozen=True)
class Fork:
    """The last ↓/↑ that had a choice: the items it could go to, which one it took, and its arrow."""

    choices: tuple[Key, ...]
    taken: int
    arrow: str


@dataclass
class Toggled:
    """What Enter did: a group `opened` or closed, and how far the window moves so that what is around the group
    stays where it was on screen (the nearest box above it as the anchor)."""

    group: int
    opened: bool
    shift: tuple[int, int] | None


@dataclass
class GraphSession:
    model: GraphModel | None = None
    expanded: set[int] = field(default_factory=set)
    show_constants: bool = False
    level: int = FULL
    direction: str = "TB"
    selected_key: Key | None = None
    fork: Fork | None = None
    last_layout_seconds: float = 0.0
    laid_out: int = 0  # states laid out so far (a caller keeping the results out of the collector's way counts)
    layouts: dict[tuple, Layout] = field(default_factory=dict)
    placements: dict = field(default_factory=dict)  # each open group's placement, reused when another one changes
    previous: Layout | None = None  # the layout before a group opened or closed: where things were

    def reset(self) -> None:
        """A new document: no model, nothing laid out (level, direction and constants stay as the user set)."""
        self.model, self.previous, self.fork = None, None, None
        self.layouts.clear()
        self.placements.clear()

    def start(self, model: GraphModel, expanded: set[int], layout: Layout | None = None) -> None:
        """The model shown, with these groups open (and its layout, when a worker has made it already)."""
        self.model, self.expanded = model, expanded
        if layout is not None:
            self.layouts[self.state()] = layout
        shown = self.layout
        if shown is not None and shown.first_item >= 0:
            self.selected_key = self.key_of(shown, shown.first_item)

    # ---- layouts ---------------------------------------------------------------------------------------------
    def state(self) -> tuple:
        return (frozenset(self.expanded), self.show_constants, self.level, self.direction)

    @property
    def layout(self) -> Layout | None:
        if self.model is None:
            return None
        key = self.state()
        found = self.layouts.get(key)
        if found is None:
            started = time.perf_counter()
            visible = visible_graph(self.model, self.expanded, self.show_constants)
            found = layout_graph(self.model, visible, self.level, self.direction, self.placements, self.previous)
            self.last_layout_seconds = time.perf_counter() - started
            self.laid_out += 1
            if len(self.layouts) > LAYOUTS_KEPT:
                self.layouts.clear()
            self.layouts[key] = found
        return found

    @staticmethod
    def key_of(layout: Layout, item: int) -> Key:
        return int(layout.visible.item_kind[item]), int(layout.visible.item_id[item])

    def item_of_key(self, layout: Layout, key: Key | None) -> int:
        """The item showing `key` now: itself, or the collapsed group that hides the node."""
        if key is None or self.model is None:
            return -1
        kind, ident = key
        if kind == 0:
            return int(layout.visible.node_item[ident]) if ident < layout.visible.node_item.size else -1
        hits = np.flatnonzero((layout.visible.item_kind == 1) & (layout.visible.item_id == ident))
        if hits.size:
            return int(hits[0])
        nodes = np.flatnonzero(self.model.node_group == ident)
        return int(layout.visible.node_item[nodes[0]]) if nodes.size else -1

    @property
    def selected_item(self) -> int:
        layout = self.layout
        return self.item_of_key(layout, self.selected_key) if layout is not None else -1

    def select(self, item: int) -> bool:
        """Select a drawn item; True when the selection changed."""
        layout = self.layout
        if layout is None or not 0 <= item < layout.visible.n_items:
            return False
        key = self.key_of(layout, item)
        changed = key != self.selected_key
        self.selected_key = key
        return changed

    # ---- opening and closing ---------------------------------------------------------------------------------
    def _relayout(self, expanded: set[int]) -> tuple[Layout, Layout]:
        """The layout before and after `expanded` replaces the open groups, the one before kept in the picture."""
        before = self.layout
        assert before is not None
        self.previous = before
        self.expanded = expanded
        after = self.layout
        self.previous = None
        assert after is not None
        return before, after

    def open_path(self, group: int) -> None:
        """Open `group` as Enter would reach it: its closed ancestors first, outermost first, each step laid out
        with the one before as the picture to keep (`graph --open`)."""
        assert self.model is not None
        for g in self.model.ancestors(group):  # outermost first, the group itself last
            if g not in self.expanded:
                self._relayout(self.expanded | {g})

    def toggle(self, window: Window, reading: bool = False, enclosing: bool = False) -> Toggled | None:
        """Enter: open the selected group (the cursor goes onto the frame's top-left member, on screen where the
        box was) or close the selected node's group. `reading` (↓ into a closed group): the cursor goes where
        reading enters it instead (the first data reader fed from outside). `enclosing` (Backspace): close the
        open group the selection is drawn in, a closed group's too (a stack's members are all groups, so Enter
        on one opens it). None: nothing to open or close."""
        layout, item, model = self.layout, self.selected_item, self.model
        if layout is None or item < 0 or model is None:
            return None
        kind, ident = self.key_of(layout, item)
        opening = kind == 1 and not enclosing
        if opening:
            group = ident
            before, after = self._relayout(self.expanded | {ident})
        else:
            group = int(model.node_group[ident] if kind == 0 else model.group_parent[ident])
            if group == ROOT:
                return None
            before, after = self._relayout(self.expanded - {group} - model.descendants(group))
        shift = self.window_shift(before, after, group)  # the window first: the cursor goes where it can be seen
        if shift is not None:
            window = (window[0] + shift[0], window[1] + shift[1], window[2], window[3])
        if opening:
            entry = self.first_member(after, ident) if reading else self.top_left_member(after, ident, window)
            self.selected_key = entry or (1, ident)
        else:
            self.selected_key = (1, group)
        return Toggled(group, opening, shift)

    def window_shift(self, before: Layout, after: Layout, group: int) -> tuple[int, int] | None:
        """How far the window moves after `group` opened or closed so the boxes around it stay where they were on
        screen: the nearest box above the group is the anchor (the group's frame when nothing is above it)."""
        shared = {self.key_of(before, k): k for k in range(before.visible.n_items)}
        gone = self.item_of_key(before, (1, group))  # its box; a member when it was open
        if group in before.frames:  # closing: above its frame, not above the member (boxes beside it move)
            gx, gy = before.frames[group][:2]
        else:
            gx = int(before.x[gone]) if gone >= 0 else 0
            gy = int(before.y[gone]) if gone >= 0 else 0
        best, best_score = None, None
        for k in range(after.visible.n_items):
            old = shared.get(self.key_of(after, k))
            if old is None or old == gone:
                continue
            above = int(before.y[old]) + int(before.h[old]) <= gy
            score = (0 if above else 1, abs(gy - int(before.y[old])) + abs(gx - int(before.x[old])))
            if best_score is None or score < best_score:
                best, best_score = (old, k), score
        if best is not None:
            old, new = best
            return int(after.x[new]) - int(before.x[old]), int(after.y[new]) - int(before.y[old])
        if gone >= 0 and group in after.frames:
            fx, fy, fw, _ = after.frames[group]
            return fx + fw // 2 - (gx + int(before.w[gone]) // 2), fy - gy
        return None

    def top_left_member(self, layout: Layout, group: int, window: Window) -> Key | None:
        """The drawn item of an opened group at its top left (a node, or a closed subgroup): of those whose
        corner is in the window, the topmost, then leftmost, so the window need not move (a frame wider than the
        panel holds its first row far to the right); else the leftmost of its first row. A schedule layer: its
        first workload (its own rule, see first_member)."""
        assert self.model is not None
        if self.model.group_unit.size and self.model.group_unit[group]:
            return self.first_member(layout, group)
        items = distinct(layout.visible.node_item[self.member_nodes(layout, group)])
        if items.size == 0:
            return None
        ox, oy, width, body = window
        seen = items[(layout.x[items] >= ox) & (layout.x[items] < ox + width) & (layout.y[items] >= oy)
                     & (layout.y[items] < oy + body)]  # fmt: skip
        if seen.size:
            return self.key_of(layout, int(seen[np.lexsort((layout.x[seen], layout.y[seen]))[0]]))
        top = int(layout.y[items].min())  # the first row of boxes (a layer's boxes may sit a row or two apart)
        row = items[layout.y[items] < top + int(layout.h[items].max(initial=1))]
        return self.key_of(layout, int(row[np.lexsort((layout.y[row], layout.x[row]))[0]]))

    def first_member(self, layout: Layout, group: int) -> Key | None:
        """The drawn item inside an opened group that comes first in the model's order (a node, or a closed
        group when the group holds only groups), so Enter always leaves a selection. Folded weights do not count:
        they sit in a closed subgroup's box (the first one in the model's order would pick that box)."""
        model = self.model
        assert model is not None
        if model.group_unit.size and model.group_unit[group]:  # a schedule layer: its first workload in the file
            first = model.ref_to_node.get(model.group_ref[group])
            if first is not None and layout.visible.node_item[first] >= 0:
                return self.key_of(layout, int(layout.visible.node_item[first]))
        inside = list({group} | model.descendants(group))
        nodes = self.member_nodes(layout, group)
        if nodes.size == 0:
            return None
        # where reading enters: a member fed from outside the group that reads data, not only its shape
        member = np.zeros(model.n_nodes, dtype=bool)
        member[nodes] = True
        from_outside = member[model.edge_dst] & ~np.isin(model.node_group[model.edge_src], inside)
        entries = {int(n) for n in model.edge_dst[from_outside].tolist() if model.node_op[n] not in SHAPE_READERS}
        if entries:
            nodes = np.asarray(sorted(entries), dtype=np.int64)
        first = int(nodes[np.argmin(model.topo_rank[nodes])])
        return self.key_of(layout, int(layout.visible.node_item[first]))

    def member_nodes(self, layout: Layout, group: int) -> np.ndarray:
        """The nodes of a group and of the groups inside it that are drawn (visible, folded weights left out
        unless constants are shown), in node order: where Enter can put the cursor."""
        model = self.model
        assert model is not None
        inside = list({group} | model.descendants(group))
        drawn = ~model.node_constant if not self.show_constants else np.ones(model.n_nodes, dtype=bool)
        return np.flatnonzero(np.isin(model.node_group, inside) & (layout.visible.node_item >= 0) & drawn)

    def open_all(self) -> None:
        """Every group open (schedule layers stay boxes); a selected group gives the cursor to its first member."""
        assert self.model is not None
        key = self.selected_key
        self.expanded = expand_all(self.model)
        layout = self.layout
        if key is not None and key[0] == 1 and key[1] in self.expanded and layout is not None:
            self.selected_key = self.first_member(layout, key[1]) or key

    def reveal(self, node: int, unit: int = ROOT) -> int:
        """Open every group that hides `node` (a `unit` group, such as a schedule layer, stays one box and is
        what is revealed); a folded constant shows the constants. The drawn item, -1 when none."""
        if self.model is None:
            return -1
        group = int(self.model.group_parent[unit]) if unit != ROOT else int(self.model.node_group[node])
        opened = set()
        while group != ROOT:
            opened.add(group)
            group = int(self.model.group_parent[group])
        self.expanded = self.expanded | opened
        layout = self.layout
        assert layout is not None
        item = int(layout.visible.node_item[node])
        if item < 0:  # a folded constant: show constants to reach it
            self.show_constants = True
            layout = self.layout
            assert layout is not None
            item = int(layout.visible.node_item[node])
        return item

    # ---- walking ---------------------------------------------------------------------------------------------
    def step(self, where: str) -> int | None:
        """The item ↓/↑/←/→ goes to (explorer.graph.walk): along the edges, the consumer first in the model's
        order at a fork (kept in `fork`: `other_branch` takes the next); across, the neighbour on the same rows;
        a box with no edge that way, the nearest box that way. None: ↓ on a closed group, which reads on inside
        it (the caller opens it with `toggle(reading=True)`); -1: nowhere to go."""
        layout, item, model = self.layout, self.selected_item, self.model
        self.fork = None
        if layout is None or item < 0 or model is None:
            return -1
        tb = self.direction == "TB"
        along = where in ("up", "down") if tb else where in ("left", "right")
        forward = where in ("down", "right")
        closed_group = layout.visible.item_kind[item] == 1 and not (layout.unit.size and layout.unit[item])
        if along and forward and closed_group:
            return None
        if along:
            choices = next_along(model, layout, item, forward)
            if choices:
                if len(choices) > 1:
                    self.fork = Fork(tuple(self.key_of(layout, c) for c in choices), 0, ARROWS[where])
                return choices[0]
            return above_or_below(layout, item, forward) if tb else beside(layout, item, 1 if forward else -1)
        return beside(layout, item, 1 if forward else -1) if tb else above_or_below(layout, item, forward)

    def other_branch(self) -> int:
        """At the last fork, the next branch (round the branches); -1 when there is none."""
        layout = self.layout
        if self.fork is None or layout is None:
            return -1
        taken = (self.fork.taken + 1) % len(self.fork.choices)
        self.fork = Fork(self.fork.choices, taken, self.fork.arrow)
        return self.item_of_key(layout, self.fork.choices[taken])
