"""Batched prediction: any number of token rows classified in padded batches that fit memory.

Rows are grouped by similar length so each padded batch stays under the classifier's ``max_batch_tokens`` (what the
memory model and any out-of-memory error taught allow, models/memory.py); a batch that still runs out of memory is
split in halves, and the limit is remembered for the process. On an accelerator the logits stay on the device until
the last batch: one copy to the host per call, not one synchronisation per batch.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch  # noqa: E402  (runtime sets the environment first)

from models import memory
from models.architecture_forward import same_eos_count
from models.metering import count


def pad(sequences: list[list[int]], value: int, left: bool = False) -> torch.Tensor:
    """Rows of ids as one (rows, longest) tensor, filled with ``value`` on the right (or the left)."""
    width = max(len(s) for s in sequences)
    out = torch.full((len(sequences), width), value, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        if left:
            out[row, width - len(sequence):] = torch.as_tensor(sequence, dtype=torch.long)
        else:
            out[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
    return out


def length_chunks(lengths: np.ndarray, batch_tokens: Callable[[], int]) -> Iterator[list[int]]:
    """Indices grouped by similar length so each padded batch stays under ``batch_tokens()`` (read once per chunk:
    it looks up what out-of-memory errors taught)."""
    order = np.argsort(lengths, kind="stable")
    chunk: list[int] = []
    budget = batch_tokens()
    for index in order:
        longest = max(lengths[index], max((lengths[i] for i in chunk), default=0))
        if chunk and longest * (len(chunk) + 1) > budget:
            yield chunk
            chunk, budget = [], batch_tokens()
        chunk.append(int(index))
    if chunk:
        yield chunk


def cut_rows(batch: Any, chunk: list[int], read_at: Callable[[int, list[int]], int] | None):
    """Token ids, zero masks and token types of some rows of a ``TokenBatch``; with ``read_at(row, ids)`` (a
    decoder: the position its head reads) each row is cut after that position."""
    ids = [list(batch.input_ids[i]) for i in chunk]
    zeros = [list(batch.zero_masks[i]) for i in chunk] if batch.zero_masks is not None else None
    types = [list(batch.token_type_ids[i]) for i in chunk] if batch.token_type_ids is not None else None
    if read_at is not None:
        ends = [read_at(i, ids[k]) + 1 for k, i in enumerate(chunk)]
        ids = [row[:end] for row, end in zip(ids, ends)]
        zeros = [row[:end] for row, end in zip(zeros, ends)] if zeros is not None else None
        types = [row[:end] for row, end in zip(types, ends)] if types is not None else None
    return ids, zeros, types


def run_or_split(classifier: Any, ids: list[list[int]], zeros, types) -> torch.Tensor:
    """``classifier._run``; after an out-of-memory error the rows run in two halves (recursively, down to one row)
    and the limit is remembered for the process: later chunks are cut under it (``max_batch_tokens``)."""
    try:
        return classifier._run(ids, zeros, types)
    except Exception as error:  # noqa: BLE001  (only out-of-memory errors are handled; the rest re-raised)
        if len(ids) <= 1 or not memory.is_out_of_memory(error):
            raise
        memory.remember_failure(classifier.memory_shape, classifier.device, "forward",
                                len(ids) * max(map(len, ids)), error)
    half = len(ids) // 2
    parts = [(ids[:half], zeros and zeros[:half], types and types[:half]),
             (ids[half:], zeros and zeros[half:], types and types[half:])]
    return torch.cat([run_or_split(classifier, *part) for part in parts])


@torch.inference_mode()
def predict_logits(classifier: Any, batch: Any) -> np.ndarray:
    """Logits (n, num_labels) of a ``TokenBatch`` on a ``TextClassifier`` (neither is imported here: the classifier
    imports this module), in float64; every batch reports its time to the model's throughput (models/metering.py)."""
    n = len(batch)
    out = np.zeros((n, classifier.num_labels), dtype=np.float64)
    if n == 0:
        return out
    lengths = np.array([len(s) for s in batch.input_ids])

    def pooled(i: int, ids: list[int]) -> int:  # rows that keep one encoding's layout carry its pooled token
        return batch.readout[i] if batch.readout is not None else classifier.pooled_index(input_ids=ids)

    read_at = pooled if classifier.causal else None  # a decoder's rows end at the token its head reads
    eos = classifier.model.config.eos_token_id if classifier.summary_token == "eos" else None
    on_device, started_all, padded = [], time.perf_counter(), 0
    for chunk in length_chunks(lengths, lambda: classifier.max_batch_tokens):
        for part in (same_eos_count(batch.input_ids, chunk, eos) if eos is not None else [chunk]):
            ids, zeros, types = cut_rows(batch, part, read_at)
            started = time.perf_counter()
            logits = run_or_split(classifier, ids, zeros, types)
            width = max(len(s) for s in ids)
            if classifier.device.type == "cpu":  # nothing to wait for: each batch's time is its own
                out[part] = logits.double().numpy()
                classifier.throughput.record_batch(len(part), width, time.perf_counter() - started)
            else:  # an accelerator: no device-to-host copy (a synchronisation) inside the loop
                on_device.append((part, logits))
                padded += len(part) * width
            count(forward=len(part), batches=1)
    if on_device:
        values = torch.cat([logits for _, logits in on_device]).double().cpu().numpy()
        out[np.concatenate([part for part, _ in on_device])] = values
        classifier.throughput.record_batch(n, max(1, padded // n), time.perf_counter() - started_all)
    return out
