"""Explanations computed in background threads: one ``MethodJob`` per planned method, with progress from the
method's own batches and a Stop; ``MethodJobs`` (``METHOD_JOBS``, one per process) keyed by cache key, so sessions
asking for the same explanation share one job.

``Planned`` is what both ``explainers/plan.py``'s inline run and a job compute; a fresh run of it teaches the cost
model what it took (``learn_from_run``), and a failure becomes the method's message (``failure_message``).
"""
from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from explainers.base import Explainer
from explainers.cache import explain_cached, is_partial
from explainers.choices import MethodChoice
from explainers.explanation import Explanation
from explainers.mask_learning.progress import MaskProgress
from explainers.params import ParamError
from explainers.registry import REGISTRY
from explainers.windowed import tokens_per_pass
from models import Encoding, TextClassifier, UserFacingError
from models.metering import BACKWARD_FACTOR, CostMeter, WorkStopped, learn_method, metered, work_left_seconds

log = logging.getLogger(__name__)

RUNNING, DONE, STOPPED, FAILED = "running", "done", "stopped", "failed"
KEEP_FINISHED_JOBS = 64  # stopped / failed / unclaimed jobs remembered (the oldest are forgotten)


@dataclass
class Planned:
    """A method to compute: the explainer, its cache key and its estimated cost."""

    choice: MethodChoice
    explainer: Explainer
    key: str
    forward: int
    backward: int
    seconds: float
    shares_with: str | None = None  # the method whose pass this one reuses (then it costs nothing itself)
    group: list[Explainer] = field(default_factory=list)  # every method run now that shares its pass

    @property
    def method_id(self) -> str:
        return self.choice.method_id

    @property
    def label(self) -> str:
        return REGISTRY[self.method_id].label

    @property
    def is_ensemble(self) -> bool:
        return REGISTRY[self.method_id].family == "ensemble"


def failure_message(method_id: str, error: Exception, what: str) -> str:
    """What a method's row says when it fails: a user's error as it is, anything else logged and named."""
    if isinstance(error, (UserFacingError, ParamError)):
        return str(error)
    log.error("method %s %s", method_id, what, exc_info=error)
    return f"{REGISTRY[method_id].label} {what} ({type(error).__name__}: {error})."


def learn_from_run(planned: Planned, classifier: TextClassifier, encoding: Encoding, explanation: Explanation) -> None:
    """A fresh (not cached) run of a method teaches the cost model; ensembles reuse their members and pass-sharing
    followers their leader's pass, so not them."""
    if explanation.provenance.get("cache") or planned.is_ensemble or planned.shares_with is not None:
        return  # (a method that reused another's pass did not pay for it)
    learn_method(classifier, planned.explainer.id, planned.forward, planned.backward, tokens_per_pass(encoding),
                 explanation.provenance["seconds"])


@dataclass(frozen=True)
class JobProgress:
    """Where a job stands: passes done of the estimate, seconds elapsed and left (models/metering.py)."""

    forward: int
    backward: int
    fraction: float
    elapsed: float
    left: float


