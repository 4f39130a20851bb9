"""The one cost model: counting the work, estimating it before it runs, and the time left while it runs.

Every estimate in the project goes through here: the Heatmaps page (which methods run at once, which wait for a
click), the sanity page's missing work, a ROAR study's cost, and the "time left" of single methods and of dataset
runs. Work is counted in passes of whole sequences through the model; ``metered()`` counts them (each batch of
``TextClassifier.predict_logits`` / ``forward_embeds`` reports here), and its meter is also how long work reports
progress and is stopped: a meter made with ``should_stop`` ends the work at its next batch with ``WorkStopped``.

| quantity                         | rule                                                                      |
|----------------------------------|---------------------------------------------------------------------------|
| unit of work                     | one sequence through the model, forward; a backward pass counts 2 (a)     |
| one token of an n-token sequence | 1 + n / 400 units (b)                                                     |
| F forward + B backward, n tokens | (F + 2 B) x n x (1 + n / 400) / rate x factor(method) seconds             |
| rate (units / second)            | measured from this model's real batches in this process (c); else the     |
|                                  | cold default (d)                                                          |
| cold default, CPU (d)            | MATMUL_EFFICIENCY x matmul FLOP/s / (2 x working parameters)              |
| factor(method)                   | 1, moving halfway to measured / estimated after each run of it (e)        |
| auto-run budget                  | EXWB_AUTORUN_SECONDS, 15 s, converted to units at the nominal rate (g):   |
|                                  | single-input work of more units waits for a click, whatever the load      |
| nominal rate (units / second)    | CPU: MATMUL_EFFICIENCY x NOMINAL_CPU_FLOPS / (2 x working parameters);    |
|                                  | GPU: the cold default (d); never measured (g)                             |
| time left, one method            | p = units done / estimated units: elapsed x (1 - p) / p; before the first |
|                                  | batch, the estimate - elapsed (at least 0)                                |
| time left, a run of cells        | m = mean of finished cells (or the prior per cell), e = the running       |
|                                  | cell's seconds: max(m - e, 0) + (cells left - 1) x m', with               |
|                                  | m' = (sum of finished + max(m, e)) / (finished + 1) (f)                   |

(a) BACKWARD_FACTOR. (b) ATTENTION_TOKENS: attention makes long inputs slower per token (MiniLM on a CPU: 2.2x fewer
tokens/s at 500 tokens than at 20). (c) padded tokens x (1 + width / 400) / seconds of each batch of
``predict_logits``; the first measurement replaces the default, later ones a moving average (newest weight 0.3);
batches under 256 tokens or 5 ms are latency-bound and not measured. (d) Before any batch is measured: a forward pass
costs 2 FLOPs (one multiply-add) per token and working parameter (all but the input embedding table, a lookup), so
a unit costs 2 x working parameters FLOPs; the CPU's FLOP rate is measured once per process (``cpu_flops``: the best
of a few float32 matmuls the size of a batch through one MiniLM layer, 512 x 384 @ 384 x 384, ~0.1 s, under this
process's torch threads, so the thread count and a machine shared with other work count), and a model reaches MATMUL_EFFICIENCY = 0.5 of it (measured 0.56 to 0.63 for batches of MiniLM-L6 on the
2-core CPU, 1 or 2 threads; rounded down, it keeps the cold estimate on the safe side). MiniLM-L6 at 20 GFLOP/s:
0.5 x 20e9 / (2 x 11 M) = 455 units/s. On a GPU a tiny matmul measures launch latency, not throughput: 50 000
units/s for MiniLM-L6, scaled by 11 M / the model's working parameters. (e) Per model and
method; each measurement clamped to 0.25..4; it covers what passes do not count (Captum's bookkeeping,
re-tokenizing, a masked LM); starting from 1 keeps one cold first run (2x slower on a CPU) from doubling every later
estimate. (f) The running cell takes at least as long as it has run, so an overdue cell makes the cells after it
look longer: the time left shrinks while a cell is within the mean and grows once it is over it.
(g) What runs at once is a pure function of (model, input, methods, parameters): the work in units against
``autorun_units`` = budget seconds x a nominal rate fixed by the model's size and device kind, never the rate
measured under the current load (ten browsers on one link must see the same rows; with the measured rate, 3 of 10
got 5-6 rows and 7 got 17). NOMINAL_CPU_FLOPS = 20 GFLOP/s is the project's 2-core CPU idle (``cpu_flops``
measures 18-24 there): MiniLM-L6 (11 M working parameters) gets 455 units/s, so the 15 s budget is ~6 800 units.
The seconds shown beside a waiting method still come from the measured rate.

Everything here is per process: the rate and the factors live on the classifier (``classifier.throughput``), which
the app loads once and every session shares, and randomized copies of a model share their original's.
"""
from __future__ import annotations

import contextvars
import functools
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch  # noqa: E402

import settings
from models import runtime  # noqa: F401  (sets the process environment before torch is imported)

