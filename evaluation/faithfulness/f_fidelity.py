"""F-Fidelity: FFid+ and FFid- (Zheng et al., ICLR 2025, arXiv 2410.02970, s. 3.2; the authors' code
github.com/AslanDing/Finetune-Fidelity, ``evaluation_model.py`` ``ours_random_MoRF`` / ``ours_random_LeRF``).

The model that is measured is the explained model's fine-tuned copy (``f_fidelity_finetune.py``: random word
removal at ratio beta, explanation-agnostic). For a sparsity level s, the explanation is the top-s fraction of the
words (at least one word). Stochastic removal: each word of the chosen part is removed independently with probability
alpha, capped so that at most beta x n words are removed on average (``ratio = beta n / |part|`` when
``alpha |part| > beta n``), so the removed inputs look like the fine-tune's inputs. With N draws m_1..m_N:

    FFid+(s) = score(x) - 1/N sum_i score(x without m_i),  m_i drawn from the top-s words      (higher is better)
    FFid-(s) = score(x) - 1/N sum_i score(x without m_i),  m_i drawn from the bottom-s words   (lower is better)

and each metric is the mean over the sparsity levels (the paper's tables average over levels). ``score`` is the
probability of the explained class (default; the code's comment: "easy to extend to the probability-based
version") or the paper's label version, 1 when the fine-tuned model predicts the explained class. FFid- takes the
bottom-s words as the authors' evaluation code does; over the symmetric grid of levels that equals removing from
the complement of the top-(1-s) explanation.

Defaults are the paper's: alpha 0.5, beta 0.1, N 50 and the levels 5, 10, ..., 95 % (preset ``paper``); the
``quick`` preset (levels 10, 30, 50, 70, 90 %, N 20) costs 200 forward passes per explanation instead of 1,900.
Contrast class (docs/peers.md): with a contrast class B, score(x) is p(A | x) - p(B | x), or for the label
score 1 where the model ranks A above B; the contrast class is the explained model's (the explanation's), read on
the measured (fine-tuned) copy.

All methods of one input and the random explanations share the uniform draws (common random numbers) and one
batched call of the perturbation engine.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

from evaluation.baselines import orderings_seed, random_explanation
from evaluation.faithfulness.curves import RemovalOptions, contrast_class, rank_words, target_class
from evaluation.faithfulness.f_fidelity_finetune import find_finetuned, load_finetuned
from evaluation.metric import BatchResult, Evaluator, Metric, MetricValues, RunOptions, register_evaluator
from explainers.explanation import Explanation
from explainers.params import options_from, param, validate
from models import Operator, UserFacingError, perturbed_proba

REFERENCE = ("Zheng et al., ICLR 2025 (arXiv 2410.02970), s. 3.2: FFid+ / FFid- with stochastic removal on the "
             "fine-tuned model (s. 3.1); code AslanDing/Finetune-Fidelity")


class FFidPreset(TypedDict):
    levels: tuple[float, ...]  # sparsity levels (fractions of the words)
    samples: int  # random removals per level
    description: str


PRESETS: dict[str, FFidPreset] = {
    "paper": {"levels": tuple(round(0.05 * i, 2) for i in range(1, 20)), "samples": 50,
              "description": "F-Fidelity paper: sparsity 5, 10, ..., 95 %, N = 50 draws"},
    "quick": {"levels": (0.1, 0.3, 0.5, 0.7, 0.9), "samples": 20,
              "description": "quick: sparsity 10, 30, 50, 70, 90 %, N = 20 draws"},
}
SCORES = {"probability": "p(explained class) (default)", "label": "1 if the prediction is the explained class (the "
                                                                  "paper's label-based fidelity)"}
MODELS = {"finetuned": "the explained model's F-Fidelity fine-tuned copy (build it first)",
          "original": "the explained model itself (no fine-tune: plain stochastic-removal fidelity, OOD-prone)"}


@dataclass(frozen=True)
class FFidOptions:
    ffid_preset: str = param("quick", "F-Fidelity preset", "; ".join(f"{k}: {v['description']}"
                                                                      for k, v in PRESETS.items()),
                             choices=tuple(PRESETS))
    ffid_samples: int = param(0, "F-Fidelity draws N", "random removals per sparsity level (0 = the preset's)",
                              min=0, max=1000)
    ffid_alpha: float = param(0.5, "F-Fidelity alpha", "probability that a word of the chosen part is removed "
                              "(paper default 0.5)", min=0.0, max=1.0)
    ffid_beta: float = param(0.1, "F-Fidelity beta", "the fine-tune's random removal ratio; also caps the expected "
                             "words removed at beta x n (paper default 0.1)", min=0.01, max=0.9)
    ffid_score: str = param("probability", "F-Fidelity score", "; ".join(f"{k}: {v}" for k, v in SCORES.items()),
                            choices=tuple(SCORES))
    ffid_model: str = param("finetuned", "F-Fidelity model", "; ".join(f"{k}: {v}" for k, v in MODELS.items()),
                            choices=tuple(MODELS))

    def __post_init__(self):
        validate(self)

    @property
    def levels(self) -> tuple[float, ...]:
        return PRESETS[self.ffid_preset]["levels"]

    @property
    def samples(self) -> int:
        return self.ffid_samples or PRESETS[self.ffid_preset]["samples"]


def removal_probability(part: int, n_words: int, alpha: float, beta: float) -> float:
    """alpha, lowered so that no more than beta x n words are removed on average (the code's ``use_max``)."""
    if part <= 0:
        return 0.0
    return beta * n_words / part if alpha * part > beta * n_words else alpha


def part_size(level: float, n_words: int) -> int:
    """Words in the explanation at sparsity ``level`` (floor, at least one)."""
    return min(n_words, max(1, int(level * n_words + 1e-9)))


def uniform_draws(seed: int, encoding_key: str, n_levels: int, samples: int, n_words: int) -> np.ndarray:
    """U(0, 1) draws (levels, 2 sides, N, words): word w is removed in draw i where its draw is below the ratio."""
    return np.random.default_rng([orderings_seed(seed, encoding_key), 18]).random((n_levels, 2, samples, n_words))


def removal_rows(order: np.ndarray, levels, draws: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """Keep masks (levels x 2 x N, words) of one ranking (most important word first): side 0 removes from the top-s
    words (FFid+), side 1 from the bottom-s words (FFid-)."""
    n = len(order)
    n_levels, _, samples, _ = draws.shape
    keep = np.ones((n_levels, 2, samples, n), dtype=bool)
    for index, level in enumerate(levels):
        size = part_size(level, n)
        ratio = removal_probability(size, n, alpha, beta)
        for side, part in enumerate((order[:size], order[n - size:])):
            chosen = np.zeros(n, dtype=bool)
            chosen[part] = True
            keep[index, side] = ~(chosen[None, :] & (draws[index, side] < ratio))
    return keep.reshape(-1, n)


def score_of(probabilities: np.ndarray, target: int, score: str, foil: int | None = None) -> np.ndarray:
    if foil is not None:
        return contrast_score_of(probabilities, target, score, foil)
    if score == "label":
        return (probabilities.argmax(axis=1) == target).astype(np.float64)
    return probabilities[:, target].astype(np.float64)


def contrast_score_of(probabilities: np.ndarray, target: int, score: str, foil: int) -> np.ndarray:
    """With a contrast class B (docs/peers.md): p(A) - p(B), or for the label score 1 where the model
    ranks A above B (the prediction "A rather than B" holds)."""
    if score == "label":
        return (probabilities[:, target] > probabilities[:, foil]).astype(np.float64)
    return (probabilities[:, target] - probabilities[:, foil]).astype(np.float64)


def ffid_values(classifier, encoding, orderings: list[np.ndarray], target: int, options: FFidOptions,
                draws: np.ndarray, operator: str, foil: int | None = None) -> list[dict]:
    """FFid+ / FFid- (and their per-level curves) of each ranking, in one batched call of the perturbation engine."""
    levels = options.levels
    rows = [np.ones((1, encoding.n_words), dtype=bool)]
    rows += [removal_rows(order, levels, draws, options.ffid_alpha, options.ffid_beta) for order in orderings]
    scores = score_of(perturbed_proba(classifier, encoding, np.vstack(rows), operator), target, options.ffid_score,
                      foil)
    full, per_order = scores[0], len(levels) * 2 * draws.shape[2]
    out = []
    for k in range(len(orderings)):
        block = scores[1 + k * per_order:1 + (k + 1) * per_order].reshape(len(levels), 2, -1).mean(axis=2)
        plus, minus = full - block[:, 0], full - block[:, 1]
        out.append({"ffid_plus": float(plus.mean()), "ffid_minus": float(minus.mean()),
                    "curve": {"levels": list(levels), "ffid_plus": plus.tolist(), "ffid_minus": minus.tolist(),
                              "score_full": float(full)}})
    return out


def measured_model(classifier, options: FFidOptions, operator: str):
    """The model FFid is computed on: the fine-tuned copy (found by the explained model's fingerprint) or, when
    asked, the explained model itself."""
    if options.ffid_model == "original":
        return classifier, "explained model (no fine-tune)"
    manifest = find_finetuned(classifier.fingerprint, options.ffid_beta, operator)
    if manifest is None:
        raise UserFacingError(
            f"F-Fidelity needs a fine-tuned copy of '{classifier.name}' (beta {options.ffid_beta:g}, operator "
            f"{operator}): build it with `python cli.py prepare-ffid --model MODEL --beta {options.ffid_beta:g} "
            f"--operator {operator}` or the button on the Faithfulness page, or set ffid_model to 'original'.")
    return load_finetuned(classifier, manifest), f"fine-tuned copy {manifest['folder']} ({manifest['steps']} steps)"


def operator_of(removal: RemovalOptions) -> str:
    return removal.operator or Operator.MASK.value


def _detail(options: FFidOptions, operator: str, model_label: str, curve: dict) -> dict:
    return {"preset": options.ffid_preset, "alpha": options.ffid_alpha, "beta": options.ffid_beta,
            "samples": options.samples, "score": options.ffid_score, "operator": operator, "model": model_label,
            "curve": curve, "reference": REFERENCE}


def ffid_batch(evaluators: list[Evaluator], classifier, encoding, example, explanations: dict, options: dict,
               n_random: int) -> BatchResult:
    """Every method's FFid and ``n_random`` random explanations' of one input, in one engine call."""
    result = BatchResult()
    if not explanations:
        return result
    removal = options_from(RemovalOptions, options)
    ffid = options_from(FFidOptions, options)
    operator = operator_of(removal)
    measured, model_label = measured_model(classifier, ffid, operator)
    first = next(iter(explanations.values()))
    logits0 = classifier.logits_of(encoding)
    target = target_class(removal, logits0, example, first, contrast_ok=True)
    foil = [contrast_class(removal, logits0, target, e) for e in explanations.values()][0]  # refuses a mismatch
    seed = options_from(RunOptions, options).seed
    rng = np.random.default_rng(orderings_seed(seed, encoding.key))
    randoms = [random_explanation(encoding, target, classifier.labels[target], rng.random(encoding.n_words), i, seed)
               for i in range(n_random)]
    named = list(explanations.items()) + [(None, r) for r in randoms]
    for _, explanation in named:
        if int(explanation.target) != target:
            raise ValueError(f"F-Fidelity: the explanations explain classes {explanation.target} and {target}; "
                             f"explain and measure one class.")
    orderings = [rank_words(e.word_scores, removal.seed, removal.rank_by) for _, e in named]
    draws = uniform_draws(seed, encoding.key, len(ffid.levels), ffid.samples, encoding.n_words)
    values = ffid_values(measured, encoding, orderings, target, ffid, draws, operator, foil)
    per_method = {}
    for (name, _), value in zip(named, values):
        if name is None:
            for metric_id in ("ffid_plus", "ffid_minus"):
                result.random.setdefault(metric_id, []).append(value[metric_id])
            continue
        detail = _detail(ffid, operator, model_label, value["curve"])
        if foil is not None:
            detail["contrast"] = {"index": foil, "read": "p(A) - p(B)" if ffid.ffid_score == "probability"
                                  else "1 where p(A) > p(B)"}
        per_method[name] = MetricValues({m: value[m] for m in ("ffid_plus", "ffid_minus")},
                                        details={m: detail for m in ("ffid_plus", "ffid_minus")})
    for chosen in evaluators:
        result.values[chosen.id] = per_method
    return result


def compute(classifier, encoding, explanation: Explanation, example, options) -> MetricValues:
    """FFid of one explanation (the batch hook with no random baseline)."""
    batch = ffid_batch([EVALUATOR], classifier, encoding, example, {"method": explanation}, options, 0)
    return batch.values[EVALUATOR.id]["method"]


_COMMON: dict[str, Any] = dict(family="faithfulness", reference=REFERENCE, operator=Operator.MASK.value, preset="f-fidelity",
               params={"removal": "stochastic: each word of the part with probability alpha, capped at beta n",
                       "model": "fine-tuned with random removal at ratio beta", "defaults": "alpha 0.5, beta 0.1",
                       "levels": "preset paper: 5..95 %, N 50; quick: 10..90 % by 20, N 20"})
METRICS = (
    Metric(id="ffid_plus", label="FFid+ (F-Fidelity)", higher_is_better=True, range=(-1.0, 1.0),
           description="Drop of p(explained class) on the fine-tuned copy when words of the top-s explanation are "
                       "removed at random (ratio alpha, at most beta n words), mean over draws and sparsity levels. "
                       "Higher is better.", **_COMMON),
    Metric(id="ffid_minus", label="FFid- (F-Fidelity)", higher_is_better=False, range=(-1.0, 1.0),
           description="The same drop when the removed words come from the bottom-s words (outside the "
                       "explanation). Lower (near 0) is better.", **_COMMON),
)
EVALUATOR = register_evaluator(Evaluator(id="ffid", label="F-Fidelity (Zheng et al. 2025: FFid+ / FFid- on a copy "
                                         "fine-tuned with random removal)", metrics=METRICS, compute=compute,
                                         batch=ffid_batch, options=FFidOptions))
