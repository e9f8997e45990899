"""An ARK model or plan as a Document: tree, details tables, search and problem navigation.

Tree (model): nodes → ops → read/write/result tensors → buffer, plus every buffer with the tensors on it.
Tree (plan): task infos → ops → tensors, and processor groups → resource groups → task groups.
Refs are tuples: ("group", g), ("op", g, i), ("tensor", g, i, role, k), ("buffer", id), ("tensor-id", id),
("pgroup", p), ("rgroup", p, r), ("tgroup", p, r, t), plus the list refs ("groups",), ("buffers",), ("pgroups",).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import networkx as nx

from explorer.document import Document, DocumentView, Item, Meta, Section, Vocabulary, describe_by_kind
from explorer.errors import Problem
from explorer.formats.ark.checks import TensorIndex
from explorer.formats.ark.labels import arg_value, dims, layout_section, op_label, tensor_label
from explorer.formats.ark.layout import layout_of
from explorer.formats.ark.model import ArkFile, ArkNode, ArkTensor
from explorer.formatting import human, human_bytes
from explorer.models.graph import GraphModel
from explorer.models.ref import Ref

_ROLE_KEYS = {"read": "ReadTensors", "write": "WriteTensors", "result": "ResultTensors"}
_INDEX = re.compile(r"\[(\d+)\]")


def build_document(
    path: Path, ark: ArkFile, index: TensorIndex, graph: nx.DiGraph | None, problems: list[Problem], summary: dict
) -> Document:
    view = ArkView(ark, index, graph)
    return Document(
        meta=Meta(format=f"ark-{ark.kind}", source=path, producer="Microsoft ARK"),
        tree=view.tree(path.name),
        view=view,
        vocabulary=Vocabulary(search_hint="node, op or tensor name, or a tensor id"),
        problems=problems,
        summary=summary,
        graph=graph,
        layouts=index,
    )


class ArkView(DocumentView):
    def __init__(self, ark: ArkFile, index: TensorIndex, graph: nx.DiGraph | None) -> None:
        self.ark = ark
        self.index = index
        self.graph = graph
        self.group_word = "node" if ark.kind == "model" else "task"
        self._path_index: list[tuple[str, Ref]] | None = None

    @property
    def _paths(self) -> list[tuple[str, Ref]]:
        """JSON paths of the items, longest first, so a problem's location finds the most specific item.
        Built on the first problem jump: a big model opens without it."""
        if self._path_index is None:
            self._path_index = self._item_paths()
        return self._path_index

    def _item_paths(self) -> list[tuple[str, Ref]]:
        ark = self.ark
        paths: list[tuple[str, Ref]] = []
        for g, group in enumerate(ark.groups):
            paths.append((group.path, ("group", g)))
            for i, op in enumerate(group.ops):
                paths.append((op.path, ("op", g, i)))
                for role in _ROLE_KEYS:
                    for k in range(len(op.tensors(role))):
                        paths.append((op.tensor_path(role, k), ("tensor", g, i, role, k)))
        for p, pg in enumerate(ark.processor_groups):
            paths.append((pg.path, ("pgroup", p)))
            for r, rg in enumerate(pg.resource_groups):
                paths.append((rg.path, ("rgroup", p, r)))
                for t, tg in enumerate(rg.task_groups):
                    paths.append((tg.path, ("tgroup", p, r, t)))
        paths.sort(key=lambda entry: len(entry[0]), reverse=True)
        return paths

    # ---- tree -------------------------------------------------------------------------------------------
    def tree(self, name: str) -> Item:
        ark = self.ark
        groups = ark.groups
        title = "Nodes" if ark.kind == "model" else "Task infos"
        children = [
            Item("summary", "Summary", ("summary",)),
            Item("groups", f"{title}  ({len(groups)})", ("groups",), expand=self._group_items),
            Item("buffers", f"Buffers  ({len(self.index.buffers)})", ("buffers",), expand=self._buffer_items),
        ]
        if ark.kind == "plan":
            children.append(
                Item(
                    "pgroups",
                    f"Processor groups  ({len(ark.processor_groups)})",
                    ("pgroups",),
                    expand=self._pgroup_items,
                )
            )
        return Item("file", name, ("summary",), children=children)

    def group_label(self, g: int) -> str:
        group = self.ark.groups[g]
        ops = " + ".join(f"{op.type} {op.name}".strip() for op in group.ops) or "(no op)"
        return f"{self.group_word} {group.id}  {ops}"

    def _group_items(self) -> list[Item]:
        return [
            Item(self.group_word, self.group_label(g), ("group", g), expand=functools.partial(self._op_items, g))
            for g in range(len(self.ark.groups))
        ]

    def _op_items(self, g: int) -> list[Item]:
        return [
            Item("op", op_label(op), ("op", g, i), expand=functools.partial(self._tensor_items, g, i))
            for i, op in enumerate(self.ark.groups[g].ops)
        ]

    def _tensor_items(self, g: int, i: int) -> list[Item]:
        op = self.ark.groups[g].ops[i]
        items = []
        for role in _ROLE_KEYS:
            for k, tensor in enumerate(op.tensors(role)):
                items.append(
                    Item(
                        "tensor",
                        f"{role:<6} {tensor_label(tensor)}",
                        ("tensor", g, i, role, k),
                        children=[Item("buffer", self.buffer_label(tensor.buffer.id), ("buffer", tensor.buffer.id))],
                    )
                )
        return items

    def buffer_label(self, buffer_id: int) -> str:
        ids = self.index.buffers.get(buffer_id, [])
        return f"buffer {buffer_id}  {human_bytes(self.index.buffer_bytes(buffer_id))}  · {len(ids)} tensors"

    def _buffer_items(self) -> list[Item]:
        return [
            Item("buffer", self.buffer_label(b), ("buffer", b), expand=functools.partial(self._buffer_tensor_items, b))
            for b in self.index.buffers
        ]

    def _buffer_tensor_items(self, buffer_id: int) -> list[Item]:
        return [
            Item("tensor", tensor_label(self.index.tensors[t]), ("tensor-id", t)) for t in self.index.buffers[buffer_id]
        ]

    def _pgroup_items(self) -> list[Item]:
        items = []
        for p, pg in enumerate(self.ark.processor_groups):
            items.append(
                Item(
                    "pgroup",
                    f"processor group {p}  processors {pg.processor_range}",
                    ("pgroup", p),
                    expand=functools.partial(self._rgroup_items, p),
                )
            )
        return items

    def _rgroup_items(self, p: int) -> list[Item]:
        items = []
        for r, rg in enumerate(self.ark.processor_groups[p].resource_groups):
            children = [
                Item(
                    "tgroup",
                    f"task {tg.task_id}  tasks {tg.task_range}  granularity {tg.granularity}",
                    ("tgroup", p, r, t),
                )
                for t, tg in enumerate(rg.task_groups)
            ]
            label = f"resource group {r}  processors {rg.processor_range}  warps {rg.warp_range}"
            items.append(Item("rgroup", label, ("rgroup", p, r), children=children))
        return items

    # ---- navigation -------------------------------------------------------------------------------------
    def ancestors(self, ref: Ref) -> list[Ref]:
        if not isinstance(ref, tuple) or not ref:
            return []
        kind = ref[0]
        if kind == "group":
            return [("groups",), ref]
        if kind == "op":
            return [("groups",), ("group", ref[1]), ref]
        if kind == "tensor":
            return [("groups",), ("group", ref[1]), ("op", ref[1], ref[2]), ref]
        if kind == "buffer":
            return [("buffers",), ref]
        if kind == "tensor-id":
            tensor = self.index.tensors.get(ref[1])
            return [("buffers",), ("buffer", tensor.buffer.id), ref] if tensor else [ref]
        if kind == "pgroup":
            return [("pgroups",), ref]
        if kind == "rgroup":
            return [("pgroups",), ("pgroup", ref[1]), ref]
        if kind == "tgroup":
            return [("pgroups",), ("pgroup", ref[1]), ("rgroup", ref[1], ref[2]), ref]
        return [ref]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        """The item a problem is about: the most specific item at its JSON location, else its tensor/node/task."""
        location = refs.get("location") or ""
        for path, ref in self._paths:
            if path and (location == path or location.startswith(path + ".") or location.startswith(path + "[")):
                return ref
        if "tensor_id" in refs and refs["tensor_id"] in self.index.tensors:
            return ("tensor-id", refs["tensor_id"])
        for key in ("node_id", "task_id"):
            if key in refs:
                for g, group in enumerate(self.ark.groups):
                    if group.id == refs[key]:
                        return ("group", g)
        return None

    def tensor_of(self, ref: Ref) -> int | None:
        """The tensor id an item shows (the layout view follows it), or None."""
        if not isinstance(ref, tuple) or not ref:
            return None
        if ref[0] == "tensor-id":
            return ref[1]
        if ref[0] == "tensor":
            tensor = self._op_tensor(ref)
            return tensor.id if tensor else None
        if ref[0] == "buffer":
            ids = self.index.buffers.get(ref[1])
            return ids[0] if ids else None
        return None

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        """A node's producers and consumers; a tensor's users (every op that reads, writes or returns it)."""
        if not isinstance(ref, tuple) or not ref:
            return []
        if ref[0] == "group" and self.ark.kind == "model":
            node = self.ark.nodes[ref[1]]
            position = {n.id: g for g, n in enumerate(self.ark.nodes)}
            found = [
                (f"← {self.group_label(position[p])}", ("group", position[p])) for p in node.producers if p in position
            ]
            return found + [
                (f"→ {self.group_label(position[c])}", ("group", position[c])) for c in node.consumers if c in position
            ]
        tensor_id = self.tensor_of(ref) if ref[0] in ("tensor", "tensor-id") else None
        if tensor_id is None:
            return []
        return [
            (
                f"{u.role} in {self.group_label(u.site.group)}",
                ("tensor", u.site.group, u.site.op_index, u.role, u.position),
            )
            for u in self.index.uses.get(tensor_id, [])
        ]

    def where_used(self, tensor_id: int) -> Ref:
        """The first op-tensor ref of a tensor id: where a search hit should land."""
        uses = self.index.uses.get(tensor_id, [])
        if not uses:
            return ("tensor-id", tensor_id)
        use = uses[0]
        return ("tensor", use.site.group, use.site.op_index, use.role, use.position)

    def search(self, text: str, limit: int = 200) -> list[tuple[str, Ref]]:
        """Nodes/tasks by id, ops by name or type, tensors by id ("t5"), buffers ("buffer 4"), dtype, shape."""
        text = text.strip()
        if not text:
            return []
        hits: list[tuple[str, Ref]] = []
        lowered = text.lower()
        number = re.fullmatch(r"(#|node\s*|task\s*|t|tensor\s*|b|buffer\s*)?(\d+)", lowered)
        if number:
            prefix, value = (number.group(1) or "").strip(), int(number.group(2))
            if prefix in ("", "#", "node", "task"):
                hits += [
                    (self.group_label(g), ("group", g)) for g, grp in enumerate(self.ark.groups) if grp.id == value
                ]
            if prefix in ("", "t", "tensor") and value in self.index.tensors:
                hits.append((f"tensor {tensor_label(self.index.tensors[value])}", self.where_used(value)))
            if prefix in ("", "b", "buffer") and value in self.index.buffers:
                hits.append((self.buffer_label(value), ("buffer", value)))
            return hits[:limit]
        shape = _parse_shape(text)
        for g, group in enumerate(self.ark.groups):
            for i, op in enumerate(group.ops):
                if lowered in op.name.lower() or lowered == op.type.lower():
                    hits.append((f"{self.group_word} {group.id}  {op_label(op)}", ("op", g, i)))
        for tensor_id, tensor in self.index.tensors.items():
            if tensor.dtype.lower() == lowered or (shape is not None and tensor.shape == shape):
                hits.append((f"tensor {tensor_label(tensor)}", self.where_used(tensor_id)))
        return hits[:limit]

    # ---- details ----------------------------------------------------------------------------------------
    def graph_size_hint(self) -> int:
        return len(self.ark.nodes) or len(self.ark.tasks)

    def draws_graph(self) -> bool:
        return True

    def build_graph(self) -> GraphModel | None:
        from explorer.formats.ark.graph_model import ark_graph

        return ark_graph(self.ark)

    def settings(self) -> dict[str, str]:
        """A plan's every setting by where it is: the file's processors, each task's warps and SRAM, each op's
        Config (NumWarps, TileShapeMNK, NumTasks, ...), each processor group's ranges down to its task groups."""
        ark = self.ark
        if ark.kind != "plan":
            return {}
        found = {"NumProcessors": str(ark.num_processors), "NumWarpsPerProcessor": str(ark.num_warps_per_processor),
                 "Architecture": ark.architecture}  # fmt: skip
        for task in ark.tasks:
            where = f"task {task.id}"
            found[f"{where} NumWarps"] = str(task.num_warps)
            found[f"{where} SramBytes"] = str(task.sram_bytes)
            for k, op in enumerate(task.ops):
                for key, value in sorted((op.config or {}).items()):
                    found[f"{where} op {k} ({op.name or op.type}) Config.{key}"] = _plain(value)
        for p, group in enumerate(ark.processor_groups):
            found[f"processor group {p} ProcessorRange"] = str(group.processor_range)
            for r, resources in enumerate(group.resource_groups):
                where = f"processor group {p} resource group {r}"
                for key, value in (("ProcessorRange", resources.processor_range), ("WarpRange", resources.warp_range),
                                   ("SramRange", resources.sram_range)):  # fmt: skip
                    found[f"{where} {key}"] = str(value)
                for t, tasks in enumerate(resources.task_groups):
                    found[f"{where} task group {t} TaskId"] = str(tasks.task_id)
                    found[f"{where} task group {t} TaskRange"] = str(tasks.task_range)
                    found[f"{where} task group {t} Granularity"] = str(tasks.granularity)
        return found

    def node_signatures(self) -> dict[str, tuple[str, str]]:
        return {op.name: (op.type, str([t.shape for t in op.read + op.write])) for _, op in self.ark.ops()}

    def describe(self, ref: Ref) -> list[Section]:
        return describe_by_kind(self, ref)

    def _describe_summary(self) -> list[Section]:
        ark = self.ark
        summary = self.document.summary if self.document else {}
        rows: list[tuple[str, Any]] = [
            ("format", f"ARK {ark.kind}"),
            ("rank", _rank(ark.rank)),
            ("world size", ark.world_size),
        ]
        if ark.kind == "plan":
            rows += [
                ("architecture", ark.architecture),
                ("processors", ark.num_processors),
                ("warps per processor", ark.num_warps_per_processor),
            ]
        rows += [(k.replace("_", " "), human(v, k)) for k, v in summary.items() if not isinstance(v, dict)]
        sections = [Section(f"ARK {ark.kind}", ("property", "value"), rows)]
        types = summary.get("op_types") or {}
        sections.append(Section("Op types", ("type", "ops"), list(types.items())))
        return sections

    def _describe_groups(self) -> list[Section]:
        return [
            Section(
                "Nodes" if self.ark.kind == "model" else "Task infos",
                ("id", "ops", "producers" if self.ark.kind == "model" else "warps"),
                [
                    (
                        group.id,
                        " + ".join(op.type for op in group.ops),
                        dims(group.producers) if isinstance(group, ArkNode) else group.num_warps,
                    )
                    for group in self.ark.groups
                ],
            )
        ]

    def _describe_group(self, g: int) -> list[Section]:
        group = self.ark.groups[g]
        if isinstance(group, ArkNode):  # a model's node; a plan's groups are its tasks
            rows = [
                ("id", group.id),
                ("producers", dims(group.producers)),
                ("consumers", dims(group.consumers)),
                ("ops", len(group.ops)),
                ("location", group.path),
            ]
        else:
            rows = [
                ("id", group.id),
                ("warps", group.num_warps),
                ("SRAM", f"{group.sram_bytes:,} B"),
                ("ops", len(group.ops)),
                ("location", group.path),
            ]
        sections = [Section(f"{self.group_word.title()} {group.id}", ("property", "value"), rows)]
        sections.append(
            Section("Ops", ("type", "name", "virtual"), [(o.type, o.name, o.is_virtual) for o in group.ops])
        )
        sections += self._problems_at(group.path)
        return sections

    def _describe_op(self, g: int, i: int) -> list[Section]:
        op = self.ark.groups[g].ops[i]
        sections = [
            Section(
                f"Op {op.type}",
                ("property", "value"),
                [("type", op.type), ("name", op.name), ("virtual", op.is_virtual), ("location", op.path)],
            ),
            Section("Args", ("name", "type", "value"), [(a.name, a.type, arg_value(a)) for a in op.args]),
            Section(
                "Tensors",
                ("role", "id", "dtype", "shape", "buffer", "bytes"),
                [
                    (role, t.id, t.dtype, dims(t.shape), t.buffer.id, self._bytes_of(t.id))
                    for role in _ROLE_KEYS
                    for t in op.tensors(role)
                ],
            ),
        ]
        if op.config is not None:
            sections.append(Section("Config", ("property", "value"), [(k, _plain(v)) for k, v in op.config.items()]))
        sections += self._problems_at(op.path)
        return sections

    def _bytes_of(self, tensor_id: int) -> str:
        layout = self.index.layout(tensor_id)
        return f"{layout.bytes:,}" if layout else "?"

    def _op_tensor(self, ref: tuple) -> ArkTensor:
        _, g, i, role, k = ref
        return self.ark.groups[g].ops[i].tensors(role)[k]

    def _describe_tensor(self, g: int, i: int, role: str, k: int) -> list[Section]:
        tensor = self._op_tensor(("tensor", g, i, role, k))
        return self.tensor_sections(tensor, self.ark.groups[g].ops[i].tensor_path(role, k))

    def _describe_tensor_id(self, tensor_id: int) -> list[Section]:
        tensor = self.index.tensors[tensor_id]
        return self.tensor_sections(tensor, tensor.path)

    def tensor_sections(self, tensor: ArkTensor, location: str) -> list[Section]:
        buffer = tensor.buffer
        rows: list[tuple[str, Any]] = [
            ("id", tensor.id),
            ("dtype", f"{tensor.dtype} ({tensor.element_bytes} B per element)"),
            ("shape", dims(tensor.shape)),
            ("strides (region)", dims(tensor.strides)),
            ("offsets", dims(tensor.offsets)),
            ("padded shape", dims(tensor.padded_shape)),
        ]
        if tensor.pads is not None:
            rows.append(("pads (draft field)", dims(tensor.pads)))
        rows += [
            ("buffer", f"{buffer.id}  rank {_rank(buffer.rank)}{'  external' if buffer.is_external else ''}"),
            ("location", location),
        ]
        sections = [Section(f"Tensor {tensor.id}", ("property", "value"), rows)]
        indexed = self.index.tensors.get(tensor.id) is tensor  # not a differing duplicate of the id
        layout = self.index.layout(tensor.id) if indexed else layout_of(tensor)
        if layout is not None:
            sections.append(layout_section(layout))
        if layout is not None and indexed:
            sections.append(
                Section(
                    f"Aliases on buffer {buffer.id}",
                    ("tensor", "dtype", "shape", "bytes"),
                    [self._tensor_row(t) for t in self.index.aliases_of(tensor.id)],
                )
            )
        uses = self.index.uses.get(tensor.id, [])
        sections.append(
            Section(
                "Used by",
                (self.group_word, "op", "role"),
                [
                    (
                        self.ark.groups[u.site.group].id,
                        op_label(self.ark.groups[u.site.group].ops[u.site.op_index]),
                        u.role,
                    )
                    for u in uses
                ],
            )
        )
        sections += self._problems_at(location, tensor_id=tensor.id)
        return sections

    def _tensor_row(self, tensor_id: int) -> tuple:
        tensor = self.index.tensors[tensor_id]
        layout = self.index.layout(tensor_id)
        span = f"{layout.first_byte:,}–{layout.end_byte:,}" if layout else "?"
        return (tensor_id, tensor.dtype, dims(tensor.shape), span)

    def _describe_buffers(self) -> list[Section]:
        return [
            Section(
                "Buffers",
                ("buffer", "bytes", "tensors"),
                [(b, f"{self.index.buffer_bytes(b):,}", len(ids)) for b, ids in self.index.buffers.items()],
            )
        ]

    def _describe_buffer(self, buffer_id: int) -> list[Section]:
        ids = self.index.buffers[buffer_id]
        buffer = self.index.tensors[ids[0]].buffer
        rows = [
            ("id", buffer_id),
            ("rank", _rank(buffer.rank)),
            ("size", f"{self.index.buffer_bytes(buffer_id):,} B  (largest ∏ Strides × element size)"),
            ("send tags", ", ".join(f"[{r}, {t}]" for r, t in buffer.send_tags) or "none"),
            ("recv tags", ", ".join(f"[{r}, {t}]" for r, t in buffer.recv_tags) or "none"),
            ("external", buffer.is_external),
        ]
        return [
            Section(f"Buffer {buffer_id}", ("property", "value"), rows),
            Section("Tensors", ("tensor", "dtype", "shape", "bytes"), [self._tensor_row(t) for t in ids]),
        ]

    def _describe_pgroups(self) -> list[Section]:
        return [
            Section(
                "Processor groups",
                ("group", "processors", "resource groups"),
                [
                    (p, str(pg.processor_range), len(pg.resource_groups))
                    for p, pg in enumerate(self.ark.processor_groups)
                ],
            )
        ]

    def _describe_pgroup(self, p: int) -> list[Section]:
        pg = self.ark.processor_groups[p]
        return [
            Section(
                f"Processor group {p}",
                ("property", "value"),
                [("processors", str(pg.processor_range)), ("location", pg.path)],
            ),
            Section(
                "Resource groups",
                ("group", "processors", "warps", "SRAM", "task groups"),
                [
                    (r, str(rg.processor_range), str(rg.warp_range), str(rg.sram_range), len(rg.task_groups))
                    for r, rg in enumerate(pg.resource_groups)
                ],
            ),
            *self._problems_at(pg.path),
        ]

    def _describe_rgroup(self, p: int, r: int) -> list[Section]:
        rg = self.ark.processor_groups[p].resource_groups[r]
        return [
            Section(
                f"Resource group {r}",
                ("property", "value"),
                [
                    ("processors", str(rg.processor_range)),
                    ("warps", str(rg.warp_range)),
                    ("SRAM bytes", str(rg.sram_range)),
                    ("location", rg.path),
                ],
            ),
            Section(
                "Task groups",
                ("task", "tasks", "granularity"),
                [(tg.task_id, str(tg.task_range), tg.granularity) for tg in rg.task_groups],
            ),
            *self._problems_at(rg.path),
        ]

    def _describe_tgroup(self, p: int, r: int, t: int) -> list[Section]:
        tg = self.ark.processor_groups[p].resource_groups[r].task_groups[t]
        task = next((task for task in self.ark.tasks if task.id == tg.task_id), None)
        rows = [
            ("task id", tg.task_id),
            ("task ops", " + ".join(op_label(op) for op in task.ops) if task else "(no such task)"),
            ("task range", str(tg.task_range)),
            ("granularity", tg.granularity),
            ("location", tg.path),
        ]
        return [Section(f"Task group {t}", ("property", "value"), rows), *self._problems_at(tg.path)]

    def _problems_at(self, path: str, tensor_id: int | None = None) -> list[Section]:
        if self.document is None or not path:
            return []
        rows = [
            (p.severity, p.code, p.message)
            for p in self.document.problems
            if p.location == path
            or p.location.startswith(path + ".")
            or p.location.startswith(path + "[")
            or (tensor_id is not None and p.refs.get("tensor_id") == tensor_id and p.code == "tensor-mismatch")
        ]
        return [Section("Problems here", ("severity", "code", "message"), rows)] if rows else []


def _rank(rank: int) -> str:
    """ARK's rank -1 means "this process" (no rank given): said in words, not as a raw -1."""
    return "local (none given)" if rank == -1 else str(rank)


def _plain(value: Any) -> str:
    return dims(value) if isinstance(value, list) and all(isinstance(v, int) for v in value) else str(value)


def _parse_shape(text: str) -> tuple[int, ...] | None:
    numbers = re.fullmatch(r"\[?\s*(\d+(?:\s*[,x×]\s*\d+)*)\s*\]?", text)
    if not numbers or not any(c in text for c in "[,x×"):
        return None
    return tuple(int(n) for n in re.findall(r"\d+", numbers.group(1)))