ATTENTION_TOKENS = 400.0
BACKWARD_FACTOR = 2.0
NEWEST_WEIGHT = 0.3
FACTOR_WEIGHT = 0.5
FACTOR_RANGE = (0.25, 4.0)
MIN_MEASURED_TOKENS = 256
MIN_MEASURED_SECONDS = 0.005
REFERENCE_PARAMETERS = 11_000_000  # MiniLM-L6 without its embedding table: what the GPU default was measured on
DEFAULT_RATE = {"cuda": 50_000.0}
FLOPS_PER_UNIT_PARAMETER = 2.0  # one multiply-add per working parameter and token
MATMUL_EFFICIENCY = 0.5  # share of the plain matmul FLOP rate a model's forward pass reaches on a CPU
MATMUL_SHAPE = (512, 384, 384)  # (tokens, in, out): a batch of 512 tokens through one MiniLM-sized linear layer
AUTORUN_SECONDS = 15.0
NOMINAL_CPU_FLOPS = 20e9  # rule (g): a fixed CPU, so the auto-run decision never depends on the load


class WorkStopped(Exception):
    """Raised inside metered work whose meter was asked to stop: the work ends at its next batch, nothing is kept."""


# ----- counting ---------------------------------------------------------------------------------------------------
@dataclass
class CostMeter:
    """Work done inside a ``metered()`` block: sequences through the model forward and backward."""

    forward_passes: int = 0
    backward_passes: int = 0
    batches: int = 0
    seconds: float = 0.0
    should_stop: Callable[[], bool] | None = field(default=None, repr=False)
    _start: float = field(default=0.0, repr=False)

    @property
    def units(self) -> float:
        """Passes with a backward counted as BACKWARD_FACTOR forwards (what progress is measured in)."""
        return self.forward_passes + BACKWARD_FACTOR * self.backward_passes


_active_meters: contextvars.ContextVar[tuple[CostMeter, ...]] = contextvars.ContextVar("meters", default=())


@contextmanager
def metered(should_stop: Callable[[], bool] | None = None):
    """Count the forward/backward passes of the enclosed work (per thread / Streamlit session); with
    ``should_stop``, the work raises ``WorkStopped`` at the first batch after it turns true."""
    meter = CostMeter(should_stop=should_stop, _start=time.perf_counter())
    token = _active_meters.set(_active_meters.get() + (meter,))
    try:
        yield meter
    finally:
        meter.seconds = time.perf_counter() - meter._start
        _active_meters.reset(token)


def count(forward: int = 0, backward: int = 0, batches: int = 0) -> None:
    """Called by the model wrapper after every batch: adds to every open meter, then honours a Stop."""
    meters = _active_meters.get()
    for meter in meters:
        meter.forward_passes += forward
        meter.backward_passes += backward
        meter.batches += batches
    if any(meter.should_stop is not None and meter.should_stop() for meter in meters):
        raise WorkStopped("stopped")


# ----- the rate of one model --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def cpu_flops() -> float:
    """FLOP/s of a float32 matmul of MATMUL_SHAPE on this CPU under this process's torch threads, measured once per
    process (the best of 5 rounds of 2: the round least disturbed by other work on the machine)."""
    tokens, width, out = MATMUL_SHAPE
    a, b = torch.randn(tokens, width), torch.randn(width, out)
    a @ b  # first-call costs
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(2):
            a @ b
        best = min(best, (time.perf_counter() - started) / 2)
    return 2.0 * tokens * width * out / max(best, 1e-9)


def cold_cpu_rate(working_parameters: int, flops_per_second: float) -> float:
    """Work units per second of a model with ``working_parameters`` on a CPU doing ``flops_per_second`` (rule (d))."""
    return MATMUL_EFFICIENCY * flops_per_second / (FLOPS_PER_UNIT_PARAMETER * max(1, working_parameters))


def nominal_rate(working_parameters: int, device_type: str) -> float:
    """Work units per second the auto-run decision assumes (rule (g)): from the model's size and device kind only."""
    if device_type in DEFAULT_RATE:
        return DEFAULT_RATE[device_type] * REFERENCE_PARAMETERS / max(1, working_parameters)
    return cold_cpu_rate(working_parameters, NOMINAL_CPU_FLOPS)


def working_parameters(model) -> int:
    """Parameters a token's forward pass multiplies by: all but the input embedding table (a lookup)."""
    total = sum(p.numel() for p in model.parameters())
    embedding = model.get_input_embeddings()
    return max(1, total - (embedding.weight.numel() if embedding is not None else 0))


def token_cost(n_tokens: float) -> float:
    """Work units of one token in an n-token sequence."""
    return 1.0 + n_tokens / ATTENTION_TOKENS


