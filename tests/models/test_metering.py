"""The one cost model (models/metering.py) against values computed by hand from its table, the rate learned from
real batches, Stop through the meter, and the time left of running work with injected times (no clock)."""
from __future__ import annotations

import pytest
from tiny_models import tiny_bert, tiny_tokenizer

from models import TextClassifier, WorkStopped, estimate_seconds, metered, metering
from models.metering import (
    AUTORUN_SECONDS,
    Throughput,
    autorun_budget,
    cells_left_seconds,
    cold_cpu_rate,
    cpu_flops,
    learn_method,
    token_cost,
    work_left_seconds,
)

REL = 1e-12  # float64 arithmetic on a handful of numbers


def fresh_classifier(rate: float | None = None, max_batch_tokens: int | None = None) -> TextClassifier:
    """A real tiny classifier with its own throughput (the session fixtures share theirs)."""
    throughput = Throughput(rate) if rate is not None else None
    return TextClassifier(tiny_bert(), tiny_tokenizer(), name="tiny-metering", device="cpu", throughput=throughput,
                          max_batch_tokens=max_batch_tokens)


def test_estimate_before_any_measurement_is_the_table_rule_at_the_default_rate():
    classifier = fresh_classifier(rate=1000.0)
    # (F + 2 B) x n x (1 + n / 400) / rate
    assert estimate_seconds(classifier, 10, 0, 100) == pytest.approx(10 * 100 * 1.25 / 1000, rel=REL)  # 1.25 s
    assert estimate_seconds(classifier, 4, 4, 40) == pytest.approx(12 * 40 * 1.1 / 1000, rel=REL)  # 0.528 s
    assert classifier.throughput.tokens_per_second(400) == pytest.approx(500.0, rel=REL)
    assert token_cost(0) == 1.0 and token_cost(200) == 1.5


def test_the_rate_learns_from_batches_and_ignores_latency_bound_ones():
    throughput = Throughput(1000.0)
    throughput.record_batch(2, 100, 1.0)  # 200 tokens: too few to say anything about throughput
    throughput.record_batch(8, 200, 0.001)  # 1 ms: latency
    assert not throughput.measured and throughput.rate == 1000.0
    throughput.record_batch(8, 200, 2.0)  # 1600 tokens x 1.5 units / 2 s: the first measurement replaces the default
    assert throughput.rate == pytest.approx(1200.0, rel=REL)
    throughput.record_batch(4, 100, 0.5)  # 400 x 1.25 / 0.5 = 1000: moving average with weight 0.3
    assert throughput.rate == pytest.approx(0.7 * 1200 + 0.3 * 1000, rel=REL)


def test_a_method_factor_learns_what_its_passes_do_not_count():
    classifier = fresh_classifier(rate=1000.0)
    base = estimate_seconds(classifier, 10, 0, 100)  # 1.25 s
    learn_method(classifier, "lime", 10, 0, 100, measured_seconds=2.5)  # took twice the estimate: (1 + 2) / 2
    assert estimate_seconds(classifier, 10, 0, 100, method="lime") == pytest.approx(1.5 * base, rel=REL)
    assert estimate_seconds(classifier, 10, 0, 100, method="saliency") == pytest.approx(base, rel=REL)
    learn_method(classifier, "lime", 20, 0, 100, measured_seconds=2.5)  # as estimated this time: (1.5 + 1) / 2
    assert estimate_seconds(classifier, 10, 0, 100, method="lime") == pytest.approx(1.25 * base, rel=REL)
    learn_method(classifier, "occlusion", 1, 0, 100, measured_seconds=1000.0)  # 8000x, clamped to 4x: (1 + 4) / 2
    assert estimate_seconds(classifier, 1, 0, 100, method="occlusion") == pytest.approx(2.5 * 0.125, rel=REL)


def test_the_default_rate_scales_with_the_model_size():
    model = tiny_bert()
    working = sum(p.numel() for name, p in model.named_parameters() if "word_embeddings" not in name)
    # the CPU's cold default: half the measured matmul FLOP rate over 2 FLOPs per working parameter and token
    assert Throughput.for_model(model, "cpu").default_rate == pytest.approx(0.5 * cpu_flops() / (2 * working), rel=REL)
    assert Throughput.for_model(model, "cuda").default_rate == pytest.approx(50_000 * 11_000_000 / working, rel=REL)


def test_the_auto_run_decision_uses_a_nominal_rate_no_measurement_moves(monkeypatch):
    """Rule (g): the budget in units is EXWB_AUTORUN_SECONDS x (0.5 x 20 GFLOP/s / (2 x working parameters)) on a CPU,
    the GPU default on a GPU; a measured rate 10x either way changes neither it nor the decision."""
    model = tiny_bert()
    working = sum(p.numel() for name, p in model.named_parameters() if "word_embeddings" not in name)
    classifier = TextClassifier(model, tiny_tokenizer(), name="tiny-nominal", device="cpu")
    nominal = 0.5 * 20e9 / (2 * working)
    assert classifier.throughput.nominal_rate == pytest.approx(nominal, rel=REL)
    assert Throughput.for_model(model, "cuda").nominal_rate == pytest.approx(50_000 * 11_000_000 / working, rel=REL)
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "2")
    assert metering.autorun_units(classifier.throughput) == pytest.approx(2 * nominal, rel=REL)
    n, forward = 30, 2 * nominal / (30 * token_cost(30))  # exactly on the budget: runs
    decisions = []
    for measured in (None, nominal / 10, nominal * 10):
        classifier.throughput.measured_rate = measured
        decisions.append((metering.runs_at_once(classifier, forward, 0, n),
                          metering.runs_at_once(classifier, forward * 1.01, 0, n)))
    assert decisions == [(True, False)] * 3


