"""ARK as the neutral graph. A model: one box per node (its ops' types and the first op's name), edges from
the declared producer and consumer ids, ops grouped by name scope. A plan: one box per task, grouped by
processor group; processor groups run one after the other, so each task of a group feeds the next group's."""

from __future__ import annotations

from typing import Any

from explorer.formats.ark.model import ArkFile
from explorer.graph.builder import GraphBuilder
from explorer.models.graph import ROOT, GraphModel


def ark_graph(ark: ArkFile) -> GraphModel:
    return _model_graph(ark) if ark.kind == "model" else _plan_graph(ark)


def _op_text(ops: list[Any]) -> tuple[str, str, str]:
    """(name, type, detail) of a node or task from its ops."""
    if not ops:
        return "(no op)", "(no op)", ""
    first = ops[0]
    shapes = first.result[0].shape if first.result else (first.write[0].shape if first.write else ())
    kind = " + ".join(dict.fromkeys(op.type for op in ops))
    detail = f"{first.result[0].dtype if first.result else ''}[{', '.join(map(str, shapes))}]" if shapes else ""
    return first.name or first.type, kind, detail + (f" · {len(ops)} ops" if len(ops) > 1 else "")


def _model_graph(ark: ArkFile) -> GraphModel:
    b = GraphBuilder()
    ids: dict[int, int] = {}
    for g, node in enumerate(ark.nodes):
        if node.id in ids:
            continue  # a duplicate id is a problem of its own; the first one is drawn
        name, kind, detail = _op_text(node.ops)
        group = b.scope(name) if "/" in name else ROOT
        ids[node.id] = b.node(f"{node.id} {name}", kind, group=group, detail=detail, ref=("group", g),
                              dtype=detail.split("[", 1)[0])  # fmt: skip
    seen: set[tuple[int, int]] = set()
    for node in ark.nodes:
        if node.id not in ids:
            continue
        for producer in node.producers:
            pair = (producer, node.id)
            if producer in ids and pair not in seen:
                seen.add(pair)
                b.edge(ids[producer], ids[node.id])
        for consumer in node.consumers:
            pair = (node.id, consumer)
            if consumer in ids and pair not in seen:
                seen.add(pair)
                b.edge(ids[node.id], ids[consumer])
    return b.build()


def _plan_graph(ark: ArkFile) -> GraphModel:
    b = GraphBuilder()
    task_index = {task.id: t for t, task in enumerate(ark.tasks)}
    previous: list[int] = []
    for p, pg in enumerate(ark.processor_groups):
        group = b.group(f"processor group {p}  {pg.processor_range}", ROOT, kind="processor group", ref=("pgroup", p))
        current = []
        for rg in pg.resource_groups:
            for tg in rg.task_groups:
                t = task_index.get(tg.task_id)
                ops = ark.tasks[t].ops if t is not None else []
                name, kind, detail = _op_text(ops)
                ref = ("group", t) if t is not None else ("pgroup", p)
                current.append(b.node(f"task {tg.task_id} {name}", kind, group=group, detail=detail, ref=ref))
        sources = previous if len(previous) * len(current) <= 4096 else previous[-1:]  # keep huge plans cheap
        for source in sources:
            for target in current:
                b.edge(source, target)
        previous = current or previous
    if not ark.processor_groups:  # a plan without groups: its tasks, unconnected
        for t, task in enumerate(ark.tasks):
            name, kind, detail = _op_text(task.ops)
            b.node(f"task {task.id} {name}", kind, detail=detail, ref=("group", t))
    return b.build()
