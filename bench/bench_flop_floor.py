#!/usr/bin/env python
"""The FLOP floor of each issue-19 speed target: is the target below what the work itself costs on this CPU?

For each workload the real code path runs once with a counter on the model (a forward pre-hook on the encoder,
``model.base_model``: every batch's rows, padded width, real tokens, and whether its input embeddings require a
gradient, i.e. a backward follows). Nothing in models/ or explainers/ changes; the batches are attributed to methods
and to the metric part by wrapping ``Explainer.explain`` and a few functions of the run while the workload runs.

- FLOPs from the config, per token and layer (BERT-style encoder): Q, K, V and output projections 4 d^2, the FFN
  2 d f, attention scores and values 2 T d (T the padded width), times 2 (a multiply-add is 2 FLOPs); per row the
  pooler d^2 and the classifier d x labels, times 2; embeddings are lookups (no FLOPs). A backward with respect to
  the inputs only (``TextClassifier`` sets ``requires_grad_(False)`` on every parameter) costs each linear layer's
  FLOPs once more (dX = dY W; no dW) and the attention's twice (the gradients of both operands of QK^T and of AV).
  ``tests/bench/test_flop_floor.py`` checks both against ``torch.utils.flop_counter.FlopCounterMode``.
- Rates of one core, in FLOP per CPU second (``time.process_time``, one torch thread, best of n: on a shared machine
  the time the process ran, not the time it waited): (1) the sustained float32 matmul rate at the model's own
  shapes, the six linear layers of one encoder layer (Q, K, V, output, FFN up, FFN down) on a 64 x 30-token batch
  through ``torch.nn.functional.linear``; (2) the model's own rate, one 64 x 30 batched forward (tokens/s too).
  Floor = counted FLOPs / rate, on ``--cores`` cores with perfect scaling (a lower bound). The forward vs forward +
  backward timing on the same batch is printed next to the FLOP ratio, to check the backward factor.
- Workloads: the Heatmaps page's default methods on the page's 20-word SST-2 dev sentence, cold, through
  ``explainers.plan`` as the page runs them (after a warm-up visit with another sentence, like
  ``bench_page.py``); comp + suff (ERASER, 10 random orderings) of six methods over ``--limit`` SST-2 dev sentences
  through ``run_evaluation`` as ``bench_faithfulness.py`` runs it, projected to the 872 (IG exactly from every
  sentence's token count); with ``--ferret N``, ferret's six explainers at ferret's settings on N sentences as
  ``bench_ferret.py`` runs ours.
- Verdict per workload: "target below the floor: unreachable with this work on this CPU" or "reachable".

    EXWB_THREADS=1 nice -n 19 python bench/bench_flop_floor.py --limit 8            # a shared machine
    python bench/bench_flop_floor.py --limit 40 --ferret 20                         # an idle machine
    python bench/bench_flop_floor.py --only rates                                   # the rates alone: seconds
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))  # bench_ferret's method list (also when a test loads this file)

import settings  # noqa: E402

settings.prepare_runtime()

import machine  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from bench_ferret import PAIRS  # noqa: E402

from corpora import load_dataset  # noqa: E402
from corpora.records import split_words  # noqa: E402
from evaluation.runs.store import ResultStore  # noqa: E402
from evaluation.suite import runner  # noqa: E402
from explainers import cache as cache_module  # noqa: E402
from explainers import (  # noqa: E402
    create_from_spec,
    format_spec,  # noqa: E402
    plan,
)
from explainers.base import Explainer  # noqa: E402
from explainers.choices import MethodChoice  # noqa: E402
from models import TextClassifier, cached_classifier, load_classifier  # noqa: E402

DEV_SIZE = 872
PAGE_TARGET_S = 5.0
DATASET_TARGET_S = 12 * 60
FAITHFULNESS_METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention",
                        "occlusion")
# ferret's measured time for its six explainers on the first 20 SST-2 dev sentences, 2 torch threads (the machine's
# default, as in the issue), idle machine (docs/benchmarks.md, "ferret head-to-head at default threads"): 241.6 s
FERRET_SECONDS_PER_SENTENCE = 241.6 / 20
RATE_BATCH = (64, 30)  # rows x tokens: the 64 x 30 batch the figures were taken on


# ----- FLOPs from the config ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EncoderShape:
    """What the FLOPs of a BERT-style encoder classifier depend on."""

    layers: int
    hidden: int
    intermediate: int
    labels: int
    pooler: bool = True

    @classmethod
    def of(cls, model) -> EncoderShape:
        config = model.config
        return cls(config.num_hidden_layers, config.hidden_size, config.intermediate_size, config.num_labels,
                   getattr(model.base_model, "pooler", None) is not None)

    def linear_flops(self, rows: int, width: int, first_token: bool = False) -> float:
        """Projections and FFN of every layer (per token), the pooler and the classifier (per row), forward.
        ``first_token``: the last layer computed for [CLS] only (models/first_token.py): its keys and values for
        every token, its query, output projection and FFN for one."""
        d, f = self.hidden, self.intermediate
        per_layer = 2 * (4 * d * d + 2 * d * f)  # per token
        per_row = 2 * d * self.labels + (2 * d * d if self.pooler else 0)
        if not first_token:
            return float(rows * (width * per_layer * self.layers + per_row))
        last = width * 2 * (2 * d * d) + 2 * (2 * d * d + 2 * d * f)
        return float(rows * (width * per_layer * (self.layers - 1) + last + per_row))

    def attention_flops(self, rows: int, width: int, first_token: bool = False) -> float:
        """Scores QK^T and the weighted sum AV of every layer, forward (every head together: 2 T d per query each);
        with ``first_token`` the last layer has one query."""
        queries = width * self.layers if not first_token else width * (self.layers - 1) + 1
        return float(rows * queries * 2 * (2 * width * self.hidden))

    def forward_flops(self, rows: int, width: int, first_token: bool = False) -> float:
        return self.linear_flops(rows, width, first_token) + self.attention_flops(rows, width, first_token)

    def backward_flops(self, rows: int, width: int, first_token: bool = False) -> float:
        """Gradients with respect to the inputs only: each linear layer once (dX = dY W), attention twice."""
        return self.linear_flops(rows, width, first_token) + 2 * self.attention_flops(rows, width, first_token)


# ----- counting the batches -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Batch:
    label: str
    rows: int
    width: int  # padded tokens per row
    real_tokens: int
    grad: bool  # its input embeddings require a gradient: a backward follows
    first_token: bool = False  # the last layer computed for [CLS] only (models/first_token.py)


class PassCounter:
    """Every batch through ``classifier``'s encoder while installed, labelled with the innermost open section; the
    sections also keep their own (exclusive) wall and CPU seconds."""

    def __init__(self, classifier: TextClassifier):
        self.classifier = classifier
        self.batches: list[Batch] = []
        self.seconds: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])  # label -> [wall, CPU] exclusive
        self._stack: list[list] = []  # [label, wall start, CPU start, children's wall, children's CPU]
        self._handle = None

    def __enter__(self) -> PassCounter:
        def hook(module, args, kwargs):  # a plain function: a deep copy of the model (DeepLIFT's) keeps counting
            self._record(module, args, kwargs)

        self._handle = self.classifier.model.base_model.register_forward_pre_hook(hook, with_kwargs=True)
        # the first-token path (models/first_token.py) runs the encoder's modules without the base model's forward:
        # it is counted where the classifier calls it, for as long as the counter is installed
        if getattr(self.classifier, "first_token", None) is not None and self.classifier.first_token.enabled:
            direct = self.classifier._encoder_logits

            def counted_encoder_logits(**kwargs):
                self._record(None, (), kwargs, first_token=True)
                return direct(**kwargs)

            self.classifier._encoder_logits = counted_encoder_logits
        return self

    def __exit__(self, *_) -> None:
        self._handle.remove()
        self.classifier.__dict__.pop("_encoder_logits", None)

    def _record(self, _module, args, kwargs, first_token: bool = False) -> None:
        embeds = kwargs.get("inputs_embeds")
        ids = kwargs.get("input_ids", args[0] if args else None)
        shaped = embeds if embeds is not None else ids
        rows, width = int(shaped.shape[0]), int(shaped.shape[1])
        mask = kwargs.get("attention_mask")
        real = int(mask.sum()) if mask is not None else rows * width
        grad = embeds is not None and embeds.requires_grad and torch.is_grad_enabled()
        self.batches.append(Batch(self.label, rows, width, real, grad, first_token))

    @property
    def label(self) -> str:
        return self._stack[-1][0] if self._stack else "other (original prediction, tokenizing)"

    @contextmanager
    def section(self, label: str):
        self._stack.append([label, time.perf_counter(), time.process_time(), 0.0, 0.0])
        try:
            yield
        finally:
            name, wall, cpu, child_wall, child_cpu = self._stack.pop()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            self.seconds[name][0] += wall - child_wall
            self.seconds[name][1] += cpu - child_cpu
            if self._stack:
                self._stack[-1][3] += wall
                self._stack[-1][4] += cpu

    def labelled(self, function, label_of):
        """``function`` wrapped so each call runs in the section ``label_of(*args, **kwargs)``."""
        def wrapper(*args, **kwargs):
            with self.section(label_of(*args, **kwargs)):
                return function(*args, **kwargs)
        return wrapper


@contextmanager
def patched(owner, name: str, replacement):
    original = getattr(owner, name)
    setattr(owner, name, replacement(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


@contextmanager
def explainers_labelled(counter: PassCounter):
    """Every explanation's batches under its method id (with its preset)."""
    def label(explainer, *_args, **_kwargs):
        return format_spec(explainer.id, explainer.preset)

    with patched(Explainer, "explain", lambda original: counter.labelled(original, label)):
        yield


