"""The differentiable attributions the attack moves: gradients, Gradient x Input and Integrated Gradients of the
word embeddings, kept in the autograd graph (``create_graph=True``) so the explanation term reaches delta (double
back-propagation, paper 003 section 2.3)."""
from __future__ import annotations

import torch


def differentiable_attribution(forward, embeds: torch.Tensor, baseline: torch.Tensor | None, target: int,
                               method: str, ig_steps: int, create_graph: bool, gradient_reduction: str = "l2"
                               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(token scores (T,), logits of ``embeds`` (C,), the attributed output summed) for one input (1, T, H).

    Gradient x Input and IG reduce the hidden dimension by a signed sum (a dot product, paper 003 section 2.2.2.1);
    plain gradients by ``gradient_reduction``."""
    targets = torch.tensor([target], device=embeds.device)
    scores, logits, attributed = batched_attribution(forward, embeds, baseline, targets, method, ig_steps,
                                                     create_graph, gradient_reduction)
    return scores[0], logits[0], attributed


def batched_attribution(forward, embeds: torch.Tensor, baseline: torch.Tensor | None, targets: torch.Tensor,
                        method: str, ig_steps: int, create_graph: bool, gradient_reduction: str = "l2"
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``differentiable_attribution`` of B inputs at once, (B, T, H) padded: (scores (B, T), logits (B, C), the
    attributed outputs summed). Each input's scores depend on its own row only (rows never mix in the model), so
    the gradient of the sum is each row's own gradient. ``forward`` takes (B * points, T, H), rows grouped by
    input; for IG every input's path points go through in one batch."""
    rows = torch.arange(embeds.shape[0], device=embeds.device)
    if method == "integrated_gradients":
        if baseline is None:
            raise ValueError("Integrated Gradients is attacked along a path from a baseline: pass the [PAD] baseline.")
        # right Riemann sum alpha = 1/n ... 1 (the thesis code's DiffIntegratedGradients); the last point is the input
        alphas = torch.arange(1, ig_steps + 1, dtype=embeds.dtype, device=embeds.device) / ig_steps
        path = baseline[:, None] + alphas[None, :, None, None] * (embeds - baseline)[:, None]  # (B, n, T, H)
        logits = forward(path.flatten(0, 1)).unflatten(0, (embeds.shape[0], ig_steps))
        attributed = logits[rows, :, targets].sum()
        gradient = torch.autograd.grad(attributed, path, create_graph=create_graph, retain_graph=True)[0]
        scores = ((embeds - baseline) * gradient.mean(dim=1)).sum(dim=-1)
        return scores, logits[:, -1], attributed
    logits = forward(embeds)
    attributed = logits[rows, targets].sum()
    gradient = torch.autograd.grad(attributed, embeds, create_graph=create_graph, retain_graph=True)[0]
    if method == "input_x_gradient":
        scores = (gradient * embeds).sum(dim=-1)
    else:
        scores = gradient.norm(dim=-1) if gradient_reduction == "l2" else gradient.sum(dim=-1)
    return scores, logits, attributed


def attribution_shares(scores: torch.Tensor) -> torch.Tensor:
    """|a_i| / sum |a|: each token's share of the importance (the attack's top-k term reads the clean top-k's)."""
    magnitude = scores.abs()
    return magnitude / magnitude.sum().clamp_min(1e-12)
