"""ROAR masking: how many words a ratio removes, which ones, and the masked inputs built by the one engine.

Definitions (shared/notes/seeds-000-001.md):
- paper 001 section 3.1-3.2 and its code: remove the top ``int(r * n_eligible)`` words ("floor"); importance of
  already removed words is +inf (Recursive ROAR keeps them removed, the total is cumulative), of words that may
  not be removed -inf; removal = [MASK] (length kept); special tokens and, for sentence pairs, the auxiliary
  segment are never scored or removed.
- paper 000 section 3.3 and its code: remove ``max(1, ceil((n - 1) * r))`` words ("ceil"), ranked by signed
  score, removal = deletion (shorter input); ROAR-BERT replaces them with a masked LM's top-1 word.

The masked token ids of train and test examples always come from ``models.perturb.perturb`` so "remove"
means the same thing in ROAR as in every other metric and method.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from models import Encoding, Operator, TextClassifier, TokenBatch, perturb
from models.errors import ModelError

COUNT_RULES = {
    "floor": "int(r x eligible words), paper 001 (code, 'quantile' strategy)",
    "ceil": "max(1, ceil((n - 1) x r)) words, paper 000 (code)",
    "tokens": "the ratios are numbers of words: step r removes exactly r words in total, one more per step with "
              "ratios 1, 2, 3, ... (paper 001 App. F, the exact 'count' strategy)",
}
RANKINGS = {"signed": "largest signed score first (paper 000; equal to paper 001 for its unsigned measures)",
            "absolute": "largest |score| first"}
SEGMENTS = {"first": "only the first segment is masked (paper 001: the auxiliary sequence never is)",
            "all": "words of both segments may be masked"}
ROAR_OPERATORS = (Operator.MASK, Operator.DELETE, Operator.MLM, Operator.UNK, Operator.PAD)


def check_operator(operator: str) -> Operator:
    try:
        chosen = Operator(operator)
    except ValueError:
        chosen = None
    if chosen not in ROAR_OPERATORS:
        raise ModelError(f"ROAR cannot use the removal operator '{operator}'; choose one of "
                         f"{', '.join(o.value for o in ROAR_OPERATORS)} (retraining works on token ids, so the "
                         f"zero-embedding operator is not available).")
    return chosen


def words_to_remove(n_eligible: int, ratio: float, rule: str = "floor") -> int:
    """How many words a masking ratio (0..1) removes from an input with ``n_eligible`` removable words."""
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"masking ratio {ratio} outside 0..1")
    if n_eligible <= 0 or ratio == 0.0:
        return 0
    if rule == "floor":
        count = int(ratio * n_eligible + 1e-9)  # the tolerance keeps 0.3 * 10 at 3 despite float rounding
    elif rule == "ceil":
        count = max(1, math.ceil((n_eligible - 1) * ratio - 1e-9))
    else:
        raise ValueError(f"unknown count rule '{rule}'; use {', '.join(COUNT_RULES)}")
    return min(count, n_eligible)


def count_at(n_eligible: int, value: float, rule: str = "floor") -> int:
    """Words removed at one point of a study: ``value`` percent of the eligible words by ``rule``, or with the
    "tokens" rule ``value`` words (all of them when the input has fewer)."""
    if rule == "tokens":
        return min(int(value), max(0, n_eligible))
    return words_to_remove(n_eligible, value / 100.0, rule)


def eligible_words(encoding: Encoding, segments: str = "first") -> np.ndarray:
    """Words that may be scored and removed (special tokens are never words)."""
    segment = np.asarray(encoding.word_segment, dtype=np.int64)
    if segments == "first" and encoding.pair is not None:
        return segment == 0
    return np.ones(encoding.n_words, dtype=bool)


def select_removed(scores: np.ndarray, eligible: np.ndarray, removed: np.ndarray | None, count: int,
                   rank_by: str = "signed") -> np.ndarray:
    """The removal mask after removing ``count`` words in total (paper 001 section 3.2).

    Already removed words get importance +inf (they stay removed and count towards the total), words that
    are not eligible -inf; ties and NaNs fall back to reading order (NaN ranks last).
    """
    scores = np.asarray(scores, dtype=np.float64).copy()
    eligible = np.asarray(eligible, dtype=bool)
    removed = np.zeros_like(eligible) if removed is None else np.asarray(removed, dtype=bool)
    if scores.shape != eligible.shape:
        raise ValueError(f"{scores.size} scores for {eligible.size} words")
    if rank_by == "absolute":
        scores = np.abs(scores)
    elif rank_by != "signed":
        raise ValueError(f"unknown ranking '{rank_by}'; use {', '.join(RANKINGS)}")
    scores[np.isnan(scores)] = -np.finfo(np.float64).max
    scores[removed] = np.inf
    scores[~eligible & ~removed] = -np.inf
    order = np.argsort(-scores, kind="stable")
    chosen = [i for i in order if eligible[i] or removed[i]][:count]
    out = removed.copy()
    out[chosen] = True
    return out


def random_scores(example_id: str, n_words: int, seed: int) -> np.ndarray:
    """ROAR's random baseline: U(0, 1) word scores from (seed, example id); model independent, so ROAR and
    Recursive ROAR share it (paper 001 code) and every executor draws the same numbers."""
    digest = int.from_bytes(hashlib.sha256(f"{seed}|{example_id}".encode()).digest()[:8], "little")
    return np.random.default_rng([seed, digest]).random(n_words)


def masked_batch(classifier: TextClassifier, encodings: list[Encoding], removed: list[np.ndarray],
                 operator: str, filler=None) -> TokenBatch:
    """Token ids of every example with its removed words removed by the perturbation engine."""
    operator = check_operator(operator)
    ids, types = [], []
    for encoding, gone in zip(encodings, removed):
        batch = perturb(classifier, encoding, ~np.asarray(gone, dtype=bool)[None, :], operator, filler)
        ids.append(list(batch.input_ids[0]))
        types.append(list(batch.token_type_ids[0]) if batch.token_type_ids is not None else None)
    use_types = bool(types) and all(t is not None for t in types)
    return TokenBatch(input_ids=ids, token_type_ids=[t for t in types if t is not None] if use_types else None)


def _special_string(classifier: TextClassifier, operator: Operator) -> str:
    tokenizer = classifier.tokenizer
    token = {Operator.MASK: tokenizer.mask_token, Operator.PAD: tokenizer.pad_token,
             Operator.UNK: tokenizer.unk_token}[operator]
    if token is None:
        raise ModelError(f"The tokenizer of '{classifier.name}' has no token for the '{operator.value}' operator.")
    return str(token)


def masked_encoding(classifier: TextClassifier, encoding: Encoding, removed: np.ndarray, operator: str,
                    filler=None) -> tuple[Encoding, np.ndarray]:
    """The masked input as an Encoding (to compute importance on it in Recursive ROAR) and, for each of its
    words, the index of the original word it stands for.

    [MASK]/[UNK]/[PAD]: a removed word becomes one special token per sub-word token written as one
    whitespace word, so its ids equal ``perturb``'s and the words stay aligned; delete: removed words are
    left out; MLM fill: the filler's words take their places.
    """
    operator = check_operator(operator)
    removed = np.asarray(removed, dtype=bool)
    n = encoding.n_words
    if operator in (Operator.MASK, Operator.PAD, Operator.UNK):
        special = _special_string(classifier, operator)
        tokens_per_word = np.bincount(encoding.token_word_array[encoding.token_word_array >= 0], minlength=n)
        words = [special * max(1, int(tokens_per_word[i])) if removed[i] else encoding.words[i] for i in range(n)]
        word_map = np.arange(n)
    elif operator is Operator.DELETE:
        word_map = np.flatnonzero(~removed)
        words = [encoding.words[i] for i in word_map]
    else:
        if filler is None:
            raise ModelError("The MLM-fill operator needs a masked-LM filler (models/mlm/filler.py load_filler()).")
        words = list(filler.fill(encoding, ~removed[None, :])[0])
        if len(words) != n:
            raise ModelError(f"The masked-LM filler returned {len(words)} words for {n}; Recursive ROAR needs "
                             f"one word per filled word.")
        word_map = np.arange(n)
    segments = np.asarray(encoding.word_segment)[word_map]
    text = " ".join(w for w, s in zip(words, segments) if s == 0)
    pair = " ".join(w for w, s in zip(words, segments) if s == 1) if encoding.pair is not None else None
    if not text.strip():  # everything of the first segment deleted: keep a placeholder the encoder accepts
        text = _special_string(classifier, Operator.UNK) if classifier.tokenizer.unk_token else "."
    masked = classifier.encode(text, pair or None)
    if masked.n_words != len(word_map):
        word_map = word_map[:masked.n_words] if masked.n_words < len(word_map) else \
            np.concatenate([word_map, np.full(masked.n_words - len(word_map), -1)])
    return masked, word_map


def scores_on_original(word_scores: np.ndarray, word_map: np.ndarray, n_words: int) -> np.ndarray:
    """Scores computed on a masked input, placed back on the original words (missing words: -inf)."""
    out = np.full(n_words, -np.inf)
    valid = word_map >= 0
    out[word_map[valid]] = np.asarray(word_scores, dtype=np.float64)[valid]
    return out