@dataclass
class Totals:
    forward_rows: int = 0
    backward_rows: int = 0
    batches: int = 0
    real_tokens: int = 0
    padded_tokens: int = 0
    flops: float = 0.0

    def add(self, batch: Batch, shape: EncoderShape) -> None:
        self.forward_rows += batch.rows
        self.backward_rows += batch.rows if batch.grad else 0
        self.batches += 1
        self.real_tokens += batch.real_tokens
        self.padded_tokens += batch.rows * batch.width
        self.flops += shape.forward_flops(batch.rows, batch.width, batch.first_token)
        if batch.grad:
            self.flops += shape.backward_flops(batch.rows, batch.width, batch.first_token)


def totals_by_label(batches: list[Batch], shape: EncoderShape) -> dict[str, Totals]:
    out: dict[str, Totals] = defaultdict(Totals)
    for batch in batches:
        out[batch.label].add(batch, shape)
    return dict(out)


# ----- rates --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Seconds:
    wall: float
    cpu: float


def best_seconds(function, rounds: int) -> Seconds:
    """Best of ``rounds`` by CPU seconds (``time.process_time``: on a shared machine the time this process ran, not
    the time it waited), with that round's wall seconds."""
    best = Seconds(float("inf"), float("inf"))
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        measured = Seconds(time.perf_counter() - wall, time.process_time() - cpu)
        best = min(best, measured, key=lambda s: s.cpu)
    return best


