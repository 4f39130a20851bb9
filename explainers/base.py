"""The Explainer base class: a string id, a family, capability flags, a Params schema with presets.

A subclass implements ``attribute`` (raw scores on tokens or on words); ``explain`` adds the target,
the word aggregation, cost metering and provenance, so every method reports the same way.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from explainers import contrast as contrast_policy
from explainers.aggregate import aggregate_to_words
from explainers.explanation import Explanation
from explainers.params import ParamError, coerce, validate
from explainers.windowed import by_windows, explain_adapted
from models import Encoding, Operator, TextClassifier, metered, resolve_operator
from models.granularity import is_units
from models.runtime import library_versions
from models.windows import document_of

FAMILIES = {
    "gradient": "Gradient-based",
    "perturbation": "Perturbation-based",
    "attention": "Attention-based",
    "mlm": "Masked-LM counterfactuals",
    "mask_learning": "Learned masks (MaRC, AML)",
    "baseline": "Baselines",
    "ensemble": "Ensembles",
}


@dataclass
class Attribution:
    """What a method computes: scores per token (incl. special tokens) or per word, and notes."""

    token_scores: np.ndarray | None = None
    word_scores: np.ndarray | None = None
    baseline: str = "n/a"
    details: dict = field(default_factory=dict)  # e.g. convergence delta, samples used
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class NoParams:
    pass


class Explainer:
    id: ClassVar[str] = ""
    label: ClassVar[str] = ""
    family: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reference: ClassVar[str] = ""  # paper and section the definition follows
    needs_gradients: ClassVar[bool] = False
    stochastic: ClassVar[bool] = False
    needs_mlm: ClassVar[bool] = False
    trains: ClassVar[bool] = False
    expensive: ClassVar[bool] = False  # ask before running in the app
    Params: ClassVar[type] = NoParams
    presets: ClassVar[dict[str, dict]] = {}
    word_aggregation: ClassVar[str] = "sum"  # how token scores become word scores
    # how a contrast class reaches the method (explainers/contrast.py): "output" (through the shared score
    # functions), "no-class" (the method reads no class, a contrast changes nothing), "unsupported" (refused)
    contrast_support: ClassVar[str] = "output"

    def __init__(self, params=None, preset: str | None = None, contrast=None, **overrides):
        values = {}
        if preset is not None:
            if preset not in self.presets:
                raise ParamError(f"Unknown preset '{preset}' for {self.id}; presets: {', '.join(self.presets) or 'none'}.")
            values.update(self.presets[preset])
        if params is not None:
            values.update(dataclasses.asdict(params))
        values.update(overrides)
        self.params = coerce(self.Params, values) if values else self.Params()
        validate(self.params)
        self.preset = preset
        try:  # "why the target rather than this class?": a class index, "runner-up" or None
            self.contrast = contrast_policy.parse(contrast)
        except ValueError as error:
            raise ParamError(str(error)) from None
        if self.contrast is not None and self.contrast_support == "unsupported":
            raise ParamError(f"{self.label} does not take a contrast class: its objective reads one class in its "
                             f"own way. Explain it without --contrast, or pick a gradient or removal method.")

    # ----- capability answers that may depend on parameters ----------------------------------------
    def is_signed(self) -> bool:
        return True

    def removal_operator(self) -> Operator | None:
        """The removal operator the method perturbs with: its ``operator`` parameter when it has one (perturbation
        methods), None for gradient / attention methods. Masked-LM methods override it."""
        operator = getattr(self.params, "operator", None)
        return None if operator is None else Operator(operator)

    def sign_convention(self) -> str:
        if self.is_signed():
            return "signed: > 0 supports the target class, < 0 speaks against it"
        return "unsigned: larger = more important (no direction)"

    def estimate_passes(self, encoding: Encoding) -> tuple[int, int]:
        """Expected (forward, backward) passes, shown before expensive methods run."""
        return 1, 0

    def seed(self) -> int | None:
        return getattr(self.params, "seed", None)

    # ----- the work --------------------------------------------------------------------------------
    def attribute(self, classifier: TextClassifier, encoding: Encoding, target: int) -> Attribution:
        raise NotImplementedError

    def explain(self, classifier: TextClassifier, encoding: Encoding, target: int | None = None) -> Explanation:
        with metered() as meter:
            if target is None:
                target = int(np.argmax(classifier.logits_of(encoding)))
                target_choice = "predicted"
            else:
                target_choice = "chosen"
            if not 0 <= target < classifier.num_labels:
                raise ParamError(f"Target class {target} does not exist; the model has classes "
                                 f"0..{classifier.num_labels - 1} ({', '.join(classifier.labels)}).")
            foil = self._foil(classifier, encoding, target)
            with contrast_policy.contrasting(foil):
                if by_windows(self, encoding):  # a long document: each window explained, overlaps blended
                    result = Attribution(**explain_adapted(self, classifier, encoding, target))
                else:
                    result = self.attribute(classifier, encoding, target)
        token_scores = None
        if result.token_scores is not None:
            token_scores = np.asarray(result.token_scores, dtype=np.float64)
            word_scores = aggregate_to_words(token_scores, encoding.token_word, encoding.n_words, self.word_aggregation)
        else:
            word_scores = np.asarray(result.word_scores, dtype=np.float64)
        requested = self.removal_operator()
        operator, fallback = resolve_operator(classifier, requested) if requested else (None, None)
        document = document_of(encoding)
        provenance = {
            "method": self.id, "method_label": self.label, "family": self.family, "reference": self.reference,
            "preset": self.preset, "params": dataclasses.asdict(self.params),
            "target": {"index": target, "label": classifier.labels[target], "how": target_choice,
                       **self._contrast_provenance(classifier, foil, target)},
            "baseline": result.baseline, "removal_operator": operator.value if operator else None,
            "removal_operator_requested": requested.value if requested else None, "removal_fallback": fallback,
            "sign": self.sign_convention(),
            "aggregation": f"{self.word_aggregation} over sub-word tokens" if result.token_scores is not None
            else "computed on whole words",
            "normalization": "none (raw scores)", "seed": self.seed(),
            "seconds": round(meter.seconds, 4), "forward_passes": meter.forward_passes,
            "backward_passes": meter.backward_passes, "batches": meter.batches,
            "model": {"name": classifier.name, "fingerprint": classifier.fingerprint,
                      "warnings": list(classifier.warnings)},
            "input": {"key": encoding.key, "tokens": encoding.n_tokens, "words": encoding.n_words,
                      "truncated_tokens": encoding.truncated_tokens,
                      "unknown_words": [encoding.words[i] for i in classifier.unknown_words(encoding)],
                      **classifier.input_details(encoding),
                      **({"windows": document.describe()} if document is not None else {}),
                      **({"units": encoding.describe()} if is_units(encoding) else {})},
            "details": result.details, "library_versions": library_versions(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        return Explanation(method_id=self.id, method_label=self.label, family=self.family, signed=self.is_signed(),
                           tokens=encoding.tokens, token_word=encoding.token_word, words=encoding.words,
                           word_segment=encoding.word_segment, word_scores=word_scores, token_scores=token_scores,
                           target=target, target_label=classifier.labels[target], provenance=provenance,
                           warnings=(*classifier.warnings, *classifier.input_warnings(encoding), *result.warnings,
                                     *([fallback] if fallback else []),
                                     *_causal_caveat(classifier, self.family, operator)))

    def _foil(self, classifier: TextClassifier, encoding: Encoding, target: int) -> int | None:
        """The contrast class of this input, or None (also for a method that reads no class)."""
        if self.contrast is None or self.contrast_support == "no-class":
            return None
        try:
            return contrast_policy.resolve(self.contrast, classifier.logits_of(encoding), target)
        except ValueError as error:
            raise ParamError(str(error)) from None

    def _contrast_provenance(self, classifier: TextClassifier, foil: int | None, target: int) -> dict:
        if self.contrast is None:
            return {}
        if foil is None:  # a method that reads no class
            return {"contrast": None, "contrast_requested": self.contrast,
                    "contrast_note": "this method reads no class: the contrast changes nothing"}
        return {"contrast": {"index": foil, "label": classifier.labels[foil], "requested": self.contrast},
                "explained_output": contrast_policy.explained_output(foil, classifier.labels, target)}

    def cache_identity(self) -> dict:
        identity: dict[str, object] = {"method": self.id, "params": dataclasses.asdict(self.params)}
        if self.contrast is not None:  # keys without a contrast stay as they were
            identity["contrast"] = self.contrast
        return identity

    def cache_salt(self, classifier: TextClassifier) -> dict:
        """What else, besides the model and the parameters, decides the result (e.g. AML's trained checkpoint);
        part of the cache key."""
        return {}


def _causal_caveat(classifier: TextClassifier, family: str, operator: Operator | None) -> list[str]:
    """Paper 003 section 4.2.1: on a causal (decoder) model, attention and removal results lean to early tokens."""
    if not classifier.causal:
        return []
    if family == "attention":
        return ["Causal model: each token attends only to the tokens before it, so attention weights lean toward "
                "early tokens whatever their importance (paper 003 section 4.2.1)."]
    if operator is not None:
        return ["Causal model: removing a word changes the state of every token after it, so removing an early "
                "word perturbs more of the input than removing a late one; paper 003 (section 4.2.1) found "
                "outsized removal scores for early words on GPT-2."]
    return []
