"""What the graph knows of an item beyond its format's own details: a name scope's table and links (a group no
tree item stands for), a box's folded constants, the user's per-node data for a node. The builder hands this to
the model (`GraphModel.item_details`), so the Document asks the model it was given and never imports the graph
wing. Stateless: each question names its model (a comparison's annotated copy shares it)."""

from __future__ import annotations

from collections.abc import Callable

from explorer.graph.group_details import group_links, group_sections
from explorer.graph.metrics import group_rows, op_rows
from explorer.graph.node_data import data_rows
from explorer.graph.text import folded_section
from explorer.models.graph import GraphModel, SectionRows
from explorer.models.ref import Ref


class GraphItemDetails:
    def __reduce__(self) -> str:  # pickled as the one instance there is (a kept graph holds it)
        return "ITEM_DETAILS"

    def group_sections(self, model: GraphModel, group: int) -> list[SectionRows]:
        found = group_sections(model, group)
        rows = group_rows(model, group)
        if rows is not None:
            found.append(("Counts (the ops inside)", ("count", "value"), rows))
        return found

    def group_links(self, model: GraphModel, group: int) -> list[tuple[str, Ref]]:
        return group_links(model, group)

    def extra_sections(self, model: GraphModel, ref: Ref, preview: Callable[[Ref], str]) -> list[SectionRows]:
        """A box's folded constants and, for a node with the user's per-node data, each set's value."""
        found: list[SectionRows] = []
        folded = folded_section(model, ref, preview)
        if folded is not None:
            found.append((folded[0], tuple(folded[1]), list(folded[2])))
        node = model.ref_to_node.get(ref) if model.data_sets or model.op_counter is not None else None
        if node is not None and model.data_sets:
            found.append(("Per-node data", ("data set", "value"), list(data_rows(model, node))))
        rows = op_rows(model, node) if node is not None else None
        if rows is not None:
            found.append(("Counts", ("count", "value"), rows))
        return found


ITEM_DETAILS = GraphItemDetails()
