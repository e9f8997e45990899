"""No import cycle anywhere in explorer/ and widgets/, lazy imports inside functions included: a cycle is two
modules split in the wrong place (issue #31). The graph is built from the source with `ast`, so a cycle that
only a rarely taken branch would close is found too. Imports under `if TYPE_CHECKING:` count as well."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from tests.conftest import ROOT


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def import_graph(root: Path, packages: tuple[str, ...]) -> nx.DiGraph:
    """module → module for every `import` and `from ... import` naming a module of `packages`."""
    modules = module_files(root, packages)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                targets = [source, *(f"{source}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                if target in modules and target != name:
                    graph.add_edge(name, target)
    return graph


def cycles(graph: nx.DiGraph) -> list[str]:
    """One readable cycle per strongly connected group of modules: "a -> b -> a"."""
    found = []
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            names = [edge[0] for edge in nx.find_cycle(graph.subgraph(group), source=min(group))]
            found.append(" -> ".join([*names, names[0]]))
    return sorted(found)


def test_no_module_imports_itself_round_a_cycle():
    graph = import_graph(ROOT, ("explorer", "widgets"))
    assert graph.number_of_nodes() > 100 and graph.number_of_edges() > 200  # the graph is the real one
    assert cycles(graph) == []


def test_a_planted_cycle_is_found_and_named(tmp_path):
    package = tmp_path / "planted"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from planted.b import thing\n")
    (package / "b.py").write_text("def later():\n    from . import c\n")  # lazy and relative: still an edge
    (package / "c.py").write_text("import planted.a\n")
    (package / "d.py").write_text("from planted import a\n")  # imports into the cycle, not part of it
    assert cycles(import_graph(tmp_path, ("planted",))) == ["planted.a -> planted.b -> planted.c -> planted.a"]
