"""The plan of a page's explanations for one input: which chosen methods come from the cache, run now, wait for a
click, or run in the background with progress and a Stop.

| a chosen method that is ...                          | goes to                                             |
|------------------------------------------------------|-----------------------------------------------------|
| finished in the background since the page looked     | shown as computed (``MethodJobs.take``)             |
| running, stopped or failed in the background         | its ``MethodJob``: progress and Stop, or Run again  |
| in the explanation cache                             | shown at once, costs nothing                        |
| within the auto-run budget (c), not expensive        | ``run_now``                                         |
| over the budget, not approved by a click             | ``Pending``: the estimate and a Run button          |
| over the budget and approved                         | ``background`` where the page polls, else ``run_now`` |
| an ensemble                                          | after the others (a): its members come from the cache |
| sharing a pass with a method run now (b)             | ``run_now`` at no cost: it reuses that method's pass |

(a) In ``run_now`` it comes last; in the background it waits for the running jobs of the same input. Its estimate
counts only the members that are neither cached nor chosen on the page, and a pass its members share once.
(b) ``explainers/shared_passes.py``: saliency and input x gradient share one backward pass, IG variants one path,
leave-one-out and occlusion of window 1 one batch of inputs without each word. ``run_now`` runs them in one
``sharing()`` block, so the pass runs once; each member is cached under its own key and says so in its provenance.

(c) Its passes in work units against the budget at the model's nominal rate (models/metering.py, rule (g)): the
same link gives the same rows under any load. The seconds shown beside a waiting method use the measured rate.

Jobs (``explainers/method_jobs.py``: the background threads) only matter to pages that poll them
(``background=True``); other pages see the cache and run inline as before. Everything here but ``run_now`` and
``start_background`` only decides.
Estimates come from the one cost model (models/metering.py); before the first estimate on a model the plan times
one batch of the input (``measure_throughput``), and every method run here teaches the cost model what it took.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explainers.base import FAMILIES, Explainer
from explainers.cache import cache_key, cached_only
from explainers.choices import MethodChoice, Prepared, prepared_for
from explainers.explanation import Explanation
from explainers.mask_learning.aml_store import AMLNotPrepared
from explainers.method_jobs import (
    DONE,
    FAILED,
    METHOD_JOBS,
    RUNNING,
    STOPPED,
    MethodJob,
    MethodJobs,
    Planned,
    failure_message,
    learn_from_run,
)
from explainers.registry import REGISTRY
from explainers.shared_passes import SharedPass, explain_member, shared_pass_of, sharing, sharing_on
from explainers.windowed import estimate_passes, one_pass_input, tokens_per_pass
from models import Encoding, TextClassifier
from models.metering import autorun_budget, autorun_units, estimate_seconds, runs_at_once


@dataclass
class Pending:
    """A method not run yet because its estimated cost is above the auto-run budget."""

    method_id: str
    forward: int
    backward: int
    seconds: float
    approval_key: str


@dataclass
class NeedsTraining:
    """A method that needs a model trained for this classifier first (AML's attribution model): the page says so
    and offers to build it (``evaluation/suite/aml_build.py``)."""

    method_id: str
    message: str
    tune: str  # the metric the model to build is selected on
    generator: str = ""  # G on this encoder instead of the model's own backbone (paper 004 s. 3.3)


Result = Explanation | Pending | NeedsTraining | MethodJob | str


@dataclass
class Plan:
    results: dict[str, Result] = field(default_factory=dict)  # decided already: cached, waiting, jobs, errors
    run_now: list[Planned] = field(default_factory=list)  # ensembles last
    background: list[Planned] = field(default_factory=list)  # approved long work for ``start_background``

    def groups(self) -> list[list[str]]:
        """The methods run now that share a pass, by method id (the first computes it)."""
        seen, out = set(), []
        for item in self.run_now:
            if len(item.group) > 1 and id(item.group) not in seen:
                seen.add(id(item.group))
                out.append([planned.method_id for planned in self.run_now if planned.group is item.group])
        return out

    def ordered(self, choices: list[MethodChoice]) -> dict[str, Result]:
        """The results in the order the methods were chosen."""
        return {c.method_id: self.results[c.method_id] for c in choices if c.method_id in self.results}


# ----- cost -----------------------------------------------------------------------------------------------------
def measure_throughput(classifier: TextClassifier, encoding: Encoding) -> None:
    """Time one batch of copies of the input unless this model's speed is measured already in this process
    (the batch goes through ``predict_logits``, which reports it to the cost model)."""
    if classifier.throughput.measured:
        return
    encoding = one_pass_input(encoding)  # a long document: one of its windows
    copies = max(2, min(64, -(-512 // max(1, encoding.n_tokens))))  # >= 512 tokens: enough to be measured
    classifier.predict_logits([encoding] * copies)


def estimate(explainer: Explainer, classifier: TextClassifier, encoding: Encoding) -> tuple[int, int, float]:
    """Expected (forward, backward, seconds) of one method on this input."""
    forward, backward = estimate_passes(explainer, encoding)  # a long document: passes over its windows
    return forward, backward, estimate_seconds(classifier, forward, backward, tokens_per_pass(encoding),
                                               method=explainer.id)


class RunBook:
    """What one page run will have without computing it again: the cache keys cached, chosen or running, and the
    passes claimed by a method that runs now. It prices a method in that light: a method whose pass is claimed
    costs nothing; an ensemble costs only its members that are not in the book (and a shared pass once)."""

    def __init__(self, classifier: TextClassifier, encoding: Encoding, target: int | None):
        self.classifier, self.encoding, self.target = classifier, encoding, target
        self.keys: set[str] = set()
        self.passes: dict[SharedPass, str] = {}  # pass -> the method id that computes it

    def shares_with(self, explainer: Explainer) -> str | None:
        shared = shared_pass_of(explainer) if sharing_on() else None
        return None if shared is None else self.passes.get(shared)

    def claim(self, explainer: Explainer, key: str, runs_now: bool) -> None:
        self.keys.add(key)
        shared = shared_pass_of(explainer) if sharing_on() else None
        if runs_now and shared is not None:
            self.passes.setdefault(shared, explainer.id)

    def cost(self, explainer: Explainer) -> tuple[int, int, float]:
        """Expected (forward, backward, seconds) of the method in this run."""
        if self.shares_with(explainer) is not None:
            return 0, 0, 0.0
        members = getattr(explainer, "member_explainers", None)
        if members is None:
            return estimate(explainer, self.classifier, self.encoding)
        forward = backward = 0
        ensemble: Any = explainer  # an ensemble: its members explain the target it gives them
        member_target = ensemble.member_target(self.classifier, self.encoding, self.target)
        passes: set[SharedPass] = set()
        for member in members():
            key = cache_key(self.classifier, self.encoding, member, member_target)
            shared = shared_pass_of(member) if sharing_on() else None
            if (key in self.keys or (shared is not None and (shared in passes or shared in self.passes))
                    or cached_only(member, self.classifier, self.encoding, member_target) is not None):
                continue  # cached, chosen on the page, or its pass is computed anyway
            if shared is not None:
                passes.add(shared)
            f, b = estimate_passes(member, self.encoding)
            forward, backward = forward + f, backward + b
        return forward, backward, estimate_seconds(self.classifier, forward, backward, tokens_per_pass(self.encoding),
                                                   method=explainer.id)


def _is_ensemble(method_id: str) -> bool:
    cls = REGISTRY.get(method_id)
    return cls is not None and cls.family == "ensemble"


def _made(ready: Prepared) -> tuple[Explainer, str]:
    """The explainer and cache key of a prepared method, or the error that kept it from being made (raised)."""
    if ready.error is not None:
        raise ready.error
    assert ready.explainer is not None and ready.key is not None  # ``prepare_one`` sets both or the error
    return ready.explainer, ready.key


def missing_training(explainer: Explainer, classifier: TextClassifier) -> NeedsTraining | None:
    """For a method that trains something per classifier (``trains``, AML), whether that is still to be built; a
    checkpoint of another model is an error (raised, then shown as the method's message)."""
    check = getattr(explainer, "checkpoint_for", None)
    if not explainer.trains or check is None:
        return None
    try:
        check(classifier)
    except AMLNotPrepared as error:
        return NeedsTraining(explainer.id, str(error), explainer.params.tuned_for,
                             getattr(explainer.params, "generator", ""))
    return None


def make_plan(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding, target: int | None,
              approved: set[str] | frozenset = frozenset(), budget: float | None = None, background: bool = False,
              jobs: MethodJobs | None = None, prepared: dict[str, Prepared] | None = None) -> Plan:
    """Decide for every chosen method (see the module's table); nothing is computed here but one timed batch.
    ``prepared``: this page run's ``prepare(choices, ...)`` (the cost table's), so each method is created, keyed
    and looked up in the cache once per run."""
    budget = autorun_budget() if budget is None else budget
    jobs = METHOD_JOBS if jobs is None else jobs
    plan = Plan()
    book = RunBook(classifier, encoding, target)
    groups: dict[str, list[Explainer]] = {}  # the method computing a pass -> the methods run now sharing it
    for choice in sorted(choices, key=lambda c: _is_ensemble(c.method_id)):  # ensembles see what the rest does
        method_id = choice.method_id
        try:
            ready = prepared_for(choice, prepared, classifier, encoding, target)
            explainer, key = _made(ready)
            job = jobs.get(key) if background else None
            finished = jobs.take(key) if job is not None and job.status == DONE else None
            shown = finished if finished is not None else job if job is not None and job.running else None
            if shown is not None:
                plan.results[method_id] = shown
                book.claim(explainer, key, runs_now=False)
                continue
            hit = ready.hit
            if hit is not None:
                plan.results[method_id] = hit
                book.claim(explainer, key, runs_now=False)
                continue
            if job is not None and job.status in (STOPPED, FAILED):  # the page offers to run it again
                plan.results[method_id] = job
                continue
            missing = missing_training(explainer, classifier)
            if missing is not None:
                plan.results[method_id] = missing
                continue
            measure_throughput(classifier, encoding)
            forward, backward, seconds = book.cost(explainer)
            planned = Planned(choice, explainer, key, forward, backward, seconds, book.shares_with(explainer))
            if planned.shares_with is not None:  # its pass is computed by a method run now: it runs with it
                plan.run_now.append(planned)
            elif runs_at_once(classifier, forward, backward, tokens_per_pass(encoding), budget) and not explainer.expensive:
                plan.run_now.append(planned)
            elif key not in approved:
                plan.results[method_id] = Pending(method_id, forward, backward, seconds, key)
                continue
            elif background:
                plan.background.append(planned)
            else:
                plan.run_now.append(planned)
            runs_now = bool(plan.run_now) and plan.run_now[-1] is planned
            book.claim(explainer, key, runs_now)
            if planned.shares_with is not None:  # joins the group of the method that computes the pass
                planned.group = groups[planned.shares_with]
                planned.group.append(explainer)
            elif runs_now and book.shares_with(explainer) == method_id:  # it computes a pass others may share
                planned.group = groups.setdefault(method_id, [explainer])
        except Exception as error:  # never a traceback on a page
            plan.results[method_id] = failure_message(method_id, error, "could not start")
    order = {c.method_id: i for i, c in enumerate(choices)}  # the chosen order, ensembles last
    plan.run_now.sort(key=lambda item: (item.is_ensemble, order[item.method_id]))
    plan.background.sort(key=lambda item: (item.is_ensemble, order[item.method_id]))
    return plan


def cost_rows(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding,
              target: int | None, prepared: dict[str, Prepared] | None = None) -> list[dict]:
    """Estimated cost of every chosen method before it runs, and whether it is cached already (``prepared``: as
    for ``make_plan``)."""
    rows: dict[int, dict] = {}
    book = RunBook(classifier, encoding, target)
    for index, choice in sorted(enumerate(choices), key=lambda pair: _is_ensemble(pair[1].method_id)):
        label = REGISTRY[choice.method_id].label
        ready = prepared_for(choice, prepared, classifier, encoding, target)
        if ready.explainer is None:  # a parameter the method refuses
            rows[index] = {"method": label, "status": str(ready.error)}
            continue
        try:
            explainer, key = _made(ready)
            measure_throughput(classifier, encoding)
            cached = ready.hit is not None
            forward, backward, seconds = estimate(explainer, classifier, encoding) if cached else book.cost(explainer)
        except Exception as error:  # the method reports it in its row
            rows[index] = {"method": label, "status": f"cannot estimate: {error}"}
            continue
        shares_with = None if cached else book.shares_with(explainer)
        book.claim(explainer, key, runs_now=not cached)
        rows[index] = {"method": label, "family": FAMILIES[REGISTRY[choice.method_id].family],
                       "forward passes": forward, "backward passes": backward, "estimated seconds": round(seconds, 2),
                       "status": "cached" if cached else "to compute",
                       "shared pass": f"with {REGISTRY[shares_with].label}" if shares_with else ""}
    return [rows[index] for index in range(len(choices))]


@dataclass
class Settled:
    """The cost rows after a run: measured seconds next to the estimate."""

    rows: list[dict]
    computed: int
    measured: float
    estimated: float
    waiting: int
    running: int


def settled_rows(rows: list[dict], choices: list[MethodChoice], results: dict[str, Result]) -> Settled:
    """``cost_rows`` with what happened: computed (and in how long), waiting for a click, running, stopped, failed."""
    out, computed, measured, estimated, waiting, running = [], 0, 0.0, 0.0, 0, 0
    for choice, row in zip(choices, rows):
        result = results.get(choice.method_id)
        row = dict(row)
        if isinstance(result, Explanation):
            if not result.provenance.get("cache") and "estimated seconds" in row:  # computed for this page run
                # (a background job's result is in the cache already when the rows were made: fresh all the same)
                row["status"] = "computed"
                row["measured seconds"] = round(result.provenance["seconds"], 2)
                computed += 1
                measured += result.provenance["seconds"]
                estimated += row["estimated seconds"]
        elif isinstance(result, Pending):
            row["status"] = "waiting for a Run click"
            waiting += 1
        elif isinstance(result, MethodJob):
            row["status"] = {RUNNING: "running", STOPPED: "stopped", FAILED: "failed"}.get(result.status,
                                                                                           result.status)
            running += result.status == RUNNING
        elif isinstance(result, NeedsTraining):
            row["status"] = "needs its attribution model built first"
        elif isinstance(result, str):
            row["status"] = result
        out.append(row)
    return Settled(out, computed, measured, estimated, waiting, running)


# ----- running --------------------------------------------------------------------------------------------------
def run_one(planned: Planned, classifier: TextClassifier, encoding: Encoding, target: int | None) -> Explanation | str:
    """Compute one planned method through the cache (a member of a pass group reuses the pass inside ``run_now``'s
    ``sharing()`` block and says so in its provenance); an error becomes its message."""
    try:
        explanation = explain_member(planned.explainer, classifier, encoding, target, planned.group,
                                     key=planned.key)
    except Exception as error:  # a bug in one method must not take the page down
        return failure_message(planned.method_id, error, "failed unexpectedly")
    learn_from_run(planned, classifier, encoding, explanation)
    return explanation


def run_now(plan: Plan, classifier: TextClassifier, encoding: Encoding, target: int | None,
            before_each: Callable[[int, Planned], None] | None = None) -> None:
    """Compute ``plan.run_now`` in order (ensembles last) into ``plan.results``; ``before_each(index, item)`` lets
    a page show which one is running."""
    with sharing():  # the plan's pass groups run each pass once
        for index, item in enumerate(plan.run_now):
            if before_each is not None:
                before_each(index, item)
            plan.results[item.method_id] = run_one(item, classifier, encoding, target)


def start_background(plan: Plan, classifier: TextClassifier, encoding: Encoding, target: int | None,
                     jobs: MethodJobs | None = None) -> None:
    """Start a background job for every approved long method; their jobs become their results."""
    jobs = METHOD_JOBS if jobs is None else jobs
    for item in plan.background:
        plan.results[item.method_id] = jobs.start(item, classifier, encoding, target)


# ----- the gate of a page's other single-input work ---------------------------------------------------------------
CACHED, RUN_NOW, WAIT = "cached", "run now", "wait for a click"


def work_gate(missing: int, units: float, classifier: TextClassifier, approved: bool, stopped: bool = False,
              budget: float | None = None) -> str:
    """The table's rule for single-input work that is not one method's explanation (a sanity check: stages x
    methods): nothing ``missing`` -> CACHED; stopped by the reader -> WAIT (for Run again); its ``units``
    (models/metering.py's work units) within the auto-run budget at the model's nominal rate, or ``approved`` by a
    click -> RUN_NOW; else WAIT. ``budget``: seconds, EXWB_AUTORUN_SECONDS unless given."""
    if missing == 0:
        return CACHED
    if stopped:
        return WAIT
    fits = units <= autorun_units(classifier.throughput, budget)
    return RUN_NOW if fits or approved else WAIT
