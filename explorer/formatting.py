"""Small, shared ways of printing numbers so every view says the same thing the same way."""

from __future__ import annotations


def human_bytes(n: float) -> str:
    if isinstance(n, bool) or not isinstance(n, int | float):  # a raw record's junk, shown as it is
        return f"{str(n)[:20]} (not a size)"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def number(value: float) -> str:
    if value != value:  # NaN: a workload on a dependency cycle has no time
        return "—"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def box(lower: list | None, upper: list | None) -> str:
    if not lower or not upper:
        return ""
    return "[" + ", ".join(f"{lo}:{hi}" if lo != hi else f"{lo}" for lo, hi in zip(lower, upper, strict=False)) + "]"


def compact(value: float) -> str:
    """1,530,664 → 1.53M: for one-line summaries where every column counts."""
    if value != value:
        return "—"
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return number(value)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