@contextmanager
def one_thread():
    """Rates per core: one torch thread while they are measured (a floor on n cores divides by n)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def matmul_rate(shape: EncoderShape, tokens: int, rounds: int) -> float:
    """FLOP per CPU second of one core running the six linear layers of one encoder layer on ``tokens`` tokens
    (float32, ``F.linear``)."""
    d, f = shape.hidden, shape.intermediate
    x, h = torch.randn(tokens, d), torch.randn(tokens, f)
    square, up, down = torch.randn(d, d), torch.randn(f, d), torch.randn(d, f)
    bias_d, bias_f = torch.randn(d), torch.randn(f)

    def layer():
        for _ in range(4):  # Q, K, V, output
            F.linear(x, square, bias_d)
        F.linear(x, up, bias_f)
        F.linear(h, down, bias_d)

    with one_thread():
        layer()  # first-call costs
        return 2.0 * tokens * (4 * d * d + 2 * d * f) / best_seconds(layer, rounds).cpu


def random_batch(classifier: TextClassifier, rows: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    vocabulary = classifier.model.config.vocab_size
    ids = torch.randint(min(1000, vocabulary // 2), vocabulary, (rows, width), generator=generator)  # no specials
    return ids, torch.ones_like(ids)


def model_rates(classifier: TextClassifier, shape: EncoderShape, rounds: int) -> dict:
    """One core running the model's forward on a RATE_BATCH batch (FLOP per CPU second, tokens per CPU second), and
    forward + backward (inputs only) on the same batch, interleaved (A, B, A, B), best of ``rounds`` each."""
    rows, width = RATE_BATCH
    ids, mask = random_batch(classifier, rows, width)
    model = classifier.model

    def forward():
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=mask)

    def forward_backward():
        embeds = classifier.word_embeddings(ids).detach().requires_grad_(True)
        model(inputs_embeds=embeds, attention_mask=mask).logits[:, 0].sum().backward()

    with one_thread():
        forward(), forward_backward()  # first-call costs
        f_best, fb_best = [], []
        for _ in range(rounds):
            f_best.append(best_seconds(forward, 1))
            fb_best.append(best_seconds(forward_backward, 1))
    f_best, fb_best = min(f_best, key=lambda s: s.cpu), min(fb_best, key=lambda s: s.cpu)
    fwd = shape.forward_flops(rows, width)
    return {"forward": f_best, "forward_backward": fb_best, "flops_per_s": fwd / f_best.cpu,
            "tokens_per_s": rows * width / f_best.cpu, "measured_backward_factor": fb_best.cpu / f_best.cpu - 1,
            "flop_backward_factor": shape.backward_flops(rows, width) / fwd}


# ----- workloads ----------------------------------------------------------------------------------------------------
def isolated_cache() -> Path:
    """A fresh cache directory (cold explanations, empty result store) that still sees the prepared models."""
    real_models = settings.cache_dir() / "models"
    folder = Path(tempfile.mkdtemp(prefix="bench-flop-floor-"))
    (folder / "models").symlink_to(real_models, target_is_directory=True)
    os.environ["EXWB_CACHE_DIR"] = str(folder)
    os.environ["EXWB_DISK_CACHE"] = "0"
    return folder


def forget(classifier: TextClassifier) -> None:
    """Cold: no explanation (in memory; the disk cache is off) nor original logits left by an earlier workload."""
    cache_module.DEFAULT_CACHE.clear()
    classifier._logits_cache.clear()


def page_sentences() -> tuple[str, str]:
    """The warm-up sentence and the page's 20-word SST-2 dev sentence, as ``bench_page.py`` picks them."""
    examples = load_dataset("sst2:dev")
    warm_up = next(e.text for e in examples if 12 <= len(split_words(e.text)) <= 30)
    return warm_up, next(e.text for e in examples if len(split_words(e.text)) == 20)


