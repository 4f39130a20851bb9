"""Soft sufficiency / comprehensiveness of a document read in windows (the metric is ``soft.py``'s).

The perturbed input x' is one document: each embedding element of the document's tokens is dropped once (one
Bernoulli draw per token and dimension of the document), and the model reads x' as it reads any document, in its
windows (``models/windows.py``): each window's rows are the document's perturbed rows at that window's token
positions (``window_positions``), so a token in an overlap is perturbed alike in every window that reads it, and
p(y | x') is the softmax of the windows' logits aggregated by the document's rule (mean by default). The clean
p(y | x) is the document's own prediction and the all-masked x0 drops every word token of the whole document, so
Zhao & Aletras' formulas (s. 3) are unchanged: they are evaluated on the document classifier.
"""
from __future__ import annotations

import numpy as np
import torch

from explainers.scores import softmax
from models.windows import DocumentEncoding, aggregate, window_positions


def document_of(encoding) -> DocumentEncoding:
    """The windowed document under ``encoding`` (itself, or the base of sentence / span units)."""
    return encoding if isinstance(encoding, DocumentEncoding) else encoding.base


def document_target_probabilities(classifier, encoding, embeddings: torch.Tensor, target: int,
                                  chunk_rows: int, foil: int | None = None) -> np.ndarray:
    """p(target | x') for each row of ``embeddings`` (rows, document tokens, dim): every window reads its slice of
    the row, the windows' logits are aggregated by the document's rule, then the softmax; with a contrast class,
    p(target | x') - p(foil | x')."""
    document = document_of(encoding)
    windows = document.windows[:1] if document.aggregate == "first" else document.windows  # "first" reads one
    per_window = []
    with torch.inference_mode():
        for window in windows:
            positions = torch.as_tensor(window_positions(document, window), device=embeddings.device)
            tensors = classifier.tensors(window.encoding)
            chunk = classifier.rows_per_batch(window.encoding.n_tokens, chunk_rows, "forward",
                                              within_batch_tokens=False)
            logits = []
            for begin in range(0, len(embeddings), chunk):
                rows = embeddings[begin:begin + chunk].index_select(1, positions)
                out = classifier.forward_embeds(rows, tensors["attention_mask"], tensors.get("token_type_ids"))
                logits.append(out.float().cpu().numpy())
            per_window.append(np.concatenate(logits).astype(np.float64))
    document_logits = aggregate(np.stack(per_window, axis=1), document.aggregate)
    probabilities = softmax(document_logits)
    return probabilities[:, target] - (probabilities[:, foil] if foil is not None else 0.0)
