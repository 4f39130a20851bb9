"""LIME (Ribeiro et al. 2016): a weighted linear surrogate fitted to the model's scores on inputs with random
words removed; the surrogate's coefficients are the word scores.

Captum's ``Lime`` in word-mask space (``mask_forward``): one interpretable feature per word, removed words
go through the shared perturbation engine. ``fit_lime`` computes what Captum's ``Lime`` computes (same seeded
draws, kernel and sklearn fit; a test holds them equal) on the whole sample matrix at once, so the only
per-sample work left is the model's forward. Two presets follow the papers:

- paper 000 (section 6.1 and its code, i.e. the ``lime`` package's text explainer): 1,000 samples, the first
  one the original; each sample removes k words, k uniform in 1..n; kernel sqrt(exp(-d^2 / 25^2)) with d the
  cosine distance between the binary masks times 100; Ridge surrogate (alpha 1); words deleted; the target's
  probability is explained. (The package removes every occurrence of a repeated word; here each occurrence
  is its own feature.)
- paper 003 (section 2.2.2.2 and its code): 200 samples, each word kept with probability 0.5 (Captum's
  default), Captum's exponential kernel exp(-d^2 / (2 w^2)) on cosine distance with w = 1, Lasso alpha 0.01,
  words replaced by [MASK], the target's logit explained.
- ferret (ferret-xai 0.4 ``explainers/lime.py``, the ``lime`` package's text explainer on token ids): min(n_tokens^2,
  5000) samples, n_tokens counting [CLS] and [SEP]; the package's sampling, kernel (width 25) and Ridge; removed
  tokens become [MASK]; the target's probability. (ferret's features are sub-word tokens, [CLS] and [SEP]
  included; here they are words.)
- paper 002 (App. A.1 and its code, seeds-002-004.md 002.3): 50 samples; each picks 5-13 % of the words (a share
  drawn uniformly in [5 %, 13 %], at least one) and removes each picked word *and the next three*; removed words
  become [PAD]; the similarity of a sample is the fraction of unchanged words; sklearn Ridge (alpha 1). Words here
  where the paper counts sub-word tokens; the explained score, not stated in the paper, is the target's probability.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explainers.base import Attribution, Explainer
from explainers.mask_forward import MaskForward, operator_label, operator_param, score_param, word_input
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded

SAMPLINGS = ("bernoulli", "uniform-count", "spans-5-13")
KERNELS = ("captum-exp", "lime-text", "unchanged-share")
SPAN = 4  # paper 002: a picked word and the next three
SURROGATES = ("lasso", "ridge", "linear")
SAMPLE_COUNTS = ("fixed", "tokens-squared")


def kernel_weights(keep: np.ndarray, kind: str, width: float) -> np.ndarray:
    """Weight of every sample (row of the 0/1 keep-matrix) in the surrogate fit, from its cosine distance d to the
    original (all ones): a row with k ones is at 1 - k / (sqrt(n) sqrt(k)), the empty row at 1 (Captum's
    convention). lime-text: sqrt(exp(-(100 d)^2 / w^2)) (lime.lime_text); captum-exp: exp(-d^2 / (2 w^2))
    (Captum's ``get_exp_kernel_similarity_function("cosine", w)``)."""
    kept = keep.sum(axis=1).astype(np.float64)
    if kind == "unchanged-share":  # paper 002's code: the fraction of unchanged words
        return kept / keep.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.where(kept == 0, 1.0, 1.0 - kept / (np.sqrt(keep.shape[1]) * np.sqrt(kept)))
    if kind == "lime-text":
        return np.sqrt(np.exp(-((100.0 * distance) ** 2) / width ** 2))
    return np.exp(-(distance ** 2) / (2 * width ** 2))


def draw_uniform_count(n_samples: int, n: int) -> np.ndarray:
    """lime.lime_text sampling as a (n_samples, n) keep-matrix: the original first, then rows with k ~ U{1..n}
    words removed. The torch draws of the per-sample generator Captum ran (one randint and one randperm per
    sample, in that order) keep the seeded stream; the matrix itself is filled by numpy."""
    keep = np.ones((n_samples, n), dtype=bool)
    for row in range(1, n_samples):
        removed = int(torch.randint(1, n + 1, (1,)))
        keep[row, torch.randperm(n)[:removed].numpy()] = False
    return keep


def draw_bernoulli(n_samples: int, n: int) -> np.ndarray:
    """Captum's default LIME sampling (each word kept with p = 0.5): torch's CPU Bernoulli draws element by
    element, so one (n_samples, n) draw equals Captum's n_samples draws of one row."""
    return torch.bernoulli(torch.full((n_samples, n), 0.5)).numpy().astype(bool)


def draw_spans(n_samples: int, n: int, low: float = 0.05, high: float = 0.13) -> np.ndarray:
    """Paper 002's LIME sampling: per sample a share s ~ U[low, high], max(1, round(s n)) distinct start words, each
    removed with the next three (cut at the end); torch draws, so ``seeded`` makes it repeatable."""
    keep = np.ones((n_samples, n), dtype=bool)
    for row in range(n_samples):
        share = float(torch.empty(1).uniform_(low, high))
        for start in torch.randperm(n)[:max(1, round(share * n))].tolist():
            keep[row, start:start + SPAN] = False
    return keep


def draw_keep(sampling: str, n_samples: int, n: int) -> np.ndarray:
    if sampling == "uniform-count":
        return draw_uniform_count(n_samples, n)
    return draw_spans(n_samples, n) if sampling == "spans-5-13" else draw_bernoulli(n_samples, n)


def fit_surrogate(kind: str, alpha: float, keep: np.ndarray, targets: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Coefficients of the weighted linear surrogate, fitted as Captum's ``SkLearn*`` models fit it (float32
    samples, scores and weights; sklearn's Lasso, Ridge or LinearRegression; the coefficients in float32)."""
    from sklearn import linear_model  # deferred: a heavy import the cold start (gradient methods, LOO) skips

    model = {"lasso": lambda: linear_model.Lasso(alpha=alpha), "ridge": lambda: linear_model.Ridge(alpha=alpha),
             "linear": linear_model.LinearRegression}[kind]()
    model.fit(keep.astype(np.float32), targets.astype(np.float32), sample_weight=weights.astype(np.float32))
    return np.asarray(model.coef_, dtype=np.float32).reshape(-1).astype(np.float64)


def sample_count(p, encoding) -> int:
    """``n_samples``, or with ``sample_count`` tokens-squared min(n_tokens^2, n_samples) (ferret: n_tokens with
    [CLS] and [SEP], capped at 5,000)."""
    if getattr(p, "sample_count", "fixed") == "tokens-squared":
        return min(encoding.n_tokens ** 2, p.n_samples)
    return p.n_samples


def fit_lime(forward, encoding, p) -> np.ndarray:
    """LIME over the words of ``encoding`` with the sampler, kernel and surrogate of params ``p`` (shared by LIME
    and LIME-BERT: they differ only in the forward). Captum's ``Lime`` computed on the whole sample matrix at
    once: the same seeded draws, kernel weights and sklearn fit (a test holds the two equal), without Captum's
    per-sample calls; the samples go to the engine in one batch, each distinct one once."""
    n_samples, n = sample_count(p, encoding), word_input(encoding).shape[1]
    with seeded(p.seed):
        keep = draw_keep(p.sampling, n_samples, n)
    return fit_surrogate(p.surrogate, p.alpha, keep, forward.request(keep), kernel_weights(keep, p.kernel,
                                                                                          p.kernel_width))


@register
class LimeExplainer(Explainer):
    id = "lime"
    label = "LIME"
    family = "perturbation"
    description = "A weighted linear model fitted to the classifier's scores on copies of the input with random " \
                  "words removed; its coefficients are the word scores."
    reference = "Ribeiro et al. 2016; paper 000 section 6.1 (1,000 samples, lime defaults); paper 003 section " \
                "2.2.2.2 (200 samples, Lasso 0.01); paper 002 App. A.1 (50 samples, 5-13 % spans, [PAD], Ridge)"
    stochastic = True

    @dataclass(frozen=True)
    class Params:
        n_samples: int = param(200, "Samples", "Perturbed copies the surrogate is fitted to.", min=10, max=20000)
        sampling: str = param("bernoulli", "Sampling", "bernoulli: each word kept with p = 0.5 (Captum, paper "
                              "003); uniform-count: k ~ U{1..n} words removed, first sample the original (lime "
                              "package, paper 000); spans-5-13: 5-13 % of the words, each with the next three "
                              "(paper 002).", choices=SAMPLINGS)
        kernel: str = param("captum-exp", "Kernel", "captum-exp: exp(-d^2/(2w^2)) on cosine distance (paper 003); "
                            "lime-text: sqrt(exp(-(100 d)^2/w^2)) (lime package, paper 000); unchanged-share: the "
                            "fraction of words kept (paper 002).", choices=KERNELS)
        kernel_width: float = param(1.0, "Kernel width", "w in the kernel (1 for captum-exp, 25 for lime-text).",
                                    min=1e-3, max=1e4)
        surrogate: str = param("lasso", "Surrogate", "Linear model fitted with the kernel weights.",
                               choices=SURROGATES)
        alpha: float = param(0.01, "Regularization alpha", "Lasso / Ridge alpha (ignored by linear).", min=0.0,
                             max=1e3)
        operator: str = operator_param("mask")
        score: str = score_param("logit")
        seed: int = seed_param("samples")
        sample_count: str = param("fixed", "Sample count", "fixed: n_samples; tokens-squared: min(n_tokens^2, "
                                  "n_samples) with [CLS] and [SEP] counted (ferret).", choices=SAMPLE_COUNTS)

    presets = {
        "paper-003": {"n_samples": 200, "sampling": "bernoulli", "kernel": "captum-exp", "kernel_width": 1.0,
                      "surrogate": "lasso", "alpha": 0.01, "operator": "mask", "score": "logit"},
        "paper-000": {"n_samples": 1000, "sampling": "uniform-count", "kernel": "lime-text", "kernel_width": 25.0,
                      "surrogate": "ridge", "alpha": 1.0, "operator": "delete", "score": "probability"},
        "ferret": {"n_samples": 5000, "sample_count": "tokens-squared", "sampling": "uniform-count",
                   "kernel": "lime-text", "kernel_width": 25.0, "surrogate": "ridge", "alpha": 1.0, "operator": "mask",
                   "score": "probability"},
        "paper-002": {"n_samples": 50, "sampling": "spans-5-13", "kernel": "unchanged-share", "surrogate": "ridge",
                      "alpha": 1.0, "operator": "pad", "score": "probability"},
    }

    def estimate_passes(self, encoding):
        return sample_count(self.params, encoding) + 1, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        forward = MaskForward(classifier, encoding, p.operator, target, p.score)
        scores = fit_lime(forward, encoding, p)
        warnings = []
        if not np.abs(scores).sum():
            warnings.append("Every coefficient of the surrogate is 0 (the regularization removed all words); "
                            "lower alpha or use the ridge surrogate.")
        return Attribution(word_scores=scores, warnings=warnings,
                           baseline=f"words removed by {operator_label(p.operator)}",
                           details={**forward.details(), "samples": sample_count(p, encoding), "surrogate": p.surrogate})