def page_workload(classifier: TextClassifier) -> tuple[PassCounter, float, float, str]:
    """The Heatmaps page's default methods, cold, through the plan as the page runs them: (counter, wall, CPU,
    what ran)."""
    # the page's own defaults and order; deferred: the page's module imports Streamlit (heavy), needed here only
    from ui.views.heatmaps import family_order, page_methods

    os.environ["EXWB_AUTORUN_SECONDS"] = "10000"  # every default method runs, none waits for a click
    choices = [MethodChoice(m, None, {}) for m in family_order(page_methods())]
    warm_up, text = page_sentences()
    forget(classifier)

    def visit(sentence: str) -> None:
        encoding = classifier.encode(sentence)
        the_plan = plan.make_plan(choices, classifier, encoding, None)
        plan.run_now(the_plan, classifier, encoding, None)
        failed = {m: r for m, r in the_plan.results.items() if isinstance(r, str)}
        if failed:
            raise RuntimeError(f"page methods failed: {failed}")

    visit(warm_up)  # first-call costs and the cost model's timed batch, as bench_page.py's warm-up visit
    counter = PassCounter(classifier)
    label = lambda planned, *_: planned.method_id  # noqa: E731
    with counter, explainers_labelled(counter), patched(plan, "run_one", lambda f: counter.labelled(f, label)):
        wall, cpu = time.perf_counter(), time.process_time()
        visit(text)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return counter, wall, cpu, f"{len(choices)} methods, {classifier.encode(text).n_tokens} tokens"


