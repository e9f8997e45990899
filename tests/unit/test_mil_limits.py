"""model.mil is read in time linear in its text and within the memory its guard assumes (issue #60 item 6):
a crafted 80 KB line took 74 s (the bracket depth was counted from the line's start for every `= op(`), nested
blocks made the graph quadratic (each name looked up by climbing the blocks), and lines it could not read were
counted without a word (issue #59 item 10)."""

from __future__ import annotations

from explorer.api import open_document
from explorer.formats.coreml.reader import MIL_MEMORY_PER_BYTE
from tests.conftest import ROOT
from tests.hostile import explorer_peak, mil_nested_blocks, mil_with_body
from tests.unit.test_coreml_loader import write_compiled


def test_names_in_nested_blocks_resolve_to_the_nearest_definition(tmp_path):
    model = open_document(mil_nested_blocks(tmp_path / "nested.mlmodelc", 3_000)).view.graph_model()
    label = model.node_label
    edges = {(label[a], label[b]) for a, b in zip(model.edge_src, model.edge_dst, strict=True)}
    assert ("y", "r2999") in edges and ("x", "r2999") in edges and ("x", "c0") in edges
    assert ("y", "z") in edges and ("c0", "z") not in edges
    assert [name for _, name in model.dangling] == ["r0"]  # a block's value is not seen outside it


def test_a_crafted_line_is_read_once_and_said_as_a_warning(tmp_path):
    line = "    tensor<fp32, [1, 4]> q = " + "[= b(" * 16_000 + "\n"  # 80 KB
    body = '    tensor<fp32, [1, 4]> y = relu(x = x)[name = string("y")];\n' + line
    body += "    not an op at all\n" + '    tensor<fp32, [1, 4]> z = add(x = y, y = x)[name = string("z")];\n'
    document = open_document(mil_with_body(tmp_path / "line.mlmodelc", body))
    said = [(p.message, p.location) for p in document.problems if p.code == "mil-unread-line"]
    assert said == [
        ("model.mil line 5 reads as none of an op, a block or a closing brace: it is left out of the graph",
         "model.mil: line 5"),
        ("model.mil line 6 reads as none of an op, a block or a closing brace: it is left out of the graph",
         "model.mil: line 6"),
    ]  # fmt: skip
    assert document.summary["operations"] == 2


def test_the_memory_guard_covers_what_a_model_mil_becomes_once_drawn(tmp_path):
    """The guard's bytes per byte of model.mil, measured: `graph --json` of a 1.6 MB program of 20,000 ops."""
    ops = "".join(f'    tensor<fp32, [1, 4]> v{k} = add(x = {"x" if k == 0 else f"v{k - 1}"}, y = x)'
                  f'[name = string("v{k}")];\n' for k in range(20_000))  # fmt: skip
    folder = mil_with_body(tmp_path / "big.mlmodelc", ops + '    tensor<fp32, [1, 4]> z = relu(x = v19999)\n')
    size = (folder / "model.mil").stat().st_size

    def peak(*args: str) -> int:
        code, high_water = explorer_peak(list(args), ROOT)
        assert code == 0 and high_water > 0
        return high_water

    base = peak("info", str(write_compiled(tmp_path / "tiny.mlmodelc")))
    drawn = peak("graph", "--json", str(folder))
    assert (drawn - base) / size <= MIL_MEMORY_PER_BYTE


def test_a_const_line_of_many_literals_is_read_in_one_pass(tmp_path):
    """Issue #72: a const line of 40,000 `val=(` took 128 s (the literal's expression backtracked); a plain const
    keeps its literal on the box."""
    from explorer.formats.coreml.mil_text import _literal

    assert _literal('const()[name = string("c"), val = tensor<int32, [2]>([0, 2])];') == "[0, 2]"
    assert _literal('const()[name = string("c"), val = int32(1)]') == "1"
    assert _literal("const()[" + "val=(" * 40_000) is None
    hostile = '    tensor<fp32, [1, 4]> c = const()[name = string("c"), ' + "val=(" * 40_000 + "\n"
    body = '    tensor<fp32, [1, 4]> y = relu(x = x)[name = string("y")];\n' + hostile
    body += '    tensor<int32, []> k = const()[name = string("k"), val = int32(3)];\n'
    body += '    tensor<fp32, [1, 4]> z = add(x = y, y = c)[name = string("z")];\n'
    document = open_document(mil_with_body(tmp_path / "line.mlmodelc", body))
    model = document.view.graph_model()
    assert document.summary["operations"] == 4
    assert "k" in model.node_label


def short_lines(count: int) -> str:
    """A program of `count` one-op lines of about 48 bytes, then the output."""
    ops = "".join(f"    tensor<fp32, [1]> a{k} = relu(x = {'x' if k == 0 else f'a{k - 1}'});\n" for k in range(count))
    return ops + "    tensor<fp32, [1, 4]> z = relu(x = x)\n"


def test_the_memory_guard_covers_a_program_of_short_lines(tmp_path):
    """`graph --json` of one-op lines measured per line, within MIL_MEMORY_PER_LINE (per byte it passed the guard)."""
    from explorer.formats.coreml.reader import MIL_MEMORY_PER_LINE

    folder = mil_with_body(tmp_path / "short.mlmodelc", short_lines(20_000))
    lines = (folder / "model.mil").read_text().count("\n") + 1
    _, base = explorer_peak(["info", str(write_compiled(tmp_path / "tiny.mlmodelc"))], ROOT)
    code, drawn = explorer_peak(["graph", "--json", str(folder)], ROOT)
    assert code == 0
    assert (drawn - base) / lines <= MIL_MEMORY_PER_LINE


def test_a_program_of_short_lines_past_the_memory_is_refused_in_words(tmp_path, monkeypatch):
    """Issue #72: a million one-op lines were OOM-killed just above the guard's per-byte estimate."""
    from explorer import memory_guard
    from explorer.errors import LoadError
    from explorer.formats.coreml.reader import MIL_MEMORY_PER_BYTE

    folder = mil_with_body(tmp_path / "short.mlmodelc", short_lines(200_000))
    size = (folder / "model.mil").stat().st_size
    room = memory_guard.BASE_BYTES + size * MIL_MEMORY_PER_BYTE + 2**20  # what the per-byte guard let through
    monkeypatch.setattr(memory_guard, "available_bytes", lambda *args: room)
    try:
        open_document(folder)
    except LoadError as error:
        assert error.location == "model.mil" and "lines (6,144 bytes a line once drawn)" in error.message
    else:
        raise AssertionError("opened a program whose drawing does not fit")
