"""Plausibility's per-example building blocks: rankings, the two binarizations, set and span scores, average
precision and paper 000's threshold sweep, each comparing word scores with a 0/1 human word mask. Their definitions
and edge conventions (papers 000, 002, 003 and ERASER's script) are in evaluation/plausibility/metrics.py's header."""
from __future__ import annotations

import math

import numpy as np

TAUS = tuple(round(0.05 * x, 2) for x in range(1, 20))  # paper 000: {0.05 x | 0 < x < 20}
_EPS = 1e-12  # tolerance for ``a >= tau`` so 0.3 passes tau = 0.3 whatever the float rounding


def parse_top_k(value) -> tuple[str, float]:
    """("share", 0.2) for "20%", ("count", 25) for "25" or 25, ("human", 0) for "human"."""
    text = str(value).strip().lower()
    if text == "human":
        return "human", 0.0
    try:
        if text.endswith("%"):
            share = float(text[:-1]) / 100
            if not 0 < share <= 1:
                raise ValueError
            return "share", share
        count = int(text)
        if count < 1:
            raise ValueError
        return "count", float(count)
    except ValueError:
        raise ValueError(f"plausibility top_k must be a share like '20%', a count like '25' or 'human', "
                         f"got {value!r}.") from None


def top_k_size(top_k, n_words: int, n_human: int) -> int:
    kind, amount = parse_top_k(top_k)
    if kind == "human":
        return min(n_human, n_words)
    if kind == "share":
        return min(n_words, max(1, math.ceil(amount * n_words - 1e-9)))
    return min(n_words, int(amount))


def _values(scores: np.ndarray, sign: str) -> np.ndarray:
    """Scores as used for ranking: signed (negatives rank low) or absolute; NaN (cut words) ranks last."""
    values = np.asarray(scores, dtype=np.float64)
    values = np.abs(values) if sign == "absolute" else values.copy()
    finite = values[np.isfinite(values)]
    floor = (finite.min() - 1.0) if finite.size else 0.0
    values[~np.isfinite(values)] = floor
    return values


def ranking(scores, human, sign: str = "positive", ties: str = "pessimistic") -> np.ndarray:
    """Word indices from most to least important; ties: non-human first (pessimistic) or reading order."""
    values = _values(scores, sign)
    human = np.asarray(human, dtype=np.int64)
    positions = np.arange(values.size)
    if ties == "pessimistic":
        return np.lexsort((positions, human, -values))
    return np.lexsort((positions, -values))


def binarize_threshold(scores, tau: float, sign: str = "positive") -> np.ndarray:
    """Paper 000: zero the negatives (or take |a|), divide by the max, keep a >= tau (all off if max <= 0)."""
    values = np.asarray(scores, dtype=np.float64)
    values = np.where(np.isfinite(values), values, 0.0)
    values = np.abs(values) if sign == "absolute" else np.maximum(values, 0.0)
    top = values.max() if values.size else 0.0
    if top <= 0:
        return np.zeros(values.size, dtype=bool)
    return values / top >= tau - _EPS


def binarize_top_k(scores, human, k: int, sign: str = "positive", ties: str = "pessimistic") -> np.ndarray:
    """The k best-ranked words, leaving out every word without a positive value (a negative or zero score
    under ``sign="positive"``, a zero under ``"absolute"``, a cut word): like the threshold binarization,
    such a word is never highlighted, so fewer than k words are selected when fewer have a positive value."""
    selected = np.zeros(len(scores), dtype=bool)
    selected[ranking(scores, human, sign, ties)[:k]] = True
    values = np.asarray(scores, dtype=np.float64)
    values = np.abs(values) if sign == "absolute" else values
    return selected & (np.nan_to_num(values, nan=0.0) > 0)


def set_scores(selected, human) -> dict[str, float]:
    """IoU, precision, recall, F1 of a selected word set against the human set (paper 000 edge conventions)."""
    a = np.asarray(selected, dtype=bool)
    h = np.asarray(human, dtype=bool)
    inter, union = int(np.sum(a & h)), int(np.sum(a | h))
    n_a, n_h = int(a.sum()), int(h.sum())
    iou = inter / union if union else 1.0
    if n_h == 0:
        precision = 1.0 if n_a == 0 else 0.0
    else:
        precision = inter / n_a if n_a else 0.0
    recall = 1.0 if n_h == 0 else (inter / n_h if n_a else 0.0)
    return {"iou": iou, "precision": precision, "recall": recall, "f1": f1(precision, recall)}


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def spans(mask, segments=None) -> list[tuple[int, int]]:
    """Maximal runs [start, end) of 1s; a run never crosses a segment (premise/hypothesis) boundary."""
    mask = np.asarray(mask, dtype=bool)
    result, start = [], None
    for i, on in enumerate(mask):
        boundary = segments is not None and i > 0 and segments[i] != segments[i - 1]
        if start is not None and (not on or boundary):
            result.append((start, i))
            start = None
        if on and start is None:
            start = i
    if start is not None:
        result.append((start, len(mask)))
    return result


