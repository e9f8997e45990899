"""Dims named by an expression of other dims (issue #74): torch's dynamo exporter names a flattened dim
`batch*seq`, and a user's `--dims batch=1,seq=128` must bind it (128) as it binds `batch` and `seq`.

An expression is read with Python's own parser and only its arithmetic is evaluated: names, whole numbers, `+`,
`-`, `*`, `//`, `/` (when it divides exactly), `%` and parentheses. Anything else (a call, an attribute, a
power) is not an expression: the name stays a plain symbol."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import lru_cache

MAX_TEXT = 200  # a longer name is not read as an expression

_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if b else None,
    ast.Div: lambda a, b: a // b if b and a % b == 0 else None,
    ast.Mod: lambda a, b: a % b if b else None,
}


@lru_cache(maxsize=4096)
def _parsed(name: str) -> ast.expr | None:
    """The expression a dim's name spells, or None when the name is a plain symbol or not arithmetic."""
    if len(name) > MAX_TEXT or not any(sign in name for sign in "+-*/%"):
        return None
    try:
        tree = ast.parse(name, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    return tree if _arithmetic(tree) else None


def _arithmetic(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp):
        return type(node.op) in _OPERATORS and _arithmetic(node.left) and _arithmetic(node.right)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and _arithmetic(node.operand)
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    return isinstance(node, ast.Name)


def parts(name: str) -> set[str]:
    """The dims an expression's name is made of (`batch*seq` → {batch, seq}); empty for a plain symbol."""
    tree = _parsed(name)
    return set() if tree is None else {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def value_of(name: str, dims: Mapping[str, int]) -> int | None:
    """The expression's value with `dims` bound, when every part is bound and the result is a size (> 0)."""
    tree = _parsed(name)
    if tree is None:
        return None
    value = _evaluated(tree, dims)
    return value if value is not None and value > 0 else None


def _evaluated(node: ast.expr, dims: Mapping[str, int]) -> int | None:
    if isinstance(node, ast.Name):
        return dims.get(node.id)
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.UnaryOp):
        operand = _evaluated(node.operand, dims)
        return None if operand is None else -operand
    if isinstance(node, ast.BinOp):
        left, right = _evaluated(node.left, dims), _evaluated(node.right, dims)
        if left is None or right is None:
            return None
        return _OPERATORS[type(node.op)](left, right)
    return None


def with_expressions(symbols: set[str], dims: Mapping[str, int]) -> dict[str, int]:
    """`dims` and every symbol among `symbols` that is an expression of them, bound."""
    bound = dict(dims)
    for symbol in symbols - dims.keys():
        value = value_of(symbol, dims)
        if value is not None:
            bound[symbol] = value
    return bound
