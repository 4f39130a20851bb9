"""The job queue of the app's background runs: owners, slots, per-session quotas, fair order, CPU accounting.

A job belongs to an owner (a browser session; None for work started outside a session, which is never limited
and starts at once). In shared mode (``settings.shared_mode()``) at most ``EXWB_JOB_SLOTS`` owned jobs
run at once, a session may have ``EXWB_QUOTA_RUNNING`` running and ``EXWB_QUOTA_QUEUED`` queued jobs, and a
session that used ``EXWB_QUOTA_CPU_SECONDS`` CPU seconds in the last hour cannot start more until that hour has
passed; a refused start raises ``QuotaExceeded`` (a ``UserFacingError``) saying which limit and what to do.
Outside shared mode every job starts at once, as before.

Fair order: when a slot frees, the session with the fewest running jobs goes first, then the one that used the
least CPU in the last hour, then the one that started the fewest jobs in that hour (round robin), then the
earliest waiting; within a session, first in first out.

CPU accounting: a job's CPU seconds are those of its own thread (the thread's CPU clock, user + system time,
``time.pthread_getcpuclockid`` / ``time.thread_time``), read live while it runs, plus what ``charge_cpu`` adds
from the job's thread: threads started with ``job_thread`` (their whole CPU time, when they end), worker processes
of the processes executor (each worker's process CPU time, all its threads, reported with each window), the
worker process that parses a user file (``corpora.isolated_parse``, its rusage). Not counted: torch's intra-op
pool when ``EXWB_THREADS`` > 1 (process-wide threads shared by every job and page, so no job owns them); shared
mode runs with one torch thread (``make serve``), where torch computes on the calling thread, so nothing is missed.

Priority: each job thread lowers its own OS priority (nice ``JOB_NICENESS``; on Linux nice is per thread and
inherited by the threads it creates), so pages stay responsive while jobs compute.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import settings
from corpora import isolated_parse
from models import UserFacingError

JOB_NICENESS = 10  # added to a job thread's nice value: the kernel gives page threads (nice 0) ~10x its share
HOUR = 3600.0
KEEP_FINISHED = 256  # finished jobs remembered for the CPU ledger and the admin view

log = logging.getLogger(__name__)

QUEUED, RUNNING, FINISHED, STOPPED = "queued", "running", "finished", "stopped"


class QuotaExceeded(UserFacingError):
    """A session asked for more than its share of the shared server."""


@dataclass(frozen=True)
class Limits:
    enforce: bool  # False: every job starts at once (single-user mode)
    slots: int = 1
    running: int = 1
    queued: int = 3
    cpu_seconds: int = 0  # per session in the last hour; 0 = no limit

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(settings.shared_mode(), settings.job_slots(), settings.quota_running(), settings.quota_queued(),
                   settings.quota_cpu_seconds())


@dataclass(eq=False)
class Job:
    run_id: str
    owner: str | None
    title: str
    target: Callable[[Callable[[], bool]], object] | None  # target(should_stop); None once it ended
    on_dropped: Callable[[], None] | None = None  # a queued job that was stopped before it started
    submitted: float = field(default_factory=time.time)
    started: float | None = None
    ended: float | None = None
    state: str = QUEUED
    stop_event: threading.Event = field(default_factory=threading.Event)
    done_event: threading.Event = field(default_factory=threading.Event)
    _clock: int | None = None
    _cpu_start: float = 0.0
    _cpu_final: float | None = None

    _cpu_charged: float = 0.0  # CPU of the job's other threads and worker processes (charge_cpu)

    def cpu_seconds(self) -> float:
        """CPU seconds of the job so far: its thread's, and what was charged to it (0 before it starts)."""
        return self._own_cpu() + self._cpu_charged

    def _own_cpu(self) -> float:
        if self._cpu_final is not None:
            return self._cpu_final
        if self._clock is None:
            return 0.0
        try:
            return max(0.0, time.clock_gettime(self._clock) - self._cpu_start)
        except OSError:  # the thread just ended
            return self._cpu_final or 0.0


_current = threading.local()  # .job: the job this thread works for (its own thread, and threads from job_thread)
_charge_lock = threading.Lock()


def charge_cpu(seconds: float) -> None:
    """Add CPU ``seconds`` spent for the job the calling thread works for (no job: nothing to count)."""
    job = getattr(_current, "job", None)
    if job is not None and seconds > 0:
        with _charge_lock:
            job._cpu_charged += seconds


def job_thread(target: Callable[[], object], name: str | None = None) -> threading.Thread:
    """A thread (not started) whose CPU time is charged to the calling thread's job when it ends."""
    job = getattr(_current, "job", None)

    def run() -> None:
        _current.job = job
        try:
            target()
        finally:
            _current.job = None
            if job is not None:
                with _charge_lock:
                    job._cpu_charged += time.thread_time()

    return threading.Thread(target=run, name=name, daemon=True)


