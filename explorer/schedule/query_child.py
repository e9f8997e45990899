"""A query run in a forked child process (issue #72), for a process that must outlive its queries (the TUI's
Query panel, a `serve` tab).

The CLI caps its own address space once its file is loaded (`query.bound_address_space`); a long-lived process
cannot, so each panel query runs in a child forked from it: the child shares the loaded document's pages, caps its
own address space (a 2 GB string of repeat() is refused in words there, never grows the parent) and sends back
the first rows, each cell cut to what a panel shows. `stop()` asks the child to stop (it interrupts DuckDB and
removes its scratch) and kills it a second later if it has not; the child dies with its parent (Linux's
parent-death signal), and a scratch folder a killed child left is swept by the next session, as any other."""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from explorer.document import Document
from explorer.isolated import die_with_parent
from explorer.schedule.query import remove_abandoned_scratch

STOP_GRACE_SECONDS = 1.0  # after asking the child to stop, how long before it is killed
CELL_CHARS = 2000  # a cell's text beyond this is cut (the panel is for reading; `ir-explorer query` gives it all)
ANSWER_BYTES = 32 * 2**20  # the rows sent back, at most (then the rows stop as at the row cap)
_HEADER = struct.Struct("<Q")
_INT_RANGE = (-(2**63), 2**64 - 1)  # what msgpack carries as an integer; a HUGEINT beyond is sent as text


@dataclass
class Answer:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    capped: bool  # the rows stopped at the row cap or at ANSWER_BYTES


class ForkedQuery:
    """One query over `documents` in a child process; `answer()` waits for it (in a worker thread), `stop()` from
    any thread ends it."""

    def __init__(self, documents: list[tuple[str, Document]], sql: str, row_cap: int) -> None:
        self.documents, self.sql, self.row_cap = documents, sql, row_cap
        self._pid: int | None = None
        self._stopped = False
        self._lock = threading.Lock()
        self._killer: threading.Timer | None = None

    def stop(self) -> None:
        """Ask the child to stop (SIGTERM: it interrupts DuckDB and removes its scratch); kill it if it is still
        there after STOP_GRACE_SECONDS. Safe before the child starts and after it ends."""
        with self._lock:
            self._stopped = True
            if self._pid is None:
                return
            _signal(self._pid, signal.SIGTERM)
            self._killer = threading.Timer(STOP_GRACE_SECONDS, _signal, (self._pid, signal.SIGKILL))
            self._killer.start()

    def answer(self) -> Answer:
        """The rows; `QueryError` when DuckDB refused the query or the child died, `Interrupted` after `stop()`."""
        from explorer.schedule.query import Interrupted, QueryError

        read_end, write_end = os.pipe()
        with self._lock:
            if self._stopped:
                os.close(read_end)
                os.close(write_end)
                raise Interrupted()
            pid = os.fork()
            if pid == 0:  # the child: never returns
                os.close(read_end)
                _child(self.documents, self.sql, self.row_cap, write_end)
            self._pid = pid
        os.close(write_end)
        try:
            frames = _read_frames(read_end)
        finally:
            os.close(read_end)
            status = _reap(pid)
            with self._lock:
                if self._killer is not None:
                    self._killer.cancel()
                self._pid = None
            remove_abandoned_scratch()  # a killed child's scratch: its pid is reaped, so it is abandoned
        if self._stopped:
            raise Interrupted()
        return _decoded(frames, status, QueryError)


def _signal(pid: int, number: int) -> None:
    with contextlib.suppress(OSError):  # gone already
        os.kill(pid, number)


