"""The ops of a compiled ML Program's `model.mil` (the text coremlcompiler writes into an `.mlmodelc`), read
line by line into what the graph needs: each op's outputs, type, name, the values it reads (by argument name)
and the nested blocks of a `cond` or `while_loop`.

A line-oriented reader, not a grammar: an `.mlmodelc` carries no protobuf of its program, and the text is
regular (one op a line, `TYPE out[, TYPE out] = op(arg = value, ...)[name = ...]`, `{`/`}` around blocks). What
it cannot read is skipped and counted, never guessed: a line that is not an op, a block or a function adds no
node. Cost is linear in the text; nothing recurses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FUNCTION = re.compile(r"^\s*func\s+(\w+)\s*(?:<[^>]*>)?\s*(?:\((.*)\))?")  # inputs when on the same line
_BLOCK = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*\{\s*$")  # a nested block's header with its inputs: body(...) {
_CALL = re.compile(r"=\s*([A-Za-z_]\w*)\s*\(")
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_OP_NAME = re.compile(r"\bname\s*=\s*(?:[\w<>\[\], ]*?\()?\s*\"([^\"]*)\"")
# a const's literal: what lies between `val = type(` and the line's closing `)]`; the two ends are found apart (as one
# expression, a line of 40,000 `val=(` backtracked for minutes)
_LITERAL_HEAD = re.compile(r"\bval\s*=\s*[\w<>\[\], ]*+\(")
_LITERAL_TAIL = re.compile(r"\)\s*+\]\s*+;?\s*+\{?\s*+$")
_TENSOR = re.compile(r"^\s*tensor\s*<\s*(\w+)\s*,\s*\[(.*)\]\s*>\s*$")
MAX_SKIPPED_LISTED = 100  # unread lines each said as a warning; the rest are counted
SHOWN_LITERAL = 24  # a const's value shown on the box that folds it when its text is at most this long


@dataclass
class MilOp:
    outputs: list[str]
    output_type: str  # the first output's type, as `fp32[1, 4]`
    op: str
    name: str
    line: int  # 1-based line in model.mil
    inputs: list[tuple[str, str]]  # (argument name, value name read), in the text's order
    block: int  # index into MilProgram.blocks of the block holding it
    value: str = ""  # a const's literal when short (`1`, `[0, 2]`), "" otherwise


@dataclass
class MilBlock:
    function: str
    title: str  # `main`, or `while_loop_0 › body`
    parent: int  # enclosing block, -1 for a function's top block
    owner: int  # index into MilProgram.ops of the op whose block this is, -1 for a function's
    inputs: list[tuple[str, str]]  # (name, type): a function's inputs or a loop block's variables


@dataclass
class MilProgram:
    blocks: list[MilBlock] = field(default_factory=list)
    ops: list[MilOp] = field(default_factory=list)
    skipped: int = 0  # lines inside a function that read as none of op, block, closing brace
    skipped_lines: list[int] = field(default_factory=list)  # the first MAX_SKIPPED_LISTED of them (1-based)


def read_mil(text: str) -> MilProgram:
    program = MilProgram()
    stack: list[int] = []  # open blocks, innermost last
    last_op_at: dict[int, int] = {}  # block → its latest op (the owner of a block opened after it)
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        found = _FUNCTION.match(line)
        if found:
            inputs = _typed_names(found.group(2) or "")
            program.blocks.append(MilBlock(found.group(1), found.group(1), -1, -1, inputs))
            stack = [len(program.blocks) - 1]
            continue
        if not stack:
            continue  # program(1.0), [buildInfo ...], the outer braces
        if stripped.startswith("}"):
            stack.pop()
            continue
        op = _op(line, number, stack[-1])
        if op is not None:
            program.ops.append(op)
            last_op_at[stack[-1]] = len(program.ops) - 1
            if stripped.endswith("{"):  # an op whose one block follows inline: cond(...)[...] {
                _open(program, stack, last_op_at, op.op, [])
            continue
        found = _BLOCK.match(line)
        if found:
            _open(program, stack, last_op_at, found.group(1), _typed_names(found.group(2)))
            continue
        program.skipped += 1
        if len(program.skipped_lines) < MAX_SKIPPED_LISTED:
            program.skipped_lines.append(number)
    return program


def _open(program: MilProgram, stack: list[int], last_op_at: dict[int, int], label: str,
          inputs: list[tuple[str, str]]) -> None:  # fmt: skip
    parent = stack[-1]
    owner = last_op_at.get(parent, -1)
    owner_name = program.ops[owner].name or program.ops[owner].op if owner >= 0 else "?"
    program.blocks.append(MilBlock(program.blocks[parent].function, f"{owner_name} › {label}", parent, owner, inputs))
    stack.append(len(program.blocks) - 1)


def _op(line: str, number: int, block: int) -> MilOp | None:
    call = None
    depth, counted = 0, 0
    for found in _CALL.finditer(line):  # the first `= op(` outside brackets (types hold `[..]` and `<..>`)
        depth += _depth(line, counted, found.start())  # from where the last match left off: linear in the line
        counted = found.start()
        if depth == 0:
            call = found
            break
    if call is None:
        return None
    left = _split_top(line[: call.start()])
    outputs = [part.split()[-1] for part in left if part.split()]
    if not outputs or not all(_NAME.match(o) for o in outputs):
        return None
    output_type = _type(" ".join(left[0].split()[:-1]))
    close = _closing(line, call.end() - 1)
    arguments = line[call.end() : close] if close > 0 else ""
    inputs = []
    for part in _split_top(arguments):
        key, _, value = part.partition("=")
        value = value.strip()
        if value.startswith("(") and value.endswith(")"):
            names = [v.strip() for v in _split_top(value[1:-1])]
        else:
            names = [value]
        inputs += [(key.strip(), name) for name in names if _NAME.match(name)]
    rest = line[close + 1 :] if close > 0 else ""
    named = _OP_NAME.search(rest)
    op = MilOp(outputs, output_type, call.group(1), named.group(1) if named else outputs[0], number, inputs, block)
    if op.op == "const":
        literal = _literal(rest)
        if literal is not None and "BLOBFILE" not in literal and len(literal.strip()) <= SHOWN_LITERAL:
            op.value = literal.strip()
    return op


def _literal(rest: str) -> str | None:
    """The text of a const's `val = type(...)]` literal, or None; linear in the line."""
    head = _LITERAL_HEAD.search(rest)
    if head is None:
        return None
    tail = _LITERAL_TAIL.search(rest, head.end())
    return rest[head.end() : tail.start()] if tail is not None else None


def _depth(text: str, start: int, end: int) -> int:
    """How much deeper in brackets `text[end]` is than `text[start]`."""
    part = text[start:end]
    return sum(part.count(c) for c in "<[(") - sum(part.count(c) for c in ">])")


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start`, -1 when the line ends first."""
    depth = 0
    quoted = False
    for i in range(start, len(text)):
        char = text[i]
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char in "([<":
            depth += 1
        elif char in ")]>":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char in "([<{":
            depth += 1
        elif char in ")]>}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _typed_names(text: str) -> list[tuple[str, str]]:
    out = []
    for part in _split_top(text):
        words = part.split()
        if len(words) >= 2 and _NAME.match(words[-1]):
            out.append((words[-1], _type(" ".join(words[:-1]))))
    return out


def _type(text: str) -> str:
    """`tensor<fp32, [1, 4]>` → `fp32[1, 4]` (as the .mlpackage's types read); anything else as written."""
    found = _TENSOR.match(text)
    if found is None:
        return text.strip()
    dims = [d.strip() for d in found.group(2).split(",") if d.strip()]
    dims = [d if d.isdigit() else "?" for d in dims]
    return f"{found.group(1)}[{', '.join(dims)}]"