isolated_parse.CPU_LISTENERS.append(charge_cpu)  # a user file parsed in a worker process counts for its job


@dataclass(frozen=True)
class JobView:
    """What the admin view shows of a job."""
    run_id: str
    owner: str | None
    title: str
    state: str
    place: int | None  # 1 = the next to start (queued jobs only)
    submitted: float
    started: float | None
    cpu_seconds: float


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


class Scheduler:
    def __init__(self, limits: Limits | Callable[[], Limits] = Limits.from_settings, niceness: int = JOB_NICENESS):
        self._limits = limits if callable(limits) else (lambda: limits)
        self._niceness = niceness
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}  # the latest job of each run id
        self._queue: list[Job] = []  # submission order
        self._finished: deque[Job] = deque(maxlen=KEEP_FINISHED)

    # ----- submitting ----------------------------------------------------------------------------------------
    def submit(self, run_id: str, target: Callable[[Callable[[], bool]], object], owner: str | None = None,
               title: str = "", on_dropped: Callable[[], None] | None = None,
               on_queued: Callable[[], None] | None = None) -> tuple[Job, bool]:
        """Queue (or start) ``target(should_stop)``; returns (job, whether it is new). A run id already queued or
        running returns its job. Raises ``QuotaExceeded`` when the owner's session is over a limit. ``on_queued``
        is called when the job has to wait, before any other job's end can start it (e.g. to mark its run queued)."""
        with self._lock:
            existing = self._jobs.get(run_id)
            if existing is not None and existing.state in (QUEUED, RUNNING):
                return existing, False
            limits = self._limits()
            if limits.enforce and owner is not None:
                self._check_quota(owner, limits)
            job = Job(run_id, owner, title or run_id, target, on_dropped)
            self._jobs[run_id] = job
            self._queue.append(job)
            self._dispatch(limits)
            if job.state == QUEUED and on_queued is not None:
                on_queued()  # under the lock: the job cannot start (and mark its run running) before this
            return job, True

    def _check_quota(self, owner: str, limits: Limits) -> None:
        running = sum(1 for j in self._active() if j.owner == owner and j.state == RUNNING)
        queued = sum(1 for j in self._queue if j.owner == owner)
        busy = sum(1 for j in self._active() if j.state == RUNNING and j.owner is not None)
        would_wait = running >= limits.running or busy >= limits.slots or any(j.owner is not None for j in self._queue)
        if would_wait and queued >= limits.queued:
            raise QuotaExceeded(
                f"This session already has {running} job(s) running and {queued} waiting, the most this shared "
                f"server allows per session ({limits.running} running, {limits.queued} waiting). Wait for one to "
                f"finish, or stop one (its Stop button, or the Jobs page), then start again.")
        used = self._cpu_last_hour(owner, time.time())
        if limits.cpu_seconds and used >= limits.cpu_seconds:
            frees = self._cpu_frees_in(owner, limits.cpu_seconds)
            raise QuotaExceeded(
                f"This session used {used:.0f} CPU seconds in the last hour, the most this shared server allows per "
                f"session ({limits.cpu_seconds} s per hour). Try again in about {max(1, round(frees / 60))} min, "
                f"or ask the teacher / admin to raise EXWB_QUOTA_CPU_SECONDS.")

    # ----- fair order ----------------------------------------------------------------------------------------
    def _active(self) -> list[Job]:
        return [j for j in self._jobs.values() if j.state in (QUEUED, RUNNING)]

    def _owned_jobs(self, owner: str) -> list[Job]:
        return [j for j in list(self._finished) + self._active() if j.owner == owner]

    def _cpu_last_hour(self, owner: str, now: float) -> float:
        """CPU seconds of the owner's jobs running now or ended within the hour (a job counts whole)."""
        return sum(j.cpu_seconds() for j in self._owned_jobs(owner)
                   if j.state == RUNNING or (j.ended is not None and now - j.ended < HOUR))

    def _cpu_frees_in(self, owner: str, limit: float) -> float:
        """Seconds until the owner's CPU in the last hour drops under ``limit`` (finished jobs leaving the hour)."""
        now = time.time()
        ended = sorted((j.ended, j.cpu_seconds()) for j in self._finished
                       if j.owner == owner and j.ended and now - j.ended < HOUR)
        used = self._cpu_last_hour(owner, now)
        for end, cpu in ended:
            used -= cpu
            if used < limit:
                return end + HOUR - now
        return HOUR

    def _order(self, limits: Limits) -> list[Job]:
        """The queued jobs in the order they would start if nothing else changed (see the module's docstring)."""
        now = time.time()
        waiting: dict[str | None, list[Job]] = {}
        for job in self._queue:
            waiting.setdefault(job.owner, []).append(job)
        running = {o: sum(1 for j in self._active() if j.owner == o and j.state == RUNNING) for o in waiting}
        cpu = {o: self._cpu_last_hour(o, now) if o is not None else 0.0 for o in waiting}
        starts = {o: sum(1 for j in self._owned_jobs(o) if j.started and now - j.started < HOUR)
                  if o is not None else 0 for o in waiting}
        order = []
        while waiting:
            owner = min(waiting, key=lambda o: (o is not None, running[o], cpu[o], starts[o], waiting[o][0].submitted))
            order.append(waiting[owner].pop(0))
            running[owner] += 1
            starts[owner] += 1
            if not waiting[owner]:
                del waiting[owner]
        return order

    def _dispatch(self, limits: Limits | None = None) -> None:
        """Start what may start now (called under the lock)."""
        limits = limits or self._limits()
        for job in self._order(limits):
            if limits.enforce and job.owner is not None:
                busy = sum(1 for j in self._active() if j.state == RUNNING and j.owner is not None)
                mine = sum(1 for j in self._active() if j.state == RUNNING and j.owner == job.owner)
                if busy >= limits.slots or mine >= limits.running:
                    continue
            self._queue.remove(job)
            job.state, job.started = RUNNING, time.time()
            threading.Thread(target=self._run, args=(job,), daemon=True, name=job.run_id).start()

    def _run(self, job: Job) -> None:
        try:  # lower this thread's priority (Linux: per thread, inherited by threads it creates), relative to the
            # server's own: a server started under `nice` keeps its pages ahead of its jobs too (19 is the floor)
            thread = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + self._niceness))
        except (AttributeError, OSError):
            pass
        try:
            job._clock = time.pthread_getcpuclockid(threading.get_ident())
        except (AttributeError, OSError):
            job._clock = None
        job._cpu_start = time.thread_time()
        _current.job = job
        try:
            if job.target is None:
                raise RuntimeError(f"job {job.run_id} has no work left: it ran already")
            job.target(job.stop_event.is_set)
        except Exception:  # the run records its own failure; the queue goes on
            log.exception("job %s failed", job.run_id)
        finally:
            _current.job = None
            job._cpu_final = time.thread_time() - job._cpu_start
            job.target = None  # its cells and closures are not kept alive by the ledger
            with self._lock:
                job.state, job.ended = (STOPPED if job.stop_event.is_set() else FINISHED), time.time()
                self._finished.append(job)
                self._dispatch()
            job.done_event.set()

    # ----- asking and stopping -------------------------------------------------------------------------------
    def is_active(self, run_id: str) -> bool:
        job = self._jobs.get(run_id)
        return job is not None and job.state in (QUEUED, RUNNING)

    def state(self, run_id: str) -> str | None:
        job = self._jobs.get(run_id)
        return None if job is None else job.state

    def place(self, run_id: str) -> int | None:
        """1-based place of a queued job in the start order; None when it is not queued."""
        with self._lock:
            for place, job in enumerate(self._order(self._limits()), 1):
                if job.run_id == run_id:
                    return place
        return None

    def label(self, run_id: str) -> str | None:
        """'queued (2nd in line)' for a queued job, None otherwise."""
        place = self.place(run_id)
        return None if place is None else f"queued ({_ordinal(place)} in line)"

    def stop(self, run_id: str) -> None:
        """Stop a job: a queued one leaves the queue at once, a running one is asked to stop."""
        with self._lock:
            job = self._jobs.get(run_id)
            if job is None:
                return
            job.stop_event.set()
            if job.state != QUEUED:
                return
            self._queue.remove(job)
            job.state, job.ended, job.target = STOPPED, time.time(), None
            if job.on_dropped is not None:
                job.on_dropped()  # under the lock: a new start of the same run cannot come in between
        job.done_event.set()

    def wait(self, run_id: str, timeout: float | None = None) -> bool:
        job = self._jobs.get(run_id)
        return True if job is None else job.done_event.wait(timeout)

    def jobs(self, owner: str | None = None, every: bool = True) -> list[JobView]:
        """Running then queued jobs (all owners when ``every``, else ``owner``'s)."""
        with self._lock:
            places = {j.run_id: i for i, j in enumerate(self._order(self._limits()), 1)}
            chosen = [j for j in self._active() if every or j.owner == owner]
        chosen.sort(key=lambda j: (j.state != RUNNING, places.get(j.run_id, 0), j.submitted))
        return [JobView(j.run_id, j.owner, j.title, j.state, places.get(j.run_id), j.submitted, j.started,
                        j.cpu_seconds()) for j in chosen]

    def cpu_last_hour(self, owner: str) -> float:
        with self._lock:
            return self._cpu_last_hour(owner, time.time())
