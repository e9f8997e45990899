"""Worker processes for the CPU-bound part of loading a big file.

Why processes: decoding a 519 MB schedule is seconds of work that holds the interpreter (msgspec and numpy do not
release it), so threads give no speed-up, and a load thread in the TUI's own process stalls the screen while a
decode runs. A schedule's cores are independent: each worker reads its cores from the file and sends back their
columns, so the decode scales with the machine's CPUs and the TUI's process stays free to draw.

Why not `multiprocessing`: its workers re-run the user's main script (a script without a `__main__` guard
breaks them), forking the TUI's threaded process can copy a lock held by another thread, and a worker's stray
output would land on the TUI's screen. These workers are fresh interpreters (`python -m explorer.worker_pool`)
whose output goes nowhere; they import the loaders once when started and then run one job at a time, sent and
answered as pickles over their standard input and output.

Every user of the pool has an in-process way to do the same work: `shared_pool` returns None when processes
cannot be used (one CPU, `IR_EXPLORER_WORKERS=0`), and a worker that dies is replaced.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import ctypes
import importlib
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, BinaryIO

MAX_WORKERS = 8  # a load's cores are few (16 in the biggest files seen): more workers only cost memory
# Imported by each worker as it starts, before any job
PRELOAD = ("explorer.formats.scheduler_ir.reader", "explorer.formats.scheduler_ir.roles")
_HEADER = struct.Struct("<Q")
_HOME = str(Path(__file__).resolve().parent.parent)  # the folder holding the `explorer` package
# How much lower than the command the workers run, from IR_EXPLORER_NICE (0-19, default 0: the command's own
# priority). Workers at nice 10 were starved on a shared box: `info` of a 480 MB file took 58.8 s against 22.7 s
# without workers, in the same minute. Taken before the first job that is not urgent (and kept).
NICE_VARIABLE = "IR_EXPLORER_NICE"
LOWERED, AS_STARTED = "--lowered", "--as-started"  # a worker's first argument: the priority it starts at
IDLE_SECONDS = 20.0  # workers idle this long stop (about 80 MB each); the next job starts them again


class WorkerDied(RuntimeError):
    """A worker process ended without answering (killed, or out of memory)."""


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def worker_count() -> int:
    """How many worker processes to use: `IR_EXPLORER_WORKERS` if set, else the CPUs this process may run on
    (at most MAX_WORKERS)."""
    setting = os.environ.get("IR_EXPLORER_WORKERS", "").strip()
    if setting.isdigit():
        return min(int(setting), 64)
    return min(usable_cpus(), MAX_WORKERS)


class _Worker:
    def __init__(self, lowered: bool = True, environment: dict[str, str] | None = None) -> None:
        # -P: the working directory is not put first on the path, so a folder there named like one of ours
        # cannot stand in for it; the folder this package was imported from is, so it is the same code.
        env = dict(os.environ, **(environment or {}))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (_HOME, os.environ.get("PYTHONPATH"))))
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "explorer.worker_pool", LOWERED if lowered else AS_STARTED, *PRELOAD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env=env,
        )
        self.busy = False

    def fileno(self) -> int:
        return self.process.stdout.fileno()  # type: ignore[union-attr]

    def send(self, function: Callable[..., Any], args: tuple, urgent: bool = False) -> None:
        try:
            job = (function.__module__, function.__qualname__, args, urgent)
            _write(self.process.stdin, job)  # type: ignore[arg-type]
        except OSError as error:
            raise WorkerDied(f"a worker process is gone ({error})") from None
        self.busy = True

    def receive(self) -> Any:
        try:
            ok, value = _read(self.process.stdout)  # type: ignore[arg-type]
        except (EOFError, OSError, pickle.UnpicklingError) as error:
            raise WorkerDied(f"a worker process ended without answering ({error})") from None
        self.busy = False
        if not ok:
            raise value
        return value

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class WorkerPool:
    """A fixed number of worker processes, and a thread that hands them jobs: `submit` returns a standard
    Future, so callers wait with `concurrent.futures` as they would on a thread pool. Queued jobs can be
    cancelled; a running one finishes and its answer is dropped. A worker that dies fails its job with
    WorkerDied and is replaced. Workers idle for IDLE_SECONDS stop, and start again with the next job.
    `environment`: variables set in the workers besides this process's own."""

    def __init__(self, count: int, environment: dict[str, str] | None = None) -> None:
        self.count = count
        self.environment = environment
        self.workers = _start_workers(count, environment)
        self._queue: collections.deque[tuple[Future, Callable[..., Any], tuple, bool]] = collections.deque()
        self._lock = threading.Lock()
        self._wake_read, self._wake_write = os.pipe()
        self._stopping = False
        self._stopped = False
        self.broken = False  # the dispatcher failed: nothing more runs here
        self._thread = threading.Thread(target=self._dispatch, name="worker-pool", daemon=True)
        self._thread.start()

    def submit(self, function: Callable[..., Any], *args: Any, urgent: bool = False) -> Future:
        """Run `function(*args)` in a worker; `function` must be a module-level function. An `urgent` job (what
        the screen waits for) goes first and runs at this process's priority in a worker that has not yet
        lowered its own; every other job runs IR_EXPLORER_NICE lower (by default at this process's priority)."""
        future: Future = Future()
        with self._lock:
            if self._stopping:
                raise RuntimeError("the worker pool is stopped")
            job = (future, function, args, urgent)
            (self._queue.appendleft if urgent else self._queue.append)(job)
        os.write(self._wake_write, b"x")
        return future

    def _dispatch(self) -> None:
        running: dict[_Worker, Future] = {}
        try:
            self._serve_jobs(running)
            failure = WorkerDied("the worker pool was stopped")
        except BaseException as error:  # whatever went wrong here, no caller is left waiting
            failure = error if isinstance(error, WorkerDied) else WorkerDied(f"the worker pool failed: {error!r}")
            self.broken = True
        with self._lock:
            self._stopping = True
            queued, self._queue = list(self._queue), collections.deque()
        for future in [*running.values(), *(queued_future for queued_future, *_ in queued)]:
            if not future.done():
                future.set_exception(failure)

    def _serve_jobs(self, running: dict[_Worker, Future]) -> None:
        """Hand queued jobs to idle workers and pass their answers on, until `stop`."""
        while True:
            with self._lock:
                if self._stopping:
                    return
                if self._queue and not self.workers:  # stopped while idle (or all lost): start them again
                    self.workers = _start_workers(self.count, self.environment)
                for worker in list(self.workers):
                    while worker not in running and self._queue:
                        future, function, args, urgent = self._queue.popleft()
                        if not future.set_running_or_notify_cancel():
                            continue  # cancelled while queued
                        try:
                            worker.send(function, args, urgent)
                            running[worker] = future
                        except WorkerDied as error:
                            future.set_exception(error)
                            self._replace(worker)
                            break
            idle = not running and not self._queue and self.workers
            watched: list[Any] = [self._wake_read, *running]
            ready, _, _ = select.select(watched, [], [], IDLE_SECONDS if idle else None)
            if not ready:  # idle that long: the workers' memory goes back to the machine until the next job
                with self._lock:
                    if not self._queue:
                        for worker in self.workers:
                            worker.stop()
                        self.workers = []
                continue
            for item in ready:
                if item == self._wake_read:
                    os.read(self._wake_read, 4096)
                    continue
                future = running.pop(item)
                try:
                    future.set_result(item.receive())
                except WorkerDied as error:
                    future.set_exception(error)
                    with self._lock:
                        self._replace(item)
                except Exception as error:  # the job's own exception, raised where its result is asked for
                    future.set_exception(error)

    def _replace(self, worker: _Worker) -> None:
        """A dead worker's place goes to a new one (or is given up when none can be started)."""
        worker.stop()
        index = self.workers.index(worker)
        try:
            self.workers[index] = _Worker(environment=self.environment)
        except (OSError, ValueError):
            del self.workers[index]

    def stop(self) -> None:
        """Cancel what is queued, fail what is running, and end the workers (a second call does nothing)."""
        with self._lock:
            if self._stopped:
                return
            self._stopping = self._stopped = True
            queued, self._queue = list(self._queue), collections.deque()
        for future, *_ in queued:
            future.cancel()
        os.write(self._wake_write, b"x")
        self._thread.join(timeout=5)
        for worker in self.workers:
            worker.stop()
        os.close(self._wake_read)
        os.close(self._wake_write)


