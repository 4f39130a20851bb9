"""Input Marginalization (Kim et al. 2020, as paper 000 section 2 defines and reproduces it).

For each word x_i (paper 000 Eqs. 2-4):

    E_i = sum_k p(x~_k | x_-i) f(x_-i, x~_k) / sum_k p(x~_k | x_-i)        (Eq. 3, renormalized [code])
    a_i = log2-odds(f(x)) - log2-odds(E_i)                                 (Eq. 4)

with f the target class's probability, p the masked LM's probability of candidate x~_k for one mask
token at word i (the masked LM sees the whole input, both segments of a pair; the original word is not
excluded: a candidate equal to it contributes f(x), a zero difference). ``exclude_original`` (preset
``paper-000-other-words``) drops it, the "obvious fix" paper 000 section 7 tests: the remaining candidates are unlikely
words, so the counterfactuals go out of distribution instead. Candidates:

- ``top-k`` (paper 000, "IM-top10", all its experiments): the k most likely words, weights renormalized;
- ``threshold`` (Kim et al. 2020, sigma = 1e-5): every word with p >= threshold (capped at
  ``max_candidates``; the provenance records how much probability mass the candidates cover).

Counterfactual inputs go through the one perturbation engine (``mlm`` operator with the candidates as the
fill) and all of them are classified in one batched call: n_words x k forward passes. Known flaw the
details and warnings expose (paper 000 App. B): a word the masked LM predicts as itself with probability p
gets at most about 1 - p of the attribution it would get otherwise, whatever the classifier does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution, Explainer
from explainers.params import ParamError, param
from explainers.registry import register
from explainers.scores import SCORES, log_odds
from models import Operator
from models.mlm import BUILT_IN_MLM, HIGH_CONFIDENCE, FixedFill, load_filler, with_fill_options
from models.perturb import perturbed_logits

CANDIDATE_SETS = ("top-k", "threshold")
MASKED_LM_HELP = ("'mlm' = the offline stand-in built by `cli.py prepare-mlm`; or a folder with a masked LM; or a hub "
                  "id such as bert-base-uncased (paper 000) with EXWB_ALLOW_HUB=1.")


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    top = logits.max(axis=1, keepdims=True)
    return logits - (top + np.log(np.exp(logits - top).sum(axis=1, keepdims=True)))


def _logsumexp(values: np.ndarray) -> float:
    top = float(np.max(values))
    return top + float(np.log(np.exp(values - top).sum()))


def marginal_log2_odds(logits: np.ndarray, weights: np.ndarray, target: int) -> float:
    """log2-odds of E = sum w_k p_k(target) / sum w_k, computed in log space (no rounding of p to 1)."""
    log_p = _log_softmax(logits)
    log_target = log_p[:, target]
    others = np.delete(log_p, target, axis=1)
    top = others.max(axis=1, keepdims=True)
    log_rest = top[:, 0] + np.log(np.exp(others - top).sum(axis=1))
    log_w = np.log(np.asarray(weights, dtype=np.float64))
    return (_logsumexp(log_w + log_target) - _logsumexp(log_w + log_rest)) / np.log(2.0)


def marginal_probability(logits: np.ndarray, weights: np.ndarray, target: int) -> float:
    weights = np.asarray(weights, dtype=np.float64)
    return float((np.exp(_log_softmax(logits)[:, target]) * weights).sum() / weights.sum())


def marginal(logits: np.ndarray, weights: np.ndarray, target: int, score: str) -> float:
    """The marginal prediction (Eq. 3-4) in the method's score: log2-odds or probability."""
    if score == "log2-odds":
        return marginal_log2_odds(logits, weights, target)
    return marginal_probability(logits, weights, target)


