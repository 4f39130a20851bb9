"""GradientSHAP (Lundberg & Lee 2017; Erion et al. 2019): expected gradients on the word embeddings.

Captum's ``GradientShap``: each sample picks a baseline from a set (e.g. [PAD] and zero embeddings), a point
alpha ~ U(0, 1) on the straight line from it to the input (plus optional Gaussian noise), and multiplies the
gradient there by (input - baseline); scores are the mean over samples, summed over the hidden dimension.
In expectation the scores add up to f(input) - E[f(baseline)]; the gap is shown. Paper 004 (section 4)
compares against it without giving settings.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from explainers.base import Attribution, Explainer
from explainers.baseline_checks import baseline_gap_warning
from explainers.captum_lazy import captum_attr
from explainers.embedding_forward import BASELINE_LABELS, OUTPUTS, baseline_embeddings, embedding_function
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded

BASELINE_SETS = ("pad+zero", "pad+mask+zero", "pad", "mask", "zero")


@register
class GradientShap(Explainer):
    id = "gradient_shap"
    label = "GradientSHAP"
    family = "gradient"
    description = "Gradients at random points between baselines and the input, times the difference: an " \
                  "estimate of SHAP values (expected gradients)."
    reference = "Lundberg & Lee 2017 (Captum GradientShap); paper 004 section 4 (baseline SHAP)"
    needs_gradients = True
    stochastic = True

    @dataclass(frozen=True)
    class Params:
        n_samples: int = param(20, "Samples", "Random (baseline, alpha) draws.", min=1, max=1000)
        baselines: str = param("pad+zero", "Baselines", "The baselines drawn from (" + "; ".join(
            f"{k}: {v}" for k, v in BASELINE_LABELS.items()) + ").", choices=BASELINE_SETS)
        noise_level: float = param(0.0, "Noise level", "Gaussian noise sigma / (max - min) of the input's "
                                   "embedding values (Captum's stdevs; 0 = none).", min=0.0, max=5.0)
        output: str = param("logit", "Output differentiated", choices=OUTPUTS)
        seed: int = seed_param("baselines, path points and noise")

    presets = {"expected-gradients": {"n_samples": 50, "baselines": "pad+mask+zero", "noise_level": 0.0}}

    def estimate_passes(self, encoding):
        return self.params.n_samples + len(self.params.baselines.split("+")) + 1, self.params.n_samples

    def attribute(self, classifier, encoding, target):
        p = self.params
        forward, embeddings = embedding_function(classifier, encoding, p.output)
        kinds = p.baselines.split("+")
        baselines = torch.cat([baseline_embeddings(classifier, encoding, kind) for kind in kinds])
        sigma = p.noise_level * float(embeddings.max() - embeddings.min())
        with seeded(p.seed):
            attribution, delta = captum_attr.GradientShap(forward).attribute(
                embeddings, baselines=baselines, n_samples=p.n_samples, stdevs=sigma, target=target,
                return_convergence_delta=True)
        scores = attribution[0].sum(dim=-1).detach()
        with torch.no_grad():
            f_input = float(forward(embeddings)[0, target])
            gap = f_input - float(forward(baselines)[:, target].mean())
        details = {"f(input) - mean f(baselines)": gap, "sum_of_attributions": float(scores.sum()),
                   "mean_abs_sample_delta": float(delta.abs().mean()), "samples": p.n_samples, "sigma": sigma}
        return Attribution(token_scores=scores.cpu().numpy(), details=details,
                           warnings=baseline_gap_warning(f_input, gap, p.baselines),
                           baseline="random draws from: " + "; ".join(BASELINE_LABELS[k] for k in kinds))