class Throughput:
    """How fast one model works in this process: measured work units per second and per-method factors."""

    def __init__(self, default_rate: float, nominal_rate: float | None = None):
        self.default_rate = float(default_rate)
        # the rate the auto-run decision assumes (rule (g)); never changed by a measurement
        self.nominal_rate = float(default_rate if nominal_rate is None else nominal_rate)
        self.measured_rate: float | None = None
        self.factors: dict[str, float] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_model(cls, model, device_type: str) -> Throughput:
        """The cold default for this model's size on this kind of device (rule (d); before any measurement)."""
        working = working_parameters(model)
        nominal = nominal_rate(working, device_type)
        if device_type in DEFAULT_RATE:
            return cls(nominal, nominal)
        return cls(cold_cpu_rate(working, cpu_flops()), nominal)

    @property
    def rate(self) -> float:
        """Work units per second: measured when known, else the cold default."""
        return self.measured_rate if self.measured_rate is not None else self.default_rate

    @property
    def measured(self) -> bool:
        return self.measured_rate is not None

    def tokens_per_second(self, n_tokens: float) -> float:
        """Tokens per second of batched forward passes over n-token sequences."""
        return self.rate / token_cost(n_tokens)

    def record_batch(self, sequences: int, width: int, seconds: float) -> None:
        """One real batch: ``sequences`` padded to ``width`` tokens took ``seconds`` (forward only)."""
        tokens = sequences * width
        if tokens < MIN_MEASURED_TOKENS or seconds < MIN_MEASURED_SECONDS:
            return
        observed = tokens * token_cost(width) / seconds
        with self._lock:
            old = self.measured_rate
            self.measured_rate = observed if old is None else (1 - NEWEST_WEIGHT) * old + NEWEST_WEIGHT * observed

    def factor(self, method: str | None) -> float:
        return self.factors.get(method, 1.0) if method else 1.0

    def record_method(self, method: str, base_seconds: float, measured_seconds: float) -> None:
        """A method's measured seconds against its estimate without the factor (computed after the run)."""
        if base_seconds <= 0 or measured_seconds <= 0:
            return
        observed = min(max(measured_seconds / base_seconds, FACTOR_RANGE[0]), FACTOR_RANGE[1])
        with self._lock:
            self.factors[method] = (1 - FACTOR_WEIGHT) * self.factors.get(method, 1.0) + FACTOR_WEIGHT * observed


# ----- estimates ----------------------------------------------------------------------------------------------------
def work_units(forward: float, backward: float, n_tokens: float) -> float:
    """Work units of ``forward`` and ``backward`` passes over n-token inputs (the table's first three rows)."""
    return (forward + BACKWARD_FACTOR * backward) * n_tokens * token_cost(n_tokens)


def base_seconds(throughput: Throughput, forward: float, backward: float, n_tokens: float) -> float:
    """Seconds of the passes at the model's rate, before any method factor."""
    return work_units(forward, backward, n_tokens) / throughput.rate


def estimate_seconds(classifier, forward: float, backward: float, n_tokens: float, method: str | None = None) -> float:
    """Estimated wall time of ``forward`` and ``backward`` passes over inputs of ``n_tokens`` on this classifier
    (``method``: an explainer id whose measured factor applies)."""
    throughput = classifier.throughput
    return base_seconds(throughput, forward, backward, n_tokens) * throughput.factor(method)


def learn_method(classifier, method: str, forward: float, backward: float, n_tokens: float,
                 measured_seconds: float) -> None:
    """After a method ran (not from a cache): its estimate learns what it really took on this model."""
    throughput = classifier.throughput
    throughput.record_method(method, base_seconds(throughput, forward, backward, n_tokens), measured_seconds)


def autorun_budget() -> float:
    """Seconds single-input work may be estimated to take and still run without asking (EXWB_AUTORUN_SECONDS)."""
    return settings.autorun_seconds(AUTORUN_SECONDS)


def autorun_units(throughput: Throughput, budget_seconds: float | None = None) -> float:
    """Work units single-input work may take and still run without asking: the budget (EXWB_AUTORUN_SECONDS
    unless given) at the model's nominal rate (rule (g)), the same under any load."""
    return (autorun_budget() if budget_seconds is None else budget_seconds) * throughput.nominal_rate


def runs_at_once(classifier, forward: float, backward: float, n_tokens: float,
                 budget_seconds: float | None = None) -> bool:
    """Whether single-input work runs without a click: its units within ``autorun_units`` (rule (g)); a pure
    function of the model and the work, never of the measured speed."""
    return work_units(forward, backward, n_tokens) <= autorun_units(classifier.throughput, budget_seconds)


# ----- time left -----------------------------------------------------------------------------------------------------
def work_left_seconds(done_units: float, total_units: float, elapsed: float, estimate: float) -> float:
    """Time left of one running piece of work from its own pace (see the table)."""
    if total_units > 0 and done_units > 0:
        done = min(done_units / total_units, 1.0)
        return elapsed * (1.0 - done) / done
    return max(estimate - elapsed, 0.0)


def cells_left_seconds(finished: list[float], cells_left: int, running_elapsed: float = 0.0,
                       prior: float | None = None) -> float | None:
    """Time left of a run of cells, one of them (the first left) running for ``running_elapsed`` seconds; None
    before the first cell finishes when there is no prior estimate per cell."""
    if cells_left <= 0:
        return 0.0
    if finished:
        mean = sum(finished) / len(finished)
    elif prior is not None:
        mean = prior
    else:
        return None
    running = max(mean, running_elapsed)  # the running cell takes at least as long as it has already run
    others = (sum(finished) + running) / (len(finished) + 1)
    return max(mean - running_elapsed, 0.0) + (cells_left - 1) * others
