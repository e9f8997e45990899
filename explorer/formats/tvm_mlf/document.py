"""A TVM MLF bundle as a Document: bundle → metadata → modules → graph nodes / params / storage / sources.

Graph nodes that run (`tvm_op`) use the storage-plan schedule's ("workload", row) refs, so selecting one in
the tree moves the timeline and the buffer view (which draw the plan over node order) to it, and back.
Refs: ("metadata",), ("module", m), ("graph", m), ("gnode", m, nid), ("workload", row), ("params", m),
("param", m, k), ("storage", m), ("sid", m, sid), ("memory", m), ("source", member, line), ("file", member).
"""

from __future__ import annotations

import functools
import re
from functools import partial
from pathlib import Path
from typing import Any

import networkx as nx

from explorer.document import Document, DocumentView, Item, MemoryCurve, Meta, Section, Vocabulary, describe_by_kind
from explorer.errors import Problem
from explorer.formats.tvm_mlf.bundle import MlfBundle, Module
from explorer.formats.tvm_mlf.details import TvmDetails
from explorer.formats.tvm_mlf.graph import Graph
from explorer.formats.tvm_mlf.storage_plan import StoragePlan
from explorer.formatting import human_bytes
from explorer.models.graph import GraphModel
from explorer.models.ref import Ref
from explorer.models.schedule import Schedule

SOURCE_SUFFIXES = {
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".relay": "relay",
    ".txt": "text",
    ".json": "json",
}
# The storage plan drawn by the shared views: one lane per module, one block per tvm_op node in node order,
# and the storage ids live before each node as the address space.
VOCABULARY = Vocabulary(
    lane="module",
    block="node",
    time_label="node order",
    time_unit="steps",
    block_kinds=("tvm_op",),
    memory="storage",
    entry_kinds=("live", "parameter", "written by the node"),
    side_memory="",
    search_hint="graph node, function, parameter or source file name",
)
_LOCATION_NODE = re.compile(r"\$\.nodes\[(\d+)\]")


def language_of(member: str) -> str | None:
    """The source language of a bundle member, or None for binary files (objects, params)."""
    suffix = Path(member).suffix
    if member.endswith("relay.txt") or suffix == ".relay":
        return "relay"
    if Path(member).name.startswith("tir"):
        return "tir"
    return SOURCE_SUFFIXES.get(suffix)


def build_document(path: Path, mlf: MlfBundle, schedule: Schedule | None, problems: list[Problem]) -> Document:
    view = TvmView(mlf, schedule)
    return Document(
        meta=Meta(format="tvm-mlf", source=path, producer="Apache TVM", versions={"metadata": str(mlf.version)}),
        tree=view.tree(path.name),
        view=view,
        vocabulary=VOCABULARY,
        problems=problems,
        summary=view.summary(),
        graph=view.nx_graph(),
        schedule=schedule,
        sources=view,  # the source view reads bundle members through it
        headline=view.headline(),
    )


