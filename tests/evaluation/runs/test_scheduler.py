"""The job queue (evaluation/runs/scheduler.py) with real threads and tiny work functions."""
from __future__ import annotations

import os
import threading
import time

import pytest

from evaluation.runs.scheduler import QUEUED, RUNNING, STOPPED, Limits, QuotaExceeded, Scheduler
from models import UserFacingError


def gate_job(started: list, name: str, gate: threading.Event):
    """Work that records its start and waits for ``gate`` (or its stop)."""
    def target(should_stop):
        started.append(name)
        while not gate.is_set() and not should_stop():
            time.sleep(0.005)
    return target


def wait_for(condition, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return False


def test_a_refused_start_says_which_limit_and_what_to_do():
    scheduler = Scheduler(Limits(enforce=True, slots=4, running=1, queued=1))
    gate, started = threading.Event(), []
    scheduler.submit("a1", gate_job(started, "a1", gate), owner="A")
    scheduler.submit("a2", gate_job(started, "a2", gate), owner="A")  # waits: A's running quota is 1
    assert scheduler.state("a2") == QUEUED
    with pytest.raises(QuotaExceeded) as refused:
        scheduler.submit("a3", gate_job(started, "a3", gate), owner="A")
    assert isinstance(refused.value, UserFacingError)
    message = str(refused.value)
    assert "1 job(s) running and 1 waiting" in message and "(1 running, 1 waiting)" in message
    assert "stop one" in message
    scheduler.submit("b1", gate_job(started, "b1", gate), owner="B")  # another session is not refused
    assert wait_for(lambda: "b1" in started)
    gate.set()
    for run_id in ("a1", "a2", "b1"):
        assert scheduler.wait(run_id, 10)


def test_outside_shared_mode_and_without_owner_nothing_is_limited():
    gate, started = threading.Event(), []
    single = Scheduler(Limits(enforce=False, slots=1, running=1, queued=0))
    for i in range(4):
        single.submit(f"s{i}", gate_job(started, f"s{i}", gate), owner="A")
    shared = Scheduler(Limits(enforce=True, slots=1, running=1, queued=0))
    for i in range(3):
        shared.submit(f"c{i}", gate_job(started, f"c{i}", gate), owner=None)  # the command line, tests
    assert wait_for(lambda: len(started) == 7)
    gate.set()


def test_a_queued_job_starts_when_a_slot_frees():
    scheduler = Scheduler(Limits(enforce=True, slots=1, running=1, queued=3))
    first, second, started = threading.Event(), threading.Event(), []
    scheduler.submit("a", gate_job(started, "a", first), owner="A")
    scheduler.submit("b", gate_job(started, "b", second), owner="B")
    assert wait_for(lambda: started == ["a"])
    time.sleep(0.1)
    assert started == ["a"] and scheduler.state("b") == QUEUED and scheduler.label("b") == "queued (1st in line)"
    first.set()
    assert wait_for(lambda: started == ["a", "b"])
    assert scheduler.state("b") == RUNNING
    second.set()
    assert scheduler.wait("b", 10)


def test_fair_order_a_session_with_one_waiting_job_goes_before_the_second_of_a_busy_one():
    scheduler = Scheduler(Limits(enforce=True, slots=1, running=1, queued=10))
    blocker, started = threading.Event(), []
    scheduler.submit("x", gate_job(started, "x", blocker), owner="C")
    assert wait_for(lambda: started == ["x"])
    free = threading.Event()
    free.set()  # the queued jobs end at once
    for i in range(5):
        scheduler.submit(f"a{i}", gate_job(started, f"a{i}", free), owner="A")
    scheduler.submit("b0", gate_job(started, "b0", free), owner="B")
    assert [scheduler.place(f"a{i}") for i in range(5)] == [1, 3, 4, 5, 6] and scheduler.place("b0") == 2
    blocker.set()
    assert wait_for(lambda: len(started) == 7)
    assert started.index("b0") < started.index("a1")  # B's only job before A's second
    assert [name for name in started if name.startswith("a")] == [f"a{i}" for i in range(5)]  # FIFO within A


def test_stopping_a_queued_job_removes_it_and_tells_its_run():
    scheduler = Scheduler(Limits(enforce=True, slots=1, running=1, queued=3))
    gate, started, dropped = threading.Event(), [], []
    scheduler.submit("a", gate_job(started, "a", gate), owner="A")
    scheduler.submit("b", gate_job(started, "b", gate), owner="B", on_dropped=lambda: dropped.append("b"))
    scheduler.submit("c", gate_job(started, "c", gate), owner="C")
    assert scheduler.place("c") == 2
    scheduler.stop("b")
    assert scheduler.state("b") == STOPPED and dropped == ["b"] and not scheduler.is_active("b")
    assert scheduler.place("c") == 1 and [j.run_id for j in scheduler.jobs()] == ["a", "c"]
    gate.set()
    assert scheduler.wait("c", 10)
    assert "b" not in started


def test_cpu_accounting_counts_a_busy_loop_and_not_a_sleeping_job():
    scheduler = Scheduler(Limits(enforce=True, slots=2, running=2, queued=3, cpu_seconds=0))
    wall = {}

    def busy(should_stop):
        begin, cpu = time.perf_counter(), time.thread_time()
        while time.thread_time() - cpu < 0.3:  # 0.3 s of this thread's own CPU
            pass
        wall["busy"] = time.perf_counter() - begin

    def sleeper(should_stop):
        time.sleep(0.3)

    scheduler.submit("busy", busy, owner="A")
    scheduler.submit("sleep", sleeper, owner="B")
    assert scheduler.wait("busy", 30) and scheduler.wait("sleep", 30)
    assert scheduler.cpu_last_hour("A") == pytest.approx(0.3, abs=0.05)
    assert scheduler.cpu_last_hour("B") < 0.05


def test_a_session_over_its_cpu_quota_is_refused_with_the_time_to_wait():
    scheduler = Scheduler(Limits(enforce=True, slots=2, running=2, queued=3, cpu_seconds=1))

    def busy(should_stop):
        cpu = time.thread_time()
        while time.thread_time() - cpu < 1.05:
            pass

    scheduler.submit("busy", busy, owner="A")
    assert scheduler.wait("busy", 30)
    with pytest.raises(QuotaExceeded, match=r"used 1 CPU seconds in the last hour.*\(1 s per hour\).*about 60 min"):
        scheduler.submit("next", busy, owner="A")


def test_a_job_thread_runs_at_a_lower_os_priority():
    scheduler = Scheduler(Limits(enforce=False))
    seen = {}

    def probe(should_stop):
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    scheduler.submit("probe", probe)
    assert scheduler.wait("probe", 10)
    assert seen["nice"] >= os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) + 10 or seen["nice"] == 19


