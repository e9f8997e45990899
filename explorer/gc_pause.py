"""Pause Python's cycle collector while a loader builds its objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Decoding allocates millions of acyclic containers; the cycle collector would rescan them again and
    again (that is most of a generic parser's time on big files). Pause it, and restore it after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
