"""Issue #73: `q` hands the terminal back before Textual's shutdown (which joins its input thread and unmounts
every widget first): in a real pseudo-terminal the normal screen is restored twice, ours first, Textual's after,
and the process ends cleanly."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from typing import Any

from tests.conftest import ROOT, SAMPLE_DATA

LEAVE = b"\x1b[?1049l"


def read_until_quiet(fd: int, quiet: float, limit: float = 120.0) -> bytes:
    seen, end = b"", time.monotonic() + limit
    while time.monotonic() < end and select.select([fd], [], [], quiet)[0]:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            break
        if not data:
            break
        seen += data
    return seen


@contextlib.contextmanager
def explorer_in_a_pty(**popen: Any) -> Iterator[tuple[int, subprocess.Popen]]:
    """The app on the clean sample in an 80×24 pseudo-terminal: (the terminal's side, the process); killed if it
    is still running at the end."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    command = [str(ROOT / ".venv" / "bin" / "ir-explorer"), str(SAMPLE_DATA / "clean_2x2_stschedule.json")]
    app = subprocess.Popen(command, stdin=child, stdout=child, stderr=child,
                           env={**os.environ, "TERM": "xterm-256color"}, **popen)  # fmt: skip
    os.close(child)
    try:
        yield main, app
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        with contextlib.suppress(OSError):  # a test may have closed it: the terminal gone
            os.close(main)


def test_q_restores_the_terminal_before_the_shutdown():
    with explorer_in_a_pty(start_new_session=True) as (main, app):
        first = read_until_quiet(main, 2.0)
        assert b"\x1b[?1049h" in first and LEAVE not in first
        os.write(main, b"q")
        after = read_until_quiet(main, 5.0)
        assert app.wait(timeout=60) == 0
    assert after.count(LEAVE) == 2, after
    early = after.index(LEAVE)
    assert b"\x1b[?1000l" in after[:early] and b"\x1b[?2004l" in after[:early]  # mouse and paste off before it


def _controlling_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pty, as a terminal emulator, tmux or
    sshd starts a shell (the kernel then sends the hangup when the pty's other side closes)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_the_app_ends_when_its_terminal_goes_away():
    """The terminal closed under the app (tmux kill-server, an SSH session dropped: the pty's other side closed,
    the kernel's SIGHUP): the app stayed behind, every thread waiting for Textual's output queue, whose thread had
    died on the dead terminal. Now it ends, in the tree and in a view that repaints (the timeline)."""
    for keys in (b"", b"2"):
        with explorer_in_a_pty(preexec_fn=_controlling_terminal) as (main, app):
            read_until_quiet(main, 2.0)
            if keys:
                os.write(main, keys)
                read_until_quiet(main, 1.0)
            os.close(main)  # the terminal is gone: the kernel hangs it up and sends SIGHUP
            status = app.wait(timeout=30)
        assert status in (0, 128 + signal.SIGHUP), status
