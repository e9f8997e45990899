"""Switch each layout step off in turn and run the graph tests: each switch must fail at least one test (issue
#55). Run by hand after changing a step: `.venv/bin/python tests/step_switches.py`; it restores every file."""

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = [
    "tests/unit/test_layered_steps.py",
    "tests/unit/test_graph.py",
    "tests/unit/test_port_order.py",
    "tests/unit/test_brandes_koepf.py",
    "tests/unit/test_relayout_keeps.py",
    "tests/unit/test_graph_keep_in_place.py",
    "tests/unit/test_graph_reading.py",
    "tests/unit/test_graph_match.py",
]


def at_top(module, func, code):
    path = ROOT / f"explorer/graph/{module}.py"
    text = path.read_text()
    tree = ast.parse(text)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == func)
    first = node.body[0]
    after = (
        first.end_lineno
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        else node.body[0].lineno - 1
    )
    indent = " " * (node.body[-1].col_offset)
    lines = text.splitlines(keepends=True)
    lines.insert(after, "".join(indent + c + "\n" for c in code.splitlines()))
    return path, text, "".join(lines)


def replaced(module, old, new):
    path = ROOT / f"explorer/graph/{module}.py"
    text = path.read_text()
    assert text.count(old) == 1, old
    return path, text, text.replace(old, new)


PACKED_FROM_THE_LEFT = """order, _, offset = packed(v_layer, slot, size, gap)
coord = np.empty(total, dtype=np.int64)
coord[order] = offset
return coord"""
SWITCHES = {
    "layering: sources pulled down": lambda: replaced(
        "layering", "layer[pull] = np.maximum(first_reader[pull] - 1, 0)", "pass"
    ),
    "ordering: whole step": lambda: at_top("ordering", "order_layers", "return slots(v_layer, rank)"),
    "ordering: barycentre sweeps": lambda: at_top("ordering", "sort_by_barycentre", "return"),
    "ordering: transposition": lambda: at_top("ordering", "transpose", "return"),
    "ordering: ports": lambda: at_top("ordering", "port_offsets", "return np.zeros(segments), np.zeros(segments)"),
    "placement: Brandes-Köpf": lambda: at_top(
        "placement",
        "aligned_cells",
        PACKED_FROM_THE_LEFT,
    ),
    "placement: kept places settle": lambda: at_top("placement", "settle", "return coord"),
    "placement: kept rows": lambda: at_top("placement", "keep_rows", "return starts"),
    "routing: tracks for fewer crossings": lambda: at_top("routing", "prefer_fewer_crossings", "return"),
    "cache: reuse only what keeps places": lambda: at_top("relayout", "keeps", "return True"),
    "cache: reuse only what keeps rows": lambda: at_top("relayout", "keeps_rows", "return True"),
}


def main() -> None:
    for name, make in SWITCHES.items():
        path, before, after = make()
        path.write_text(after)
        try:
            run = subprocess.run(
                [
                    str(ROOT / ".venv/bin/python"),
                    "-m",
                    "pytest",
                    "-q",
                    "-x",
                    "-n",
                    "2",
                    "-p",
                    "no:cacheprovider",
                    *TESTS,
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
        finally:
            path.write_text(before)
        failed = [line for line in run.stdout.splitlines() if line.startswith("FAILED")]
        print(
            f"{name}: {'caught by ' + failed[0][7:] if failed else 'NOT CAUGHT'}"
            if run.returncode
            else f"{name}: NOT CAUGHT",
            flush=True,
        )


if __name__ == "__main__":
    main()