class MethodJob:
    """One method computed in a background thread. Its meter counts the method's own batches (the progress); ``stop``
    ends it at its next batch, and a stopped job keeps nothing (the methods that finished are in the cache)."""

    def __init__(self, planned: Planned, classifier: TextClassifier, encoding: Encoding, target: int | None,
                 wait_for: Sequence[MethodJob] = (), clock: Callable[[], float] = time.perf_counter):
        self.planned = planned
        self.classifier, self.encoding, self.target = classifier, encoding, target
        self.status = RUNNING
        self.result: Explanation | None = None
        self.error: str | None = None
        self.meter: CostMeter | None = None
        self.live: MaskProgress | None = None  # the latest step of a method that reports its steps (MaRC)
        self._clock = clock
        self.started = clock()
        self.ended: float | None = None
        self._stop = threading.Event()
        self._wait_for = list(wait_for)
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"explain-{planned.method_id}")

    @property
    def key(self) -> str:
        return self.planned.key

    @property
    def input(self) -> tuple[str, str]:
        return self.classifier.fingerprint, self.encoding.key

    @property
    def running(self) -> bool:
        return self.status == RUNNING

    @property
    def stopping(self) -> bool:
        """Asked to stop and still in its current batch."""
        return self.running and self._stop.is_set()

    def _hooked(self) -> Explainer:
        """The planned explainer, or for a method that reports its steps (``live_progress``, MaRC) a copy wired to
        this job: every step lands in ``self.live`` and Stop is polled before every step, so the last mask is
        kept (with a note) instead of being thrown away at the next batch."""
        explainer = self.planned.explainer
        if not getattr(explainer, "live_progress", False):
            return explainer
        hooked: Any = copy.copy(explainer)  # a method with live progress has these two hooks
        hooked.progress = self._record
        hooked.should_stop = self._stop.is_set
        return hooked

    def _record(self, progress: MaskProgress) -> None:
        self.live = progress

    def _run(self) -> None:
        try:
            for other in self._wait_for:  # an ensemble waits for its members' jobs, then reads them from the cache
                while other.running and not self._stop.is_set():
                    other.wait(0.2)
            explainer = self._hooked()
            stops_itself = explainer is not self.planned.explainer
            with metered(should_stop=None if stops_itself else self._stop.is_set) as meter:
                self.meter = meter
                if self._stop.is_set():
                    raise WorkStopped("stopped before it started")
                explanation = explain_cached(explainer, self.classifier, self.encoding, self.target,
                                             key=self.planned.key)
            self.result = explanation
            if is_partial(explanation):  # stopped half-way: shown with its note, not cached, never handed over
                self.status = STOPPED
                return
            learn_from_run(self.planned, self.classifier, self.encoding, explanation)
            self.status = DONE
        except WorkStopped:
            self.status = STOPPED
        except Exception as error:  # shown in the method's row, with Run again
            self.error = failure_message(self.planned.method_id, error, "failed unexpectedly")
            self.status = FAILED
        finally:
            self.ended = self._clock()

    @property
    def partial(self) -> Explanation | None:
        """The last mask of a method stopped half-way (MaRC), or None."""
        return self.result if self.status == STOPPED and self.result is not None else None

    def start(self) -> MethodJob:
        self._thread.start()
        return self

    def stop(self, wait: float = 0.0) -> None:
        """Ask the job to stop at its next batch; ``wait`` seconds at most for it to end."""
        self._stop.set()
        if wait:
            self.wait(wait)

    def wait(self, timeout: float | None = None) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout)

    def progress(self, now: float | None = None) -> JobProgress:
        meter = self.meter
        forward = meter.forward_passes if meter is not None else 0
        backward = meter.backward_passes if meter is not None else 0
        done = forward + BACKWARD_FACTOR * backward
        total = self.planned.forward + BACKWARD_FACTOR * self.planned.backward
        end = self.ended if self.ended is not None else (self._clock() if now is None else now)
        elapsed = max(0.0, end - self.started)
        fraction = 1.0 if self.status == DONE else min(done / total, 0.99) if total > 0 else 0.0
        live = self.live
        if live is not None and self.status != DONE:  # steps are the better measure (early stop ends it sooner)
            fraction = min(live.step / max(1, live.max_steps), 0.99)
        left = 0.0 if not self.running else work_left_seconds(done, total, elapsed, self.planned.seconds)
        return JobProgress(forward, backward, fraction, elapsed, left)


class MethodJobs:
    """The background jobs of this process by cache key: sessions asking for the same explanation share one job
    (and its Stop)."""

    def __init__(self) -> None:
        self._jobs: dict[str, MethodJob] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> MethodJob | None:
        return self._jobs.get(key)

    def start(self, planned: Planned, classifier: TextClassifier, encoding: Encoding,
              target: int | None) -> MethodJob:
        """Start the job of a planned method (or return the one already running)."""
        with self._lock:
            job = self._jobs.get(planned.key)
            if job is not None and job.running:
                return job
            same_input = (classifier.fingerprint, encoding.key)
            members = [j for j in self._jobs.values() if j.running and j.input == same_input]
            job = MethodJob(planned, classifier, encoding, target, wait_for=members if planned.is_ensemble else [])
            self._jobs.pop(planned.key, None)
            self._jobs[planned.key] = job
            self._forget_old()
        return job.start()

    def restart(self, job: MethodJob) -> MethodJob:
        """Run a stopped or failed job's method again."""
        return self.start(job.planned, job.classifier, job.encoding, job.target)

    def take(self, key: str) -> Explanation | None:
        """The result of a finished job, handed out once (afterwards the cache serves it)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.status != DONE:
                return None
            del self._jobs[key]
        return job.result

    def running(self) -> list[MethodJob]:
        return [job for job in list(self._jobs.values()) if job.running]

    def stop_all(self, wait: float = 10.0) -> None:
        for job in self.running():
            job.stop(wait)

    def _forget_old(self) -> None:
        finished = [key for key, job in self._jobs.items() if not job.running]
        for key in finished[: max(0, len(finished) - KEEP_FINISHED_JOBS)]:
            del self._jobs[key]


METHOD_JOBS = MethodJobs()