_pool_lock = threading.Lock()
_pool: WorkerPool | None = None
_unusable = False


def shared_pool() -> WorkerPool | None:
    """The worker processes, started on first use, or None when work should stay in this process."""
    global _pool, _unusable
    with _pool_lock:
        if _pool is not None and _pool.broken:
            _pool, _unusable = None, True
        if _pool is None and not _unusable:
            count = worker_count()
            try:
                _pool = WorkerPool(count) if count >= 2 else None
            except (OSError, ValueError):  # no processes to be had (limits, sandbox): decode here
                _pool = None
            _unusable = _pool is None
            if _pool is not None:
                atexit.register(shut_down)
        return _pool


def running_pool() -> WorkerPool | None:
    """The workers if they are already running (a big file is being worked on), without starting them."""
    with _pool_lock:
        return _pool if _pool is not None and not _pool.broken else None


def shut_down() -> None:
    """Stop the workers (the program is ending, or a test wants a clean slate)."""
    global _pool, _unusable
    with _pool_lock:
        pool, _pool, _unusable = _pool, None, False
    if pool is not None:
        pool.stop()


def _write(stream: BinaryIO, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream: BinaryIO) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("no answer")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("a cut answer")
    return pickle.loads(data)


def _start_workers(count: int, environment: dict[str, str] | None = None) -> list[_Worker]:
    """The first worker keeps the starting process's priority until its first job that is not urgent, so an
    urgent first job (the TUI's first core) is not slowed by the imports or the jobs of the others, which start
    lowered."""
    return [_Worker(lowered=k > 0, environment=environment) for k in range(count)]


