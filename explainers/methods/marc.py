"""MaRC (paper 002, Brinner & Zarrieß): a smooth word mask optimized per input for sufficiency,
comprehensiveness and compactness.

The definition (paper 002 s. 3.1-3.2, Eq. 1-8; seeds-002-004.md 002.2):

- masked input x~ = lambda x + (1 - lambda) b (Eq. 1) and its complement x~c = (1 - lambda) x + lambda b
  (Eq. 3), with b the [PAD] embedding at every word token; [CLS]/[SEP] are never masked (b keeps them);
- lambda over words (the sub-words of a word share one value), from a Gaussian-kernel reparameterization
  (w, sigma) (Eq. 5-6, ``explainers/mask_learning/kernel.py``);
- objective (Eq. 8): -L(x~, c) + L(x~c, c) + Omega_lambda + Omega_sigma, with Omega_lambda =
  alpha_lambda (mean lambda)^2 (Eq. 2) and Omega_sigma = -alpha_sigma mean(log sigma) (Eq. 7);
  L is log-softmax of class c (class-discriminative) or log-sigmoid of its logit (class-indicative);
- App. A.1: Adam, w = 1.2, sigma = 2, alpha_lambda = 1, alpha_sigma = 1.2, Gaussian noise (std 0.03) on x~ and
  x~c and 5 % of the mask values randomly set to 0 and 5 % to 1 at every step;
- the reference code's early stop (checked every 50 steps) and its 900-step cap.

The two presets: ``paper-002`` (as printed: sigma in Eq. 5, Adam, + log p(c | x~c)) and ``paper-002-code``
(the reference implementation: sigma^2, AdamW with weight decay 0.01, complement -log(1 - p(c | x~c))).
The four ablations of Table 1 (noise and flips, Omega_lambda, Omega_sigma, the complement term) are switches.

The mask interpolates the *word-embedding* output. The reference code interpolates the output of the whole
embedding module (word + position + segment embeddings after LayerNorm) and feeds it back as
``inputs_embeds``, so the model adds position embeddings a second time; results differ slightly from it.
Texts longer than the model reads are optimized in overlapping segments, blended linearly (App. A.1;
``explainers/mask_learning/segments.py``); the classification terms read the mean probability over segments
and the Omega terms are summed per segment, as the code does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explainers.base import Attribution, Explainer
from explainers.embedding_forward import baseline_ids
from explainers.mask_learning.kernel import SIGMA_FORMS, kernel_mask
from explainers.mask_learning.loss_terms import summed
from explainers.mask_learning.progress import MaskProgress, ProgressCallback, StopCheck
from explainers.mask_learning.segments import Segment, blend, plan_segments
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param
from models import Encoding, InputError, TextClassifier
from models.encoding import build_encoding

SCORINGS = ("log-softmax", "log-sigmoid")
COMPLEMENTS = ("log-p", "log-1-p")
OPTIMIZERS = ("adam", "adamw")
CHECK_EVERY = 50  # reference code: the early-stop rule is checked every 50 steps
SIGMA_FLOOR = 0.01  # sigma is kept positive (log sigma in Omega_sigma); 0.01 is what the code gives special tokens
UNLIMITED = 10 ** 9  # max_length for re-tokenizing a text in full


# ----- the loss terms (each tested against a direct formula) -----------------------------------------------
def class_log_scores(logits: torch.Tensor, target: int, scoring: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(log q, log(1 - q)) per row, q = softmax(logits)[c] ("log-softmax") or sigmoid(logit_c) ("log-sigmoid")."""
    if scoring == "log-softmax":
        log_p = torch.log_softmax(logits, dim=-1)
        others = torch.cat([log_p[:, :target], log_p[:, target + 1:]], dim=-1)
        return log_p[:, target], torch.logsumexp(others, dim=-1)
    if scoring == "log-sigmoid":
        z = logits[:, target]
        return torch.nn.functional.logsigmoid(z), torch.nn.functional.logsigmoid(-z)
    raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}; got {scoring!r}")


