"""One load at a time among the tabs of one `serve`, so each tab's memory guard sees what the others took.

Every browser tab runs its own app process. Seven tabs opened at once on a 484 MB schedule each saw the whole
machine's memory free, all passed the guard, and the kernel's OOM killer ended them one after another (some tabs
said "loading" for ever). `serve` names a lock file its children share (IR_EXPLORER_LOAD_LOCK, a file only its
user can open); a tab loads while it holds the lock, after the previous tab's load has taken its memory, so the
guard refuses what no longer fits, in words, instead of the kernel killing it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator

LOCK_VARIABLE = "IR_EXPLORER_LOAD_LOCK"


@contextlib.contextmanager
def load_turn(waiting: Callable[[], None], cancelled: Callable[[], bool]) -> Iterator[None]:
    """Hold the shared load lock for the body (at once when there is none: outside `serve`). `waiting()` is
    called once when another tab holds it; `cancelled()` is asked while waiting (the app quits meanwhile)."""
    path = os.environ.get(LOCK_VARIABLE)
    if not path:
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:  # serve removed it (it is ending), or it was never ours: load without waiting
        yield
        return
    try:
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if cancelled():
                    raise TurnCancelled from None
                if not told:
                    waiting()
                    told = True
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class TurnCancelled(Exception):
    """The app was closed while it waited for its turn to load."""
