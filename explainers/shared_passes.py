"""Passes several methods share: run once, every member derives its own scores from it.

| the pass                                                   | its members                                        |
|------------------------------------------------------------|----------------------------------------------------|
| one forward + backward w.r.t. the word embeddings          | saliency (every reduction), input x gradient       |
| (same output: logit / probability / log-probability)       | (signed and absolute)                              |
| one IG path (same steps, rule, baseline, output, batch)    | integrated gradients, signed and absolute          |
| the input without each word (same removal operator)        | leave-one-out, occlusion with a window of 1 word   |
|                                                            | (any score: the logits are the same)               |

How: a method that can share names its pass (``shared_pass()``, a ``SharedPass``) and computes it through
``compute_pass``. Inside ``sharing()`` (a page's run, a dataset cell) the first member computes the pass and
the others, for the same model, input and target, reuse it; outside, every method computes its own. Alone or
grouped, a member runs the very same code on the very same pass, so its scores are the same either way; the
group only saves the repeated passes. ``pass_groups`` finds the groups before anything runs (the plan shows
them and costs the followers nothing), ``explain_member`` / ``explain_all`` store each member in the
explanation cache under its own key with a provenance that names the pass and the members it was shared with.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np
import torch

import settings
from explainers import cache as cache_module
from explainers.base import Explainer
from explainers.captum_lazy import captum_attr
from explainers.contrast import contrast_columns, current_foil
from explainers.embedding_forward import OUTPUT_TRANSFORMS, baseline_embeddings, embedding_function
from explainers.explanation import Explanation
from models import Encoding, Operator, TextClassifier
from models.metering import metered
from models.perturb import perturbed_logits

T = TypeVar("T")


@dataclass(frozen=True)
class SharedPass:
    """What decides a pass: its kind and settings (members with equal ``SharedPass`` share it)."""

    kind: str  # "gradient", "ig-path", "without-each-word"
    settings: tuple
    per_target: bool = True  # False: the pass does not depend on the target class (removal logits)

    def label(self) -> str:
        what = {"gradient": "one forward + backward w.r.t. the word embeddings",
                "ig-path": "one integrated-gradients path",
                "without-each-word": "the input without each word, one batch"}[self.kind]
        return f"{what} ({', '.join(f'{k}={v}' for k, v in self.settings)})"


def shared_pass_of(explainer: Explainer) -> SharedPass | None:
    """The pass a method can share, or None (methods without the ``shared_pass`` hook share nothing)."""
    hook = getattr(explainer, "shared_pass", None)
    shared = hook() if hook is not None else None
    if shared is None or getattr(explainer, "contrast", None) is None:
        return shared
    return dataclasses.replace(shared, settings=(*shared.settings, ("contrast", explainer.contrast)))


# ----- the memo of one run ----------------------------------------------------------------------------------------
class PassMemo:
    """The passes computed in one ``sharing()`` block, and how many times each was computed / reused."""

    def __init__(self):
        self.values: dict[tuple, object] = {}
        self.computed = 0
        self.reused = 0


_MEMO: ContextVar[PassMemo | None] = ContextVar("shared_passes", default=None)  # per thread / session


def sharing_on() -> bool:
    """Whether passes are shared: yes unless ``EXWB_SHARE_PASSES=0`` (benchmarks compare both ways)."""
    return settings.share_passes()


@contextmanager
def sharing(enabled: bool | None = None):
    """Share passes among the methods run inside (a nested block joins the outer one; ``enabled=False``, or
    ``EXWB_SHARE_PASSES=0`` when not given, runs every method on its own, e.g. to measure what sharing saves)."""
    if not (sharing_on() if enabled is None else enabled):
        token = _MEMO.set(None)
        try:
            yield None
        finally:
            _MEMO.reset(token)
        return
    outer = _MEMO.get()
    if outer is not None:
        yield outer
        return
    memo = PassMemo()
    token = _MEMO.set(memo)
    try:
        yield memo
    finally:
        _MEMO.reset(token)


def compute_pass(shared: SharedPass, classifier: TextClassifier, encoding: Encoding, target: int,
                 compute: Callable[[], T]) -> T:
    """``compute()``, or the value a member computed before in the same ``sharing()`` block."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    key = memo_key(shared, classifier, encoding, target)
    if key in memo.values:
        memo.reused += 1
        return cast(T, memo.values[key])  # the key names the pass, so its value is what this compute returned
    value = compute()
    memo.values[key] = value
    memo.computed += 1
    return value


def memo_key(shared: SharedPass, classifier: TextClassifier, encoding: Encoding, target: int) -> tuple:
    foil = current_foil() if shared.per_target else None  # a contrastive pass is another pass (explainers/contrast.py)
    return classifier.fingerprint, id(classifier.model), encoding.key, target if shared.per_target else None, shared, foil


