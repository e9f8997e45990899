"""Issue #73: `q` hands the terminal back before Textual's shutdown (which joins its input thread and unmounts
every widget first): in a real pseudo-terminal the normal screen is restored twice, ours first, Textual's after,
and the process ends cleanly."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time

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


def test_q_restores_the_terminal_before_the_shutdown():
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    command = [str(ROOT / ".venv" / "bin" / "ir-explorer"), str(SAMPLE_DATA / "clean_2x2_stschedule.json")]
    app = subprocess.Popen(command, stdin=child, stdout=child, stderr=child, start_new_session=True,
                           env={**os.environ, "TERM": "xterm-256color"})  # fmt: skip
    os.close(child)
    try:
        first = read_until_quiet(main, 2.0)
        assert b"\x1b[?1049h" in first and LEAVE not in first
        os.write(main, b"q")
        after = read_until_quiet(main, 5.0)
        assert app.wait(timeout=60) == 0
    finally:
        if app.poll() is None:
            app.kill()
        os.close(main)
    assert after.count(LEAVE) == 2, after
    early = after.index(LEAVE)
    assert b"\x1b[?1000l" in after[:early] and b"\x1b[?2004l" in after[:early]  # mouse and paste off before it