def _spin(seconds: float) -> None:
    cpu = time.thread_time()
    while time.thread_time() - cpu < seconds:
        pass


def test_a_jobs_cpu_counts_the_threads_it_starts_and_what_is_charged_to_it():
    """the quota counts a job's own thread, the threads it starts with job_thread, and CPU charged from
    its thread (worker processes); a thread that works for no job charges nobody."""
    from evaluation.runs.scheduler import charge_cpu, job_thread

    scheduler = Scheduler(Limits(enforce=True, slots=2, running=2, queued=3, cpu_seconds=0))

    def job(should_stop):
        helpers = [job_thread(lambda: _spin(0.2)) for _ in range(2)]
        for helper in helpers:
            helper.start()
        for helper in helpers:
            helper.join()
        charge_cpu(1.5)  # e.g. a worker process's CPU, reported back to the job's thread

    scheduler.submit("threads", job, owner="A")
    assert scheduler.wait("threads", 30)
    own = scheduler.cpu_last_hour("A")
    assert own == pytest.approx(0.2 + 0.2 + 1.5, abs=0.1)  # the job's thread itself mostly waited
    charge_cpu(5.0)  # not in a job: nothing to count
    outside = job_thread(lambda: _spin(0.05))
    outside.start()
    outside.join()
    assert scheduler.cpu_last_hour("A") == pytest.approx(own)


def test_a_user_file_parsed_in_a_worker_process_counts_for_the_job(tmp_path):
    from corpora.isolated_parse import parse_in_worker

    path = tmp_path / "rows.csv"
    path.write_text("text,label\n" + "".join(f"a fine film number {i},1\n" for i in range(30_000)))
    scheduler = Scheduler(Limits(enforce=True, slots=2, running=2, queued=3, cpu_seconds=0))
    thread_cpu = {}

    def job(should_stop):
        start = time.thread_time()
        assert len(parse_in_worker(path, None, 10 ** 6, 60, 500)) == 30_000
        thread_cpu["own"] = time.thread_time() - start

    scheduler.submit("parse", job, owner="A")
    assert scheduler.wait("parse", 60)
    worker = scheduler.cpu_last_hour("A") - thread_cpu["own"]
    assert worker > 0.05  # the worker process's parse, not only the job thread's unpickling