class MaskedLMMethod(Explainer):
    """Shared by the methods that need a masked LM: loading it by name (or using one given in code)."""

    needs_mlm = True

    def __init__(self, params=None, preset: str | None = None, filler=None, **overrides):
        super().__init__(params, preset=preset, **overrides)
        self._filler = filler

    def filler(self):
        """The masked LM named by ``masked_lm`` (or the one given in code) under the method's own fill options:
        LIME-BERT's ``fill_mode``, IM's and LOO-fill's ``exclude_original`` (the model is shared, not copied)."""
        if self._filler is None:
            self._filler = load_filler(self.params.masked_lm)
        return with_fill_options(self._filler, mode=getattr(self.params, "fill_mode", None),
                                 exclude_original=getattr(self.params, "exclude_original", None))

    def filler_identity(self) -> dict:
        filler = self.filler()
        identity = getattr(filler, "identity", None)
        return identity() if identity is not None else {"mlm": getattr(filler, "name", "?")}

    def cache_identity(self) -> dict:
        return {**super().cache_identity(), "masked_lm": self.filler_identity()}

    def filler_details(self) -> dict:
        filler = self.filler()
        describe = getattr(filler, "describe", None)
        info = describe() if describe is not None else {"name": getattr(filler, "name", "?")}
        keep = ("name", "source", "fingerprint", "stand_in", "evaluation", "mode")
        return {k: info[k] for k in keep if k in info}

    def stand_in_warning(self) -> list[str]:
        info = self.filler_details()
        if not info.get("stand_in"):
            return []
        evaluation = next(iter((info.get("evaluation") or {}).items()), None)
        accuracy = ""
        if evaluation is not None:
            name, result = evaluation
            accuracy = (f" (held-out {name}: top-1 {result['top1_accuracy']:.0%}, top-10 "
                        f"{result['top10_accuracy']:.0%} of words recovered)")
        return [f"Candidates come from '{info['name']}', a small offline stand-in for BERT{accuracy}; paper 000 "
                f"uses bert-base-uncased (set EXWB_ALLOW_HUB=1 and choose it as the masked LM to reproduce it)."]


