"""Soft normalized sufficiency and comprehensiveness (Zhao & Aletras, ACL 2023, arXiv 2305.10496, s. 3).

Instead of deleting the top-k words, every element of a word's token embeddings is dropped (zeroed) at random,
with a probability tied to the word's importance, so the whole attribution vector counts, not just its top-k:

- Soft comprehensiveness: element dropped with probability p = importance (the important words mostly vanish);
  Soft-C = max(0, p(y | x) - p(y | x')).
- Soft sufficiency: element dropped with probability p = 1 - importance (the important words mostly stay);
  Soft-S = 1 - max(0, p(y | x) - p(y | x')).
- Both normalized by the all-masked input x0 (every word token's embedding zeroed), as the paper does after
  Carton et al. 2020: with S0 = 1 - max(0, p(y | x) - p(y | x0)),
  Soft-NC = Soft-C / (1 - S0),  Soft-NS = (Soft-S - S0) / (1 - S0). Both: higher is better. NaN when
  p(y | x0) >= p(y | x) (nothing to normalize by).

Importance: the word scores min-max normalized to [0, 1] (signed: the most positive word is 1; with
``rank_by = absolute`` on |score|); a constant explanation gives every word 0.5. Each word's importance applies to
all its sub-word tokens; special tokens are never dropped. ``soft_samples`` Bernoulli masks are drawn per
(seed, input) with numpy (``mask_draws``) and the metric is averaged over them (the paper draws one).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explainers.params import options_from, param, validate
from models import Operator

from evaluation.faithfulness.curves import RemovalOptions, target_class
from evaluation.faithfulness.random_band import orderings_seed
from evaluation.metric import Evaluator, Metric, MetricValues, register_evaluator

REFERENCE = ("Zhao & Aletras, ACL 2023 (arXiv 2305.10496), s. 3: Soft-NS / Soft-NC, normalized as Carton et al. "
             "2020 (all-masked baseline)")
CHUNK = 32  # masked copies per forward batch


@dataclass(frozen=True)
class SoftOptions:
    soft_samples: int = param(20, "Soft masks per explanation", "Bernoulli embedding masks drawn per explanation "
                              "and averaged (Zhao & Aletras draw 1)", min=1, max=1000)

    def __post_init__(self):
        validate(self)


def importance(scores, rank_by: str = "signed") -> np.ndarray:
    """Word scores min-max normalized to [0, 1]; 0.5 everywhere when they are all equal."""
    key = np.asarray(scores, dtype=np.float64)
    key = np.abs(key) if rank_by == "absolute" else key
    key = np.nan_to_num(key, nan=np.nanmin(key) if np.isfinite(key).any() else 0.0)
    span = key.max() - key.min()
    return np.full(len(key), 0.5) if span <= 0 else (key - key.min()) / span


def mask_draws(seed: int, encoding_key: str, samples: int, n_tokens: int, dim: int) -> np.ndarray:
    """Uniform draws (samples, tokens, dim): an element is dropped where its draw is below its probability."""
    return np.random.default_rng(orderings_seed(seed, encoding_key)).random((samples, n_tokens, dim))


def token_probabilities(encoding, word_probability: np.ndarray) -> np.ndarray:
    """Drop probability of each token: its word's; 0 for special tokens."""
    token_word = encoding.token_word_array
    return np.where(token_word >= 0, word_probability[np.maximum(token_word, 0)], 0.0)


