"""The TextClassifier wrapper: tokenize with word alignment, batched prediction, embeddings for gradients.

A TextClassifier is never mutated by callers. Layer randomization builds a new one with
``with_model`` around other weights; the tokenizer is shared.
"""
from __future__ import annotations

import inspect
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from models import runtime
from models.architectures import architecture_of
from models.encoding import Encoding, build_encoding
from models.errors import ModelError
from models.fingerprint import weights_fingerprint
from models.metering import Throughput, count

import torch  # noqa: E402  (runtime sets the environment first)

DEFAULT_MAX_LENGTH = 512


@dataclass
class TokenBatch:
    """Any number of token-id sequences to classify; ``zero_masks`` zero the word embedding of tokens."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None = None
    zero_masks: list[list[bool]] | None = None

    def __len__(self) -> int:
        return len(self.input_ids)


def generic_label_names(config) -> bool:
    """The class names are transformers' placeholders (LABEL_0, LABEL_1, ...): nobody named the classes."""
    return all(str(config.id2label.get(i, f"LABEL_{i}")) == f"LABEL_{i}" for i in range(config.num_labels))


def _pretty_labels(config) -> list[str]:
    if generic_label_names(config):
        return [f"class {i}" for i in range(config.num_labels)]
    return [str(config.id2label.get(i, f"class {i}")) for i in range(config.num_labels)]


