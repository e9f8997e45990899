"""Keeping the picture when a group opens or closes: the previous layout's places, rows, long edges and ports,
wanted again by the containers laid out anew, and whether a cached placement keeps them."""

from __future__ import annotations

import numpy as np

from explorer.graph.layered import PORT, Placement
from explorer.graph.picture import Layout
from explorer.graph.placement import last_kept_layer
from explorer.graph.visible import VisibleGraph
from explorer.models.graph import ROOT


def item_keys(visible: VisibleGraph, items: np.ndarray) -> list[tuple[int, int]]:
    return list(zip(visible.item_kind[items].tolist(), visible.item_id[items].tolist(), strict=True))


class Before:
    """Where things were across the layers in the previous layout, per container: what `wanted` asks for."""

    def __init__(self, previous: Layout | None, tb: bool, level: int, direction: str) -> None:
        self.boxes: dict[tuple[int, int], tuple[int, int]] = {}  # (kind, id) → (first cell, size) across
        self.frames: dict[int, tuple[int, int]] = {}
        self.rows: dict[tuple[int, int], tuple[int, int]] = {}  # (kind, id) → (first cell, size) along
        self.frame_rows: dict[int, tuple[int, int]] = {}
        self.chains: dict[int, tuple[dict[tuple, list[int]], list[tuple[int, int]]]] = {}
        self.previous: Layout | None = None
        self.tb = tb
        self._entered: dict[int, dict[tuple[int, int], int]] | None = None  # built at the first just-opened group
        if previous is None or previous.level != level or previous.direction != direction:
            return
        across, size = (previous.x, previous.w) if tb else (previous.y, previous.h)
        kinds, ids = previous.visible.item_kind.tolist(), previous.visible.item_id.tolist()
        for k, (a, b) in enumerate(zip(across.tolist(), size.tolist(), strict=True)):
            self.boxes[(kinds[k], ids[k])] = (a, b)
        along, thick = (previous.y, previous.h) if tb else (previous.x, previous.w)
        for k, (a, b) in enumerate(zip(along.tolist(), thick.tolist(), strict=True)):
            self.rows[(kinds[k], ids[k])] = (a, b)
        for g, (fx, fy, fw, fh) in previous.frames.items():
            self.frames[g] = (fx, fw) if tb else (fy, fh)
            self.frame_rows[g] = (fy, fh) if tb else (fx, fw)
        self.chains = previous.chains
        self.previous = previous

    def wanted_chains(self, container: int, keys: list[tuple[int, int]]) -> dict[tuple, list[int]] | None:
        """The container's long edges' dummies and ports where they were (Placement.chains), their ends renamed
        from the old layout's elements to the same elements now (an element's index changes when a group opens)."""
        old, old_keys = self.chains.get(container, ({}, []))
        if not old:
            return None
        local = {key: e for e, key in enumerate(keys)}
        n, n_old = len(keys), max(len(old_keys), 1)

        def end(name: tuple) -> tuple | None:
            if name == PORT:
                return PORT
            element = name[1] % n_old if name[0] == "in" else name[1]
            e = local.get(old_keys[element])
            if e is None:
                return None
            return ("in", e + name[1] // n_old * n) if name[0] == "in" else (name[0], e)

        out = {}
        for (a, b), cells in old.items():
            ends = end(a), end(b)
            if ends[0] is not None and ends[1] is not None:
                out[ends] = cells
        return out or None

    def just_opened(self, container: int) -> bool:
        """Whether the container is a group that was a closed box in the previous layout."""
        return self.previous is not None and container != ROOT and (1, container) in self.boxes

    def entry_cells(self, group: int, sources: dict[int, tuple[int, int]]) -> dict[int, int] | None:
        """For a group just opened (`just_opened`): per entry port (`sources`: port → its source's key), the cell
        across its closed box's near side, from the box's first cell, where that source's edge came in (None when no
        source's edge did)."""
        if self._entered is None:  # every closed group's incoming edges, indexed once per layout
            previous, self._entered = self.previous, {}
            assert previous is not None  # just_opened says there was a layout before
            kinds, ids = previous.visible.item_kind, previous.visible.item_id
            for edge in previous.edges:
                if edge.kind != "routed" or not edge.points or kinds[edge.target] != 1:
                    continue
                x, y = edge.points[-1]
                first = previous.x[edge.target] if self.tb else previous.y[edge.target]
                source = (int(kinds[edge.source]), int(ids[edge.source]))
                self._entered.setdefault(int(ids[edge.target]), {})[source] = int((x if self.tb else y) - first)
        entered = self._entered.get(group, {})
        cells = {port: entered[key] for port, key in sources.items() if key in entered}
        return cells or None

    def origin(self, container: int, along: bool = False) -> int | None:
        """The container's first cell before, across the layers (or along them): 0 for the canvas."""
        if container == ROOT:
            return 0 if self.boxes else None
        frame = (self.frame_rows if along else self.frames).get(container)
        return frame[0] if frame else None

    def wanted(self, container: int, keys: list[tuple[int, int]], sizes: np.ndarray, child_shifts: list,
               n_items: int) -> tuple[np.ndarray | None, np.ndarray | None]:  # fmt: skip
        """Each element's old first cell inside `container` (NaN where it was not there): a group that stays
        open is placed so its content stays put; a group just opened puts its frame's corner where its box's was
        (the frame grows right and down, so what is above and left of it stays), and one just closed puts its
        box where its frame's corner was; a box that only changed size keeps its centre. Also each element's
        old centre (what orders a layer: a just-opened group's frame, centred on its new size, would sort after
        the edges that ran beside its box)."""
        origin = self.origin(container)
        if origin is None:
            return None, None
        wanted = np.full(len(keys), np.nan)
        centres = np.full(len(keys), np.nan)
        for e, key in enumerate(keys):
            child_shift = child_shifts[e - n_items] if e >= n_items else None
            if e >= n_items and key[1] in self.frames:  # stays open: its content stays put (no box in it: its corner)
                wanted[e] = self.frames[key[1]][0] - origin - (child_shift or 0.0)
                centres[e] = self.frames[key[1]][0] - origin + self.frames[key[1]][1] / 2.0  # its old place in order
                continue
            was_box = self.boxes.get(key)
            old = was_box or (self.frames.get(key[1]) if key[0] == 1 else None)
            if old is None:
                continue
            opened_or_closed = (e >= n_items) == (was_box is not None)
            wanted[e] = old[0] - origin + (0.0 if opened_or_closed else (old[1] - int(sizes[e])) / 2.0)
            centres[e] = old[0] - origin + old[1] / 2.0
        return (None, None) if np.isnan(wanted).all() else (wanted, centres)

    def wanted_rows(
        self, container: int, keys: list[tuple[int, int]], sizes: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Each element's old first cell along the layers inside `container`, from its frame's first cell (NaN
        where it was not there), and which elements changed size along them (a group opened or closed, a frame
        grown): rows down to the first changed one stay where they were (`place_container`)."""
        origin = self.origin(container, along=True)
        if origin is None:
            return None, None
        wanted = np.full(len(keys), np.nan)
        changed = np.zeros(len(keys), dtype=bool)
        for e, key in enumerate(keys):
            old = self.rows.get(key)  # a box before; else a group that was open, by its frame
            if old is None and key[0] == 1:
                old = self.frame_rows.get(key[1])
            if old is None:
                changed[e] = True
                continue
            wanted[e] = old[0] - origin
            changed[e] = old[1] != int(sizes[e])
        return (None, None) if np.isnan(wanted).all() else (wanted, changed)

    def shift(self, container: int, keys: list[tuple[int, int]], placed: np.ndarray) -> float | None:
        """How far the container's elements moved inside its box (the median over those that were there)."""
        origin = self.origin(container)
        if origin is None:
            return None
        moved = [int(placed[e]) - (self.boxes[key][0] - origin) for e, key in enumerate(keys[: placed.size])
                 if key in self.boxes]  # fmt: skip
        return float(np.median(moved)) if moved else None


def keeps(placement: Placement, wanted: np.ndarray | None, wanted_chains: dict | None = None) -> bool:
    """Whether a cached placement puts every element that has a wanted place exactly there (and the long edges'
    dummies where they were)."""
    if wanted is None:
        return True
    known = ~np.isnan(wanted)
    if not np.all(placement.minor[: wanted.size][known] == np.floor(wanted[known])):
        return False
    return not wanted_chains or all(placement.chains.get(ends, cells) == cells for ends, cells in wanted_chains.items())


def keeps_rows(placement: Placement, layer: np.ndarray, rows: np.ndarray | None, changed: np.ndarray | None) -> bool:
    """Whether a cached placement starts no element of the layers kept (down to the first changed element's)
    higher than it was (what place_container's `wanted_rows` asks)."""
    if rows is None or layer.size == 0:
        return True
    kept = ~np.isnan(rows) & (layer <= last_kept_layer(layer, changed))
    return bool(np.all(placement.major[kept] >= rows[kept]))
