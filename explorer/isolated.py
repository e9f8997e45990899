"""Native code that hostile input can crash, run in a child process where a crash becomes a message.

A library's C++ (onnx's shape inference) can segfault on a 54-byte file: in our own process that kills `check`
with exit 139 and leaves the TUI's terminal in the alternate screen with mouse reporting on. In a child, the same
crash is a signal number we can report, the model still opens, and the terminal is untouched. The child dies
with us (Linux: PR_SET_PDEATHSIG), runs no shell, and is killed when it takes longer than it may.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
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


def run_forked(function: Callable[[bytes], bytes], given: bytes, timeout: float) -> ChildResult:
    """`function(given)` in a child forked from this process, so what this process imported (onnx: a second of
    CPU in a fresh interpreter) is not imported again; its result, or why it gave none, as `run_python` says it.
    The child writes nothing on the terminal, takes the default signal handlers, and dies with us. Where there is
    no fork, the function runs here."""
    if not hasattr(os, "fork"):
        return ChildResult(function(given), "")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; never returns
        os.close(read_end)
        _forked_child(function, given, write_end)
    os.close(write_end)
    try:
        answer, timed_out = _read_all(read_end, timeout)
    finally:
        os.close(read_end)
        if answer is None or timed_out:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
    if timed_out:
        return ChildResult(b"", f"took over {timeout:.0f} s and was stopped")
    if os.WIFSIGNALED(status):
        return ChildResult(b"", f"crashed ({signal_name(-os.WTERMSIG(status))})")
    if not answer or answer[:1] != b"0":
        said = answer[1:].decode("utf-8", "replace") if answer else ""
        return ChildResult(b"", said or f"exited with status {os.waitstatus_to_exitcode(status)}")
    return ChildResult(answer[1:], "")


def quiet_forked_child() -> None:  # pragma: no cover - runs in a forked child
    """In a child forked from this process: the default signal handlers (not the parent's, nor its event loop's
    wakeup), nothing written on the terminal, no crash dump (a crash is the parent's to report: a dump would
    reach a copy of its stderr)."""
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    null = os.open(os.devnull, os.O_RDWR)
    for standard in (0, 1, 2):
        os.dup2(null, standard)
    faulthandler.disable()


def _read_all(fd: int, timeout: float) -> tuple[bytes | None, bool]:
    """What the child wrote until it closed its end, and whether `timeout` passed first."""
    parts: list[bytes] = []
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > 0:
        if not select.select([fd], [], [], left)[0]:
            continue
        part = os.read(fd, 1 << 20)
        if not part:
            return b"".join(parts), False
        parts.append(part)
    return None, True


def _forked_child(function: Callable[[bytes], bytes], given: bytes, fd: int) -> None:  # pragma: no cover
    """In the child: `b"0"` and the result, or `b"1"` and the error's last line, on `fd`; then exit."""
    code = 1
    try:
        quiet_forked_child()
        die_with_parent()
        result = b"0" + function(given)
        code = 0
    except BaseException as error:  # noqa: BLE001 - said to the parent in words
        result = b"1" + f"{type(error).__name__}: {error}".splitlines()[0][:300].encode("utf-8", "replace")
    try:
        view = memoryview(result)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os._exit(code)