def iou_f1(selected, human, threshold: float = 0.5, segments=None) -> dict[str, float]:
    """ERASER span IoU F1 (as coded for paper 002): a predicted span matches at IoU >= threshold."""
    predicted, truth = spans(selected, segments), spans(human, segments)
    if not truth:
        precision, recall = (1.0, 1.0) if not predicted else (0.0, 1.0)
    elif not predicted:
        precision, recall = 0.0, 0.0
    else:
        def overlap(p, t):
            inter = max(0, min(p[1], t[1]) - max(p[0], t[0]))
            return inter / ((p[1] - p[0]) + (t[1] - t[0]) - inter)

        matches = sum(1 for p in predicted if max(overlap(p, t) for t in truth) >= threshold - _EPS)
        precision, recall = matches / len(predicted), matches / len(truth)
    return {"precision": precision, "recall": recall, "f1": f1(precision, recall),
            "predicted_spans": len(predicted), "human_spans": len(truth)}


def iou_span_scores(selected, human, threshold: float = 0.5, segments=None) -> dict[str, float]:
    """ERASER's script's per-example span precision and recall: NaN precision without a highlighted span and NaN
    recall without a human span (the script's macro average leaves such examples out of that average)."""
    scores = iou_f1(selected, human, threshold, segments)
    return {"precision": scores["precision"] if scores["predicted_spans"] else float("nan"),
            "recall": scores["recall"] if scores["human_spans"] else float("nan")}


def iou_f1_of_means(precisions, recalls) -> float:
    """ERASER's script's dataset IoU F1: the F1 of the mean span precision and the mean span recall (NaN entries
    left out of each mean)."""
    p, r = np.asarray(precisions, dtype=np.float64), np.asarray(recalls, dtype=np.float64)
    p, r = p[np.isfinite(p)], r[np.isfinite(r)]
    return f1(float(p.mean()) if p.size else 0.0, float(r.mean()) if r.size else 0.0)


def auprc_trapezoid(scores, human, sign: str = "positive") -> float:
    """ERASER's script's "AUPRC": the trapezoid area under sklearn's precision-recall curve (``auc(recall,
    precision)``, the curve ending at precision 1, recall 0); NaN without human words."""
    h = np.asarray(human, dtype=np.int64)
    if h.sum() == 0:
        return float("nan")
    # lazy third-party import: sklearn.metrics costs ~1.3 s that `import workbench` should not pay
    from sklearn.metrics import auc, precision_recall_curve

    precision, recall, _ = precision_recall_curve(h, _values(scores, sign))
    return float(auc(recall, precision))


def average_precision(scores, human, sign: str = "positive") -> float:
    """Area under the precision-recall step curve (ties share one threshold); NaN without human words."""
    values = _values(scores, sign)
    h = np.asarray(human, dtype=np.float64)
    positives = h.sum()
    if positives == 0:
        return float("nan")
    order = np.argsort(-values, kind="stable")
    values, h = values[order], h[order]
    last_of_tie = np.r_[np.nonzero(np.diff(values))[0], values.size - 1]
    true_pos = np.cumsum(h)[last_of_tie]
    precision = true_pos / (last_of_tie + 1)
    recall = true_pos / positives
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def rank_scores(scores, human, sign: str = "positive", ties: str = "pessimistic") -> dict[str, float]:
    """Paper 003: precision@k (k = |H|), mean rank (top-r holding every human word) and r / n."""
    h = np.asarray(human, dtype=bool)
    n_h = int(h.sum())
    if n_h == 0:
        return {"precision_at_k": float("nan"), "mean_rank": float("nan"), "mean_rank_pct": float("nan")}
    order = ranking(scores, h, sign, ties)
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(1, order.size + 1)
    rank = int(position[h].max())
    return {"precision_at_k": float(h[order[:n_h]].sum() / n_h), "mean_rank": float(rank),
            "mean_rank_pct": rank / h.size}


def sweep(scores, human, sign: str = "positive", taus=TAUS) -> dict[str, np.ndarray]:
    """Paper 000's per-example threshold sweep: IoU, precision, recall and coverage at every tau."""
    h = np.asarray(human, dtype=bool)
    rows = []
    for tau in taus:
        selected = binarize_threshold(scores, tau, sign)
        rows.append(set_scores(selected, h) | {"coverage": float(selected.mean()) if h.size else 0.0})
    return {key: np.array([row[key] for row in rows]) for key in ("iou", "precision", "recall", "coverage")}
