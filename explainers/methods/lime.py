"""LIME (Ribeiro et al. 2016): a weighted linear surrogate fitted to the model's scores on inputs with random
words removed; the surrogate's coefficients are the word scores.

Captum's ``Lime`` in word-mask space (``mask_forward``): one interpretable feature per word, removed words
go through the shared perturbation engine. Two presets follow the papers:

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
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from captum._utils.models.linear_model import SkLearnLasso, SkLearnLinearRegression, SkLearnRidge
from captum.attr import Lime as CaptumLime


from explainers.base import Attribution, Explainer
from explainers.mask_forward import operator_param, score_param, MaskForward, operator_label, word_input
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded

SAMPLINGS = ("bernoulli", "uniform-count")
KERNELS = ("captum-exp", "lime-text")
SURROGATES = ("lasso", "ridge", "linear")
SAMPLE_COUNTS = ("fixed", "tokens-squared")


def cosine_distance(original: torch.Tensor, perturbed: torch.Tensor) -> float:
    a, b = original.flatten().double(), perturbed.flatten().double()
    norms = float(a.norm() * b.norm())
    return 1.0 if norms == 0 else 1.0 - float(a @ b) / norms


def kernel_function(kind: str, width: float):
    """similarity(original, perturbed, interpretable) -> weight of the sample in the surrogate fit."""
    if kind == "lime-text":  # lime.lime_text: distances * 100, kernel sqrt(exp(-d^2 / width^2))
        def similarity(original, perturbed, _interpretable, **_):
            distance = 100.0 * cosine_distance(original, perturbed)
            return math.sqrt(math.exp(-(distance ** 2) / width ** 2))
    else:  # captum.attr._core.lime.get_exp_kernel_similarity_function("cosine", width)
        def similarity(original, perturbed, _interpretable, **_):
            distance = cosine_distance(original, perturbed)
            return math.exp(-(distance ** 2) / (2 * width ** 2))
    return similarity


def uniform_count_sampler(original, **kwargs):
    """lime.lime_text sampling: the original first, then samples with k ~ U{1..n} words removed."""
    n = int(kwargs["num_interp_features"])
    yield torch.ones(1, n, dtype=torch.long)
    while True:
        removed = int(torch.randint(1, n + 1, (1,)))
        row = torch.ones(1, n, dtype=torch.long)
        row[0, torch.randperm(n)[:removed]] = 0
        yield row


def surrogate_model(kind: str, alpha: float):
    if kind == "lasso":
        return SkLearnLasso(alpha=alpha)
    if kind == "ridge":
        return SkLearnRidge(alpha=alpha)
    return SkLearnLinearRegression()


def sample_count(p, encoding) -> int:
    """``n_samples``, or with ``sample_count`` tokens-squared min(n_tokens^2, n_samples) (ferret: n_tokens with
    [CLS] and [SEP], capped at 5,000)."""
    if getattr(p, "sample_count", "fixed") == "tokens-squared":
        return min(encoding.n_tokens ** 2, p.n_samples)
    return p.n_samples


def fit_lime(forward, encoding, p) -> torch.Tensor:
    """Captum's LIME over the words of ``encoding`` with the sampler, surrogate and kernel of params ``p``, all
    samples in one batch, seeded (shared by LIME and LIME-BERT: they differ only in the forward)."""
    perturb = uniform_count_sampler if p.sampling == "uniform-count" else None
    lime = CaptumLime(forward, interpretable_model=surrogate_model(p.surrogate, p.alpha),
                      similarity_func=kernel_function(p.kernel, p.kernel_width), perturb_func=perturb)
    n_samples = sample_count(p, encoding)
    with seeded(p.seed):
        return lime.attribute(word_input(encoding), baselines=0.0, n_samples=n_samples,
                              perturbations_per_eval=n_samples)


@register
class LimeExplainer(Explainer):
    id = "lime"
    label = "LIME"
    family = "perturbation"
    description = "A weighted linear model fitted to the classifier's scores on copies of the input with random " \
                  "words removed; its coefficients are the word scores."
    reference = "Ribeiro et al. 2016; paper 000 section 6.1 (1,000 samples, lime defaults); paper 003 section " \
                "2.2.2.2 (200 samples, Lasso 0.01)"
    stochastic = True

    @dataclass(frozen=True)
    class Params:
        n_samples: int = param(200, "Samples", "Perturbed copies the surrogate is fitted to.", min=10, max=20000)
        sampling: str = param("bernoulli", "Sampling", "bernoulli: each word kept with p = 0.5 (Captum, paper "
                              "003); uniform-count: k ~ U{1..n} words removed, first sample the original (lime "
                              "package, paper 000).", choices=SAMPLINGS)
        kernel: str = param("captum-exp", "Kernel", "captum-exp: exp(-d^2/(2w^2)) on cosine distance (paper 003); "
                            "lime-text: sqrt(exp(-(100 d)^2/w^2)) (lime package, paper 000).", choices=KERNELS)
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
    }

    def estimate_passes(self, encoding):
        return sample_count(self.params, encoding) + 1, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        forward = MaskForward(classifier, encoding, p.operator, target, p.score)
        scores = fit_lime(forward, encoding, p)
        warnings = []
        if not scores.abs().sum():
            warnings.append("Every coefficient of the surrogate is 0 (the regularization removed all words); "
                            "lower alpha or use the ridge surrogate.")
        return Attribution(word_scores=scores[0].double().numpy(), warnings=warnings,
                           baseline=f"words removed by {operator_label(p.operator)}",
                           details={**forward.details(), "samples": sample_count(p, encoding), "surrogate": p.surrogate})
