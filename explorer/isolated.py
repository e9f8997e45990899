"""Native code that hostile input can crash, run in a child process where a crash becomes a message.

A library's C++ (onnx's shape inference) can segfault on a 54-byte file: in our own process that kills `check`
with exit 139 and leaves the TUI's terminal in the alternate screen with mouse reporting on. In a child, the same
crash is a signal number we can report, the model still opens, and the terminal is untouched. The child dies
with us (Linux: PR_SET_PDEATHSIG), runs no shell, and is killed when it takes longer than it may.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import subprocess
import sys
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ChildResult:
    output: bytes  # what the child wrote on stdout (empty when it failed)
    failure: str  # "" when it exited 0; else what happened, in words ("crashed (SIGSEGV)", "took over 600 s")


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to kill this child when its parent goes, however it goes (a `preexec_fn`)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def signal_name(returncode: int) -> str:
    """The signal a negative exit status stands for (`SIGSEGV`), or `signal N` for one Python does not name."""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def run_python(code: str, args: list[str], timeout: float, stdin: bytes = b"") -> ChildResult:
    """Run `code` in a fresh interpreter (`python -c code args...`, site-packages as ours, `stdin` on its standard
    input) and return its stdout, or why it gave none: a signal (a crash in native code), an exit status with its
    last error line, a timeout."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", code, *args], capture_output=True, timeout=timeout,
            preexec_fn=die_with_parent, input=stdin,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return ChildResult(b"", f"took over {timeout:.0f} s and was stopped")
    except OSError as error:
        return ChildResult(b"", f"could not start a child process: {error.strerror or error}")
    if done.returncode < 0:
        return ChildResult(b"", f"crashed ({signal_name(done.returncode)})")
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return ChildResult(b"", lines[-1][:300] if lines else f"exited with status {done.returncode}")
    return ChildResult(done.stdout, "")