@register
class InputMarginalization(MaskedLMMethod):
    id = "input_marginalization"
    contrast_support = "unsupported"  # log2-odds of a marginal: not a per-class score
    label = "Input Marginalization"
    family = "mlm"
    description = ("Replace each word by the masked LM's likely candidates and compare the prediction with its "
                   "likelihood-weighted average over them (log2-odds).")
    reference = "Kim et al. 2020; paper 000 section 2, Eqs. 2-4 (IM-top10, renormalized) and App. D (sigma = 1e-5)"

    @dataclass(frozen=True)
    class Params:
        masked_lm: str = param(BUILT_IN_MLM, "Masked LM", MASKED_LM_HELP, server_path=True)
        candidates: str = param("top-k", "Candidates", "top-k: the k most likely words, weights renormalized "
                                "(paper 000); threshold: every word with probability >= threshold (Kim et al. "
                                "2020).", choices=CANDIDATE_SETS)
        k: int = param(10, "k (top-k)", "Number of candidates per word for top-k.", min=1, max=200)
        threshold: float = param(1e-5, "Threshold (sigma)", "Smallest candidate probability kept by 'threshold'.",
                                 min=1e-9, max=0.5)
        max_candidates: int = param(1000, "Most candidates (threshold)", "Cap on the candidates per word for "
                                    "'threshold' (the covered probability mass is reported).", min=1, max=30000)
        score: str = param("log2-odds", "Score", "Difference of log2-odds (paper 000 Eq. 4) or of probabilities.",
                           choices=SCORES)
        exclude_original: bool = param(False, "Exclude the original word", "Marginalize over the candidates other "
                                       "than the word itself (paper 000 section 7: this fix makes the inputs unlikely).")

    presets = {
        "paper-000-top10": {"candidates": "top-k", "k": 10, "score": "log2-odds"},
        "paper-000-other-words": {"candidates": "top-k", "k": 10, "score": "log2-odds", "exclude_original": True},
        "kim-2020-sigma": {"candidates": "threshold", "threshold": 1e-5, "max_candidates": 1000,
                           "score": "log2-odds"},
        "paper-000-bert": {"masked_lm": "bert-base-uncased", "candidates": "top-k", "k": 10, "score": "log2-odds"},
    }

    def removal_operator(self):
        return Operator.MLM

    def _candidate_count(self) -> int:
        return self.params.k if self.params.candidates == "top-k" else self.params.max_candidates

    def estimate_passes(self, encoding):
        # classifier forwards; the masked LM adds n_words forwards of its own (a smaller model)
        return encoding.n_words * (self._candidate_count() + 1) + 1, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        filler = self.filler()
        n = encoding.n_words
        if n == 0:
            raise ParamError("The input has no words to attribute.")
        threshold = p.threshold if p.candidates == "threshold" else 0.0
        ranked = filler.top_k([encoding] * n, list(range(n)), k=self._candidate_count(), min_probability=threshold)
        # row 0: the original; then one row per (word, candidate), filled through the perturbation engine
        words = list(encoding.words)
        rows, owner = [list(words)], [-1]
        for i, candidates in enumerate(ranked):
            for candidate in candidates:
                filled = list(words)
                filled[i] = candidate.word
                rows.append(filled)
                owner.append(i)
        owner = np.asarray(owner)
        keep = np.ones((len(rows), n), dtype=bool)
        keep[np.arange(1, len(rows)), owner[1:]] = False
        logits = perturbed_logits(classifier, encoding, keep, Operator.MLM, filler=FixedFill(rows))
        if p.score == "log2-odds":
            original = float(log_odds(logits[:1], target)[0])
        else:
            original = float(np.exp(_log_softmax(logits[:1])[0, target]))
        scores = np.zeros(n)
        per_word, empty = [], []
        for i, candidates in enumerate(ranked):
            if not candidates:
                empty.append(encoding.words[i])
                per_word.append({"word": encoding.words[i], "candidates": [], "mass": 0.0})
                continue
            weights = np.array([c.probability for c in candidates])
            chunk = logits[owner == i]
            scores[i] = original - marginal(chunk, weights, target, p.score)
            per_word.append({
                "word": encoding.words[i], "mass": float(weights.sum()),
                "expected_probability": marginal_probability(chunk, weights, target),
                "top1_is_original": candidates[0].matches(encoding.words[i]),
                "candidates": [[c.word, round(c.probability, 6)] for c in candidates[:10]]})
        warnings = self.stand_in_warning()
        predictable = [w["word"] for w in per_word
                       if w["candidates"] and w["top1_is_original"] and w["candidates"][0][1] >= HIGH_CONFIDENCE]
        if predictable:
            listed = ", ".join(predictable[:8]) + (" ..." if len(predictable) > 8 else "")
            warnings.append(f"The masked LM predicts {len(predictable)} word(s) as themselves with probability >= "
                            f"{HIGH_CONFIDENCE:g} ({listed}): "
                            f"IM's attribution of such words is near zero by construction, whatever the classifier "
                            f"does (paper 000 App. B). See the Counterfactuals page.")
        if empty:
            warnings.append(f"No candidate for {len(empty)} word(s) ({', '.join(empty[:8])}): they get 0.")
        masses = [w["mass"] for w in per_word if w["candidates"]]
        mode = f"top-{p.k}" if p.candidates == "top-k" else f"p >= {p.threshold:g}"
        return Attribution(
            word_scores=scores,
            baseline=f"word replaced by masked-LM candidates ({mode}, weights renormalized) from "
                     f"'{getattr(filler, 'name', '?')}'",
            warnings=warnings,
            details={"score": p.score, "candidates": mode, "counterfactuals": len(rows) - 1,
                     "mean_candidate_mass": float(np.mean(masses)) if masses else 0.0,
                     "mlm_forward_passes": n,  # one masked input per word, batched
                     "masked_lm": self.filler_details(), "words": per_word})
