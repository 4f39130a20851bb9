"""The frozen classifier's passes in AML training, without most of their padding.

A batch is padded to its longest input, and a transformer's cost grows with the padded width: on SST-2 the mean
input is about 25 tokens and a batch of 20 is padded to about 44. The classifier is frozen and in eval mode (no
dropout), so its rows can run in groups of similar length, each trimmed to its own width, and come back in their
order: the same logits up to float rounding (masked keys get exactly zero attention), about a quarter less work.
G itself is not grouped: its dropout draws depend on the tensor shapes, and grouping would change what is trained.
"""
from __future__ import annotations

import torch

from models import TextClassifier

FORWARD_OVERHEAD_TOKENS = 64  # one more forward pass costs about as much as this many padded tokens (measured)


def length_groups(lengths: list[int], overhead: int = FORWARD_OVERHEAD_TOKENS) -> list[list[int]]:
    """Row indices in groups of neighbouring lengths that minimise padded tokens + ``overhead`` per group.

    Exact by dynamic programming over the rows sorted by length (a batch has tens of rows)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    sorted_lengths = [lengths[i] for i in order]
    n = len(order)
    cost = [0.0] + [float("inf")] * n  # cost[j]: best cost of the first j sorted rows
    start = [0] * (n + 1)  # where the last group of the best split of the first j rows starts
    for j in range(1, n + 1):
        for i in range(j):
            candidate = cost[i] + (j - i) * sorted_lengths[j - 1] + overhead
            if candidate < cost[j]:
                cost[j], start[j] = candidate, i
    groups, j = [], n
    while j > 0:
        groups.append(order[start[j]:j])
        j = start[j]
    return groups[::-1]


def grouped_forward_embeds(classifier: TextClassifier, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor,
                           token_type_ids: torch.Tensor | None = None,
                           overhead: int = FORWARD_OVERHEAD_TOKENS) -> torch.Tensor:
    """``classifier.forward_embeds`` of every row (differentiable), run in length groups; logits in row order."""
    lengths = attention_mask.sum(dim=1).tolist()
    parts, rows = [], []
    for group in length_groups(lengths, overhead):
        index = torch.tensor(group, device=inputs_embeds.device)
        mask = attention_mask[index]
        used = mask.any(dim=0).nonzero()
        width = int(used.max()) + 1 if len(used) else 1  # trailing columns that are padding in every row go
        types = token_type_ids[index, :width] if token_type_ids is not None else None
        parts.append(classifier.forward_embeds(inputs_embeds[index, :width], mask[:, :width], types))
        rows += group
    inverse = torch.empty(len(rows), dtype=torch.long, device=inputs_embeds.device)
    inverse[torch.tensor(rows, device=inputs_embeds.device)] = torch.arange(len(rows), device=inputs_embeds.device)
    return torch.cat(parts)[inverse]