def dataset_workload(model: str, limit: int, n_random: int) -> tuple[PassCounter, float, float, int]:
    """comp + suff (ERASER) of six methods with the random baseline over ``limit`` SST-2 dev sentences, as
    ``bench_faithfulness.py`` runs it: (counter, wall, CPU, sentences done)."""
    classifier = cached_classifier(model)  # the run's own classifier (one per model and process)
    forget(classifier)
    store = ResultStore(settings.cache_dir() / "results.sqlite")
    counter = PassCounter(classifier)
    with counter, explainers_labelled(counter), \
            patched(runner, "prefill_ig_paths",
                    lambda f: counter.labelled(f, lambda *_a, **_k: "integrated_gradients (paths batched)")), \
            patched(runner, "evaluate_batch",
                    lambda f: counter.labelled(f, lambda *_a, **_k: "comp + suff + random baseline")):
        wall, cpu = time.perf_counter(), time.process_time()
        _, summary = runner.run_evaluation(model, "sst2:dev", list(FAITHFULNESS_METHODS), ["eraser"], limit=limit,
                                           options={"random_orderings": n_random, "seed": 0}, store=store)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if summary.errors:
        raise RuntimeError(f"the run failed: {next(iter(summary.errors.values()))}")
    return counter, wall, cpu, summary.done


def ferret_workload(classifier: TextClassifier, count: int) -> tuple[PassCounter, float, float]:
    """ferret's six explainers at ferret's settings, as ``bench_ferret.py`` runs this project's side."""
    examples = [e.text for e in load_dataset("sst2:dev", limit=count)]
    forget(classifier)
    counter = PassCounter(classifier)
    with counter, explainers_labelled(counter):
        wall, cpu = time.perf_counter(), time.process_time()
        for text in examples:
            encoding = classifier.encode(text)
            target = int(np.argmax(classifier.logits_of(encoding)))
            for _, spec, _ in PAIRS:
                create_from_spec(spec).explain(classifier, encoding, target)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return counter, wall, cpu


# ----- the 872 ------------------------------------------------------------------------------------------------------
def length_weights(classifier: TextClassifier, limit: int | None) -> list[tuple[int, int]]:
    """(tokens, words) of the first ``limit`` SST-2 dev sentences (all with None)."""
    return [(e.n_tokens, e.n_words) for e in (classifier.encode(x.text) for x in load_dataset("sst2:dev", limit=limit))]


def project_to_dev(totals: dict[str, Totals], sample: list[tuple[int, int]], every: list[tuple[int, int]],
                   shape: EncoderShape, ig_label: str, first_token: bool = False) -> tuple[dict[str, float], str]:
    """FLOPs of each part over all 872 sentences. IG: exactly from every sentence's tokens (the sample's rows per
    sentence, which are the same for each: n_steps + the path's ends) times the sample's padding overhead; the rest:
    the sample's FLOPs scaled by the 872's sum of tokens x words (perturbation methods: a row per word) or of tokens
    (a fixed number of rows per sentence) against the sample's. ``first_token``: the classifier computes its last
    layer for [CLS] only."""
    out, notes = {}, []
    ig = [label for label in totals if label.startswith(ig_label)]
    if ig:
        forward = sum(totals[label].forward_rows for label in ig) / len(sample)
        backward = sum(totals[label].backward_rows for label in ig) / len(sample)
        def one_row(t: int) -> tuple[float, float]:
            return shape.forward_flops(1, t, first_token), shape.backward_flops(1, t, first_token)

        exact_sample = sum(forward * one_row(t)[0] + backward * one_row(t)[1] for t, _ in sample)
        padding = sum(totals[label].flops for label in ig) / exact_sample
        exact = sum(forward * one_row(t)[0] + backward * one_row(t)[1] for t, _ in every)
        out["integrated_gradients (all parts)"] = exact * padding
        notes.append(f"IG: {forward:.0f} forward / {backward:.0f} backward rows per sentence, unpadded "
                     f"{exact / 1e12:.2f} TFLOP exactly for the {len(every)}, x {padding:.3f} (the sample's padding "
                     f"across batched paths)")
    for label, total in totals.items():
        if label in ig:
            continue
        per_word = label.startswith(("leave_one_out", "occlusion"))
        weight = (lambda t, w: t * w) if per_word else (lambda t, w: t)
        scale = sum(weight(t, w) for t, w in every) / sum(weight(t, w) for t, w in sample)
        out[label] = total.flops * scale
    notes.append("the other parts: the sample's FLOPs x (sum over the 872 / over the sample) of tokens x words "
                 "(leave-one-out, occlusion) or of tokens (the rest): a projection")
    return out, "; ".join(notes)


