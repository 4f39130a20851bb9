"""Soft normalized sufficiency and comprehensiveness (Zhao & Aletras, ACL 2023, arXiv 2305.10496, s. 3).

Instead of deleting the top-k words, every element of a word's token embeddings is dropped (zeroed) at random,
with a probability tied to the word's importance, so the whole attribution vector counts, not just its top-k:

- Soft comprehensiveness: element dropped with probability p = importance (the important words mostly vanish);
  Soft-C = max(0, p(y | x) - p(y | x')).
- Soft sufficiency: element dropped with probability p = 1 - importance (the important words mostly stay);
  Soft-S = 1 - max(0, p(y | x) - p(y | x')).
- Both normalized by the all-masked input x0 (every word token's embedding zeroed), as the paper does after
  Carton et al. 2020: with S0 = 1 - max(0, p(y | x) - p(y | x0)),
  Soft-NC = Soft-C / (1 - S0),  Soft-NS = (Soft-S - S0) / (1 - S0). Both: higher is better. NaN when
  p(y | x0) >= p(y | x) (nothing to normalize by).

Ill-conditioned inputs: both normalizations divide by d = p(y | x) - p(y | x0). When the all-masked
input barely moves the prediction, d is tiny and the ratio explodes (on one SST-2 dev sentence d = 0.0036 gave
Soft-NC ~125, Soft-NS ~-10; Soft-NC is nominally in [0, 1]). An input with 0 < d < ``ILL_CONDITIONED`` = 0.05 keeps
its values, marked ``ill_conditioned`` in their details (and in the run's rows and exports, with ``denominator``);
dataset means leave them out and say how many (``summary.summarize``: ``excluded`` and their own mean,
``excluded_mean``). Why 0.05: below it a change of p by 0.05 under one mask is more than the whole normalization
range, so the value measures the noise of the draw rather than a share of the all-masked drop (Soft-NC > 1, Soft-NS
far below 0). 0.05 is 5 % of the probability scale, the smallest drop we read as "the all-masked input moved the
prediction"; the threshold is a constant here, stated in docs/faithfulness.md.

Documents read in windows (``soft_documents.py``): x' is the whole perturbed document (one draw per
token and dimension of the document) read in the document's windows, p(y | x') the softmax of the windows'
aggregated logits (the document classifier's prediction); x0 masks every word token of the document.

Importance: the word scores min-max normalized to [0, 1] (signed: the most positive word is 1; with
``rank_by = absolute`` on |score|); a constant explanation gives every word 0.5. Each word's importance applies to
all its sub-word tokens; special tokens are never dropped. ``soft_samples`` Bernoulli masks are drawn per
(seed, input) with numpy (``mask_draws``) and the metric is averaged over them.

Presets (evaluators): ``soft`` (``soft_samples`` masks, default 1: the paper's formulas score one perturbed x' per
instance), ``soft-zhao-aletras`` (always 1 mask) and ``soft-20-masks`` (always 20: a lower-variance estimate, the
former default); the presets' metric ids carry their name in brackets.

Contrast class (docs/peers.md): with a contrast class B every p(y | .) above reads the margin
d(.) = p(A | .) - p(B | .) instead (Soft-C = max(0, d(x) - d(x')), normalized by max(0, d(x) - d(x0)), and so on):
how much of A's lead over B the soft removal takes away. On two classes d = 2 p(A) - 1, so the normalized values
equal the plain ones.

Cost: per explanation 2 x masks forward passes; per input one all-masked pass, and the clean pass is the removal
metrics' memoized one (``base_logits``). ``soft_batch`` scores every method and random explanation of an input
in one batched call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from evaluation.baselines import orderings_seed
from evaluation.faithfulness.curves import RemovalOptions, base_logits, contrast_class, target_class
from evaluation.faithfulness.pinned_preset import PinnedPreset
from evaluation.faithfulness.soft_documents import document_target_probabilities
from evaluation.metric import BatchResult, Evaluator, Metric, MetricValues, RunOptions, register_evaluator
from explainers.params import options_from, param, validate
from explainers.scores import softmax
from models import Operator
from models.windows import is_document

REFERENCE = ("Zhao & Aletras, ACL 2023 (arXiv 2305.10496), s. 3: Soft-NS / Soft-NC, normalized as Carton et al. "
             "2020 (all-masked baseline)")
CHUNK = 32  # masked copies per forward batch
ILL_CONDITIONED = 0.05  # p(y | x) - p(y | x0) below this: the normalization divides by almost nothing (docstring)


@dataclass(frozen=True)
class SoftOptions:
    soft_samples: int = param(1, "Soft masks per explanation", "Bernoulli embedding masks drawn per explanation "
                              "and averaged (Zhao & Aletras: 1, the default; the preset soft-20-masks draws 20)",
                              min=1, max=1000)

    def __post_init__(self):
        validate(self)


def importance(scores, rank_by: str = "signed") -> np.ndarray:
    """Word scores min-max normalized to [0, 1]; 0.5 everywhere when they are all equal."""
    key = np.asarray(scores, dtype=np.float64)
    key = np.abs(key) if rank_by == "absolute" else key
    key = np.nan_to_num(key, nan=np.nanmin(key) if np.isfinite(key).any() else 0.0)
    span = key.max() - key.min()
    return np.full(len(key), 0.5) if span <= 0 else (key - key.min()) / span


def mask_draws(seed: int, encoding_key: str, samples: int, n_tokens: int, dim: int) -> np.ndarray:
    """Uniform draws (samples, tokens, dim): an element is dropped where its draw is below its probability."""
    return np.random.default_rng(orderings_seed(seed, encoding_key)).random((samples, n_tokens, dim))


def token_probabilities(encoding, word_probability: np.ndarray) -> np.ndarray:
    """Drop probability of each token: its word's; 0 for special tokens."""
    token_word = encoding.token_word_array
    return np.where(token_word >= 0, word_probability[np.maximum(token_word, 0)], 0.0)


