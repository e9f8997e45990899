"""One per-node data set (a value per node and per unit group, and how to read it): what `--node-data` reads and
a comparison makes, and what the colour modes draw (explorer.graph.node_data reads the files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class NodeDataSet:
    """One data set: a value per node (NaN where the file gives none) and how to read it."""

    name: str  # the colour mode's name: "data: <file stem>" (and " · <graph>" for Model Explorer's graphs)
    source: str
    values: np.ndarray  # per node
    unit_values: np.ndarray  # per group: a value the file gives a unit group itself (a schedule layer), else NaN
    keys: int = 0
    matched: int = 0  # keys joined to a node or a layer
    thresholds: list[float] = field(default_factory=list)  # ascending bucket edges (Model Explorer's thresholds)
    centre: float | None = None  # the file's centre: a diverging scale around it
    aggregate: str = "sum"

    def all_values(self) -> np.ndarray:
        """Every value the file gave, nodes' and layers' alike (what a colour scale spans)."""
        both = np.concatenate([self.values, self.unit_values])
        return both[np.isfinite(both)]

    @property
    def diverging_centre(self) -> float | None:
        """The centre of a diverging scale when the values straddle it (the given centre, else zero)."""
        finite = self.all_values()
        if finite.size == 0:
            return None
        centre = 0.0 if self.centre is None else self.centre
        return centre if finite.min() < centre < finite.max() else None

    def summary(self) -> str:
        return f"{Path(self.source).name}: {self.matched:,} of {self.keys:,} keys matched a node"