# ----- the passes -------------------------------------------------------------------------------------------------
def gradient_pass(classifier: TextClassifier, encoding: Encoding, target: int,
                  output: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(word embeddings, d output[target] / d embeddings), both (1, tokens, hidden)."""
    shared = SharedPass("gradient", (("output", output),))

    def compute():
        forward, embeddings = embedding_function(classifier, encoding, output)
        gradient = captum_attr.Saliency(forward).attribute(embeddings.clone().requires_grad_(), target=target,
                                                           abs=False)
        return embeddings, gradient.detach()

    return compute_pass(shared, classifier, encoding, target, compute)


@dataclass(frozen=True)
class IGPath:
    """What one IG path gives: attributions per hidden unit, the convergence delta, f(input) and f(x) - f(b)."""

    attribution: torch.Tensor  # (1, tokens, hidden)
    delta: float
    f_input: float
    gap: float
    batch: dict | None = None  # computed with other inputs (``ig_paths``): their number, seconds and passes


def ig_settings(params) -> SharedPass:
    return SharedPass("ig-path", (("n_steps", params.n_steps), ("method", params.method),
                                  ("baseline", params.baseline), ("output", params.output),
                                  ("internal_batch_size", params.internal_batch_size)))


def ig_pass(classifier: TextClassifier, encoding: Encoding, target: int, params) -> IGPath:
    def compute():
        forward, embeddings = embedding_function(classifier, encoding, params.output)
        baseline = baseline_embeddings(classifier, encoding, params.baseline)
        # path points per batch: the parameter, within the memory budget of a backward (models/memory.py)
        rows = classifier.rows_per_batch(encoding.n_tokens, params.internal_batch_size, within_batch_tokens=False)
        attribution = classifier.run_halving(lambda batch: captum_attr.IntegratedGradients(forward).attribute(
            embeddings, baselines=baseline, target=target, n_steps=params.n_steps, method=params.method,
            internal_batch_size=batch), rows, encoding.n_tokens)
        (f_input,), (gap,), (delta,) = path_ends(forward, embeddings, baseline, target, attribution)
        return IGPath(attribution.detach(), delta, f_input, gap)

    return compute_pass(ig_settings(params), classifier, encoding, target, compute)


def path_ends(forward, embeddings: torch.Tensor, baseline: torch.Tensor, target: int | torch.Tensor,
              attribution: torch.Tensor) -> tuple[list[float], list[float], list[float]]:
    """f(input), f(x) - f(b) and the convergence delta (Captum's: sum of the attributions - (f(x) - f(b))) of each
    input of a batch, from one forward of inputs and baselines together: Captum's ``return_convergence_delta``
    runs the baselines and the inputs as two more batches, and the gap needed them a third and fourth time."""
    n = embeddings.shape[0]
    with torch.no_grad():
        outputs = forward(torch.cat([embeddings, baseline]))
        rows = torch.arange(n, device=outputs.device)
        targets = torch.as_tensor(target, device=outputs.device).expand(n)
        ends, starts = outputs[rows, targets], outputs[n + rows, targets]
        gaps = ends - starts
        deltas = attribution.reshape(n, -1).sum(dim=1) - gaps
    return ends.tolist(), gaps.tolist(), deltas.tolist()


def batches_inputs(classifier: TextClassifier) -> bool:
    """Whether ``ig_paths`` can pad several inputs into one batch: an encoder read at its first token (right
    padding, a mask); decoders and encoder-decoders read a position that padding moves, so they run one by one."""
    return classifier.summary_token == "first" and not classifier.causal


def ig_paths(classifier: TextClassifier, encodings: Sequence[Encoding], targets: Sequence[int], params) -> list[IGPath]:
    """The IG paths of several inputs in shared batches (dataset runs): the inputs padded to the
    longest, the path points of all of them in forwards of at most ``classifier.max_batch_tokens`` tokens, the
    ends of all of them in one more. Each equals ``ig_pass`` of its input alone up to float32 reordering: a
    padded position is masked out of attention and equals its baseline (x - b = 0, so it adds nothing).
    ``params.internal_batch_size`` is not used: the token budget sets the rows per forward."""
    n, width = len(encodings), max(e.n_tokens for e in encodings)
    device = classifier.device
    ids = torch.full((n, width), classifier.tokenizer.pad_token_id, dtype=torch.long, device=device)
    mask = torch.zeros((n, width), dtype=torch.long, device=device)
    types = torch.zeros_like(ids) if all(e.token_type_ids is not None for e in encodings) else None
    baseline = torch.zeros((n, width, classifier.model.get_input_embeddings().embedding_dim), device=device)
    for row, encoding in enumerate(encodings):
        length = encoding.n_tokens
        ids[row, :length] = torch.tensor(encoding.input_ids, device=device)
        mask[row, :length] = 1
        if types is not None:
            types[row, :length] = torch.tensor(encoding.token_type_ids, device=device)
        baseline[row, :length] = baseline_embeddings(classifier, encoding, params.baseline)[0]
    embeddings = classifier.word_embeddings(ids).detach()
    padded = ~mask.bool()
    baseline[padded] = embeddings[padded]  # x - b = 0 where there is no token
    transform = OUTPUT_TRANSFORMS[params.output]

    def forward(inputs_embeds, attention_mask, token_type_ids):
        return contrast_columns(transform(classifier.forward_embeds(inputs_embeds, attention_mask, token_type_ids)))

    # path steps per backward (each step is n rows of width tokens): the memory budget of a backward
    steps_per_forward = classifier.rows_per_batch(n * width, params.n_steps)
    with metered() as meter:
        attribution = classifier.run_halving(lambda steps: captum_attr.IntegratedGradients(forward).attribute(
            embeddings, baselines=baseline, target=list(targets), additional_forward_args=(mask, types),
            n_steps=params.n_steps, method=params.method, internal_batch_size=n * steps).detach(),
            steps_per_forward, n * width)
        def ends_forward(x):  # the inputs and their baselines, stacked: the mask and types twice
            return forward(x, torch.cat([mask, mask]), None if types is None else torch.cat([types, types]))

        f_inputs, gaps, deltas = path_ends(ends_forward, embeddings, baseline, torch.tensor(targets), attribution)
    batch = {"inputs": n, "seconds": round(meter.seconds, 4), "forward_passes": meter.forward_passes,
             "backward_passes": meter.backward_passes, "batches": meter.batches}
    return [IGPath(attribution[row:row + 1, :encoding.n_tokens].clone(), deltas[row], f_inputs[row], gaps[row], batch)
            for row, encoding in enumerate(encodings)]


GROUP_FORWARDS = 4  # a group's path points fill about this many forwards of the token budget
# padded tokens a group may add, as a share of its real tokens: on a CPU every padded token costs as much as a real
# one (16 % more CPU time on SST-2 without this cap: measured 1.11x), so groups gather inputs of (nearly) one length
MAX_PADDING = 0.02


def prefill_ig_paths(classifier: TextClassifier, encodings: Sequence[Encoding], targets: Sequence[int],
                     explainers: Sequence[Explainer]) -> int:
    """Compute the IG paths the ``explainers`` will ask for on these inputs, in length-sorted groups of shared
    batches (``ig_paths``), and leave them in the current ``sharing()`` block, where ``ig_pass`` finds them.
    A group holds the inputs whose path points fill ``GROUP_FORWARDS`` forwards of the token budget (at least
    one input) and whose padding stays under ``MAX_PADDING`` of their tokens: full forwards, little padding. Returns the number of paths computed; 0 outside ``sharing()``
    or for a model that cannot batch inputs."""
    memo = _MEMO.get()
    if memo is None or not batches_inputs(classifier):
        return 0
    paths_asked = {}
    for explainer in explainers:
        shared = shared_pass_of(explainer)
        if shared is not None and shared.kind == "ig-path":
            paths_asked[shared] = explainer.params
    computed = 0
    for shared, params in paths_asked.items():
        keys = [memo_key(shared, classifier, e, t) for e, t in zip(encodings, targets)]
        todo = sorted({keys[i]: i for i in range(len(keys)) if keys[i] not in memo.values}.values(),
                      key=lambda i: encodings[i].n_tokens)
        budget = GROUP_FORWARDS * classifier.max_batch_tokens
        group: list[int] = []
        for index in [*todo, None]:
            width = encodings[index].n_tokens if index is not None else 0  # the longest so far (sorted)
            tokens = sum(encodings[i].n_tokens for i in group) + width
            fits = index is not None and (len(group) + 1) * width * params.n_steps <= budget \
                and (len(group) + 1) * width <= (1 + MAX_PADDING) * tokens
            if group and not fits:
                paths = ig_paths(classifier, [encodings[i] for i in group], [targets[i] for i in group], params)
                memo.values.update((keys[i], path) for i, path in zip(group, paths))
                computed += len(group)
                group = []
            if index is not None:
                group.append(index)
    return computed


def removal_settings(operator: Operator | str) -> SharedPass:
    return SharedPass("without-each-word", (("operator", Operator(operator).value),), per_target=False)


def without_each_word(classifier: TextClassifier, encoding: Encoding, operator: Operator | str) -> np.ndarray:
    """Logits of the input without word i, row i (one engine batch); target-independent."""
    def compute():
        keep = ~np.eye(encoding.n_words, dtype=bool)  # row i = without word i
        logits = perturbed_logits(classifier, encoding, keep, operator)
        logits.setflags(write=False)  # shared by the members: nobody changes it in place
        return logits

    return compute_pass(removal_settings(operator), classifier, encoding, -1, compute)


def known_without_each_word(classifier: TextClassifier, encoding: Encoding,
                            operator: Operator | str) -> np.ndarray | None:
    """``without_each_word``'s logits if a method (leave-one-out, occlusion of window 1) computed them in this
    ``sharing()`` block, else None: a removal curve's rows without one word are those rows."""
    memo = _MEMO.get()
    if memo is None:
        return None
    logits = memo.values.get(memo_key(removal_settings(operator), classifier, encoding, -1))
    return logits if isinstance(logits, np.ndarray) else None


# ----- groups -----------------------------------------------------------------------------------------------------
def pass_groups(explainers: Sequence[Explainer]) -> list[list[int]]:
    """Indices of the explainers that share a pass (groups of two or more, in order; the first computes it)."""
    groups: dict[SharedPass, list[int]] = {}
    for index, explainer in enumerate(explainers):
        shared = shared_pass_of(explainer)
        if shared is not None:
            groups.setdefault(shared, []).append(index)
    return [indices for indices in groups.values() if len(indices) > 1]


def member_name(explainer: Explainer) -> str:
    return explainer.id + (f":{explainer.preset}" if explainer.preset else "")


def with_shared_provenance(explanation: Explanation, explainer: Explainer, group: Sequence[Explainer]) -> Explanation:
    """The explanation with ``provenance['shared_pass']``: the pass, the members it was shared with and which of
    them computed it (that one's forward / backward counts include the pass, the others' do not)."""
    shared = shared_pass_of(explainer)
    others = [member_name(e) for e in group if e is not explainer]
    if shared is None or not others:
        return explanation
    record = {"pass": shared.label(), "shared_with": others, "computed_by": member_name(group[0])}
    return dataclasses.replace(explanation, provenance={**explanation.provenance, "shared_pass": record})


_FROM_MODULE = object()  # the cache is read at each call (benchmarks and tests point DEFAULT_CACHE elsewhere)


def explain_member(explainer: Explainer, classifier: TextClassifier, encoding: Encoding, target: int | None,
                   group: Sequence[Explainer] = (), cache=_FROM_MODULE, key: str | None = None) -> Explanation:
    """``explain_cached`` for a member of a pass group (run inside ``sharing()``): a fresh result says in its
    provenance that it came from a shared pass before it is stored under the member's own key (``key``: when the
    caller has computed it already)."""
    cache = cache_module.DEFAULT_CACHE if cache is _FROM_MODULE else cache
    return cache_module.explain_cached(explainer, classifier, encoding, target, cache, key=key,
                                       finish=lambda fresh: with_shared_provenance(fresh, explainer, group))


def cached_any_target(explainer: Explainer, classifier: TextClassifier, encoding: Encoding, target: int | None,
                      cache) -> Explanation | None:
    """The cached explanation for ``target``; for a chosen class that is the predicted one (a run's gold label),
    also the entry a page stored for "the predicted class", which explains the same class."""
    hit = cache_module.cached_only(explainer, classifier, encoding, target, cache)
    if hit is None and target is not None and target == int(np.argmax(classifier.logits_of(encoding))):
        hit = cache_module.cached_only(explainer, classifier, encoding, None, cache)
    return hit


def explain_all(explainers: Sequence[Explainer], classifier: TextClassifier, encoding: Encoding, target: int | None,
                cache=_FROM_MODULE, share: bool | None = None,
                on_error: Callable[[int, Exception], None] | None = None) -> list[Explanation | None]:
    """Every explainer's explanation through the cache (any page's or earlier run's entries are served); the ones
    to compute are grouped by the passes they share and each group's pass runs once (``share=False``: each
    method alone, for comparison). Errors propagate, as from ``explain_cached``, unless ``on_error(index, error)``
    takes them (that method's result is then None)."""
    cache = cache_module.DEFAULT_CACHE if cache is _FROM_MODULE else cache
    results: list[Explanation | None] = [None] * len(explainers)
    todo = []
    for index, explainer in enumerate(explainers):
        hit = None if cache is None else cached_any_target(explainer, classifier, encoding, target, cache)
        if hit is not None:
            results[index] = hit
        else:
            todo.append(index)
    share = sharing_on() if share is None else share
    group_of: dict[int, list[Explainer]] = {}
    if share:
        for indices in pass_groups([explainers[i] for i in todo]):
            members = [explainers[todo[i]] for i in indices]
            for i in indices:
                group_of[todo[i]] = members
    with sharing(share):
        for index in todo:
            try:
                results[index] = explain_member(explainers[index], classifier, encoding, target,
                                                group_of.get(index, ()), cache)
            except Exception as error:
                if on_error is None:
                    raise
                on_error(index, error)
    return results