def read_out(probabilities: np.ndarray, target: int, foil: int | None) -> np.ndarray:
    """p(target) of each row; with a contrast class, p(target) - p(foil) (docs/peers.md)."""
    probabilities = np.atleast_2d(probabilities)
    return probabilities[:, target] - (probabilities[:, foil] if foil is not None else 0.0)


def _target_probabilities(classifier, encoding, embeddings: torch.Tensor, target: int,
                          foil: int | None = None) -> np.ndarray:
    tensors = classifier.tensors(encoding)
    out = []
    chunk = classifier.rows_per_batch(encoding.n_tokens, CHUNK, "forward", within_batch_tokens=False)  # the budget
    with torch.inference_mode():
        for begin in range(0, len(embeddings), chunk):
            logits = classifier.forward_embeds(embeddings[begin:begin + chunk], tensors["attention_mask"],
                                               tensors.get("token_type_ids"))
            out.append(read_out(torch.softmax(logits.float(), dim=-1).cpu().numpy(), target, foil))
    return np.concatenate(out).astype(np.float64)


def _scored_rows(encoding, embedded: torch.Tensor, draws: torch.Tensor, word_importance: np.ndarray,
                 samples: int) -> list[torch.Tensor]:
    """The ``samples`` comprehensiveness copies, then the ``samples`` sufficiency copies, of one explanation."""
    rows = []
    for probability in (word_importance, 1.0 - word_importance):  # comprehensiveness, then sufficiency
        p = torch.as_tensor(token_probabilities(encoding, probability), device=embedded.device)
        rows += list(embedded[None] * (draws[:samples] >= p[None, :, None]).to(embedded.dtype))
    return rows