def worker_niceness() -> int:
    """How much the workers lower their priority: IR_EXPLORER_NICE (0-19), 0 when unset or not a number."""
    setting = os.environ.get(NICE_VARIABLE, "").strip()
    return min(int(setting), 19) if setting.isdigit() else 0


def _lower_priority() -> None:
    niceness = worker_niceness()
    if niceness:
        with contextlib.suppress(OSError):  # asked for: the interactive process then keeps the CPUs first
            os.nice(niceness)


def _serve(preload: Sequence[str], lowered: bool) -> None:
    """A worker's life: import what jobs need, then answer each job (module, function, args, urgent) with
    (True, result) or (False, exception) until the pool closes standard input. A worker that starts at its
    pool's priority lowers it before its first job that is not urgent."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not break the answers (standard error goes nowhere)
    if lowered:
        _lower_priority()
    for name in preload:
        importlib.import_module(name)
    while True:
        try:
            module, name, args, urgent = _read(requests)
        except EOFError:
            return
        if not urgent and not lowered:
            lowered = True
            _lower_priority()
        try:
            function: Any = importlib.import_module(module)
            for part in name.split("."):
                function = getattr(function, part)
            answer = (True, function(*args))
        except BaseException as error:  # sent back and raised in the caller, as if the job had run there
            answer = (False, error)
        try:
            _write(answers, answer)
        except (pickle.PicklingError, TypeError, AttributeError):  # an answer that cannot travel: say why
            _write(answers, (False, RuntimeError(f"a worker's answer could not be sent: {answer[1]!r:.300}")))
        del answer, args
        _give_back_memory()


def _give_back_memory() -> None:
    """Return the heap a job freed to the system: a core's decode leaves about 100 MB of freed small blocks in
    glibc's heap, which an idle worker would otherwise hold while its parent analyses what it sent (on the 480 MB
    file the two idle workers held 220 MB at the parent's peak). glibc only; elsewhere nothing."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None


if __name__ == "__main__":
    _serve(sys.argv[2:], lowered=sys.argv[1] == LOWERED)
