"""Paper 002 s. 3.2, Eq. 5-7: a word mask made smooth and span-like by a Gaussian-kernel reparameterization.

Each word i carries a weight w_i and a width sigma_i; word j's mask value is
lambda_j = sigmoid(sum_i w_i exp(-d(i, j)^2 / sigma_i)) with d(i, j) = |i - j| over word positions (Eq. 5-6).
The reference code divides by sigma_i^2 instead of sigma_i (``form="sigma^2"``). Omega_sigma
= -alpha_sigma * mean(log sigma_i) (Eq. 7) rewards wide kernels, hence contiguous masks.
"""
from __future__ import annotations

import torch

SIGMA_FORMS = ("sigma", "sigma^2")  # paper Eq. 5 as printed / the reference code


def squared_distances(n: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """d2[i, j] = (j - i)^2 over word positions."""
    positions = torch.arange(n, dtype=dtype, device=device)
    return (positions[None, :] - positions[:, None]) ** 2


def kernel_mask(w: torch.Tensor, sigma: torch.Tensor, form: str = "sigma") -> torch.Tensor:
    """lambda (n,) from w (n,) and sigma (n,): Eq. 5-6 (``form`` "sigma" as printed, "sigma^2" as coded)."""
    if form not in SIGMA_FORMS:
        raise ValueError(f"sigma form must be one of {', '.join(SIGMA_FORMS)}; got {form!r}")
    d2 = squared_distances(w.shape[0], w.dtype, w.device)
    width = sigma[:, None] ** 2 if form == "sigma^2" else sigma[:, None]
    return torch.sigmoid((w[:, None] * torch.exp(-d2 / width)).sum(dim=0))