# ----- printing -----------------------------------------------------------------------------------------------------
def table(counter: PassCounter, shape: EncoderShape, rates: dict, wall: float, cpu: float) -> float:
    """Per part and total: passes, tokens, GFLOPs, one core's floors (CPU seconds at the two rates) and the measured
    wall and CPU seconds (each part's own, its nested parts apart). Returns the FLOPs."""
    totals = totals_by_label(counter.batches, shape)
    print(f"  {'part':40s} {'fwd rows':>8s} {'bwd rows':>8s} {'batches':>7s} {'tokens':>8s} {'padded':>8s} "
          f"{'GFLOP':>8s} {'floor mm':>8s} {'floor fw':>8s} {'CPU s':>7s} {'wall s':>7s}")
    whole = Totals()
    for label, total in sorted(totals.items(), key=lambda item: -item[1].flops):
        cpu_s, wall_s = (f"{counter.seconds[label][1]:7.2f}", f"{counter.seconds[label][0]:7.2f}") \
            if label in counter.seconds else (f"{'-':>7s}", f"{'-':>7s}")  # outside any section: not timed apart
        print(f"  {label:40s} {total.forward_rows:8d} {total.backward_rows:8d} {total.batches:7d} "
              f"{total.real_tokens:8d} {total.padded_tokens:8d} {total.flops / 1e9:8.1f} "
              f"{total.flops / rates['matmul']:8.3f} {total.flops / rates['model']:8.3f} {cpu_s} {wall_s}")
        for field in ("forward_rows", "backward_rows", "batches", "real_tokens", "padded_tokens", "flops"):
            setattr(whole, field, getattr(whole, field) + getattr(total, field))
    print(f"  {'total':40s} {whole.forward_rows:8d} {whole.backward_rows:8d} {whole.batches:7d} "
          f"{whole.real_tokens:8d} {whole.padded_tokens:8d} {whole.flops / 1e9:8.1f} "
          f"{whole.flops / rates['matmul']:8.3f} {whole.flops / rates['model']:8.3f} {cpu:7.2f} {wall:7.2f}")
    print(f"  (floors in CPU seconds of one core: the FLOPs at the matmul rate (mm) and at the model's forward rate "
          f"(fw); measured CPU / floor: {cpu / (whole.flops / rates['matmul']):.2f}x / "
          f"{cpu / (whole.flops / rates['model']):.2f}x)")
    return whole.flops


