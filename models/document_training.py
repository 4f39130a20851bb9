"""Training a classifier on documents read in windows: the loss is on the document's prediction.

A document longer than the window is read as ``models/windows.py`` reads it (the same windows, the same rule), and
the model is trained on what the document classifier predicts: the logits of all windows of one document are
computed in one batch, the document's rule is applied (mean of the windows' logits by default, max per class, or
the first window), and the cross-entropy is taken on the document's label. The gradient flows into every window,
so a model learns from a feature wherever it sits in the document, not only from the first 64 tokens.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from models import runtime
from models.classifier import TokenBatch
from models.encoding import build_encoding
from models.training import Progress, TrainConfig, collate, fit, seed_everything, set_trainable
from models.windows import AGGREGATES, UNLIMITED, plan_windows, window_encoding

# a document's windows: one TokenBatch row per window, in reading order


def document_windows(tokenizer, text: str, size: int, stride: int | None = None) -> TokenBatch:
    """The windows ``models.windows.encode_document`` reads a text in (one row when the text fits), as token ids."""
    full = build_encoding(tokenizer, text, None, UNLIMITED)
    if full.n_tokens <= size:
        encodings = [full]
    else:
        room = size - (full.n_tokens - int((full.token_word_array >= 0).sum()))
        encodings = [window_encoding(full, words, room) for words in plan_windows(full, size, stride)]
    types = None
    if all(e.token_type_ids is not None for e in encodings):
        types = [list(e.token_type_ids or ()) for e in encodings]
    return TokenBatch(input_ids=[list(e.input_ids) for e in encodings], token_type_ids=types)


def aggregate_logits(window_logits: torch.Tensor, how: str) -> torch.Tensor:
    """(windows, classes) -> (classes): ``models.windows.aggregate`` on tensors, differentiable."""
    if how not in AGGREGATES:
        raise ValueError(f"Unknown window aggregate '{how}'; choose one of {', '.join(AGGREGATES)}.")
    if how == "mean":
        return window_logits.mean(dim=0)
    if how == "max":
        return window_logits.max(dim=0).values  # the gradient goes to the window holding each class's maximum
    return window_logits[0]


def _rows(documents: list[TokenBatch]) -> TokenBatch:
    """Every window of several documents as one TokenBatch (documents in order)."""
    types = None
    if all(d.token_type_ids is not None for d in documents):
        types = [row for d in documents for row in d.token_type_ids or ()]
    return TokenBatch(input_ids=[row for d in documents for row in d.input_ids], token_type_ids=types)


def document_logits(model: torch.nn.Module, documents: list[TokenBatch], how: str, pad_id: int, max_length: int,
                    device) -> torch.Tensor:
    """(documents, classes): each document's logits under its rule; all windows of the documents in one batch."""
    rows = _rows(documents)
    logits = model(**collate(rows, list(range(len(rows))), pad_id, max_length, device)).logits
    counts = [len(d) for d in documents]
    return torch.stack([aggregate_logits(part, how) for part in torch.split(logits, counts)])


def document_loss(model: torch.nn.Module, documents: list[TokenBatch], labels, how: str, pad_id: int,
                  max_length: int, device) -> torch.Tensor:
    """Mean cross-entropy of the documents' predictions (under the rule ``how``) against their labels."""
    target = torch.as_tensor(labels, dtype=torch.long, device=device)
    return torch.nn.functional.cross_entropy(document_logits(model, documents, how, pad_id, max_length, device),
                                             target)


def train_on_documents(model: torch.nn.Module, documents: list[TokenBatch], labels: list[int], config: TrainConfig,
                       pad_id: int, how: str = "mean", progress: Progress | None = None,
                       should_stop: Callable[[], bool] | None = None, device=None) -> dict:
    """Fine-tune in place on documents (``config.batch_size`` counts documents, ``config.max_length`` is the window
    size); the one optimizer loop of ``models.training.fit``. Returns its training record."""
    device = device or runtime.choose_device()
    seed_everything(config.seed)
    model.to(device).train()
    set_trainable(model, config)

    def loss_of(indices: list[int]) -> torch.Tensor:
        return document_loss(model, [documents[i] for i in indices], [labels[i] for i in indices], how, pad_id,
                             config.max_length, device)

    record = fit(model, len(documents), config, loss_of, progress, should_stop)
    return {**record, "documents": len(documents), "windows": sum(len(d) for d in documents), "aggregate": how}


@torch.no_grad()
def predict_documents(model: torch.nn.Module, documents: list[TokenBatch], how: str, pad_id: int, max_length: int,
                      batch_windows: int = 16, device=None) -> np.ndarray:
    """(documents, classes) logits of the document classifier, about ``batch_windows`` windows per forward pass."""
    device = device or runtime.choose_device()
    model.to(device).eval()
    out, group, size = [], [], 0
    for document in documents:
        group.append(document)
        size += len(document)
        if size >= batch_windows:
            out.append(document_logits(model, group, how, pad_id, max_length, device).float().cpu().numpy())
            group, size = [], 0
    if group:
        out.append(document_logits(model, group, how, pad_id, max_length, device).float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 0))