class TextClassifier:
    def __init__(self, model, tokenizer, *, name: str, fingerprint: str | None = None,
                 device: torch.device | str | None = None, source: str = "", manifest: dict | None = None,
                 max_batch_tokens: int | None = None, warnings: tuple[str, ...] = (),
                 throughput: Throughput | None = None):
        self.device = torch.device(device) if device is not None else runtime.choose_device()
        if getattr(model.config, "_attn_implementation", "eager") != "eager" and hasattr(model, "set_attn_implementation"):
            model.set_attn_implementation("eager")  # sdpa returns no attention weights
        self.model = model.to(self.device).eval()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)  # attributions need input gradients only
        self.tokenizer = tokenizer
        if tokenizer.pad_token_id is None:  # GPT-2 style tokenizers: pad with end-of-text
            tokenizer.pad_token = tokenizer.eos_token
            model.config.pad_token_id = tokenizer.pad_token_id
        self.name = name
        self.source = source
        self.manifest = manifest or {}
        self.warnings = tuple(warnings)  # about the model itself (e.g. an untrained head): shown with every explanation
        self.labels = list(self.manifest.get("label_names") or _pretty_labels(model.config))
        self.architecture = architecture_of(model)
        offset = self.architecture.position_offset if self.architecture else 0
        limits = [getattr(model.config, "max_position_embeddings", DEFAULT_MAX_LENGTH) - offset,
                  getattr(model.config, "n_positions", DEFAULT_MAX_LENGTH)]
        if 0 < tokenizer.model_max_length < 100_000:
            limits.append(tokenizer.model_max_length)
        self.max_length = int(min(limits))
        self.max_batch_tokens = max_batch_tokens or (65_536 if self.device.type == "cuda" else 8_192)
        accepted = inspect.signature(model.forward).parameters
        self._uses_token_types = "token_type_ids" in accepted and getattr(model.config, "type_vocab_size", 0) > 1
        self._fingerprint = fingerprint
        # this model's measured speed in this process (models/metering.py: every cost estimate reads it)
        self.throughput = throughput or Throughput.for_model(self.model, self.device.type)
        # logits of whole inputs already classified: the page, the target choice of every method and the
        # "original" score of every perturbation method share one forward pass per input
        self._logits_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._logits_lock = threading.Lock()

    # ----- identity -------------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        """Content hash of the weights (computed once); part of every cache key."""
        if self._fingerprint is None:
            self._fingerprint = weights_fingerprint(self.model)
        return self._fingerprint

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    def with_model(self, model, fingerprint: str, name: str | None = None) -> "TextClassifier":
        """A new classifier around other weights (e.g. a randomized copy), sharing the tokenizer."""
        return TextClassifier(model, self.tokenizer, name=name or self.name, fingerprint=fingerprint,
                              device=self.device, source=self.source, manifest=self.manifest,
                              max_batch_tokens=self.max_batch_tokens, warnings=self.warnings,
                              throughput=self.throughput)

    def describe(self) -> dict:
        return {"name": self.name, "source": self.source, "fingerprint": self.fingerprint,
                "model_type": getattr(self.model.config, "model_type", "?"), "labels": self.labels,
                "device": str(self.device), "max_length": self.max_length,
                "parameters": sum(p.numel() for p in self.model.parameters()), "warnings": list(self.warnings)}

    # ----- tokenization ----------------------------------------------------------------------------
    def encode(self, text: str, pair: str | None = None) -> Encoding:
        return build_encoding(self.tokenizer, text, pair, self.max_length)

    def unknown_words(self, encoding: Encoding) -> list[int]:
        """Indices of the words the vocabulary does not cover: at least one of their tokens is [UNK]."""
        unk = self.tokenizer.unk_token_id
        if unk is None:
            return []
        return sorted({w for w, token in zip(encoding.token_word, encoding.input_ids) if w >= 0 and token == unk})

    def input_warnings(self, encoding: Encoding) -> list[str]:
        """What an explanation of this input should say about it: words read as the unknown token."""
        unknown = self.unknown_words(encoding)
        if not unknown:
            return []
        shown = ", ".join(repr(encoding.words[i]) for i in unknown[:8]) + (", ..." if len(unknown) > 8 else "")
        token = self.tokenizer.unk_token
        return [f"{len(unknown)} word(s) not in this model's vocabulary were read as {token}: {shown}. The model sees "
                f"the same {token} token for all of them, so their scores are about {token} at that place, not about "
                f"the words themselves (emoji and scripts the vocabulary lacks, e.g. CJK on an English model)."]

    def tokenize_texts(self, texts: list[str], pairs: list[str] | None = None) -> TokenBatch:
        """Token ids of many texts at once (used by the delete and MLM-fill removal operators)."""
        enc = self.tokenizer(texts, pairs, truncation=True, max_length=self.max_length)
        types = enc.get("token_type_ids") if self._uses_token_types else None
        return TokenBatch(input_ids=enc["input_ids"], token_type_ids=types)

    def batch_of(self, encodings: list[Encoding]) -> TokenBatch:
        types = [list(e.token_type_ids) for e in encodings] if self._uses_token_types and encodings \
            and encodings[0].token_type_ids is not None else None
        return TokenBatch(input_ids=[list(e.input_ids) for e in encodings], token_type_ids=types)

    # ----- prediction ------------------------------------------------------------------------------
    def _chunks(self, lengths: np.ndarray):
        """Indices grouped by similar length so each padded batch stays under max_batch_tokens."""
        order = np.argsort(lengths, kind="stable")
        chunk: list[int] = []
        for index in order:
            longest = max(lengths[index], max((lengths[i] for i in chunk), default=0))
            if chunk and longest * (len(chunk) + 1) > self.max_batch_tokens:
                yield chunk
                chunk = []
            chunk.append(int(index))
        if chunk:
            yield chunk

    def _pad(self, sequences: list[list[int]], value: int) -> torch.Tensor:
        width = max(len(s) for s in sequences)
        out = torch.full((len(sequences), width), value, dtype=torch.long)
        for row, sequence in enumerate(sequences):
            out[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
        return out

    @torch.inference_mode()
    def predict_logits(self, batch: TokenBatch | list[Encoding]) -> np.ndarray:
        """Logits (n, num_labels) in float64, any n, in batches that fit memory."""
        if not isinstance(batch, TokenBatch):
            batch = self.batch_of(batch)
        n = len(batch)
        out = np.zeros((n, self.num_labels), dtype=np.float64)
        if n == 0:
            return out
        lengths = np.array([len(s) for s in batch.input_ids])
        for chunk in self._chunks(lengths):
            ids = self._pad([batch.input_ids[i] for i in chunk], self.tokenizer.pad_token_id).to(self.device)
            mask = self._pad([[1] * len(batch.input_ids[i]) for i in chunk], 0).to(self.device)
            kwargs = {"attention_mask": mask}
            if batch.token_type_ids is not None and self._uses_token_types:
                kwargs["token_type_ids"] = self._pad([batch.token_type_ids[i] for i in chunk], 0).to(self.device)
            if batch.zero_masks is not None:
                keep = 1.0 - self._pad([[int(z) for z in batch.zero_masks[i]] for i in chunk], 0).to(self.device)
                kwargs["inputs_embeds"] = self.word_embeddings(ids) * keep.unsqueeze(-1).to(self.dtype)
            else:
                kwargs["input_ids"] = ids
            started = time.perf_counter()
            logits = self.model(**kwargs).logits
            out[chunk] = logits.double().cpu().numpy()
            self.throughput.record_batch(ids.shape[0], ids.shape[1], time.perf_counter() - started)
            count(forward=len(chunk), batches=1)
        return out

    def logits_of(self, encoding: Encoding) -> np.ndarray:
        """Logits of one input, computed once per classifier (read-only array)."""
        with self._logits_lock:
            if encoding.key in self._logits_cache:
                self._logits_cache.move_to_end(encoding.key)
                return self._logits_cache[encoding.key]
        logits = self.predict_logits([encoding])[0]
        logits.setflags(write=False)
        with self._logits_lock:
            self._logits_cache[encoding.key] = logits
            while len(self._logits_cache) > 1024:
                self._logits_cache.popitem(last=False)
        return logits

    def proba_of(self, encoding: Encoding) -> np.ndarray:
        """Class probabilities of one input (through ``logits_of``)."""
        logits = self.logits_of(encoding) - self.logits_of(encoding).max()
        return np.exp(logits) / np.exp(logits).sum()

    def predict_proba(self, batch: TokenBatch | list[Encoding]) -> np.ndarray:
        logits = self.predict_logits(batch)
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def predict_text(self, text: str, pair: str | None = None) -> np.ndarray:
        return self.predict_proba([self.encode(text, pair)])[0]

    # ----- gradients and attention -----------------------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self.model.get_input_embeddings().weight.dtype

    def tensors(self, encoding: Encoding) -> dict[str, torch.Tensor]:
        """input_ids, attention_mask and (where used) token_type_ids of one encoding, batch of 1."""
        out = {"input_ids": torch.tensor([encoding.input_ids], device=self.device),
               "attention_mask": torch.ones((1, encoding.n_tokens), dtype=torch.long, device=self.device)}
        if self._uses_token_types and encoding.token_type_ids is not None:
            out["token_type_ids"] = torch.tensor([encoding.token_type_ids], device=self.device)
        return out

    def word_embeddings(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The word (token) embedding vectors; position and segment embeddings are added by the model."""
        return self.model.get_input_embeddings()(input_ids)

    def forward_embeds(self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor | None = None,
                       token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Logits from word embeddings (differentiable); counted as a forward and, under grad, a backward."""
        n = inputs_embeds.shape[0]
        if attention_mask is not None and attention_mask.shape[0] != n:
            attention_mask = attention_mask.expand(n, -1)
        kwargs = {"inputs_embeds": inputs_embeds, "attention_mask": attention_mask}
        if token_type_ids is not None and self._uses_token_types:
            kwargs["token_type_ids"] = token_type_ids.expand(n, -1) if token_type_ids.shape[0] != n else token_type_ids
        logits = self.model(**kwargs).logits
        count(forward=n, backward=n if torch.is_grad_enabled() else 0, batches=1)
        return logits

    @torch.inference_mode()
    def attentions(self, encoding: Encoding) -> np.ndarray:
        """Attention weights, shape (layers, heads, tokens, tokens)."""
        outputs = self.model(**self.tensors(encoding), output_attentions=True)
        count(forward=1, batches=1)
        if not outputs.attentions:
            raise ModelError(f"Model '{self.name}' returned no attention weights (its attention implementation "
                             f"cannot output them).")
        return torch.stack([a[0] for a in outputs.attentions]).double().cpu().numpy()
