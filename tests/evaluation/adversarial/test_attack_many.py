"""The batched attack: several inputs' attacks optimized as one padded batch equal the attacks one at a
time, input by input (delta, stop, class, the three measures), with the same passes in fewer batches; and a dataset
run attacks batch by batch, keeps a cell per example and resumes.

Tolerances. On the tiny model in float64 the two runs differ only by the reordering of float64 sums (padding
changes the matmul shapes). Adam divides each step by the running RMS of the gradient, so a gradient element that
is near 0 (the constrained term's, which starts at 0) turns such a difference into a larger one, and the next
steps carry it on: measured up to 5e-12 here (1e5 float64 ulps of the delta). The bound used is the precision the
float32 attack itself has, ``float32_tolerance(epsilon)`` (3e-5 at epsilon 2): far above the float64 drift, far
below what a wrong gradient, mask or Adam state does (a step: lr = 0.1). The real model runs in float32, where the
drift reaches that size within a few steps, so it is compared after one step: Adam's first step is
lr x g / (|g| + eps), equal to float32 precision of lr wherever the gradients agree to float32.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv
from smooth_models import smooth_classifier
from tolerances import EPS32, float32_tolerance

from corpora import load_dataset
from evaluation.adversarial import dataset as adversarial
from evaluation.adversarial.attack import BATCH_OVERHEAD_TOKENS, attack, attack_groups, attack_many, rows_per_input
from evaluation.adversarial.config import config_for
from evaluation.adversarial.result import AttackError
from evaluation.runs.store import ResultStore
from models import cached_classifier
from models.metering import metered

TEXTS = ["a fine and moving film , truly",
         "the movie was great and the actors were fine but the plot was slow",
         "fine film",  # too short: k = 15 % of 2 words rounds to 0
         "bad acting , dull plot , and nothing to like at all in it , a waste of two hours of my life"]
CONFIGS = {
    # early stops at different steps per input (11, 11, 13 one at a time) within a 12-step budget: one input
    # still runs after the others left the batch
    "early stop": ("input_x_gradient", config_for("paper-003", steps=12, halve_every=4, tolerance=0.004, patience=2)),
    "constrained": ("saliency", config_for("paper-003", steps=20, objective="constrained", beta=100.0)),
    "IG, coarser loop": ("integrated_gradients", config_for("paper-003", steps=10, ig_steps=6, loop_ig_steps=3)),
    "paper-003-code": ("input_x_gradient", config_for("paper-003-code", steps=15, objective="constrained")),
    "unconstrained, small ball": ("saliency", config_for("paper-003", steps=20, epsilon=0.05)),
}


@pytest.fixture(scope="module")
def smooth64():
    classifier = smooth_classifier()
    classifier.model.double()
    return classifier


def _one_at_a_time(classifier, encodings, method, config):
    out = []
    for encoding in encodings:
        try:
            out.append(attack(classifier, encoding, method, config))
        except AttackError as error:
            out.append(error)
    return out


def _assert_same_attack(batched, alone, delta_tolerance, measure_tolerance, step_size=None):
    assert batched.steps_taken == alone.steps_taken and batched.stop_reason == alone.stop_reason
    assert batched.original_class == alone.original_class and batched.attacked_class == alone.attacked_class
    assert batched.class_kept == alone.class_kept and batched.rank_change == alone.rank_change
    if step_size is None:
        np.testing.assert_allclose(batched.delta, alone.delta, rtol=0, atol=delta_tolerance)
    else:  # one Adam step: see test_the_batched_attack_equals_one_at_a_time_on_the_quick_model
        apart = np.abs(batched.delta - alone.delta)
        assert np.mean(apart > delta_tolerance) <= 1e-3 and apart.max() <= 2 * step_size
        # those few elements moved the attacked input, so its measures agree to that, not to float32 (2.0e-5 seen
        # on an AVX-512 CPU with a freshly prepared model)
        measure_tolerance = max(measure_tolerance, 1e-4)
    np.testing.assert_array_equal(batched.original_shares, alone.original_shares)  # the clean pass is per input
    assert batched.top_k_sum_change == pytest.approx(alone.top_k_sum_change, rel=0, abs=measure_tolerance)
    assert batched.probability_change == pytest.approx(alone.probability_change, rel=0, abs=measure_tolerance)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_batched_attack_equals_the_attack_of_each_input_alone(smooth64, name):
    method, config = CONFIGS[name]
    encodings = [smooth64.encode(text) for text in TEXTS]
    assert len(attack_groups(smooth64, encodings, 1)) == 1  # all four in one batch: padding to 23 tokens
    batched = attack_many(smooth64, encodings, method, config)
    alone = _one_at_a_time(smooth64, encodings, method, config)
    assert isinstance(batched[2], AttackError) and str(batched[2]) == str(alone[2])
    tolerance = float32_tolerance(config.epsilon)
    for got, expected in zip(batched, alone):
        if isinstance(expected, AttackError):
            continue
        _assert_same_attack(got, expected, tolerance, float32_tolerance(1.0))
        assert got.delta_linf <= config.epsilon
        if config.objective == "unconstrained":
            assert got.class_kept
    if name == "early stop":
        assert [r.steps_taken for r in alone if not isinstance(r, AttackError)] == [11, 11, 12]
        reasons = [r.stop_reason for r in batched if not isinstance(r, AttackError)]
        assert reasons == ["early stop"] * 2 + ["step budget"]


@pytest.mark.parametrize("name", ["early stop", "IG, coarser loop", "paper-003-code"])
def test_the_batched_attack_makes_the_same_passes_in_fewer_batches(smooth64, name):
    """Counted by the meter: the same forward and backward passes (a finished input leaves the batch, so no row is
    added), in (per input: the clean forward and explanation [+ IG's full re-explanation or the last iterate's]) +
    per batch of inputs (``attack_groups``) one batch per step of its longest-running input, against one batch per
    step per input."""
    method, config = CONFIGS[name]
    encodings = [smooth64.encode(text) for i, text in enumerate(TEXTS) if i != 2]
    with metered() as together:
        batched = attack_many(smooth64, encodings, method, config)
    with metered() as apart:
        alone = _one_at_a_time(smooth64, encodings, method, config)
    assert (together.forward_passes, together.backward_passes) == (apart.forward_passes, apart.backward_passes)
    extra = int(method == "integrated_gradients") + int(config.constrained_pick == "last")
    per_input = 2 + extra
    steps = [r.steps_taken for r in alone]
    assert steps == [r.steps_taken for r in batched]
    assert apart.batches == len(encodings) * per_input + sum(steps)
    groups = attack_groups(smooth64, encodings, rows_per_input(method, config))
    assert together.batches == len(encodings) * per_input + sum(max(steps[i] for i in g) for g in groups)
    assert len(groups) < len(encodings)


def test_batches_are_length_sorted_and_fit_the_token_budget():
    classifier = smooth_classifier()
    classifier.max_batch_tokens = 3 * 23  # three rows of the longest input
    encodings = [classifier.encode(text) for text in TEXTS * 2]
    lengths = [e.n_tokens for e in encodings]
    for rows in (1, 2):
        groups = attack_groups(classifier, encodings, rows)
        assert sorted(i for g in groups for i in g) == list(range(len(encodings)))
        flat = [lengths[i] for g in groups for i in g]
        assert flat == sorted(flat)
        assert all(len(g) == 1 or len(g) * rows * max(lengths[i] for i in g) <= classifier.max_batch_tokens
                   for g in groups)
    assert len(attack_groups(classifier, encodings, 2)) > len(attack_groups(classifier, encodings, 1))


def test_batches_cost_least_of_every_cut_of_the_sorted_inputs():
    """The cut into batches is the cheapest (padded tokens x rows + BATCH_OVERHEAD_TOKENS per batch) of all ways to
    cut the length-sorted inputs into runs within the budget: checked against every one of the 2^(n-1) cuts."""
    classifier = smooth_classifier()
    classifier.max_batch_tokens = 100
    words = [3, 4, 4, 5, 7, 9, 12, 13, 20]
    encodings = [classifier.encode(" ".join(["fine"] * n)) for n in words]
    lengths = sorted(e.n_tokens for e in encodings)

    def cost(runs, rows):
        return sum(BATCH_OVERHEAD_TOKENS + len(r) * rows * max(r) for r in runs)

    for rows in (1, 3):
        groups = attack_groups(classifier, encodings, rows)
        chosen = cost([[encodings[i].n_tokens for i in g] for g in groups], rows)
        every = []
        for cuts in itertools.product([False, True], repeat=len(lengths) - 1):
            runs, run = [], [lengths[0]]
            for length, cut in zip(lengths[1:], cuts):
                if cut:
                    runs.append(run)
                    run = []
                run.append(length)
            runs.append(run)
            if all(len(r) == 1 or len(r) * rows * max(r) <= classifier.max_batch_tokens for r in runs):
                every.append(cost(runs, rows))
        assert chosen == min(every)


# ----- the real model --------------------------------------------------------------------------------------------
@pytest.mark.integration
@pytest.mark.parametrize("method, preset, objective", [("saliency", "paper-003", "unconstrained"),
                                                       ("input_x_gradient", "paper-003", "constrained"),
                                                       ("integrated_gradients", "paper-003", "unconstrained"),
                                                       ("input_x_gradient", "paper-003-code", "constrained")])
def test_the_batched_attack_equals_one_at_a_time_on_the_quick_model(quick_classifier, method, preset, objective):
    examples = load_dataset("sst2:dev", limit=4, label_names=quick_classifier.labels)
    encodings = [quick_classifier.encode(e.text) for e in examples]
    assert len({e.n_tokens for e in encodings}) == 4  # different lengths: the batch pads
    config = config_for(preset, steps=1, ig_steps=8, loop_ig_steps=4, objective=objective)
    with metered() as together:
        batched = attack_many(quick_classifier, encodings, method, config)
    with metered() as apart:
        alone = _one_at_a_time(quick_classifier, encodings, method, config)
    for got, expected in zip(batched, alone):
        # one Adam step, lr x g / (|g| + 1e-8): a sign step, equal to float32 precision of lr, where |g| >> 1e-8;
        # an element whose gradient is near 1e-8 (the thesis code's detached gradients have some) steps by a
        # fraction of lr that float32 reordering of g moves, by up to 2 lr. The measures are shares and
        # probabilities (scale 1).
        _assert_same_attack(got, expected, float32_tolerance(config.learning_rate), float32_tolerance(1.0),
                            step_size=config.learning_rate)
        assert got.delta_linf <= config.epsilon + EPS32 * config.epsilon
        if objective == "unconstrained":
            assert got.class_kept
    assert (together.forward_passes, together.backward_passes) == (apart.forward_passes, apart.backward_passes)
    groups = attack_groups(quick_classifier, encodings, rows_per_input(method, config))
    assert together.batches == apart.batches - (len(encodings) - len(groups))  # one step: a batch per group
    assert len(groups) < len(encodings)


# ----- dataset runs ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def keyword_run(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("attack-batches")
    folder = save_keyword_model(keyword_classifier, root / "model")
    return str(folder), write_keyword_csv(root / "data.csv", 6, seed=3)


def test_a_dataset_run_attacks_in_batches_keeps_a_cell_per_example_and_resumes(keyword_run, tmp_path,
                                                                             isolated_cache, monkeypatch):
    model, data = keyword_run
    config = config_for(None, steps=4, ig_steps=4)
    methods = ["input_x_gradient", "integrated_gradients"]
    classifier = cached_classifier(model)
    longest = max(classifier.encode(e.text).n_tokens for e in load_dataset(data))
    monkeypatch.setattr(classifier, "max_batch_tokens", 2 * 4 * longest)  # two inputs' IG paths per batch
    store = ResultStore(tmp_path / "results.sqlite")
    _, run_id, cells = adversarial.start_attacks(model, data, methods, 6, config, store)
    batches = [c.spec["batch"] for c in cells]
    # a batch's cells are consecutive: a stop loses at most the batch running
    assert len(set(batches)) >= 3 and batches == sorted(batches)
    # stop once the first batch is stored: its cells are kept, nothing of the later batches
    first = batches.count(batches[0])
    stopped = adversarial.run_attacks(model, data, methods, 6, config, store,
                                      should_stop=lambda: len(store.cells(run_id)) >= first)[1]
    assert stopped.status == "cancelled" and len(store.cells(run_id)) == first
    finished = adversarial.run_attacks(model, data, methods, 6, config, store)[1]
    assert finished.status == "finished" and len(store.cells(run_id)) == 6
    # each stored cell equals the example attacked alone (the app's and Ray's path)
    stored = store.cells(run_id)
    for cell in cells:
        alone = adversarial.attack_cell({k: v for k, v in cell.spec.items() if k != "batch"})
        got = stored[cell.key]
        assert got["skipped"] == alone["skipped"] and got["words"] == alone["words"]
        assert [(r["method"], r["metric"]) for r in got["rows"]] == [(r["method"], r["metric"]) for r in alone["rows"]]
        for a, b in zip(got["rows"], alone["rows"]):
            if a["metric"] in ("rank_change", "class_kept", "steps_taken"):
                assert a["value"] == b["value"]
            else:
                assert a["value"] == pytest.approx(b["value"], rel=0, abs=float32_tolerance(1.0) * config.steps)


def test_an_out_of_memory_batch_is_attacked_again_in_halves_with_the_same_results(smooth64):
    """an out-of-memory error in a batch of inputs (injected: CUDA's error whenever more than one row
    reaches the first layer, as a too-large batch fails on a GPU) restarts the unfinished inputs in two halves, down
    to one input; the results equal the attacks one at a time and the limit is remembered."""
    import torch

    from models import memory

    method, config = CONFIGS["early stop"]
    encodings = [smooth64.encode(text) for i, text in enumerate(TEXTS) if i != 2]
    alone = _one_at_a_time(smooth64, encodings, method, config)
    failures = []

    def too_many_rows(_module, args, kwargs):
        hidden = args[0] if args else kwargs["hidden_states"]
        if hidden.shape[0] > 1:
            failures.append(hidden.shape[0])
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (injected)")

    memory.forget_limits()
    handle = smooth64.model.bert.encoder.layer[0].register_forward_pre_hook(too_many_rows, with_kwargs=True)
    try:
        batched = attack_many(smooth64, encodings, method, config)
        learned = memory.notes_for(smooth64.memory_shape, smooth64.device)
    finally:
        handle.remove()
        memory.forget_limits()
    assert failures[:2] == [3, 2]  # the batch of three, then its half of two
    assert learned["double_backward"]["halvings"] == 2
    for got, expected in zip(batched, alone):
        _assert_same_attack(got, expected, float32_tolerance(config.epsilon), float32_tolerance(1.0))
