"""Cross-reference analyses of ARK files: the tensor index, the node graph and the plan's task layout.

Each check names the JSON path of what is wrong. Tensor-level invariants are checked while reading
(`explorer.formats.ark.reader`); here the file is checked as a whole.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import networkx as nx

from explorer.errors import Problem
from explorer.formats.ark.layout import check_tensor, layout_of
from explorer.formats.ark.model import (
    TENSOR_ROLES,
    ArkFile,
    ArkProcessorGroup,
    ArkResourceGroup,
    ArkTensor,
    OpSite,
)
from explorer.tensors.strides import TensorLayout, aliases, buffer_size


class TensorUse(NamedTuple):  # a NamedTuple: created once per tensor occurrence, so it must be cheap
    site: OpSite
    role: str  # read / write / result
    position: int


@dataclass
class TensorIndex:
    """Every tensor id once (its first occurrence), where each is used, and which tensors share a buffer."""

    tensors: dict[int, ArkTensor] = field(default_factory=dict)
    uses: dict[int, list[TensorUse]] = field(default_factory=dict)
    buffers: dict[int, list[int]] = field(default_factory=dict)  # buffer id -> tensor ids, ascending
    _layouts: dict[int, TensorLayout | None] = field(default_factory=dict)
    _aliases: dict[int, list[int]] = field(default_factory=dict)

    def layout(self, tensor_id: int) -> TensorLayout | None:
        """The tensor's byte layout (None when unknown or unplaceable), computed on first use: a big model
        opens without placing tensors nobody looks at."""
        if tensor_id not in self._layouts:
            tensor = self.tensors.get(tensor_id)
            self._layouts[tensor_id] = layout_of(tensor) if tensor is not None else None
        return self._layouts[tensor_id]

    def layouts_on(self, buffer_id: int) -> list[TensorLayout]:
        layouts = (self.layout(t) for t in self.buffers.get(buffer_id, []))
        return [layout for layout in layouts if layout is not None]

    def aliases_of(self, tensor_id: int) -> list[int]:
        """Other tensors on the same buffer whose data shares bytes with this one (computed once, on demand)."""
        if tensor_id not in self._aliases:
            layout = self.layout(tensor_id)
            self._aliases[tensor_id] = aliases(layout, self.layouts_on(layout.buffer_id)) if layout else []
        return self._aliases[tensor_id]

    def buffer_bytes(self, buffer_id: int) -> int:
        return buffer_size(self.layouts_on(buffer_id))

    def tensor_ids(self) -> list[int]:
        return list(self.tensors)

    def report(self, tensor_id: int) -> dict | None:
        from explorer.formats.ark.tensor_report import tensor_report

        return tensor_report(self, tensor_id)

    def first_tensor(self) -> int:
        """The tensor the layout view shows before anything is chosen (-1 when the file has none)."""
        return next(iter(self.tensors), -1)

    def layout_faults(self, tensor_id: int) -> list[str]:
        """Why a tensor cannot be placed in its buffer (ARK's invariants); empty when it can."""
        tensor = self.tensors.get(tensor_id)
        return check_tensor(tensor) if tensor is not None else [f"no tensor {tensor_id}"]


def index_tensors(ark: ArkFile) -> tuple[TensorIndex, list[Problem]]:
    index = TensorIndex()
    problems: list[Problem] = []
    for site, op in ark.ops():
        for role in TENSOR_ROLES:
            for position, tensor in enumerate(op.tensors(role)):
                index.uses.setdefault(tensor.id, []).append(TensorUse(site, role, position))
                known = index.tensors.get(tensor.id)
                if known is None:
                    index.tensors[tensor.id] = tensor
                elif known is not tensor and not known.same_fields(tensor):
                    problems.append(
                        Problem(
                            "warning",
                            "tensor-mismatch",
                            f"tensor {tensor.id} appears with other fields than at {known.path}",
                            op.tensor_path(role, position),
                            {"tensor_id": tensor.id},
                        )
                    )
    by_buffer: dict[int, set[int]] = {}
    for tensor in index.tensors.values():
        by_buffer.setdefault(tensor.buffer.id, set()).add(tensor.id)
    index.buffers = {b: sorted(ids) for b, ids in sorted(by_buffer.items())}
    return index, problems


def node_graph(ark: ArkFile) -> tuple[nx.DiGraph, list[Problem]]:
    """The declared producer→consumer graph and every way the declarations disagree with the tensors."""
    graph = nx.DiGraph()
    edges: set[tuple[int, int]] = set()  # each edge is declared twice (producer and consumer side)
    problems: list[Problem] = []
    by_id = {}
    for position, node in enumerate(ark.nodes):
        if node.id in by_id:
            problems.append(
                Problem(
                    "error", "duplicate-node-id", f"node id {node.id} is used twice", node.path, {"node_id": node.id}
                )
            )
            continue
        if node.id != position:
            problems.append(
                Problem(
                    "warning",
                    "node-id-order",
                    f"node id {node.id} sits at position {position}",
                    node.path,
                    {"node_id": node.id},
                )
            )
        by_id[node.id] = node
        graph.add_node(node.id, label=" + ".join(op.type for op in node.ops) or "(no op)")
    for node in by_id.values():
        for key, ids, other_side in (
            ("ProducerNodeIds", node.producers, "consumers"),
            ("ConsumerNodeIds", node.consumers, "producers"),
        ):
            for k, other in enumerate(ids):
                where = f"{node.path}.{key}[{k}]"
                if other == node.id:
                    problems.append(
                        Problem("error", "self-loop", f"node {node.id} lists itself", where, {"node_id": node.id})
                    )
                elif other not in by_id:
                    problems.append(
                        Problem(
                            "error",
                            "unknown-node-id",
                            f"node {node.id} names node {other}, which is not in the file",
                            where,
                            {"node_id": node.id},
                        )
                    )
                elif node.id not in getattr(by_id[other], other_side):
                    problems.append(
                        Problem(
                            "error",
                            "asymmetric-edge",
                            f"node {node.id} lists {other} in {key}, but node {other} does not list {node.id} in its "
                            f"{'ConsumerNodeIds' if key == 'ProducerNodeIds' else 'ProducerNodeIds'}",
                            where,
                            {"node_id": node.id},
                        )
                    )
                if other in by_id and other != node.id:
                    edges.add((other, node.id) if key == "ProducerNodeIds" else (node.id, other))
    graph.add_edges_from(edges)
    problems += _producer_checks(ark, by_id)
    if not nx.is_directed_acyclic_graph(graph):
        cycle = nx.find_cycle(graph)
        nodes = [a for a, _ in cycle]
        problems.append(
            Problem(
                "error",
                "cycle",
                "the node graph has a cycle: " + " → ".join(map(str, nodes + nodes[:1])),
                by_id[nodes[0]].path,
                {"node_id": nodes[0]},
            )
        )
    return graph, problems


def _producer_checks(ark: ArkFile, by_id: dict) -> list[Problem]:
    """Producers must agree with tensor ids: a node's producers are the nodes whose ResultTensors it reads."""
    problems: list[Problem] = []
    result_of: dict[int, int] = {}
    written_by: dict[int, int] = {}
    for node in by_id.values():
        for op in node.ops:
            for k, tensor in enumerate(op.result):
                if tensor.id in result_of and result_of[tensor.id] != node.id:
                    problems.append(
                        Problem(
                            "error",
                            "duplicate-result",
                            f"tensor {tensor.id} is a result of node {result_of[tensor.id]} and of node {node.id}",
                            op.tensor_path("result", k),
                            {"node_id": node.id, "tensor_id": tensor.id},
                        )
                    )
                result_of.setdefault(tensor.id, node.id)
            for tensor in op.write:
                written_by.setdefault(tensor.id, node.id)
    for node in by_id.values():
        expected: set[int] = set()
        for op in node.ops:
            used = [("read", k, t) for k, t in enumerate(op.read)] + [("write", k, t) for k, t in enumerate(op.write)]
            for role, k, tensor in used:
                producer = result_of.get(tensor.id)
                if producer is not None and producer != node.id:
                    expected.add(producer)
                elif producer is None and written_by.get(tensor.id, node.id) != node.id:
                    problems.append(
                        Problem(
                            "warning",
                            "reads-write-tensor",
                            f"node {node.id} uses tensor {tensor.id}, a WriteTensor of node {written_by[tensor.id]}; "
                            "consumers should use the producer's ResultTensor id",
                            op.tensor_path(role, k),
                            {"node_id": node.id, "tensor_id": tensor.id},
                        )
                    )
        declared = set(node.producers)
        # A compressed file drops the virtual view nodes: a consumer then reads a view (a new tensor id) of its
        # producer's buffer. Sharing a buffer justifies a declared producer.
        used_buffers = {t.buffer.id for op in node.ops for t in op.read + op.write}
        for other in declared - expected:
            if other in by_id and used_buffers & {t.buffer.id for op in by_id[other].ops for t in op.result + op.write}:
                expected.add(other)
        for missing in sorted(expected - declared):
            problems.append(
                Problem(
                    "error",
                    "missing-producer",
                    f"node {node.id} uses a result of node {missing} but does not list it in ProducerNodeIds",
                    f"{node.path}.ProducerNodeIds",
                    {"node_id": node.id},
                )
            )
        for extra in sorted(declared - expected):
            if extra in by_id:
                problems.append(
                    Problem(
                        "warning",
                        "extra-producer",
                        f"node {node.id} lists producer {extra}, but uses none of node {extra}'s result tensors",
                        f"{node.path}.ProducerNodeIds",
                        {"node_id": node.id},
                    )
                )
    return problems


def plan_checks(ark: ArkFile) -> list[Problem]:
    """Task groups must name existing tasks and stay inside their task, processor and warp ranges."""
    problems: list[Problem] = []
    tasks: dict[Any, Any] = {}
    for task in ark.tasks:
        if task.id in tasks:
            problems.append(
                Problem(
                    "error", "duplicate-task-id", f"task id {task.id} is used twice", task.path, {"task_id": task.id}
                )
            )
        tasks.setdefault(task.id, task)
        counts = {repr(op.config.get("NumTasks")) for op in task.ops if op.config and "NumTasks" in op.config}
        if len(counts) > 1:
            problems.append(
                Problem(
                    "warning",
                    "num-tasks-differ",
                    f"ops of task {task.id} disagree on NumTasks: {sorted(counts)}",
                    task.path,
                    {"task_id": task.id},
                )
            )
    for group in ark.processor_groups:
        if group.processor_range and group.processor_range.end > ark.num_processors:
            problems.append(
                Problem(
                    "error",
                    "range-outside",
                    f"ProcessorRange {group.processor_range} exceeds NumProcessors {ark.num_processors}",
                    group.path + ".ProcessorRange",
                )
            )
        for resource in group.resource_groups:
            problems += _resource_checks(ark, group, resource, tasks)
    return problems


def _resource_checks(ark: ArkFile, group: ArkProcessorGroup, resource: ArkResourceGroup,
                     tasks: dict) -> list[Problem]:  # fmt: skip
    problems: list[Problem] = []
    outer, inner = group.processor_range, resource.processor_range
    if outer and inner and (inner.begin < outer.begin or inner.end > outer.end):
        problems.append(
            Problem(
                "warning",
                "range-outside",
                f"ProcessorRange {inner} is outside its processor group's {outer}",
                resource.path + ".ProcessorRange",
            )
        )
    if resource.warp_range and resource.warp_range.end > ark.num_warps_per_processor:
        problems.append(
            Problem(
                "error",
                "range-outside",
                f"WarpRange {resource.warp_range} exceeds NumWarpsPerProcessor {ark.num_warps_per_processor}",
                resource.path + ".WarpRange",
            )
        )
    if resource.sram_range and resource.sram_range.step != 1:
        problems.append(Problem("error", "bad-range", "SramRange must have step 1", resource.path + ".SramRange"))
    for tg in resource.task_groups:
        task = tasks.get(tg.task_id)
        if task is None:
            problems.append(
                Problem(
                    "error",
                    "unknown-task-id",
                    f"TaskId {tg.task_id} names no task info",
                    tg.path + ".TaskId",
                    {"task_id": tg.task_id},
                )
            )
            continue
        num_tasks = next((op.config["NumTasks"] for op in task.ops if op.config and "NumTasks" in op.config), None)
        if isinstance(num_tasks, int) and tg.task_range and tg.task_range.end > num_tasks:
            problems.append(
                Problem(
                    "error",
                    "range-outside",
                    f"TaskRange {tg.task_range} exceeds task {task.id}'s NumTasks {num_tasks}",
                    tg.path + ".TaskRange",
                    {"task_id": task.id},
                )
            )
    return problems


def op_type_counts(ark: ArkFile) -> dict[str, int]:
    return dict(Counter(op.type for _, op in ark.ops()).most_common())
