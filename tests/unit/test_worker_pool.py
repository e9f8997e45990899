"""Worker processes: jobs run in other processes and answer as if run here; a dying worker is replaced; a pool
that cannot be had leaves the work in this process."""

from __future__ import annotations

import _thread
import math
import operator
import os
import posix
import time

import pytest

from explorer import worker_pool
from explorer.worker_pool import WorkerDied, WorkerPool


@pytest.fixture
def pool():
    started = WorkerPool(2)
    yield started
    started.stop()


def test_jobs_run_in_other_processes_and_answer_as_here(pool):
    pids = {pool.submit(os.getpid).result(timeout=30) for _ in range(6)}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert pool.submit(math.factorial, 25).result(timeout=30) == math.factorial(25)
    with pytest.raises(ZeroDivisionError):  # the job's own exception, raised where the result is asked for
        pool.submit(operator.truediv, 1, 0).result(timeout=30)


def test_a_worker_that_dies_fails_its_job_and_is_replaced(pool):
    with pytest.raises(WorkerDied):
        pool.submit(posix._exit, 3).result(timeout=30)
    answers = [pool.submit(math.factorial, k) for k in range(8)]
    assert [f.result(timeout=30) for f in answers] == [math.factorial(k) for k in range(8)]
    assert len(pool.workers) == 2


def test_an_answer_that_cannot_travel_is_an_error_not_a_hang(pool):
    with pytest.raises(RuntimeError, match="could not be sent"):
        pool.submit(_thread.allocate_lock).result(timeout=30)
    assert pool.submit(math.factorial, 5).result(timeout=30) == 120


def test_queued_jobs_can_be_cancelled_and_stop_fails_the_rest(pool):
    busy = [pool.submit(time.sleep, 1.0) for _ in range(2)]
    queued = pool.submit(math.factorial, 10)
    assert queued.cancel()
    assert all(f.result(timeout=30) is None for f in busy)
    late = [pool.submit(time.sleep, 5.0) for _ in range(3)]
    time.sleep(0.3)
    pool.stop()
    for future in late:
        assert future.cancelled() or isinstance(future.exception(timeout=30), WorkerDied)


def test_no_workers_when_asked_for_none(monkeypatch):
    worker_pool.shut_down()
    monkeypatch.setenv("IR_EXPLORER_WORKERS", "0")
    try:
        assert worker_pool.shared_pool() is None
    finally:
        worker_pool.shut_down()  # the next user starts afresh, with the machine's count


def test_idle_workers_stop_and_the_next_job_starts_them_again(monkeypatch):
    monkeypatch.setattr(worker_pool, "IDLE_SECONDS", 0.2)
    pool = WorkerPool(2)
    try:
        first = pool.submit(os.getpid).result(timeout=30)
        for _ in range(100):
            if not pool.workers:
                break
            time.sleep(0.05)
        assert pool.workers == []  # their memory is the machine's again
        assert pool.submit(os.getpid).result(timeout=30) not in (first, os.getpid())  # a new worker
    finally:
        pool.stop()


def test_workers_run_this_package_whatever_the_working_directory_holds(tmp_path, monkeypatch):
    impostor = tmp_path / "explorer"
    impostor.mkdir()
    (impostor / "__init__.py").write_text("raise SystemExit('the wrong explorer')\n")
    monkeypatch.chdir(tmp_path)
    pool = WorkerPool(1)
    try:
        assert pool.submit(math.factorial, 6).result(timeout=30) == 720
    finally:
        pool.stop()


def test_an_urgent_job_goes_first_at_this_priority_and_the_rest_run_lower(monkeypatch):
    monkeypatch.setenv(worker_pool.NICE_VARIABLE, "10")  # asked for: by default the workers keep this priority
    pool = WorkerPool(1)
    try:
        here = os.nice(0)
        # a fresh worker: the urgent job runs at this process's priority, the next one lowers the worker for good
        assert pool.submit(os.nice, 0, urgent=True).result(timeout=30) == here
        lowered = min(here + 10, 19)
        assert pool.submit(os.nice, 0).result(timeout=30) == lowered
        assert pool.submit(os.nice, 0, urgent=True).result(timeout=30) == lowered  # it cannot be given back
        finished: list[str] = []
        busy = pool.submit(time.sleep, 0.5)
        later = pool.submit(operator.add, "later", "")
        first = pool.submit(operator.add, "urgent", "", urgent=True)
        for name, future in (("later", later), ("urgent", first)):
            future.add_done_callback(lambda _, name=name: finished.append(name))
        assert busy.result(timeout=30) is None and later.result(timeout=30) == "later"
        assert finished == ["urgent", "later"]  # queued behind the busy worker, the urgent job went first
    finally:
        pool.stop()


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the resident set from /proc (Linux)")
def test_a_worker_gives_back_the_memory_its_job_freed():
    """A core's decode leaves freed blocks in the worker's heap; an idle worker must not hold them while its parent
    analyses the answers (the 480 MB file's two idle workers held 220 MB at the parent's peak memory)."""
    from tests import worker_jobs

    single = WorkerPool(1)
    try:
        before = single.submit(worker_jobs.resident_mib).result(timeout=60)
        peak = single.submit(worker_jobs.leave_freed_heap).result(timeout=60)
        after = single.submit(worker_jobs.resident_mib).result(timeout=60)
    finally:
        single.stop()
    assert peak - before > 80, (before, peak)  # the job did hold about 100 MB
    assert after - before < 30, (before, peak, after)
