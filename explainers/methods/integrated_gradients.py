"""Integrated Gradients on the word embeddings (Captum), with the convergence delta in the provenance.

IG_i = (x_i - b_i) . mean over the path of df/dx_i (Sundararajan et al. 2017). Completeness: the sum
over all tokens (special tokens included) equals f(x) - f(b) up to the convergence delta.
Presets: paper 001 (Eq. 2: zero baseline, right Riemann sum, 50 steps, signed as the paper writes it),
paper-001-code (the same with |.|, as paper 001's reference code returns it; seeds-000-001.md 001.2), paper 003
([PAD] baseline with special tokens kept, Gauss-Legendre, 50 steps, signed), ferret (ferret-xai's "Integrated Gradient (x Input)": [CLS] [PAD]... [SEP], Gauss-Legendre, 50 steps,
logit, signed sum over the hidden units) and ferret-plain (its "Integrated Gradient": the path-averaged gradient
not multiplied by x - b, Captum's ``multiply_by_inputs=False``), and ``l1-norm`` (paper 002's "Int. Grads_n", App. A.1:
[PAD] background, 50 steps, Captum's default rule, the L1 norm over the embedding dimension in place of the signed
sum; completeness then holds for the signed sum recorded in the provenance, not for the unsigned scores).
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers.base import Attribution, Explainer
from explainers.baseline_checks import baseline_gap_warning
from explainers.captum_lazy import captum_attr
from explainers.embedding_forward import (
    BASELINE_LABELS,
    OUTPUTS,
    REDUCTIONS,
    baseline_embeddings,
    embedding_function,
    reduce_dimensions,
)
from explainers.params import param
from explainers.registry import register
from explainers.shared_passes import SharedPass, ig_pass, ig_settings

RULES = ("gausslegendre", "riemann_right", "riemann_left", "riemann_middle", "riemann_trapezoid")
DELTA_WARNING = 0.05  # relative to |f(x) - f(b)|


def plain_integrated_gradients(classifier, encoding, target, p) -> Attribution:
    """The path-averaged gradient not multiplied by x - b (Captum multiply_by_inputs=False), summed over the hidden
    units (ferret's "Integrated Gradient")."""
    forward, embeddings = embedding_function(classifier, encoding, p.output)
    baseline = baseline_embeddings(classifier, encoding, p.baseline)
    rows = classifier.rows_per_batch(encoding.n_tokens, p.internal_batch_size, within_batch_tokens=False)
    rule = captum_attr.IntegratedGradients(forward, multiply_by_inputs=False)
    attribution = classifier.run_halving(lambda batch: rule.attribute(embeddings, baselines=baseline, target=target,
                                                                      n_steps=p.n_steps, method=p.method,
                                                                      internal_batch_size=batch),
                                         rows, encoding.n_tokens)
    scores = reduce_dimensions(attribution[0], p.reduction).detach()
    return Attribution(token_scores=(scores.abs() if p.absolute else scores).cpu().numpy(),
                       baseline=BASELINE_LABELS[p.baseline], details={"multiplied_by_inputs": False})


@register
class IntegratedGradients(Explainer):
    id = "integrated_gradients"
    label = "Integrated Gradients"
    family = "gradient"
    description = "Gradients averaged along a straight path from a baseline input to the real one, times the " \
                  "difference; sums to f(input) - f(baseline)."
    reference = "Sundararajan et al. 2017; paper 001 Eq. 2; paper 003 section 2.2.2.1"
    needs_gradients = True

    @dataclass(frozen=True)
    class Params:
        n_steps: int = param(50, "Steps", "Points on the path (more = smaller convergence delta).", min=2, max=1000)
        method: str = param("gausslegendre", "Integration rule", "Gauss-Legendre (Captum default, paper 003) or "
                            "a Riemann rule (paper 001: right).", choices=RULES)
        baseline: str = param("pad", "Baseline", "; ".join(f"{k}: {v}" for k, v in BASELINE_LABELS.items()),
                              choices=tuple(BASELINE_LABELS))
        output: str = param("logit", "Output differentiated", choices=OUTPUTS)
        absolute: bool = param(False, "Absolute value", "Return |score| as paper 001's code does (its Eq. 2 is "
                               "signed).")
        multiply_by_inputs: bool = param(True, "Multiply by input - baseline", "Off: the path-averaged gradient "
                                         "alone (Captum multiply_by_inputs=False, ferret's plain IG); no "
                                         "completeness then.")
        reduction: str = param("sum", "Over the embedding dimension", "sum: signed sum (Captum; completeness); l1: "
                               "L1 norm of the per-dimension scores (paper 002's _n rows; unsigned).",
                               choices=REDUCTIONS)
        internal_batch_size: int = param(25, "Batch size for the path", "Path points per forward pass.", min=1,
                                         max=1000)

    presets = {
        "paper-003": {"n_steps": 50, "method": "gausslegendre", "baseline": "pad", "absolute": False},
        "paper-001": {"n_steps": 50, "method": "riemann_right", "baseline": "zero", "absolute": False},
        "paper-001-code": {"n_steps": 50, "method": "riemann_right", "baseline": "zero", "absolute": True},
        "ferret": {"n_steps": 50, "method": "gausslegendre", "baseline": "pad", "absolute": False, "output": "logit"},
        "ferret-plain": {"n_steps": 50, "method": "gausslegendre", "baseline": "pad", "absolute": False,
                         "output": "logit", "multiply_by_inputs": False},
        "l1-norm": {"n_steps": 50, "method": "gausslegendre", "baseline": "pad", "absolute": False,
                    "reduction": "l1"},  # paper 002's Int. Grads_n
    }

    def is_signed(self) -> bool:
        return not self.params.absolute and self.params.reduction == "sum"

    def estimate_passes(self, encoding):
        return self.params.n_steps + 2, self.params.n_steps

    def shared_pass(self) -> SharedPass | None:  # signed and absolute variants from one path
        return ig_settings(self.params) if self.params.multiply_by_inputs else None

    def attribute(self, classifier, encoding, target):
        p = self.params
        if not p.multiply_by_inputs:  # no completeness, so no convergence delta, and no pass to share
            return plain_integrated_gradients(classifier, encoding, target, p)
        path = ig_pass(classifier, encoding, target, p)  # Captum's IntegratedGradients, and f(x), f(b)
        scores = path.attribution[0].sum(dim=-1)
        f_input, gap, delta = path.f_input, path.gap, path.delta
        details = {"convergence_delta": delta, "f(input) - f(baseline)": gap, "sum_of_attributions": float(scores.sum())}
        if path.batch is not None:  # a dataset run's shared batch: its cost is counted there, not in this explanation
            details["path_computed_in_batch"] = path.batch
        warnings = baseline_gap_warning(f_input, gap, p.baseline)
        if abs(delta) > DELTA_WARNING * max(abs(gap), 1e-6):
            warnings.append(f"Convergence delta {delta:+.3g} is {abs(delta) / max(abs(gap), 1e-9):.0%} of "
                            f"f(input) - f(baseline) = {gap:+.3g}: increase the steps.")
        if p.absolute:
            scores = scores.abs()
        if p.reduction == "l1":  # the signed sum above stays in the details (completeness); the scores are |.|_1
            scores = reduce_dimensions(path.attribution[0], "l1")
            details["reduction"] = "L1 norm over the embedding dimension (paper 002's _n)"
        return Attribution(token_scores=scores.cpu().numpy(), baseline=BASELINE_LABELS[p.baseline], details=details,
                           warnings=warnings)
