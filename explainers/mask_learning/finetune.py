"""fAML's per-input steps (paper 004 s. 3.1): a few AdamW steps of a copy of G on one input's loss (Eq. 4-7).

Where the time goes, and what this file does about it (docs/benchmarks.md, mask learning):
- G runs ``steps`` forward + backward passes and one forward: the map before step t is the sigmoid of the very
  scores step t's loss is computed from (G in eval mode: no dropout, so a separate no-grad pass would give the
  same values), and only the map after the last step needs a pass of its own.
- The copy shares G's frozen tensors (the embedding layer, z_0, the class embeddings) instead of copying them:
  fAML never writes them.
- AdamW runs its fused kernel where torch has one for the device (4x faster than the per-tensor loop on the CPU
  for G's ~100 tensors; the same update up to float rounding).
"""
from __future__ import annotations

import copy

import torch

from explainers.mask_learning.aml_model import AttributionModel, terms_of_scores
from explainers.mask_learning.loss_terms import summed
from models import TextClassifier

FUSED_OPTIMIZER_DEVICES = ("cpu", "cuda")  # where torch's fused AdamW kernel exists


def trainable_copy(model: AttributionModel) -> AttributionModel:
    """A copy of G to fine-tune: its encoder layers and head are new tensors that train; the tensors fAML keeps
    fixed are G's own where G already has them frozen (read-only, so shared), else frozen copies."""
    shared = {id(p): p for p in model.fixed_in_finetuning() if not p.requires_grad}
    tuned = copy.deepcopy(model, memo=dict(shared))
    fixed = {id(p) for p in tuned.fixed_in_finetuning()}
    for parameter in tuned.parameters():
        if id(parameter) not in shared:  # never touch a flag of G's own tensors
            parameter.requires_grad_(id(parameter) not in fixed)
    return tuned.eval()  # the reference code fine-tunes without dropout


def finetune_maps(classifier: TextClassifier, model: AttributionModel, input_ids: torch.Tensor,
                  attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None, y: torch.Tensor,
                  label: torch.Tensor, mask_id: int, lambdas: tuple[float, float, float], steps: int,
                  lr: float, fused: bool = True) -> tuple[list[torch.Tensor], list[float]]:
    """(maps, losses) of ``steps`` constant-rate AdamW steps on one input (batch of 1): ``steps + 1`` token maps in
    [0, 1], the first G's own (pAML's), then one after each step; and each step's loss. ``fused=False`` runs
    AdamW's per-tensor loop (the reference behaviour the fused kernel matches to float rounding)."""
    tuned = trainable_copy(model)
    trainable = [p for p in tuned.parameters() if p.requires_grad]
    if fused and input_ids.device.type in FUSED_OPTIMIZER_DEVICES:
        optimizer = torch.optim.AdamW(trainable, lr=lr, fused=True)
    else:
        optimizer = torch.optim.AdamW(trainable, lr=lr, foreach=False)
    maps: list[torch.Tensor] = []
    losses: list[float] = []
    for _ in range(steps):
        scores = tuned(input_ids, attention_mask, y, token_type_ids)
        maps.append(torch.sigmoid(scores.detach())[0])  # the map before this step
        loss = summed(terms_of_scores(classifier, scores, input_ids, attention_mask, token_type_ids, y, label, mask_id,
                                      lambdas).values())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    with torch.no_grad():
        maps.append(torch.sigmoid(tuned(input_ids, attention_mask, y, token_type_ids))[0])
    return maps, losses
