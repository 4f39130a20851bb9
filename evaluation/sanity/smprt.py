"""sMPRT, the smooth model parameter randomisation test (Hedström et al. 2023, "Sanity Checks Revisited", sec. 3.1
"Smooth MPRT"; Quantus ``SmoothMPRT``), here for text.

MPRT compares a method's explanation on the original model with its explanation on each randomization stage.
Gradient maps are noisy, and that noise alone lowers the similarity; sMPRT first denoises every explanation, on
every stage, by averaging it over N noisy copies of the input (as SmoothGrad does), then compares layer by layer as
MPRT does. Quantus's defaults (``nr_samples`` = 50, ``noise_magnitude`` = 0.1, set on ImageNet in the paper) are the
defaults here; the noise's standard deviation is ``noise`` x (max - min) of the input, and the last of the N samples
is noise-free (Quantus: "SmoothGrad with n = 1 is the gradient"), so N = 1 is the plain MPRT.

For text the input is the sequence of word embeddings. A noisy copy of the input is a copy of the model whose
word-embedding rows of the input's tokens carry Gaussian noise (every other weight shared, not copied): then every
method, gradient or perturbation, explains the same noisy input, and a removal that swaps in [MASK] or [PAD] swaps in
an unperturbed token. The noise is tied to the token id (a word repeated gets the same noise, unlike Quantus's
independent pixels), and its scale comes from the original model's embeddings of the input at every stage, with the
same draws at every stage, so the stages differ only by the randomization.

The metric (``sanity_smprt``) is the Spearman correlation of |smoothed explanation| between the original and the
fully randomized model (Quantus ``abs=True``, ``return_last_correlation``; its max-normalization does not change
ranks): lower is better. The per-stage curves are the usual MPRT measures on the smoothed explanations.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
from dataclasses import dataclass

import numpy as np
import torch

from evaluation.metric import Metric, register_metric
from evaluation.sanity import one_input
from explainers import Explainer, Explanation
from explainers.params import param
from models import Encoding, TextClassifier

REFERENCE = ("Hedström et al. 2023, Sanity Checks Revisited, sec. 3.1 (sMPRT); Quantus smooth_mprt.py; noise on "
             "the input's word embeddings")
METRIC = register_metric(Metric(
    "sanity_smprt", "sMPRT: Spearman ρ(|a|) of denoised maps", "sanity", False, (-1.0, 1.0),
    "Each explanation averaged over N noisy copies of the input (noise on the word embeddings), then the Spearman "
    "correlation of |scores| between the original and the fully randomized model; lower: the denoised map "
    "depends on the model.", REFERENCE))
MEASURE = "spearman_abs"  # the measure of a SanityResult that is the sMPRT value (Quantus abs=True + Spearman)


@dataclass(frozen=True)
class SmoothingOptions:
    """How each explanation is denoised before the layer-by-layer comparison."""

    samples: int = param(50, "Noisy samples (N)", "explanations averaged per stage; the last one is noise-free, so "
                         "N = 1 is the plain MPRT (Quantus nr_samples = 50)", min=1, max=500)
    noise: float = param(0.1, "Noise magnitude", "noise std = magnitude x (max - min) of the input's word "
                         "embeddings (Quantus noise_magnitude = 0.1)", min=0.0, max=2.0, step=0.05)
    seed: int = param(0, "Noise seed", "seeds the noise draws (the same draws at every stage)", min=0)


# presets named for their source: Quantus's (ImageNet) defaults, and a cheaper one for a first look
PRESETS = {"quantus-2023": SmoothingOptions(), "quick": SmoothingOptions(samples=10)}


def input_rows(encoding: Encoding) -> np.ndarray:
    """The vocabulary rows the input uses (each once)."""
    return np.unique(np.asarray(encoding.input_ids, dtype=np.int64))


def noise_draws(classifier: TextClassifier, encoding: Encoding, options: SmoothingOptions) -> np.ndarray:
    """The N - 1 noise tensors, shape (N - 1, rows, hidden): std = noise x (max - min) of the input's word
    embeddings on ``classifier`` (the original model), seeded by ``options.seed``."""
    rows = input_rows(encoding)
    with torch.no_grad():
        embeddings = classifier.model.get_input_embeddings().weight[torch.as_tensor(rows)].double().cpu().numpy()
    std = options.noise * float(embeddings.max() - embeddings.min())
    rng = np.random.default_rng(options.seed)
    return rng.standard_normal((options.samples - 1, *embeddings.shape)) * std


def with_noisy_rows(classifier: TextClassifier, rows: np.ndarray, noise: np.ndarray, tag: str) -> TextClassifier:
    """A copy of ``classifier`` whose word-embedding ``rows`` have ``noise`` added; every other weight is shared."""
    model = classifier.model
    table = model.get_input_embeddings().weight
    shared = {id(t): t for t in [*model.parameters(), *model.buffers()] if t is not table}
    noisy = copy.deepcopy(model, shared)  # clones only the word-embedding table
    with torch.no_grad():
        weight = noisy.get_input_embeddings().weight
        weight[torch.as_tensor(rows, device=weight.device)] += torch.as_tensor(noise, dtype=weight.dtype,
                                                                              device=weight.device)
    fingerprint = hashlib.sha256(f"smprt-noise\x1f{classifier.fingerprint}\x1f{tag}".encode()).hexdigest()[:16]
    return classifier.with_model(noisy, fingerprint, name=f"{classifier.name} [noisy input {tag}]")


class Smoothed(Explainer):
    """``inner`` averaged over N noisy copies of the input on whichever model it is given (one randomization stage).

    Not registered: it exists only inside sMPRT. The noise scale and draws come from ``reference`` (the original
    model), so every stage sees the same noisy inputs. Each noisy copy is another model, so its explanation is one
    call of ``inner`` (batched inside); the copies' explanations are not cached, the average is (by run_sanity).
    """

    def __init__(self, inner: Explainer, options: SmoothingOptions, reference: TextClassifier):
        self.inner, self.options, self.reference_model = inner, options, reference
        self.params, self.preset = inner.params, inner.preset
        for name in ("id", "label", "family", "description", "reference", "needs_gradients", "stochastic",
                     "needs_mlm", "trains", "expensive", "word_aggregation"):
            setattr(self, name, getattr(inner, name))
        self._draws: dict[str, np.ndarray] = {}

    def is_signed(self) -> bool:
        return self.inner.is_signed()

    def removal_operator(self):
        return self.inner.removal_operator()

    def estimate_passes(self, encoding: Encoding) -> tuple[int, int]:
        forward, backward = self.inner.estimate_passes(encoding)
        return forward * self.options.samples, backward * self.options.samples

    def cache_identity(self) -> dict:
        return {**self.inner.cache_identity(), "smoothing": dataclasses.asdict(self.options),
                "noise_scale_from": self.reference_model.fingerprint}

    def cache_salt(self, classifier: TextClassifier) -> dict:
        return self.inner.cache_salt(classifier)

    def draws(self, encoding: Encoding) -> np.ndarray:
        if encoding.key not in self._draws:
            # one input at a time: the draws of the previous input are dropped
            self._draws = {encoding.key: noise_draws(self.reference_model, encoding, self.options)}
        return self._draws[encoding.key]

    def explain(self, classifier: TextClassifier, encoding: Encoding, target: int | None = None) -> Explanation:
        rows, draws = input_rows(encoding), self.draws(encoding)
        if target is None:  # one class for every noisy copy: the one this model predicts on the clean input
            target = int(np.argmax(classifier.logits_of(encoding)))
        explanations = []
        for sample in range(self.options.samples):
            last = sample == self.options.samples - 1  # noise-free, as in Quantus
            model = classifier if last else with_noisy_rows(classifier, rows, draws[sample],
                                                            f"{self.options.seed}/{self.options.noise}/{sample}")
            explanations.append(self.inner.explain(model, encoding, target))
        return average(explanations, classifier, self.options)


def average(explanations: list[Explanation], classifier: TextClassifier, options: SmoothingOptions) -> Explanation:
    """The mean word (and token) scores of explanations of one input; provenance of the noise-free one, plus how."""
    base = explanations[-1]
    word_scores = np.mean([e.word_scores for e in explanations], axis=0)
    token_rows = [e.token_scores for e in explanations if e.token_scores is not None]
    token_scores = np.mean(token_rows, axis=0) if len(token_rows) == len(explanations) else None
    model = {**base.provenance.get("model", {}), "fingerprint": classifier.fingerprint}
    provenance = {**base.provenance, "model": model,
                  "smoothing": {**dataclasses.asdict(options), "how": "mean over N noisy copies of the input "
                                "(noise on the word embeddings; the last copy noise-free)", "reference": REFERENCE},
                  "forward_passes": sum(e.provenance.get("forward_passes", 0) for e in explanations),
                  "backward_passes": sum(e.provenance.get("backward_passes", 0) for e in explanations)}
    return dataclasses.replace(base, word_scores=word_scores, token_scores=token_scores, provenance=provenance)


def smoothed_explainers(methods: dict[str, Explainer] | list[str], options: SmoothingOptions,
                        reference: TextClassifier) -> dict[str, Explainer]:
    if isinstance(methods, list):
        methods = one_input.explainers_for(methods)
    return {name: Smoothed(explainer, options, reference) for name, explainer in methods.items()}


def run_smprt(classifier: TextClassifier, encoding: Encoding, methods: dict[str, Explainer] | list[str],
              options: SmoothingOptions = SmoothingOptions(), **sanity_options) -> one_input.SanityResult:
    """MPRT (``one_input.run_sanity``, same arguments) on denoised explanations: the result's frame, curves and
    verdicts read as MPRT's; ``smprt(result)`` gives the headline value per method."""
    return one_input.run_sanity(classifier, encoding, smoothed_explainers(methods, options, classifier),
                                **sanity_options)


def smprt(result: one_input.SanityResult) -> dict[str, float]:
    """sMPRT per method: Spearman of |smoothed scores|, original vs. the last stage (fully randomized)."""
    if result.mode != "cascading" or not result.complete:
        raise ValueError("sMPRT needs a complete cascading randomization (the fully randomized model is its last "
                         "stage): run the check with mode 'cascading' to the end.")
    frame = result.frame()
    last = frame[frame["stage_index"] == result.stages[-1].index]
    return {row.method: float(getattr(row, MEASURE)) for row in last.itertuples()}