def _target_probabilities(classifier, encoding, embeddings: torch.Tensor, target: int) -> np.ndarray:
    tensors = classifier.tensors(encoding)
    out = []
    with torch.inference_mode():
        for begin in range(0, len(embeddings), CHUNK):
            logits = classifier.forward_embeds(embeddings[begin:begin + CHUNK], tensors["attention_mask"],
                                               tensors.get("token_type_ids"))
            out.append(torch.softmax(logits.float(), dim=-1)[:, target].cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def soft_scores(classifier, encoding, scores, target: int, seed: int, samples: int,
                rank_by: str = "signed") -> dict:
    """Soft-NC and Soft-NS of one explanation's word scores (mean over ``samples`` masks) and the probabilities."""
    word_importance = importance(scores, rank_by)
    ids = classifier.tensors(encoding)["input_ids"]
    with torch.inference_mode():
        embedded = classifier.word_embeddings(ids)[0]  # (tokens, dim)
    n_tokens, dim = embedded.shape
    draws = torch.as_tensor(mask_draws(seed, encoding.key, samples, n_tokens, dim), device=embedded.device)
    word_token = torch.as_tensor(encoding.token_word_array >= 0, device=embedded.device)
    rows = [embedded, embedded * ~word_token[:, None]]  # x and the all-masked x0
    for probability in (word_importance, 1.0 - word_importance):  # comprehensiveness, then sufficiency
        p = torch.as_tensor(token_probabilities(encoding, probability), device=embedded.device)
        rows += list(embedded[None] * (draws >= p[None, :, None]).to(embedded.dtype))
    probabilities = _target_probabilities(classifier, encoding, torch.stack(rows), target)
    full, empty = probabilities[0], probabilities[1]
    comp_p, suff_p = probabilities[2:2 + samples], probabilities[2 + samples:]
    room = max(0.0, full - empty)  # 1 - S(x, x0)
    if room <= 0:
        nc = ns = float("nan")
    else:
        nc = float(np.mean(np.maximum(0.0, full - comp_p)) / room)
        ns = float(np.mean(room - np.maximum(0.0, full - suff_p)) / room)
    return {"soft-comprehensiveness": nc, "soft-sufficiency": ns, "p_full": float(full), "p_all_masked": float(empty)}


def compute(classifier, encoding, explanation, example, options) -> MetricValues:
    removal = RemovalOptions.from_dict(options)
    soft = options_from(SoftOptions, options)
    target = target_class(removal, classifier.logits_of(encoding), example, explanation)
    result = soft_scores(classifier, encoding, explanation.word_scores, target, removal.seed, soft.soft_samples,
                         removal.rank_by)
    detail = {"samples": soft.soft_samples, "seed": removal.seed, "importance": f"min-max of {removal.rank_by} scores",
              "p_full": result["p_full"], "p_all_masked": result["p_all_masked"], "reference": REFERENCE}
    return MetricValues({m: result[m] for m in ("soft-comprehensiveness", "soft-sufficiency")},
                        details={m: detail for m in ("soft-comprehensiveness", "soft-sufficiency")})


_COMMON = dict(family="faithfulness", higher_is_better=True, reference=REFERENCE, operator=Operator.ZERO.value,
               preset="soft", params={"drop": "embedding elements, Bernoulli", "importance": "min-max normalized",
                                      "normalization": "all-masked input (every word embedding zeroed)",
                                      "samples": "soft_samples (default 20, averaged)"})
METRICS = (
    Metric(id="soft-comprehensiveness", label="Soft normalized comprehensiveness", range=(0.0, None),
           description="Embedding elements of each word dropped with probability = its normalized importance; "
                       "max(0, p(x) - p(x')) / max(0, p(x) - p(all masked)), mean over the masks. Higher is better.",
           **_COMMON),
    Metric(id="soft-sufficiency", label="Soft normalized sufficiency", range=(None, 1.0),
           description="Embedding elements of each word dropped with probability = 1 - its normalized importance; "
                       "1 - max(0, p(x) - p(x')) rescaled between the all-masked input (0) and x (1). Higher is "
                       "better.", **_COMMON),
)
EVALUATOR = register_evaluator(Evaluator(id="soft", label="Soft sufficiency / comprehensiveness (Zhao & Aletras "
                                         "2023: embedding elements dropped by importance)", metrics=METRICS,
                                         compute=compute))