def test_the_cold_cpu_rate_is_the_flop_rule_computed_by_hand():
    # MiniLM-L6 (11 M working parameters) on a CPU doing 20 GFLOP/s: 0.5 x 20e9 / (2 x 11e6) = 454.54... units/s
    assert cold_cpu_rate(11_000_000, 20e9) == pytest.approx(10e9 / 22e6, rel=REL)
    # twice the parameters or half the FLOP rate: half the rate; the estimate of 100 passes of 40 tokens follows
    assert cold_cpu_rate(22_000_000, 20e9) == pytest.approx(cold_cpu_rate(11_000_000, 10e9), rel=REL)
    classifier = fresh_classifier(rate=cold_cpu_rate(11_000_000, 20e9))
    assert estimate_seconds(classifier, 100, 0, 40) == pytest.approx(100 * 40 * 1.1 / (10e9 / 22e6), rel=REL)
    # the FLOP rate is measured once per process (a real matmul, so only its sanity is checked here)
    assert cpu_flops() == cpu_flops() and 1e6 < cpu_flops() < 1e15


def test_real_batches_teach_the_classifier_and_copies_share_it(monkeypatch):
    # the tiny model's batch can take under MIN_MEASURED_SECONDS on a fast CPU (AVX-512); that floor is not what
    # this test is about
    monkeypatch.setattr(metering, "MIN_MEASURED_SECONDS", 0.0)
    classifier = fresh_classifier()
    assert not classifier.throughput.measured
    encoding = classifier.encode(" ".join(["the movie was a film that this story had some scenes"] * 5))
    classifier.predict_logits([encoding] * 64)  # 64 x 57 tokens: measured
    assert classifier.throughput.measured and classifier.throughput.rate > 0
    copy = classifier.with_model(tiny_bert(seed=3), fingerprint="randomized")
    assert copy.throughput is classifier.throughput


def test_a_meter_that_is_asked_to_stop_ends_the_work_at_its_next_batch():
    classifier = fresh_classifier(max_batch_tokens=64)
    encodings = [classifier.encode("the movie was a film that this story had") for _ in range(20)]
    width = encodings[0].n_tokens
    per_batch = 64 // width
    with metered() as meter:
        classifier.predict_logits(encodings)
    assert meter.batches == -(-20 // per_batch) > 1  # the control: several batches when nobody stops
    asked = []
    with pytest.raises(WorkStopped):
        with metered(should_stop=lambda: bool(asked)) as meter:
            asked.append(True)
            classifier.predict_logits(encodings)
    assert meter.batches == 1 and meter.forward_passes == per_batch


def test_one_auto_run_budget(monkeypatch):
    monkeypatch.delenv("EXWB_AUTORUN_SECONDS", raising=False)
    assert autorun_budget() == AUTORUN_SECONDS == 15.0
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "2.5")
    assert autorun_budget() == 2.5
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "soon")
    assert autorun_budget() == 15.0


def test_time_left_of_one_method_follows_its_own_pace():
    assert work_left_seconds(25, 100, elapsed=10, estimate=999) == pytest.approx(30.0, rel=REL)
    assert work_left_seconds(0, 100, elapsed=20, estimate=50) == 30.0  # before the first batch: the estimate
    assert work_left_seconds(0, 100, elapsed=70, estimate=50) == 0.0


def test_time_left_of_cells_shrinks_then_grows_with_the_running_cell():
    finished = [10.0, 20.0]  # mean 15 s
    left = {e: cells_left_seconds(finished, 3, running_elapsed=e) for e in (0, 5, 15, 25, 40)}
    assert left[0] == pytest.approx(15 + 2 * 15, rel=REL)
    assert left[5] == pytest.approx(10 + 2 * 15, rel=REL)  # shrinks while the cell is within the mean
    assert left[15] == pytest.approx(2 * 15, rel=REL)
    assert left[25] == pytest.approx(2 * (10 + 20 + 25) / 3, rel=REL)  # overdue: the other cells look longer
    assert left[40] == pytest.approx(2 * (10 + 20 + 40) / 3, rel=REL)
    assert left[0] > left[5] > left[15] < left[25] < left[40]
    # the last cell: nothing after it, so an overdue last cell leaves 0 (the page says how long it has run)
    assert cells_left_seconds(finished, 1, running_elapsed=5) == pytest.approx(10.0, rel=REL)
    assert cells_left_seconds(finished, 1, running_elapsed=50) == 0.0


def test_time_left_before_the_first_cell_uses_the_prior_or_says_nothing():
    assert cells_left_seconds([], 4) is None
    assert cells_left_seconds([], 2, running_elapsed=4, prior=12.0) == pytest.approx(8 + 12, rel=REL)
    assert cells_left_seconds([], 2, running_elapsed=20, prior=12.0) == pytest.approx(0 + 20, rel=REL)
    assert cells_left_seconds([5.0], 0) == 0.0