def soft_scores_many(classifier, encoding, items: list[tuple[np.ndarray, int]], target: int, seed: int,
                     rank_by: str = "signed", foil: int | None = None) -> list[dict]:
    """Soft-NC and Soft-NS of several explanations of one input, each item (word scores, masks drawn).

    Shared across the items: the clean pass (``base_logits``, memoized per input, the one the removal metrics
    use too), the all-masked input (one row), and the mask draws (drawn once per (seed, input): a smaller draw
    is the first rows of a larger one). Every masked copy of every item runs in one batched call.
    """
    ids = classifier.tensors(encoding)["input_ids"]
    with torch.inference_mode():
        embedded = classifier.word_embeddings(ids)[0]  # (tokens, dim)
    n_tokens, dim = embedded.shape
    most = max((samples for _, samples in items), default=0)
    draws = torch.as_tensor(mask_draws(seed, encoding.key, most, n_tokens, dim), device=embedded.device)
    word_token = torch.as_tensor(encoding.token_word_array >= 0, device=embedded.device)
    rows = [embedded * ~word_token[:, None]]  # the all-masked x0
    for scores, samples in items:
        rows += _scored_rows(encoding, embedded, draws, importance(scores, rank_by), samples)
    # a document read in windows: x' is the whole perturbed document, read in its windows
    probabilities = document_target_probabilities(classifier, encoding, torch.stack(rows), target, CHUNK, foil) \
        if is_document(encoding) else _target_probabilities(classifier, encoding, torch.stack(rows), target, foil)
    full = float(read_out(softmax(np.atleast_2d(base_logits(classifier, encoding))), target, foil)[0])
    empty = float(probabilities[0])
    room = max(0.0, full - empty)  # 1 - S(x, x0)
    out, offset = [], 1
    for _, samples in items:
        comp_p = probabilities[offset:offset + samples]
        suff_p = probabilities[offset + samples:offset + 2 * samples]
        offset += 2 * samples
        if room <= 0:
            nc = ns = float("nan")
        else:
            nc = float(np.mean(np.maximum(0.0, full - comp_p)) / room)
            ns = float(np.mean(room - np.maximum(0.0, full - suff_p)) / room)
        out.append({"soft-comprehensiveness": nc, "soft-sufficiency": ns, "p_full": full, "p_all_masked": empty,
                    "denominator": room, "ill_conditioned": ill_conditioned(room)})
    return out


def ill_conditioned(denominator: float) -> bool:
    """Whether a normalization by ``denominator`` = p(y | x) - p(y | x0) is ill-conditioned (0 < d < 0.05; d <= 0
    gives NaN already)."""
    return bool(0.0 < denominator < ILL_CONDITIONED)


def soft_scores(classifier, encoding, scores, target: int, seed: int, samples: int,
                rank_by: str = "signed", foil: int | None = None) -> dict:
    """Soft-NC and Soft-NS of one explanation's word scores (mean over ``samples`` masks) and the probabilities."""
    return soft_scores_many(classifier, encoding, [(np.asarray(scores, dtype=np.float64), samples)], target, seed,
                            rank_by, foil)[0]


PRESETS = (
    PinnedPreset("soft", "Soft sufficiency / comprehensiveness (Zhao & Aletras 2023: embedding elements dropped by "
               "importance; soft_samples masks, default 1 as the paper)", "soft_samples", None),
    PinnedPreset("soft-zhao-aletras", "Soft sufficiency / comprehensiveness as Zhao & Aletras 2023 (one mask per "
               "explanation, whatever soft_samples says)", "soft_samples", 1, "zhao-aletras"),
    PinnedPreset("soft-20-masks", "Soft sufficiency / comprehensiveness, mean over 20 masks (a lower-variance estimate; "
               "the former default)", "soft_samples", 20, "20-masks"),
)
BY_ID = {preset.id: preset for preset in PRESETS}
BASE_IDS = ("soft-comprehensiveness", "soft-sufficiency")


def _values(preset: PinnedPreset, result: dict, samples: int, removal: RemovalOptions) -> MetricValues:
    detail = {"samples": samples, "seed": removal.seed, "importance": f"min-max of {removal.rank_by} scores",
              "p_full": result["p_full"], "p_all_masked": result["p_all_masked"],
              "denominator": result["denominator"], "ill_conditioned": result["ill_conditioned"], "reference": REFERENCE}
    if removal.contrast is not None:  # every p above read as p(A) - p(B)
        detail["contrast"] = {"requested": removal.contrast, "read": "p(A) - p(B)"}
    return MetricValues({preset.metric_id(m): result[m] for m in BASE_IDS},
                        details={preset.metric_id(m): detail for m in BASE_IDS})