def _reap(pid: int) -> int:
    """The child's wait status, once it has ended."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _read_frames(fd: int) -> list[Any]:
    frames = []
    while (header := _read_exactly(fd, _HEADER.size)) is not None:
        (size,) = _HEADER.unpack(header)
        body = _read_exactly(fd, size)
        if body is None:
            break
        frames.append(msgspec.msgpack.decode(body))
    return frames


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts, wanted = [], size
    while wanted:
        part = os.read(fd, min(wanted, 2**20))
        if not part:
            return None
        parts.append(part)
        wanted -= len(part)
    return b"".join(parts)


def _decoded(frames: list[Any], status: int, error: Callable[[str], Exception]) -> Answer:
    columns: list[str] = []
    rows: list[tuple[Any, ...]] = []
    for kind, payload in frames:
        if kind == "columns":
            columns = payload
        elif kind == "rows":
            rows.extend(tuple(row) for row in payload)
        elif kind == "end":
            return Answer(columns, rows, bool(payload))
        elif kind == "error":
            raise error(payload)
    if os.WIFSIGNALED(status):
        raise error(f"the query's process was ended by signal {os.WTERMSIG(status)} before it answered")
    raise error(f"the query's process ended (status {os.waitstatus_to_exitcode(status)}) before it answered")


def _child(documents: list[tuple[str, Document]], sql: str, row_cap: int, fd: int) -> None:
    """In the forked child: stop on SIGTERM, die with the parent, cap the address space, answer, exit."""
    code = 1
    try:
        _detach_from_parent(fd)
        code = _answer_to(fd, documents, sql, row_cap)
    except KeyboardInterrupt:  # stop(): the session interrupted DuckDB and removed its scratch on the way out
        code = 130
    except BaseException as failure:  # noqa: BLE001 - said to the parent, never a traceback on the terminal
        with contextlib.suppress(BaseException):
            _send(fd, ("error", f"internal error: {type(failure).__name__}: {failure}"))
    finally:
        os._exit(code)


def _detach_from_parent(fd: int) -> None:
    """Signals of its own, the terminal and the parent's other files closed, and death with the parent."""
    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, stop)
    signal.set_wakeup_fd(-1)  # the parent's event loop's, inherited
    null = os.open(os.devnull, os.O_RDWR)
    for standard in (0, 1, 2):
        os.dup2(null, standard)
    os.closerange(3, fd)
    os.closerange(fd + 1, _max_fd())
    die_with_parent()
    if os.getppid() == 1:  # the parent died before the death signal was set
        raise KeyboardInterrupt


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (OSError, ValueError):
        return 4096


def _answer_to(fd: int, documents: list[tuple[str, Document]], sql: str, row_cap: int) -> int:
    from explorer.schedule.query import QueryError, bound_address_space, run_query

    bound_address_space()
    try:
        with run_query(documents, sql, row_cap) as result:
            _send(fd, ("columns", result.columns))
            capped = _send_rows(fd, result.rows)
            _send(fd, ("end", capped or result.capped()))
    except QueryError as refused:
        _send(fd, ("error", str(refused)))
    return 0


def _send_rows(fd: int, rows: Iterator[tuple[Any, ...]]) -> bool:
    """The rows in chunks, each cell plain; True when they stopped at ANSWER_BYTES."""
    chunk: list[list[Any]] = []
    sent = 0
    for row in rows:
        plain = [_plain(value) for value in row]
        sent += sum(len(value) if isinstance(value, str) else 8 for value in plain)
        if sent > ANSWER_BYTES:
            _send(fd, ("rows", chunk))
            return True
        chunk.append(plain)
        if len(chunk) == 256:
            _send(fd, ("rows", chunk))
            chunk = []
    _send(fd, ("rows", chunk))
    return False


def _plain(value: Any) -> Any:
    """A cell as msgpack carries it: None, a bool, a number in range, else text of at most CELL_CHARS."""
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int) and _INT_RANGE[0] <= value <= _INT_RANGE[1]:
        return value
    text = value if isinstance(value, str) else repr(value) if isinstance(value, bytes) else str(value)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _send(fd: int, frame: tuple[str, Any]) -> None:
    body = msgspec.msgpack.encode(frame)
    view = memoryview(_HEADER.pack(len(body)) + body)
    while view:
        view = view[os.write(fd, view) :]
