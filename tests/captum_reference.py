"""The sampling methods as Captum computes them, one sample per call: the reference the vectorized methods in
``explainers/methods/{lime,kernel_shap,shapley_sampling}.py`` are held equal to (the code they replaced).

Captum draws from torch's global generator, one sample (or one permutation) at a time, and weighs each LIME
sample with a per-sample similarity function; the forward is the project's ``MaskForward`` (0/1 word masks ->
scores through the perturbation engine), so both sides see the same scores.
"""
from __future__ import annotations

import math

import torch
from captum._utils.models.linear_model import SkLearnLasso, SkLearnLinearRegression, SkLearnRidge
from captum.attr import KernelShap, Lime, ShapleyValueSampling

from explainers.seeding import seeded


def cosine_distance(original: torch.Tensor, perturbed: torch.Tensor) -> float:
    a, b = original.flatten().double(), perturbed.flatten().double()
    norms = float(a.norm() * b.norm())
    return 1.0 if norms == 0 else 1.0 - float(a @ b) / norms


def kernel_function(kind: str, width: float):
    """similarity(original, perturbed, interpretable) -> weight of one sample in the surrogate fit."""
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


def captum_lime(forward, n_words: int, n_samples: int, p) -> torch.Tensor:
    perturb = uniform_count_sampler if p.sampling == "uniform-count" else None
    lime = Lime(forward, interpretable_model=surrogate_model(p.surrogate, p.alpha),
                similarity_func=kernel_function(p.kernel, p.kernel_width), perturb_func=perturb)
    with seeded(p.seed):
        return lime.attribute(torch.ones((1, n_words), dtype=torch.float64), baselines=0.0, n_samples=n_samples,
                              perturbations_per_eval=n_samples)[0]


def captum_kernel_shap(forward, n_words: int, n_samples: int, seed: int) -> torch.Tensor:
    with seeded(seed):
        return KernelShap(forward).attribute(torch.ones((1, n_words), dtype=torch.float64), baselines=0.0,
                                             n_samples=n_samples, perturbations_per_eval=n_samples)[0]


def captum_shapley_sampling(forward, n_words: int, n_samples: int, seed: int) -> torch.Tensor:
    with seeded(seed):
        return ShapleyValueSampling(forward).attribute(torch.ones((1, n_words), dtype=torch.float64), baselines=0.0,
                                                       n_samples=n_samples, perturbations_per_eval=n_words)[0]