def compute_for(preset: PinnedPreset):
    def compute(classifier, encoding, explanation, example, options) -> MetricValues:
        removal = options_from(RemovalOptions, options)
        samples = options_from(SoftOptions, preset.options(options)).soft_samples
        logits0 = base_logits(classifier, encoding)
        target = target_class(removal, logits0, example, explanation, contrast_ok=True)
        foil = contrast_class(removal, logits0, target, explanation)
        result = soft_scores(classifier, encoding, explanation.word_scores, target, removal.seed, samples,
                             removal.rank_by, foil)
        return _values(preset, result, samples, removal)
    return compute


compute = compute_for(BY_ID["soft"])


def soft_batch(evaluators, classifier, encoding, example, explanations: dict, options: dict,
               n_random: int) -> BatchResult:
    """Every soft evaluator on every method's explanation of one input and ``n_random`` random explanations
    (the same random word scores as the default hook draws), all masked copies in one batched call."""
    result = BatchResult()
    if not explanations:
        return result
    removal = options_from(RemovalOptions, options)
    logits0 = base_logits(classifier, encoding)
    for explanation in explanations.values():  # refuses an explanation of another class or contrast
        foil = contrast_class(removal, logits0, target_class(removal, logits0, example, explanation, True), explanation)
    explained = next(iter(explanations.values())).target
    rng = np.random.default_rng(orderings_seed(options_from(RunOptions, options).seed, encoding.key))
    random_scores = [rng.random(encoding.n_words) for _ in range(n_random)]
    presets = [BY_ID[e.id] for e in evaluators]
    items, layout = [], []
    for preset in presets:
        samples = options_from(SoftOptions, preset.options(options)).soft_samples
        for name, explanation in explanations.items():
            items.append((np.asarray(explanation.word_scores, dtype=np.float64), samples))
            layout.append((preset, name, samples))
        for scores in random_scores:
            items.append((scores, samples))
            layout.append((preset, None, samples))
    scored = soft_scores_many(classifier, encoding, items, int(explained), removal.seed, removal.rank_by, foil)
    for (preset, name, samples), values in zip(layout, scored):
        if name is not None:
            result.values.setdefault(preset.id, {})[name] = _values(preset, values, samples, removal)
        else:
            for metric_id in BASE_IDS:
                result.random.setdefault(preset.metric_id(metric_id), []).append(float(values[metric_id]))
    return result


_COMMON: dict[str, Any] = dict(family="faithfulness", higher_is_better=True, reference=REFERENCE, operator=Operator.ZERO.value)
_PARAMS = {"drop": "embedding elements, Bernoulli", "importance": "min-max normalized",
           "normalization": "all-masked input (every word embedding zeroed)"}


def _metrics(preset: PinnedPreset) -> tuple[Metric, ...]:
    samples = "soft_samples (default 1, as Zhao & Aletras)" if preset.value is None else str(preset.value)
    common: dict[str, Any] = dict(_COMMON, preset=preset.id, params={**_PARAMS, "samples": samples})
    note = "" if preset.value is None else f" ({preset.value} mask{'s' if isinstance(preset.value, int) and preset.value > 1 else ''})"
    return (
        Metric(id=preset.metric_id("soft-comprehensiveness"), label=f"Soft normalized comprehensiveness{note}",
               range=(0.0, None),
               description="Embedding elements of each word dropped with probability = its normalized importance; "
                           "max(0, p(x) - p(x')) / max(0, p(x) - p(all masked)), mean over the masks. Higher is "
                           "better.", **common),
        Metric(id=preset.metric_id("soft-sufficiency"), label=f"Soft normalized sufficiency{note}", range=(None, 1.0),
               description="Embedding elements of each word dropped with probability = 1 - its normalized "
                           "importance; 1 - max(0, p(x) - p(x')) rescaled between the all-masked input (0) and x (1). "
                           "Higher is better.", **common),
    )


METRICS = _metrics(BY_ID["soft"])
EVALUATORS_BY_PRESET = {preset.id: register_evaluator(Evaluator(
    id=preset.id, label=preset.label, metrics=_metrics(preset), compute=compute_for(preset), batch=soft_batch,
    options=SoftOptions))
    for preset in PRESETS}
EVALUATOR = EVALUATORS_BY_PRESET["soft"]