def log_mean(log_values: torch.Tensor) -> torch.Tensor:
    """log of the mean of exp(log_values): the mean probability over segments, in log space."""
    return torch.logsumexp(log_values, dim=0) - math.log(log_values.shape[0])


def sufficiency_term(kept_logits: torch.Tensor, target: int, scoring: str) -> torch.Tensor:
    """-L(x~, c) (Eq. 2): minus the log score of class c on the masked input (mean probability over segments)."""
    log_q, _ = class_log_scores(kept_logits, target, scoring)
    return -log_mean(log_q)


def complement_term(removed_logits: torch.Tensor, target: int, scoring: str, form: str) -> torch.Tensor:
    """The complement term on x~c: + L(x~c, c) as printed (Eq. 4, ``log-p``) or -log(1 - q(c | x~c)) as coded
    (``log-1-p``)."""
    log_q, log_not_q = class_log_scores(removed_logits, target, scoring)
    if form == "log-p":
        return log_mean(log_q)
    if form == "log-1-p":
        return -log_mean(log_not_q)
    raise ValueError(f"complement must be one of {', '.join(COMPLEMENTS)}; got {form!r}")


def omega_lambda(word_masks: list[torch.Tensor], alpha: float) -> torch.Tensor:
    """alpha_lambda * (mean lambda)^2 (Eq. 2), per segment, summed."""
    return alpha * summed(mask.mean() ** 2 for mask in word_masks)


def omega_sigma(sigmas: list[torch.Tensor], alpha: float) -> torch.Tensor:
    """-alpha_sigma * mean(log sigma) (Eq. 7), per segment, summed."""
    return -alpha * summed(torch.log(sigma).mean() for sigma in sigmas)


def _floats(parts: dict[str, torch.Tensor]) -> dict[str, float]:
    """The loss terms as numbers (one host sync each: read when shown, not at every step)."""
    return {name: float(value.detach()) for name, value in parts.items()}


def random_flips(mask: torch.Tensor, rate: float, generator: torch.Generator) -> torch.Tensor:
    """App. A.1 as coded: two independent selections of ``rate`` of the values; one set to 0, the other to 1
    (a value selected by both is left as it is)."""
    to_zero = torch.rand(mask.shape, generator=generator, device=mask.device) < rate
    to_one = torch.rand(mask.shape, generator=generator, device=mask.device) < rate
    mask = torch.where(to_zero & ~to_one, torch.zeros_like(mask), mask)
    return torch.where(to_one & ~to_zero, torch.ones_like(mask), mask)


