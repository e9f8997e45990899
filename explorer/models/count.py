"""A count that may depend on a model's symbolic dims: a polynomial with whole coefficients in named dims
(`2·seq·4096²` is {(("seq", 1),): 8388608·2}), or unknown with the reason. Parameters, multiply-accumulates
and bytes are counted with it, so a model exported with a `batch` or `seq` dim still gets a formula, and a
user's `--dims seq=2048` gets a number.

Kept small on purpose: only what counting needs (products of dims, sums, binding dims to values). A count past
LIMIT (2^63) is unknown: no real model has that many of anything, and a hostile dim must not pass for a number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from explorer.models.dim_expressions import with_expressions

LIMIT = 2**63
Monomial = tuple[tuple[str, int], ...]  # (dim name, power), sorted by name; () is the constant term
Dim = int | str  # a dim as a shape gives it: its size, or its symbol


@dataclass(frozen=True)
class Count:
    """A polynomial in named dims (`terms`: monomial → coefficient, never 0), or unknown (`unknown` says why)."""

    terms: Mapping[Monomial, int] = field(default_factory=dict)
    unknown: str = ""

    @classmethod
    def of(cls, value: int) -> Count:
        if value == 0:
            return ZERO
        return cls({(): value}) if -LIMIT < value < LIMIT else cls.not_known("more than 2^63")

    @classmethod
    def not_known(cls, reason: str) -> Count:
        return cls({}, reason)

    @classmethod
    def product(cls, dims: Iterable[Dim]) -> Count:
        """The product of a shape's dims (1 for none); unknown for a dim that is not a positive size or a name."""
        dims = tuple(dims)
        sizes = [dim for dim in dims if type(dim) is int and dim > 0]
        if len(sizes) == len(dims):  # the usual shape: sizes only
            return cls.of(math.prod(sizes))
        constant = 1
        powers: dict[str, int] = {}
        for dim in dims:
            if isinstance(dim, str):
                if not dim:
                    return cls.not_known("a dim has no size and no name")
                powers[dim] = powers.get(dim, 0) + 1
            elif dim <= 0:
                return cls.not_known(f"a dim of {dim}")
            else:
                constant *= dim
                if constant >= LIMIT:
                    return cls.not_known("more than 2^63")
        return _checked({tuple(sorted(powers.items())): constant})

    @property
    def known(self) -> bool:
        return not self.unknown

    @property
    def symbols(self) -> set[str]:
        return {name for monomial in self.terms for name, _ in monomial}

    @property
    def value(self) -> int | None:
        """The number, when the count depends on no dim (None when symbolic or unknown)."""
        terms = self.terms
        if self.unknown or len(terms) > 1:
            return None
        return terms.get((), 0) if not terms or () in terms else None

    def __add__(self, other: Count) -> Count:
        if self.unknown:
            return self
        if other.unknown:
            return other
        terms = dict(self.terms)
        for monomial, coefficient in other.terms.items():
            total = terms.get(monomial, 0) + coefficient
            if total:
                terms[monomial] = total
            else:
                terms.pop(monomial, None)
        return _checked(terms)

    def __mul__(self, other: Count | int) -> Count:
        other = other if isinstance(other, Count) else Count.of(other)
        if self.unknown:
            return self
        if other.unknown:
            return other
        terms: dict[Monomial, int] = {}
        for a, x in self.terms.items():
            for b, y in other.terms.items():
                monomial = _times(a, b)
                terms[monomial] = terms.get(monomial, 0) + x * y
        return _checked({m: c for m, c in terms.items() if c})

    def bind(self, dims: Mapping[str, int]) -> Count:
        """The count with these dims given their sizes, and the dims named by an expression of them (`batch*seq`);
        the others stay symbols."""
        if self.unknown or not dims:
            return self
        dims = with_expressions(self.symbols, dims)
        if not (self.symbols & dims.keys()):
            return self
        for name, size in dims.items():
            if name in self.symbols and size <= 0:
                return Count.not_known(f"{name} = {size} is not a size")
        terms: dict[Monomial, int] = {}
        for monomial, coefficient in self.terms.items():
            kept = []
            for name, power in monomial:
                if name in dims:
                    coefficient *= dims[name] ** power
                    if abs(coefficient) >= LIMIT:
                        return Count.not_known("more than 2^63")
                else:
                    kept.append((name, power))
            key = tuple(kept)
            terms[key] = terms.get(key, 0) + coefficient
        return _checked({m: c for m, c in terms.items() if c})

    def text(self) -> str:
        """`2·seq·4096²`-style: each term's number first (powers of the same base shown as one), then its dims."""
        if self.unknown:
            return "unknown"
        if not self.terms:
            return "0"
        ordered = sorted(self.terms.items(), key=lambda item: (-sum(p for _, p in item[0]), item[0]))
        return " + ".join(_term_text(monomial, coefficient) for monomial, coefficient in ordered)

    def __float__(self) -> float:
        value = self.value
        return float("nan") if value is None else float(value)


def _times(a: Monomial, b: Monomial) -> Monomial:
    powers = dict(a)
    for name, power in b:
        powers[name] = powers.get(name, 0) + power
    return tuple(sorted(powers.items()))


def _checked(terms: dict[Monomial, int]) -> Count:
    if any(abs(c) >= LIMIT for c in terms.values()):
        return Count.not_known("more than 2^63")
    return Count(terms)


def _term_text(monomial: Monomial, coefficient: int) -> str:
    parts = [] if coefficient == 1 and monomial else [f"{coefficient:,}"]
    parts += [name if power == 1 else f"{name}{_superscript(power)}" for name, power in monomial]
    return "·".join(parts)


def _superscript(power: int) -> str:
    return str(power).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


ZERO = Count()


def total(counts: Iterable[Count]) -> Count:
    """The sum of counts (unknown as soon as one is)."""
    found = ZERO
    for count in counts:
        found = found + count
        if found.unknown:
            return found
    return found


@dataclass(frozen=True)
class OpCounts:
    """One op's counts and the rule that made its multiply-accumulates (`MatMul: output × K`, `no
    multiply-accumulates`, `not counted: ...`)."""

    params: Count
    macs: Count
    activation_bytes: Count
    rule: str


class OpCounter(Protocol):
    """What a format gives the graph to count its ops with (the ONNX view's rules and inferred shapes)."""

    def stamp(self) -> object:
        """Changes when what the counts are read from changes (shape inference merged its types)."""
        ...

    def counts(self) -> list[OpCounts | None]:
        """Per node: its counts, or None for a node that is not an op (an input, an output, an initializer)."""
        ...
