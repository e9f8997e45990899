"""The details panel's sections for a TVM Model Library Format bundle's items: its metadata, a module with its
memory plan and graph, a graph node, parameters, storage ids, sources and files."""

from __future__ import annotations

from typing import Any, Protocol

from explorer.document import Document, KeyHint, Section
from explorer.formats.tvm_mlf.bundle import MlfBundle, Module
from explorer.formats.tvm_mlf.graph import Graph
from explorer.formats.tvm_mlf.storage_plan import StoragePlan
from explorer.formatting import human
from explorer.models.schedule import Schedule


class ViewParts(Protocol):
    """What the details read of the TVM view (the view is one; named here, the two modules need not import each
    other)."""

    document: Document | None
    mlf: MlfBundle
    schedule: Schedule | None

    @property
    def modules(self) -> list[Module]: ...
    def graph_of(self, m: int) -> Graph: ...
    def module_of_row(self, row: int) -> tuple[int, int]: ...
    def plan_of(self, m: int) -> StoragePlan: ...
    def function_source(self, func_name: str) -> tuple[str, int] | None: ...
    def language_of(self, member: str) -> str | None: ...
    def summary(self) -> dict[str, Any]: ...


class TvmDetails:
    """What `describe` shows of each kind of ref (`describe_by_kind` finds `_describe_<kind>` here)."""

    def __init__(self, view: ViewParts) -> None:
        self.view = view

    def _describe_summary(self) -> list[Section]:
        summary = self.view.document.summary if self.view.document else self.view.summary()
        rows = [
            ("format", f"TVM Model Library Format, metadata version {summary['metadata_version']}"),
            ("bundle", f"{self.view.mlf.bundle.kind}, {summary['members']} files"),
        ]
        columns = (
            "module",
            "executors",
            "nodes",
            "tvm ops",
            "params",
            "param bytes",
            "storage ids",
            "peak",
            "workspace",
        )
        table = [
            (
                m["name"],
                ", ".join(m["executors"]),
                m["graph_nodes"],
                m["tvm_ops"],
                m["params"],
                f"{m['param_bytes']:,}",
                m["storage_ids"],
                f"{m['peak_storage_bytes']:,}",
                f"{m['workspace_bytes']:,}",
            )
            for m in summary["modules"]
        ]
        # one column per module and one row per fact: a narrow panel still shows every number whole
        transposed = [(column, *(str(row[k]) for row in table)) for k, column in enumerate(columns[1:], start=1)]
        names = tuple(str(row[0]) for row in table)
        return [Section("TVM bundle", ("property", "value"), rows), Section("Modules", ("module", *names), transposed)]

    def _describe_metadata(self) -> list[Section]:
        meta = self.view.mlf.metadata
        rows = [(key, _plain(value)) for key, value in meta.items() if key not in ("memory", "modules")]
        sections = [Section("metadata.json", ("property", "value"), rows)]
        for module in self.view.modules:
            sections.append(
                Section(
                    f"Module {module.name}",
                    ("property", "value"),
                    [
                        ("executors", ", ".join(module.executors) or "none"),
                        ("style", module.style),
                        ("targets", "; ".join(module.targets)),
                        ("graph", module.graph_member or "none"),
                        ("params", module.params_member or "none"),
                        ("relay", module.relay_member or "none"),
                    ],
                )
            )
        return sections

    def _describe_module(self, m: int) -> list[Section]:
        summary = (self.view.document.summary if self.view.document else self.view.summary())["modules"][m]
        rows = [(k.replace("_", " "), human(v, k)) for k, v in summary.items()]
        return [
            Section(f"Module {self.view.modules[m].name}", ("property", "value"), rows),
            *self._describe_metadata()[1:][m : m + 1],
        ]

    def _describe_memory(self, m: int) -> list[Section]:
        return [
            Section(
                f"Memory of module {self.view.modules[m].name} (metadata.json)",
                ("function", "device", "workspace", "constants", "io"),
                [
                    (u.function, u.device, f"{u.workspace_bytes:,}", _opt(u.constants_bytes), _opt(u.io_bytes))
                    for u in self.view.modules[m].memory
                ],
            )
        ]

    def _describe_graph(self, m: int) -> list[Section]:
        graph = self.view.graph_of(m)
        ops = [n for n in graph.nodes if n.op == "tvm_op"]
        return [
            Section(
                f"Graph {graph.member}",
                ("property", "value"),
                [
                    ("nodes", len(graph.nodes)),
                    ("tvm_op nodes", len(ops)),
                    ("inputs and parameters", len(graph.arg_nodes)),
                    ("entries", len(graph.entries)),
                    ("outputs", ", ".join(f"node {n} output {i}" for n, i in graph.heads)),
                ],
            )
        ]

    def _describe_workload(self, row: int) -> list[Section]:
        m, nid = self.view.module_of_row(row)
        return self._describe_gnode(m, nid)

    def _describe_gnode(self, m: int, nid: int) -> list[Section]:
        module = self.view.modules[m]
        graph = self.view.graph_of(m)
        node = graph.nodes[nid]
        rows: list[tuple[str, Any]] = [("node", nid), ("name", node.name), ("op", node.op)]
        if node.op == "tvm_op":
            found = self.view.function_source(node.func_name)
            rows.append(("function", node.func_name))
            rows.append(("defined in", f"{found[0]} line {found[1]}" if found else "not found in the C sources"))
            workspace = [u.workspace_bytes for u in module.memory if u.function == node.func_name]
            if workspace:
                rows.append(("workspace", f"{max(workspace):,} B"))
        elif node.name in {a.name for a in module.params}:
            rows.append(("kind", "parameter"))
        else:
            rows.append(("kind", "graph input"))
        inputs = []
        for k, (src, index) in enumerate(node.inputs):
            eid = graph.entry_id(src, index)
            entry = graph.entries[eid] if eid is not None and eid < len(graph.entries) else None
            inputs.append((k, f"#{src} {_short(graph.nodes[src].name)}", index, *(_entry_cells(entry))))
        outputs = [(e.index, e.eid, *(_entry_cells(e))) for e in graph.entries if e.nid == nid]
        attrs = [(k, _plain(v)) for k, v in node.attrs.items()]
        return [
            Section(f"Graph node {nid}", ("property", "value"), rows),
            Section("Inputs", ("#", "from", "output", "dtype", "shape", "storage", "bytes"), inputs),
            Section("Outputs", ("#", "entry", "dtype", "shape", "storage", "bytes"), outputs),
            Section("Attributes", ("property", "value"), attrs),
        ]

    def _describe_params(self, m: int) -> list[Section]:
        module = self.view.modules[m]
        return [
            Section(
                f"Parameters ({module.params_member})",
                ("name", "dtype", "shape", "bytes"),
                [(a.name, a.dtype, str(list(a.shape)), f"{a.nbytes:,}") for a in module.params],
            )
        ]

    def _describe_param(self, m: int, k: int) -> list[Section]:
        module = self.view.modules[m]
        array = module.params[k]
        rows = [
            ("name", array.name),
            ("dtype", array.dtype),
            ("shape", str(list(array.shape))),
            ("bytes", f"{array.nbytes:,}"),
            ("device type", array.device_type),
            ("file", f"{module.params_member} at byte {array.offset:,}"),
        ]
        assert module.params_member is not None  # its params were read from that member
        stats = self.view.mlf.param_stats(module.params_member, array)
        return [
            Section(f"Parameter {array.name}", ("property", "value"), rows),
            Section("Values", ("property", "value"), list(stats.items())),
        ]

    def _describe_storage(self, m: int) -> list[Section]:
        module = self.view.modules[m]
        plan = self.view.plan_of(m)
        peak_node = self.view.graph_of(m).nodes[plan.peak_node] if plan.peak_node >= 0 else None
        rows = [
            ("storage ids", len(plan.storage)),
            ("allocated (every id, whole run)", f"{plan.allocated_bytes:,} B"),
            (
                "peak live",
                f"{plan.peak_bytes:,} B at node {plan.peak_node}"
                + (f" ({peak_node.func_name or peak_node.name})" if peak_node else ""),
            ),
        ]
        table = [(s.sid, f"{s.size:,}", s.start, s.end, s.role, len(s.entries)) for s in plan.storage.values()]
        return [
            Section(f"Storage plan of module {module.name}", ("property", "value"), rows),
            Section("Storage ids", ("id", "bytes", "first node", "last node", "role", "entries"), table),
        ]

    def _describe_sid(self, m: int, sid: int) -> list[Section]:
        s = self.view.plan_of(m).storage[sid]
        graph = self.view.graph_of(m)
        entries = [graph.entries[eid] for eid in s.entries]
        return [
            Section(
                f"Storage id {sid}",
                ("property", "value"),
                [("bytes (largest entry)", f"{s.size:,}"), ("live over nodes", f"{s.start}–{s.end}"), ("role", s.role)],
            ),
            Section(
                "Entries sharing it",
                ("entry", "node", "dtype", "shape", "bytes"),
                [
                    (e.eid, f"#{e.nid} {graph.nodes[e.nid].name}", e.dtype, str(list(e.shape)), f"{e.nbytes:,}")
                    for e in entries
                ],
            ),
        ]

    def _describe_buffer_entry(self, row: int, e: int) -> list[Section]:
        m, _ = self.view.module_of_row(row)
        schedule = self.view.schedule
        assert schedule is not None  # a row is a row of the storage plan's schedule
        return self._describe_sid(m, int(schedule.buf_tensor[e]))

    def _describe_source(self, member: str, line: int) -> list[Section]:
        text = self.view.mlf.text(member)
        return [
            Section(
                member,
                ("property", "value"),
                [
                    ("language", self.view.language_of(member)),
                    ("bytes", f"{self.view.mlf.bundle.size(member):,}"),
                    ("lines", text.count("\n") + 1),
                    ("shown at line", line),
                    ("view", KeyHint("view('source')", "open the source view")),
                ],
            )
        ]

    def _describe_file(self, member: str) -> list[Section]:
        bundle = self.view.mlf.bundle
        return [
            Section(
                member,
                ("property", "value"),
                [("bytes", f"{bundle.size(member):,}"), ("first bytes", bundle.head(member, 16).hex(" "))],
            )
        ]

    def _describe_files(self) -> list[Section]:
        return [
            Section(
                "Other files",
                ("file", "bytes"),
                [(m, f"{self.view.mlf.bundle.size(m):,}") for m in self.view.mlf.bundle.names()],
            )
        ]


def _entry_cells(entry: Any) -> tuple:
    if entry is None:
        return ("?", "?", "?", "?")
    return (entry.dtype, str(list(entry.shape)), entry.storage_id, f"{entry.nbytes:,}")


def _short(name: str, limit: int = 28) -> str:
    """Generated names run to 100 characters: keep the start, which says what the function fuses."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _opt(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)
