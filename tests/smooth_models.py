"""A tiny random BERT whose outputs depend smoothly and clearly on every word (for value checks).

The untrained ``random_classifier`` barely reacts to its input (f(x) - f(baseline) ~ 1e-5) and the trained
``keyword_classifier`` is saturated (a near step function of the keyword); exact-value tests of gradient
and perturbation methods need a model in between: random weights drawn with std 0.3.
"""
from __future__ import annotations

import torch

from models import TextClassifier
from tiny_models import tiny_bert, tiny_tokenizer


def smooth_classifier(seed: int = 1, std: float = 0.3, num_labels: int = 2) -> TextClassifier:
    model = tiny_bert(num_labels=num_labels, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * std)
    return TextClassifier(model, tiny_tokenizer(), name=f"tiny-smooth-{seed}", device="cpu",
                          source="tests/smooth_models.py")
