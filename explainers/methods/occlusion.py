"""Occlusion: slide a window of n words over the input, remove the window, record the score drop.

Captum's ``Occlusion`` in word-mask space (``mask_forward``): each word's score is the mean drop over every
window that covers it (Zeiler & Fergus 2014). Window 1 is leave-one-out with the same operator and score.
Paper 002 (App. A.1) uses a window of 5 tokens replaced by [PAD]; here windows are counted in words.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution, Explainer
from explainers.captum_lazy import captum_attr
from explainers.mask_forward import MaskForward, operator_label, operator_param, score_param, word_input
from explainers.params import param
from explainers.registry import register
from explainers.shared_passes import SharedPass, removal_settings, without_each_word


def window_masks(n_words: int, window: int, stride: int) -> np.ndarray:
    """The input itself, then the input without each window, as Captum slides them: starts 0, stride, ...
    while the previous window ends before the last word; the last window is cut at the end of the input."""
    starts = [k * stride for k in range(-(-(n_words - window) // stride) + 1)]
    keep = np.ones((len(starts) + 1, n_words), dtype=bool)
    for row, start in enumerate(starts, start=1):
        keep[row, start:start + window] = False
    return keep


@register
class Occlusion(Explainer):
    id = "occlusion"
    label = "Occlusion"
    family = "perturbation"
    description = "Remove a sliding window of consecutive words and measure the drop of the target's score; " \
                  "each word gets the mean drop of the windows covering it."
    reference = "Zeiler & Fergus 2014; paper 002 App. A.1 (window 5, [PAD])"

    @dataclass(frozen=True)
    class Params:
        window: int = param(3, "Window (words)", "Consecutive words removed together (1 = leave-one-out).",
                            min=1, max=64)
        stride: int = param(1, "Stride (words)", "Step between windows.", min=1, max=64)
        operator: str = operator_param("pad")
        score: str = score_param("probability")

    presets = {
        "paper-002": {"window": 5, "stride": 1, "operator": "pad", "score": "probability"},
        "window-1": {"window": 1, "stride": 1},
    }

    def _shape(self, n_words: int) -> tuple[int, int, int]:
        n_words = max(1, n_words)
        window = min(self.params.window, n_words)
        stride = min(self.params.stride, window)
        windows = -(-(n_words - window) // stride) + 1
        return window, stride, windows

    def estimate_passes(self, encoding):
        return self._shape(encoding.n_words)[2] + 2, 0

    def shared_pass(self) -> SharedPass | None:  # window 1 removes exactly what leave-one-out removes
        return removal_settings(self.params.operator) if self.params.window == 1 else None

    def attribute(self, classifier, encoding, target):
        inputs = word_input(encoding)
        window, stride, windows = self._shape(encoding.n_words)
        forward = MaskForward(classifier, encoding, self.params.operator, target, self.params.score)
        masks = window_masks(encoding.n_words, window, stride)
        if window == 1:  # leave-one-out's pass: the input itself, then the input without each word
            removed = without_each_word(classifier, encoding, self.params.operator)
            forward.remember(masks, np.vstack([classifier.logits_of(encoding)[None], removed]))
        else:  # Captum evaluates the unoccluded input on its own, then the windows: one engine batch for both
            forward.prefetch(masks)
        scores = captum_attr.Occlusion(forward).attribute(inputs, sliding_window_shapes=(window,), strides=(stride,),
                                                    baselines=0.0, perturbations_per_eval=windows + 1)
        details = {**forward.details(), "window": window, "stride": stride, "windows": windows}
        warnings = []
        if window < self.params.window:
            warnings.append(f"The input has only {encoding.n_words} words: the window was cut to {window}.")
        return Attribution(word_scores=scores[0].numpy(), details=details, warnings=warnings,
                           baseline=f"window of {window} word(s) removed by {operator_label(self.params.operator)}")