def masked_pair(x: torch.Tensor, b: torch.Tensor, token_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(x~, x~c) = (lambda x + (1 - lambda) b, (1 - lambda) x + lambda b) (Eq. 1 and 3); token_mask (S, T)."""
    lam = token_mask.unsqueeze(-1).to(x.dtype)
    return lam * x + (1 - lam) * b, (1 - lam) * x + lam * b


# ----- early stopping (reference code) ---------------------------------------------------------------------
def converged(step: int, mean: float, previous_mean: float) -> bool:
    """The reference code's rule, checked every 50 steps: the mean mask moved less than 1/200 since the last
    check (1/80 when the mean is below 0.2), at least 200 steps were taken (or the mean is below 0.3), and the
    mean is below 0.45."""
    tolerance = 1 / 80 if mean < 0.2 else 1 / 200
    return abs(mean - previous_mean) < tolerance and (step >= 199 or mean < 0.3) and mean < 0.45


# ----- the inputs of one optimization ----------------------------------------------------------------------
@dataclass
class SegmentBatch:
    """Word embeddings of every segment (padded to one length), their [PAD] baselines and word maps."""

    segments: list[Segment]
    x: torch.Tensor  # (S, T, d)
    b: torch.Tensor  # (S, T, d)
    attention: torch.Tensor  # (S, T)
    token_types: torch.Tensor | None  # (S, T)
    local_word: torch.Tensor  # (S, T): index of the token's word inside its segment, -1 for specials and padding

    def token_mask(self, word_masks: list[torch.Tensor]) -> torch.Tensor:
        """(S, T) mask per token: the word's value for word tokens, 1 for special tokens and padding."""
        rows = []
        for s, mask in enumerate(word_masks):
            index = self.local_word[s]
            rows.append(torch.where(index >= 0, mask[index.clamp(min=0)], torch.ones((), dtype=mask.dtype)))
        return torch.stack(rows)


def segment_batch(classifier: TextClassifier, encoding: Encoding, segments: list[Segment]) -> SegmentBatch:
    pad_id = classifier.tokenizer.pad_token_id
    ids = np.asarray(encoding.input_ids)
    base = baseline_ids(classifier, encoding, "pad")[0].cpu().numpy()
    types = np.asarray(encoding.token_type_ids) if encoding.token_type_ids is not None else None
    token_word = encoding.token_word_array
    width = max(len(s.tokens) for s in segments)
    shape = (len(segments), width)
    seg_ids, seg_base = np.full(shape, pad_id), np.full(shape, pad_id)
    attention, local = np.zeros(shape, dtype=np.int64), np.full(shape, -1, dtype=np.int64)
    seg_types = np.zeros(shape, dtype=np.int64)
    for s, segment in enumerate(segments):
        tokens = np.asarray(segment.tokens)
        seg_ids[s, :len(tokens)] = ids[tokens]
        seg_base[s, :len(tokens)] = base[tokens]
        attention[s, :len(tokens)] = 1
        words = token_word[tokens]
        local[s, :len(tokens)] = np.where(words >= 0, words - segment.words.start, -1)
        if types is not None:
            seg_types[s, :len(tokens)] = types[tokens]
    device = classifier.device
    with torch.no_grad():
        x = classifier.word_embeddings(torch.as_tensor(seg_ids, device=device)).detach()
        b = classifier.word_embeddings(torch.as_tensor(seg_base, device=device)).detach()
    return SegmentBatch(segments, x, b, torch.as_tensor(attention, device=device),
                        torch.as_tensor(seg_types, device=device) if types is not None else None,
                        torch.as_tensor(local, device=device))


def full_text(classifier: TextClassifier, encoding: Encoding) -> Encoding:
    """The input re-tokenized without truncation when the model's tokenization cut it (single texts only)."""
    if encoding.truncated_tokens and encoding.pair is None:
        return build_encoding(classifier.tokenizer, encoding.text, None, UNLIMITED)
    return encoding


@register
class MaRC(Explainer):
    id = "marc"
    contrast_support = "unsupported"  # the mask objective reads one class's log-probability
    label = "MaRC (mask optimization)"
    family = "mask_learning"  # optimized or learned masks: no ensemble member by default (tens of seconds)
    description = "A smooth word mask optimized for this input: the kept words alone must keep the prediction, the " \
                  "rest must lose it, and the mask must be small and span-like. Scores are mask values in [0, 1]."
    reference = "Brinner & Zarrieß, paper 002 s. 3.1-3.2 (Eq. 1-8) and App. A.1; early stop and 900-step cap " \
                "from the reference code"
    needs_gradients = True
    stochastic = True
    expensive = True
    live_progress = True  # takes ``progress`` / ``should_stop`` hooks (explainers/plan.py wires them to its jobs)

    @dataclass(frozen=True)
    class Params:
        max_steps: int = param(900, "Maximum steps", "Optimization steps at most (reference code: 900).", min=1,
                               max=5000)
        early_stop: bool = param(True, "Early stop", "Stop a segment when its mean mask settles (reference code: "
                                 "checked every 50 steps).")
        lr: float = param(0.03, "Learning rate", "Step size (not in the paper; reference code 3e-2).", min=1e-5,
                          max=10.0)
        optimizer: str = param("adam", "Optimizer", "adam (paper App. A.1) or adamw (reference code).",
                               choices=OPTIMIZERS)
        weight_decay: float = param(0.01, "Weight decay", "AdamW's decay of w and sigma (PyTorch default, used by "
                                    "the reference code); ignored by adam.", min=0.0, max=1.0)
        scoring: str = param("log-softmax", "Scoring L(x, c)", "log-softmax: class-discriminative (paper's text "
                             "setting); log-sigmoid of the logit: class-indicative.", choices=SCORINGS)
        complement: str = param("log-p", "Complement term", "log-p: + L(x~c, c) as printed (Eq. 4); log-1-p: "
                                "-log(1 - p(c | x~c)) as coded.", choices=COMPLEMENTS)
        sigma_form: str = param("sigma", "Kernel width", "Eq. 5 divides by sigma (as printed) or sigma^2 (as coded).",
                                choices=SIGMA_FORMS)
        alpha_lambda: float = param(1.0, "alpha_lambda", "Weight of Omega_lambda = (mean mask)^2 (App. A.1: 1).",
                                    min=0.0, max=100.0)
        alpha_sigma: float = param(1.2, "alpha_sigma", "Weight of Omega_sigma = -mean(log sigma) (App. A.1: 1.2).",
                                   min=0.0, max=100.0)
        w_init: float = param(1.2, "Initial w", "App. A.1: 1.2 (the mask starts almost fully on).", min=-10.0,
                              max=10.0)
        sigma_init: float = param(2.0, "Initial sigma", "App. A.1: 2.", min=SIGMA_FLOOR, max=100.0)
        noise: float = param(0.03, "Noise std", "Gaussian noise added to x~ and x~c at every step (App. A.1: 0.03).",
                             min=0.0, max=1.0)
        flip_rate: float = param(0.05, "Random flips", "Share of mask values set to 0 (and, independently, to 1) "
                                 "at every step (App. A.1: 5 %).", min=0.0, max=0.5)
        use_noise: bool = param(True, "Noise and flips", "Off = Table 1 ablation 'w/o Noise'.")
        use_omega_lambda: bool = param(True, "Omega_lambda", "Off = Table 1 ablation 'w/o Omega_lambda'.")
        use_omega_sigma: bool = param(True, "Omega_sigma", "Off = Table 1 ablation 'w/o Omega_sigma'.")
        use_complement: bool = param(True, "Complement term", "Off = Table 1 ablation 'w/o L(x~c, c)'.")
        segment_overlap: int = param(100, "Segment overlap (tokens)", "Texts longer than the model reads are cut "
                                     "into segments overlapping by this many tokens (App. A.1: 100).", min=0,
                                     max=1000)
        seed: int = seed_param("noise and flips")

    presets = {
        "paper-002": {"optimizer": "adam", "sigma_form": "sigma", "complement": "log-p", "scoring": "log-softmax",
                      "lr": 0.03, "max_steps": 900, "alpha_lambda": 1.0, "alpha_sigma": 1.2, "w_init": 1.2,
                      "sigma_init": 2.0, "noise": 0.03, "flip_rate": 0.05},
        "paper-002-code": {"optimizer": "adamw", "weight_decay": 0.01, "sigma_form": "sigma^2",
                           "complement": "log-1-p", "scoring": "log-softmax", "lr": 0.03, "max_steps": 900,
                           "alpha_lambda": 1.0, "alpha_sigma": 1.2, "w_init": 1.2, "sigma_init": 2.0, "noise": 0.03,
                           "flip_rate": 0.05},
        "class-indicative": {"scoring": "log-sigmoid"},
        # paper 002's settings cut at 30 steps: the reproduce run's tiny budget (a machinery test, not a result)
        "paper-002-30-steps": {"optimizer": "adam", "sigma_form": "sigma", "complement": "log-p",
                               "scoring": "log-softmax", "lr": 0.03, "max_steps": 30, "alpha_lambda": 1.0,
                               "alpha_sigma": 1.2, "w_init": 1.2, "sigma_init": 2.0, "noise": 0.03, "flip_rate": 0.05},
    }

    def __init__(self, params=None, preset: str | None = None, progress: ProgressCallback | None = None,
                 should_stop: StopCheck | None = None, **overrides):
        super().__init__(params, preset, **overrides)
        self.progress = progress  # called after every step with a MaskProgress (live panels)
        self.should_stop = should_stop  # polled before every step; True keeps the last mask

    def is_signed(self) -> bool:
        return False

    def sign_convention(self) -> str:
        return "mask value in [0, 1]: 1 = the word is kept (needed for the target class), 0 = masked out"

    def estimate_passes(self, encoding):
        total = encoding.n_tokens + encoding.truncated_tokens
        segments = max(1, math.ceil(total / max(1, encoding.n_tokens)))
        passes = (2 if self.params.use_complement else 1) * segments * self.params.max_steps
        return passes, passes

    # ----- the optimization -------------------------------------------------------------------------------
    def attribute(self, classifier, encoding, target):
        p = self.params
        if encoding.n_words == 0:
            raise InputError("The input has no words the model can read, so there is no mask to learn.")
        if p.scoring == "log-softmax" and classifier.num_labels < 2:
            raise InputError("log-softmax scoring needs at least two classes; use log-sigmoid scoring.")
        full = full_text(classifier, encoding)
        segments = plan_segments(full, classifier.max_length, p.segment_overlap)  # one segment when it fits
        batch = segment_batch(classifier, full, segments)
        result = self._optimize(classifier, batch, full.n_words, encoding.n_words, target)
        warnings = list(result.pop("warnings"))
        if len(segments) > 1:
            warnings.append(f"The text is longer than the model reads: the mask was optimized over the whole text in "
                            f"{len(segments)} overlapping segments and blended (paper 002 App. A.1). "
                            + (f"The view shows the first {encoding.n_words} of {full.n_words} words; all scores are "
                               f"in the details." if full.n_words > encoding.n_words else ""))
        scores = result.pop("full_mask")
        details = {**result, "segments": len(segments), "target_scoring": p.scoring}
        if full.n_words > encoding.n_words:
            details["full_text_word_scores"] = [round(float(v), 6) for v in scores]
        return Attribution(word_scores=scores[:encoding.n_words],
                           baseline="[PAD] embedding at every word token (special tokens kept)", details=details,
                           warnings=warnings)

    def _optimize(self, classifier: TextClassifier, batch: SegmentBatch, n_full: int, n_shown: int,
                  target: int) -> dict:
        p = self.params
        device = classifier.device
        generator = torch.Generator(device=device).manual_seed(int(p.seed))
        n_segments = len(batch.segments)
        weights = [torch.full((len(s.words),), p.w_init, device=device, requires_grad=True) for s in batch.segments]
        sigmas = [torch.full((len(s.words),), p.sigma_init, device=device, requires_grad=True)
                  for s in batch.segments]
        optimizer: torch.optim.Optimizer
        if p.optimizer == "adamw":
            optimizer = torch.optim.AdamW(weights + sigmas, lr=p.lr, weight_decay=p.weight_decay)
        else:
            optimizer = torch.optim.Adam(weights + sigmas, lr=p.lr)
        frozen: list[torch.Tensor | None] = [None] * n_segments

        def current_masks() -> list[torch.Tensor]:
            """Each segment's mask: frozen where it converged, else from its kernel."""
            return [f if f is not None else kernel_mask(w, sg, p.sigma_form)
                    for f, w, sg in zip(frozen, weights, sigmas)]

        with torch.no_grad():
            last_means = [float(kernel_mask(w, s, p.sigma_form).mean()) for w, s in zip(weights, sigmas)]
        step, reason, parts, warnings = 0, "step cap", {}, []
        for step in range(1, p.max_steps + 1):
            if self.should_stop is not None and self.should_stop():
                step -= 1
                reason = "stopped"
                warnings.append(f"Stopped at step {step} of {p.max_steps}: the scores are the last mask, not a "
                                f"converged one (not cached; run it again for the full result).")
                break
            word_masks = current_masks()
            parts = self.objective(classifier, batch, word_masks, sigmas, target, generator)
            loss = summed(parts.values())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            # between the passes only what a step needs: the mask is read back (a host sync, a blend) only at an
            # early-stop check or for a progress hook (docs/benchmarks.md, mask learning: MaRC's overhead)
            checking = p.early_stop and step % CHECK_EVERY == 0
            with torch.no_grad():
                for sigma in sigmas:
                    sigma.clamp_(min=SIGMA_FLOOR)
                if checking or self.progress is not None:
                    current = current_masks()
            note = ""
            if checking:
                for s in range(n_segments):
                    mean = float(current[s].mean())
                    if frozen[s] is None and converged(step - 1, mean, last_means[s]):  # 0-based step, as coded
                        frozen[s] = current[s].detach()
                        note = f"segment {s + 1} of {n_segments} converged" if n_segments > 1 else "converged"
                    last_means[s] = mean
            if self.progress is not None:
                mask = blend(batch.segments, [m.detach().cpu().numpy() for m in current], n_full)
                self.progress(MaskProgress(step=step, max_steps=p.max_steps, loss=float(loss.detach()), mean_mask=float(
                    mask.mean()), mask=mask[:n_shown].copy(), terms=_floats(parts), note=note))
            if all(f is not None for f in frozen):
                reason = "converged"
                break
        with torch.no_grad():
            final = current_masks()
            kept, removed = masked_pair(batch.x, batch.b, batch.token_mask(final))
            both_types = None if batch.token_types is None else batch.token_types.repeat(2, 1)
            probabilities = torch.softmax(classifier.forward_embeds(torch.cat([kept, removed]),
                                                                    batch.attention.repeat(2, 1), both_types), -1)
        full_mask = blend(batch.segments, [m.cpu().numpy() for m in final], n_full)
        return {"full_mask": full_mask, "warnings": warnings, "steps": step, "stop_reason": reason,
                "converged_segments": sum(f is not None for f in frozen), "final_terms": _floats(parts),
                "mean_mask": round(float(full_mask.mean()), 6),
                "p_target_kept": round(float(probabilities[:n_segments, target].mean()), 6),
                "p_target_complement": round(float(probabilities[n_segments:, target].mean()), 6)}

    def objective(self, classifier: TextClassifier, batch: SegmentBatch, word_masks: list[torch.Tensor],
                  sigmas: list[torch.Tensor], target: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
        """The active terms of Eq. 8 for one step (their sum is the loss); a switched-off term is absent."""
        p = self.params
        token_mask = batch.token_mask(word_masks)
        if p.use_noise and p.flip_rate > 0:
            token_mask = random_flips(token_mask, p.flip_rate, generator)
        kept, removed = masked_pair(batch.x, batch.b, token_mask)
        copies = 2 if p.use_complement else 1
        inputs = torch.cat([kept, removed]) if p.use_complement else kept
        if p.use_noise and p.noise > 0:
            inputs = inputs + p.noise * torch.randn(inputs.shape, generator=generator, device=inputs.device,
                                                    dtype=inputs.dtype)
        types = batch.token_types.repeat(copies, 1) if batch.token_types is not None else None
        logits = classifier.forward_embeds(inputs, batch.attention.repeat(copies, 1), types)
        n = len(batch.segments)
        terms = {"sufficiency": sufficiency_term(logits[:n], target, p.scoring)}
        if p.use_complement:
            terms["complement"] = complement_term(logits[n:], target, p.scoring, p.complement)
        if p.use_omega_lambda:
            terms["omega_lambda"] = omega_lambda(word_masks, p.alpha_lambda)
        if p.use_omega_sigma:
            terms["omega_sigma"] = omega_sigma(sigmas, p.alpha_sigma)
        return terms
