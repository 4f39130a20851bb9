"""Sequential Integrated Gradients (Enguehard 2023, "Sequential Integrated Gradients: a simple but effective method
for explaining language models", ACL Findings; a baseline of paper 004, section 4).

IG moves every word from the baseline at once; SIG explains each word i on its own path, along which only word i
moves and every other word keeps its real value (section 3, Eq. 2-3):

    x_bar^(i) = x with word i's tokens replaced by the baseline ([MASK] in the paper)
    SIG_i = (x_i - x_bar_i) . integral_0^1 dF(x_bar^(i) + a (x - x_bar^(i))) / dx_i da

so each word's score sums (over its tokens and hidden units) to F(x) - F(x_bar^(i)): completeness per word, not
for the whole input. The word is this project's unit (a run of non-whitespace): all tokens of a word move
together, special tokens never move. Cost: one IG path per word, n_words x n_steps forward and backward rows
(the paper's note: it explodes on long texts).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explainers.base import Attribution, Explainer
from explainers.captum_lazy import captum_attr
from explainers.contrast import contrast_columns
from explainers.embedding_forward import BASELINE_LABELS, OUTPUT_TRANSFORMS, OUTPUTS, baseline_embeddings
from explainers.methods.integrated_gradients import RULES
from explainers.params import param
from explainers.registry import register


def word_paths(classifier, encoding, baseline: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, baselines), both (n_words, tokens, hidden): row i is the input, and the input with only word i's
    tokens at the baseline (Enguehard 2023 section 3)."""
    tensors = classifier.tensors(encoding)
    embeddings = classifier.word_embeddings(tensors["input_ids"]).detach()  # (1, T, H)
    base = baseline_embeddings(classifier, encoding, baseline)
    word_of = torch.tensor(encoding.token_word, device=embeddings.device)
    moves = word_of[None, :] == torch.arange(encoding.n_words, device=embeddings.device)[:, None]  # (n_words, T)
    inputs = embeddings.expand(encoding.n_words, -1, -1)
    baselines = torch.where(moves[..., None], base.expand_as(inputs), inputs)
    return inputs.contiguous(), baselines.contiguous()


def batched_forward(classifier, encoding, output: str):
    """Word embeddings (batch, T, H) -> the class outputs (batch, classes), the input's mask repeated per row."""
    tensors = classifier.tensors(encoding)
    mask, types = tensors["attention_mask"], tensors.get("token_type_ids")
    transform = OUTPUT_TRANSFORMS[output]

    def forward(inputs_embeds: torch.Tensor) -> torch.Tensor:
        rows = inputs_embeds.shape[0]
        logits = classifier.forward_embeds(inputs_embeds, mask.expand(rows, -1),
                                           None if types is None else types.expand(rows, -1))
        return contrast_columns(transform(logits))  # s(A) - s(B) with a contrast class (explainers/contrast.py)

    return forward


def available_baseline(classifier, requested: str) -> tuple[str, list[str]]:
    """The requested baseline, or the zero embedding where the tokenizer has no such token (GPT-2, Llama, T5 have
    no [MASK]), with a warning that says so (as removal falls back to delete, models/perturb.py)."""
    token = {"mask": classifier.tokenizer.mask_token_id, "pad": classifier.tokenizer.pad_token_id}.get(requested, 0)
    if token is not None:
        return requested, []
    return "zero", [f"This tokenizer has no [{requested.upper()}] token: the moving word starts from zero "
                    f"word-embedding vectors instead (Enguehard 2023 uses [MASK])."]


@register
class SequentialIntegratedGradients(Explainer):
    id = "sequential_integrated_gradients"
    label = "Sequential Integrated Gradients"
    family = "gradient"
    description = "Integrated Gradients word by word: each word moves alone from the baseline while the others " \
                  "keep their values; each word's score sums to F(x) - F(x with that word at the baseline)."
    reference = "Enguehard 2023 (ACL Findings) section 3; paper 004 section 4 (SIG)"
    needs_gradients = True
    expensive = True

    @dataclass(frozen=True)
    class Params:
        n_steps: int = param(50, "Steps", "Points on each word's path.", min=2, max=1000)
        method: str = param("gausslegendre", "Integration rule", "Captum's rules (Gauss-Legendre by default).",
                            choices=RULES)
        baseline: str = param("mask", "Baseline of the moving word", "mask: [MASK] (Enguehard 2023); "
                              + "; ".join(f"{k}: {v}" for k, v in BASELINE_LABELS.items() if k != "mask"),
                              choices=tuple(BASELINE_LABELS))
        output: str = param("logit", "Output differentiated", choices=OUTPUTS)
        internal_batch_size: int = param(50, "Path points per forward pass", min=1, max=2000)

    presets = {"enguehard-2023": {"n_steps": 50, "method": "gausslegendre", "baseline": "mask", "output": "logit"}}

    def estimate_passes(self, encoding):
        return encoding.n_words * self.params.n_steps + 2, encoding.n_words * self.params.n_steps

    def attribute(self, classifier, encoding, target):
        p = self.params
        forward = batched_forward(classifier, encoding, p.output)
        baseline, warnings = available_baseline(classifier, p.baseline)
        inputs, baselines = word_paths(classifier, encoding, baseline)
        attribution = captum_attr.IntegratedGradients(forward).attribute(
            inputs, baselines=baselines, target=target, n_steps=p.n_steps, method=p.method,
            internal_batch_size=p.internal_batch_size).detach()  # (n_words, T, H): row i moved only word i
        per_token = attribution.sum(dim=-1)  # (n_words, T)
        word_of = np.asarray(encoding.token_word)
        token_scores = np.zeros(encoding.n_tokens)
        for word in range(encoding.n_words):  # a token's score comes from its own word's path
            tokens = word_of == word
            token_scores[tokens] = per_token[word].cpu().numpy()[tokens]
        with torch.no_grad():
            ends = forward(torch.cat([inputs[:1], baselines]))[:, target].double().cpu().numpy()
        gaps = ends[0] - ends[1:]  # F(x) - F(x_bar^(i)) per word
        sums = np.array([token_scores[word_of == w].sum() for w in range(encoding.n_words)])
        delta = float(np.abs(sums - gaps).max()) if encoding.n_words else 0.0
        if encoding.n_words and delta > 0.05 * max(float(np.abs(gaps).max()), 1e-6):
            warnings.append(f"Largest per-word convergence delta {delta:.3g} is over 5 % of the largest "
                            f"F(x) - F(baseline of the word): increase the steps.")
        return Attribution(token_scores=token_scores, baseline=f"{BASELINE_LABELS[baseline]}, one word at a time",
                           details={"max_word_convergence_delta": delta, "word_gaps": gaps.tolist(),
                                    "baseline": baseline, "baseline_requested": p.baseline},
                           warnings=warnings)
