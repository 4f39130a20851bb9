"""SmoothGrad (Smilkov et al. 2017): the gradient averaged over noisy copies of the input embeddings.

Captum's ``NoiseTunnel`` over ``Saliency`` on the word embeddings (same forward as the Saliency method):
Gaussian noise with sigma = noise level x (max - min) of the input's word-embedding values (Smilkov et al.
section 3: 10-20 % works best, 50 samples), then the mean gradient (smoothgrad), the mean squared gradient
(smoothgrad_sq) or its variance (vargrad), reduced over the hidden dimension as Saliency does. Not in the
seed papers (paper 003 names it only beside Adebayo et al.'s image figure, Fig. 2.3); offered as an extension.
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers.base import Attribution, Explainer
from explainers.captum_lazy import captum_attr
from explainers.embedding_forward import OUTPUTS, embedding_function
from explainers.methods.saliency import REDUCTIONS, reduce_hidden
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded

NT_TYPES = ("smoothgrad", "smoothgrad_sq", "vargrad")


@register
class SmoothGrad(Explainer):
    id = "smoothgrad"
    label = "SmoothGrad"
    family = "gradient"
    description = "Saliency averaged over copies of the input with Gaussian noise added to the embeddings, " \
                  "which removes much of the gradient's local noise."
    reference = "Smilkov et al. 2017 (Captum NoiseTunnel); not evaluated in the seed papers (paper 003 names it " \
                "beside Fig. 2.3 only)"
    needs_gradients = True
    stochastic = True

    @dataclass(frozen=True)
    class Params:
        n_samples: int = param(20, "Noisy samples", "Copies averaged (Smilkov et al.: 50).", min=1, max=1000)
        noise_level: float = param(0.1, "Noise level", "sigma / (max - min) of the input's embedding values "
                                   "(Smilkov et al.: 0.1-0.2).", min=0.0, max=5.0)
        nt_type: str = param("smoothgrad", "Aggregation", "mean gradient, mean squared gradient, or variance "
                             "(Captum's nt_type).", choices=NT_TYPES)
        reduction: str = param("l2", "Reduction over the embedding", "As for Saliency.", choices=REDUCTIONS)
        output: str = param("logit", "Output differentiated", choices=OUTPUTS)
        seed: int = seed_param("noise")

    presets = {
        "smilkov-2017": {"n_samples": 50, "noise_level": 0.15, "nt_type": "smoothgrad", "reduction": "l2"},
        "signed-sum": {"reduction": "sum"},
    }

    def is_signed(self) -> bool:
        return self.params.reduction == "sum" and self.params.nt_type == "smoothgrad"

    @property
    def word_aggregation(self):
        return "l2" if self.params.reduction in ("l2", "onehot-l2") else "sum"

    def estimate_passes(self, encoding):
        return self.params.n_samples + 1, self.params.n_samples

    def attribute(self, classifier, encoding, target):
        p = self.params
        forward, embeddings = embedding_function(classifier, encoding, p.output)
        sigma = p.noise_level * float(embeddings.max() - embeddings.min())
        # noisy copies per backward: up to 8 192 tokens, within the memory budget (models/memory.py)
        batch = min(max(1, 8192 // max(1, encoding.n_tokens)),
                    classifier.rows_per_batch(encoding.n_tokens, p.n_samples, within_batch_tokens=False))

        def run(rows):
            with seeded(p.seed):
                return captum_attr.NoiseTunnel(captum_attr.Saliency(forward)).attribute(
                    embeddings.clone().requires_grad_(), nt_type=p.nt_type, nt_samples=p.n_samples,
                    nt_samples_batch_size=rows, stdevs=sigma, target=target, abs=False)

        gradient = classifier.run_halving(run, batch, encoding.n_tokens)
        matrix = classifier.model.get_input_embeddings().weight.detach() if p.reduction == "onehot-l2" else None
        scores = reduce_hidden(gradient[0], p.reduction, matrix)
        return Attribution(token_scores=scores.detach().cpu().numpy(), baseline="none (noisy local gradients)",
                           details={"sigma": sigma, "samples": p.n_samples, "nt_type": p.nt_type})
