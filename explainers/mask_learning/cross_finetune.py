"""fAML (paper 004 s. 3.1) for a G on another backbone (s. 3.3's decoder setting): a few AdamW steps of a copy of G
on one input's loss, Eq. 4-7 as ``CrossBackboneAML.terms`` computes it (G reads the input in its own tokenization,
its scores reach the classifier's tokens through the words).

As the own-backbone fAML (``finetune.py``): G in eval mode (no dropout), the embedding layer, z_0 and the class
embeddings frozen (reference code), a constant learning rate; the maps are word scores, the first G's own (pAML's),
then one after each step, and the caller keeps the one best on the metric G was selected on.
"""
from __future__ import annotations

import copy
import functools

import torch

from explainers.mask_learning.cross_backbone import CrossBackboneAML
from explainers.mask_learning.finetune import FUSED_OPTIMIZER_DEVICES, trainable_copy
from models.encoding import Encoding


def cross_finetune_maps(aml: CrossBackboneAML, encoding: Encoding, target: int,
                        lambdas: tuple[float, float, float], steps: int, lr: float,
                        prediction_target: str = "soft") -> tuple[list[torch.Tensor], list[float]]:
    """(maps, losses): ``steps + 1`` word-score maps in [0, 1] and each step's loss; ``aml`` is left unchanged."""
    tuned = copy.copy(aml)  # the same classifier, generator and mask; a trainable copy of G only
    tuned.model = trainable_copy(aml.model)
    trainable = [p for p in tuned.model.parameters() if p.requires_grad]
    if trainable[0].device.type in FUSED_OPTIMIZER_DEVICES:  # the same update as the per-tensor loop, faster
        optimizer = torch.optim.AdamW(trainable, lr=lr, fused=True)
    else:
        optimizer = torch.optim.AdamW(trainable, lr=lr, foreach=False)
    maps, losses = [], []
    for _ in range(steps):
        maps.append(tuned.word_scores(encoding, target, prediction_target))  # the map before this step
        loss = functools.reduce(torch.add, tuned.terms(encoding, target, lambdas, prediction_target).values())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    maps.append(tuned.word_scores(encoding, target, prediction_target))
    return maps, losses