def verdict(name: str, flops: float, cpu: float, target: float, rates: dict, cores: int,
            projected: bool = False) -> str:
    """The target (wall seconds on ``cores`` cores) against the floor of the work on all of them (perfect scaling:
    a lower bound)."""
    floor_mm, floor_fw = flops / rates["matmul"] / cores, flops / rates["model"] / cores
    return (f"{name}: {flops / 1e12:.3f} TFLOP{' (projected)' if projected else ''}; floor on {cores} cores "
            f"{floor_mm:.1f} s at the matmul rate, {floor_fw:.1f} s at the model's forward rate; "
            f"{'projected' if projected else 'measured'} CPU {cpu:.1f} s = {cpu / (floor_mm * cores):.2f}x one "
            f"core's matmul floor; target {target:.1f} s: " +
            ("target below the floor: unreachable with this work on this CPU" if target < floor_mm else
             "reachable" + ("" if target >= floor_fw else " at the matmul rate only (below the floor at the model's "
                                                          "own forward rate)")))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--model", default="default")
    parser.add_argument("--limit", type=int, default=8, help="SST-2 dev sentences of the dataset run (then "
                        "projected to the 872)")
    parser.add_argument("--random-orderings", type=int, default=10)
    parser.add_argument("--ferret", type=int, default=0, help="also ferret's six explainers on this many sentences "
                        "(20: the sentences ferret's figure was taken on)")
    parser.add_argument("--rounds", type=int, default=5, help="best of n for the rates")
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="cores the targets were set for (their "
                        "idle figures used 2 torch threads on this 2-core machine)")
    parser.add_argument("--only", default="page,dataset", help="comma-separated of page, dataset; 'rates': the rates "
                        "alone (they always run)")
    args = parser.parse_args(argv)
    print(f"machine: {machine.describe()}", flush=True)
    parts = set(args.only.split(","))
    folder = isolated_cache()
    classifier = load_classifier(args.model)
    shape = EncoderShape.of(classifier.model)
    print(f"model {args.model}: {shape}; attention {classifier.attention_implementation}; torch threads "
          f"{torch.get_num_threads()}; load average {load()}; cache {folder}")
    rows, width = RATE_BATCH
    matmul = matmul_rate(shape, rows * width, args.rounds)
    model = model_rates(classifier, shape, args.rounds)
    rates = {"matmul": matmul, "model": model["flops_per_s"]}
    forward, both = model["forward"], model["forward_backward"]
    print(f"\nrates of one core, FLOP per CPU second (best of {args.rounds}; load {load()}):\n"
          f"  float32 matmul at the model's shapes ({rows * width} tokens x one layer's six linears): "
          f"{matmul / 1e9:.1f} GFLOP/s\n"
          f"  the model's forward, {rows} x {width} tokens: {forward.cpu * 1000:.0f} ms CPU ({forward.wall * 1000:.0f}"
          f" ms wall) = {model['flops_per_s'] / 1e9:.1f} GFLOP/s ({model['flops_per_s'] / matmul:.0%} of the matmul "
          f"rate), {model['tokens_per_s']:.0f} tokens/s\n"
          f"  backward w.r.t. the inputs: {model['flop_backward_factor']:.3f}x the forward's FLOPs (the factor used); "
          f"timed on the same batch: forward + backward {both.cpu * 1000:.0f} ms CPU ({both.wall * 1000:.0f} ms wall) "
          f"= forward x (1 + {model['measured_backward_factor']:.2f})")
    verdicts = []
    if "page" in parts:
        counter, wall, cpu, what = page_workload(classifier)
        print(f"\nthe Heatmaps page, cold ({what}):")
        flops = table(counter, shape, rates, wall, cpu)
        verdicts.append(verdict("page cold", flops, cpu, PAGE_TARGET_S, rates, args.cores))
    if "dataset" in parts:
        counter, wall, cpu, done = dataset_workload(args.model, args.limit, args.random_orderings)
        print(f"\ncomp + suff (ERASER, {args.random_orderings} random orderings), six methods, {done} SST-2 dev "
              f"sentences, through run_evaluation:")
        flops = table(counter, shape, rates, wall, cpu)
        sample, every = length_weights(classifier, done), length_weights(classifier, None)
        projected, note = project_to_dev(totals_by_label(counter.batches, shape), sample, every, shape,
                                         "integrated_gradients", counter.classifier.first_token.enabled)
        total = sum(projected.values())
        print(f"  projection to the {len(every)} (TFLOP): " +
              ", ".join(f"{label} {value / 1e12:.2f}" for label, value in sorted(projected.items(),
                                                                                  key=lambda i: -i[1]))
              + f"; total {total / 1e12:.2f}\n  ({note})")
        verdicts.append(verdict(f"all {len(every)} sentences from {done}", total, cpu * total / flops,
                                DATASET_TARGET_S, rates, args.cores, projected=True))
    if args.ferret:
        counter, wall, cpu = ferret_workload(classifier, args.ferret)
        print(f"\nferret's six explainers at ferret's settings, {args.ferret} SST-2 dev sentences:")
        flops = table(counter, shape, rates, wall, cpu)
        verdicts.append(verdict(f"ferret's six on the first {args.ferret} sentences (target: half of ferret's "
                                f"{FERRET_SECONDS_PER_SENTENCE:.1f} s per sentence, measured on the first 20, idle, "
                                f"2 threads{'' if args.ferret == 20 else '; pro rata'})", flops, cpu,
                                FERRET_SECONDS_PER_SENTENCE * args.ferret / 2, rates, args.cores))
    print(f"\nverdicts (the FLOPs are exact and load-free; the rates and CPU seconds are this run's, load {load()}, "
          f"{torch.get_num_threads()} torch thread(s) for the work; floors assume perfect scaling over the cores):")
    for line in verdicts:
        print(f"  {line}")
    return 0


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


if __name__ == "__main__":
    sys.exit(main())