class TvmView(DocumentView):
    def __init__(self, mlf: MlfBundle, schedule: Schedule | None) -> None:
        self.mlf = mlf
        self.schedule = schedule
        self._functions: dict[str, tuple[str, int]] | None = None
        self._row_of: dict[tuple[int, int], int] = {}
        self.details = TvmDetails(self)  # what `describe` shows of each kind of ref
        if schedule is not None:
            for row, (core, nid) in enumerate(zip(schedule.wl_core.tolist(), schedule.wl_id.tolist(), strict=True)):
                self._row_of[(core, nid)] = row

    @property
    def modules(self) -> list[Module]:
        return self.mlf.modules

    # ---- summary ----------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """The `info` summary (issue #6 fixes the keys); 0 where a module has no graph or params."""
        modules = []
        for module in self.modules:
            graph, plan = module.graph, module.plan
            modules.append(
                {
                    "name": module.name,
                    "executors": module.executors,
                    "graph_nodes": len(graph.nodes) if graph else 0,
                    "tvm_ops": sum(n.op == "tvm_op" for n in graph.nodes) if graph else 0,
                    "params": len(module.params),
                    "param_bytes": module.param_bytes,
                    "storage_ids": len(plan.storage) if plan else 0,
                    "peak_storage_bytes": plan.peak_bytes if plan else 0,
                    "workspace_bytes": module.workspace_bytes,
                }
            )
        return {
            "metadata_version": self.mlf.version,
            "modules": modules,
            "members": len(self.mlf.bundle.names()),
        }

    def node_signatures(self) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for module in self.modules:
            for node in module.graph.nodes if module.graph else []:
                found[f"{module.name}/{node.name}"] = (node.op if node.op != "tvm_op" else "tvm_op", node.func_name)
        return found

    def parameter_bytes_by_dtype(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for module in self.modules:
            for array in module.params:
                found[array.dtype] = found.get(array.dtype, 0) + array.nbytes
        return found

    def graph_size_hint(self) -> int:
        return sum(len(m.graph.nodes) for m in self.modules if m.graph is not None)

    def counts_ops(self) -> bool:
        return any(module.graph is not None for module in self.modules)  # graph JSON states every shape

    def draws_graph(self) -> bool:
        return any(module.graph is not None for module in self.modules)

    def build_graph(self) -> GraphModel | None:
        from explorer.formats.tvm_mlf.graph_model import tvm_graph

        return tvm_graph(self)

    def memory_curves(self) -> list[MemoryCurve]:
        return [
            MemoryCurve(f"{m.name}: live bytes", "graph node", m.plan.live_bytes.tolist(), m.plan.peak_bytes)
            for m in self.modules
            if m.plan is not None
        ]

    def headline(self) -> str:
        modules = self.modules
        nodes = sum(len(m.graph.nodes) for m in modules if m.graph)
        params = sum(m.param_bytes for m in modules)
        names = ", ".join(m.name for m in modules[:3]) + (" …" if len(modules) > 3 else "")
        return (
            f"MLF v{self.mlf.version} · {len(modules)} module{'s' if len(modules) != 1 else ''} ({names}) · "
            f"{nodes} graph nodes · params {human_bytes(params)}"
        )

    def nx_graph(self) -> nx.DiGraph:
        graph = nx.DiGraph()
        for m, module in enumerate(self.modules):
            for node in module.graph.nodes if module.graph else []:
                graph.add_node((m, node.nid), label=node.func_name or node.name, op=node.op)
                for nid, _ in node.inputs:
                    graph.add_edge((m, nid), (m, node.nid))
        return graph

    def graph_of(self, m: int) -> Graph:
        """Module m's graph, asked only where its refs come from one (a graph node, a workload row)."""
        graph = self.modules[m].graph
        assert graph is not None, f"module {m} has no graph"
        return graph

    def plan_of(self, m: int) -> StoragePlan:
        """Module m's storage plan, asked only where its refs come from one (the plan, a storage id)."""
        plan = self.modules[m].plan
        assert plan is not None, f"module {m} has no storage plan"
        return plan

    # ---- tree -------------------------------------------------------------------------------------------
    def tree(self, name: str) -> Item:
        children = [Item("summary", "Summary", ("summary",)), Item("metadata", "Metadata", ("metadata",))]
        for m, module in enumerate(self.modules):
            children.append(
                Item("module", self.module_label(module), ("module", m),
                     expand=functools.partial(self._module_items, m))  # fmt: skip
            )
        assigned = {member for module in self.modules for member in self._members_of(module)}
        others = [member for member in self.mlf.bundle.names() if member not in assigned]
        if others:
            children.append(
                Item(
                    "files", f"Other files  ({len(others)})", ("files",), children=[self._file_item(o) for o in others]
                )
            )
        return Item("file", name, ("summary",), children=children)

    def module_label(self, module: Module) -> str:
        parts = [f"module {module.name}", ", ".join(module.executors) or module.style]
        if module.graph:
            parts.append(f"{len(module.graph.nodes)} nodes")
        if module.params:
            parts.append(f"{len(module.params)} params ({human_bytes(module.param_bytes)})")
        return "  · ".join(parts)

    def _members_of(self, module: Module) -> list[str]:
        members = [module.graph_member, module.params_member, module.relay_member, *module.tir_members]
        return [m for m in members + module.source_members if m]

    def _module_items(self, m: int) -> list[Item]:
        module = self.modules[m]
        items = []
        if module.graph:
            items.append(
                Item(
                    "graph",
                    f"Graph  ({len(module.graph.nodes)} nodes)",
                    ("graph", m),
                    expand=partial(self._node_items, m),
                )
            )
        if module.params:
            items.append(
                Item(
                    "params",
                    f"Parameters  ({len(module.params)}, {human_bytes(module.param_bytes)})",
                    ("params", m),
                    expand=partial(self._param_items, m),
                )
            )
        if module.plan:
            plan = module.plan
            label = f"Storage plan  ({len(plan.storage)} ids, peak {human_bytes(plan.peak_bytes)})"
            items.append(Item("storage", label, ("storage", m), expand=partial(self._sid_items, m)))
        if module.memory:
            items.append(Item("memory", f"Memory  (workspace {human_bytes(module.workspace_bytes)})", ("memory", m)))
        for member in [module.relay_member, *module.tir_members, *module.source_members]:
            if member:
                items.append(self._file_item(member))
        return items

    def _file_item(self, member: str) -> Item:
        size = self.mlf.bundle.size(member)
        language = language_of(member)
        ref = ("source", member, 1) if language else ("file", member)
        return Item("source" if language else "file", f"{member}  {human_bytes(size)}", ref)

    def node_ref(self, m: int, nid: int) -> Ref:
        module = self.modules[m]
        row = self._row_of.get((module.core, nid)) if module.core is not None else None
        return ("workload", row) if row is not None else ("gnode", m, nid)

    def _node_items(self, m: int) -> list[Item]:
        graph = self.graph_of(m)
        params = {array.name for array in self.modules[m].params}
        items = []
        for node in graph.nodes:
            kind = "" if node.op == "tvm_op" else "  (param)" if node.name in params else "  (input)"
            label = f"#{node.nid} {node.func_name or node.name}{kind}"
            children = None
            if node.op == "tvm_op":
                found = self.function_source(node.func_name)
                if found:
                    member, line = found
                    children = [Item("source", f"→ C source  {member}:{line}", ("source", member, line))]
            items.append(Item("node", label, self.node_ref(m, node.nid), children=children))
        return items

    def _param_items(self, m: int) -> list[Item]:
        return [
            Item("param", f"{a.name}  {a.dtype} {list(a.shape)}  {human_bytes(a.nbytes)}", ("param", m, k))
            for k, a in enumerate(self.modules[m].params)
        ]

    def _sid_items(self, m: int) -> list[Item]:
        plan = self.plan_of(m)
        return [
            Item("sid", f"storage {s.sid}  {human_bytes(s.size)}  nodes {s.start}–{s.end}  {s.role}", ("sid", m, s.sid))
            for s in plan.storage.values()
        ]

    # ---- sources ----------------------------------------------------------------------------------------
    def function_source(self, func_name: str) -> tuple[str, int] | None:
        """Where a fused function is defined in the C sources: (member, line). Indexed once, on first use."""
        if self._functions is None:
            self._functions = {}
            definition = re.compile(r"^[^\n;]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)
            for module in self.modules:
                for member in module.source_members:
                    if language_of(member) != "c":
                        continue
                    text = self.mlf.text(member)
                    for match in definition.finditer(text):
                        line = text.count("\n", 0, match.start(1)) + 1
                        self._functions.setdefault(match.group(1), (member, line))
        return self._functions.get(func_name) if func_name else None

    def source_text(self, member: str) -> str:
        return self.mlf.text(member)

    def language_of(self, member: str) -> str | None:
        return language_of(member)

    # ---- navigation -------------------------------------------------------------------------------------
    def module_of_row(self, row: int) -> tuple[int, int]:
        schedule = self.schedule
        assert schedule is not None  # a row is a row of the storage plan's schedule
        core, nid = int(schedule.wl_core[row]), int(schedule.wl_id[row])
        m = next(i for i, module in enumerate(self.modules) if module.core == core)
        return m, nid

    def ancestors(self, ref: Ref) -> list[Ref]:
        if not isinstance(ref, tuple) or not ref:
            return []
        kind = ref[0]
        if kind == "workload":
            m, _ = self.module_of_row(ref[1])
            return [("module", m), ("graph", m), ref]
        if kind == "gnode":
            return [("module", ref[1]), ("graph", ref[1]), ref]
        if kind in ("graph", "params", "storage", "memory"):
            return [("module", ref[1]), ref]
        if kind == "param":
            return [("module", ref[1]), ("params", ref[1]), ref]
        if kind == "sid":
            return [("module", ref[1]), ("storage", ref[1]), ref]
        if kind in ("source", "file"):
            member = ref[1]
            for m, module in enumerate(self.modules):
                if member in self._members_of(module):
                    return [("module", m), (kind, member, 1) if kind == "source" else ref]
            return [("files",), (kind, member, 1) if kind == "source" else ref]
        return [ref]

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        """A graph node's inputs and the nodes reading its outputs."""
        if not isinstance(ref, tuple) or not ref or ref[0] not in ("workload", "gnode"):
            return []
        m, nid = self.module_of_row(ref[1]) if ref[0] == "workload" else (ref[1], ref[2])
        graph = self.graph_of(m)
        node = graph.nodes[nid]
        found = [
            (f"← #{src} {graph.nodes[src].func_name or graph.nodes[src].name}", self.node_ref(m, src))
            for src, _ in node.inputs
        ]
        readers = sorted({other.nid for other in graph.nodes if any(src == nid for src, _ in other.inputs)})
        return found + [
            (f"→ #{r} {graph.nodes[r].func_name or graph.nodes[r].name}", self.node_ref(m, r)) for r in readers
        ]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        location = refs.get("location") or ""
        member = refs.get("member")
        for m, module in enumerate(self.modules):
            if member and member == module.graph_member:
                match = _LOCATION_NODE.search(location)
                if match and module.graph and int(match.group(1)) < len(module.graph.nodes):
                    return self.node_ref(m, int(match.group(1)))
                return ("graph", m) if module.graph else ("module", m)
            if member and member == module.params_member:
                return ("module", m)
        if member is not None and self.mlf.bundle.has(member):
            return ("source", member, 1) if language_of(member) else ("file", member)
        if location.startswith("metadata.json"):
            return ("metadata",)
        return None

    def search(self, text: str, limit: int = 200) -> list[tuple[str, Any]]:
        """Graph nodes by name or function, parameters by name, storage ids ("sid 3"), files by name."""
        needle = text.strip().lower()
        if not needle:
            return []
        hits: list[tuple[str, Any]] = []
        sid = re.fullmatch(r"(?:sid|storage)\s*(\d+)", needle)
        for m, module in enumerate(self.modules):
            if sid and module.plan and int(sid.group(1)) in module.plan.storage:
                hits.append((f"storage {sid.group(1)} of module {module.name}", ("sid", m, int(sid.group(1)))))
            for node in module.graph.nodes if module.graph else []:
                if needle in node.name.lower() or needle in node.func_name.lower():
                    hits.append(
                        (f"{module.name} #{node.nid} {node.func_name or node.name}", self.node_ref(m, node.nid))
                    )
            for k, array in enumerate(module.params):
                if needle in array.name.lower() or needle == array.dtype:
                    hits.append(
                        (f"{module.name} param {array.name} {array.dtype} {list(array.shape)}", ("param", m, k))
                    )
        for member in self.mlf.bundle.names():
            if needle in member.lower():
                hits.append((member, ("source", member, 1) if language_of(member) else ("file", member)))
        return hits[:limit]

    # ---- details ----------------------------------------------------------------------------------------
    def describe(self, ref: Ref) -> list[Section]:
        return describe_by_kind(self.details, ref)


