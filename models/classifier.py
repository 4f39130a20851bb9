"""The TextClassifier wrapper: tokenize with word alignment, batched prediction, embeddings for gradients.

A TextClassifier is never mutated by callers. Layer randomization builds a new one with
``with_model`` around other weights; the tokenizer is shared.

Every architecture goes through the same calls; what differs is where the head reads (``Architecture.summary_token``):
encoders read the first token ([CLS]), batches padded on the right; decoders read the pooled token (Hugging Face's
rule: the last token that is not the pad token, found once on the unperturbed input, ``pooled_index``), rows cut
after it and fed as left-aligned embeddings; encoder-decoders read the decoder's state at the last </s>
(``models/architecture_forward.py`` has those rules; ``models/batching.py`` the padded batches that fit memory).
"""
from __future__ import annotations

import copy
import inspect
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import torch  # noqa: E402  (runtime sets the environment first)

from corpora.invisible import invisible_note
from models import batching, memory, precision, runtime
from models.architecture_forward import decoder_logits, encoder_decoder_logits, pad_is_eos_warning, placeholder_ids
from models.architectures import Architecture, architecture_of
from models.attention_kernel import eager_attention, prefer_sdpa
from models.encoding import Encoding, build_encoding
from models.errors import ModelError
from models.fingerprint import weights_fingerprint
from models.first_token import FirstTokenSupport, first_token_logits, first_token_support, full_model
from models.metering import Throughput, count
from models.runtime import batch_tokens_for

DEFAULT_MAX_LENGTH = 512


@dataclass
class TokenBatch:
    """Any number of token-id sequences to classify; ``zero_masks`` zero the word embedding of tokens.

    ``readout``: per row, the position a decoder's head reads (rows that keep the layout of one encoding keep its
    pooled token); None = the pooled-token rule on each row's own ids."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None = None
    zero_masks: list[list[bool]] | None = None
    readout: list[int] | None = None

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
                 throughput: Throughput | None = None, architecture: Architecture | None = None,
                 autocast_dtype: torch.dtype | None = None, first_token: FirstTokenSupport | None = None):
        self.device = torch.device(device) if device is not None else runtime.choose_device()
        # SDPA for every pass; ``attentions`` switches to eager while it reads weights (models/attention_kernel.py)
        self.attention_implementation = prefer_sdpa(model)
        # fast mode (models/precision.py): None = full precision, the default and what every metric uses
        self.autocast_dtype = autocast_dtype
        self.full_precision = self  # a fast variant points at the classifier it was made from
        self.model = model.to(self.device).eval()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)  # attributions need input gradients only
        self.tokenizer = tokenizer
        if tokenizer.pad_token_id is None:  # GPT-2 style tokenizers: pad with end-of-text
            tokenizer.pad_token = tokenizer.eos_token if tokenizer.eos_token is not None else tokenizer.unk_token
        if getattr(model.config, "pad_token_id", None) is None:  # decoder heads need it for batches of more than 1
            model.config.pad_token_id = tokenizer.pad_token_id
        self.name = name
        self.source = source
        self.manifest = manifest or {}
        self.labels = list(self.manifest.get("label_names") or _pretty_labels(model.config))
        # the model's parts (models/architectures.py): read once, shared with randomized copies (same module tree)
        self.architecture = architecture if architecture is not None else architecture_of(self.model)
        self.warnings = tuple(warnings) + tuple(w for w in self._architecture_warnings() if w not in warnings)
        # encoders whose head reads [CLS]: the last layer for that token only (models/first_token.py), decided once
        # per model and shared with copies around other weights (the same module tree)
        if first_token is None:
            first_token = first_token_support(self.model, self.architecture) if self.summary_token == "first" \
                else full_model(f"the head reads the {self.summary_token} token")
        self.first_token = first_token
        offset = self.architecture.position_offset if self.architecture else 0
        limits = [getattr(model.config, "max_position_embeddings", DEFAULT_MAX_LENGTH) - offset,
                  getattr(model.config, "n_positions", DEFAULT_MAX_LENGTH)]
        if 0 < tokenizer.model_max_length < 100_000:
            limits.append(tokenizer.model_max_length)
        self.max_length = int(min(limits))
        self._max_batch_tokens = max_batch_tokens or batch_tokens_for(self.model, self.device)
        accepted = inspect.signature(model.forward).parameters
        self._uses_token_types = "token_type_ids" in accepted and getattr(model.config, "type_vocab_size", 0) > 1
        # a decoder that takes position ids is padded on the left (its head reads the last position of embeddings);
        # one that does not (a custom head reading the last position its attention mask keeps, e.g. the prompted LM)
        # keeps right padding, where the positions of real tokens do not move
        self._left_padded = self.causal and "position_ids" in accepted
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
    def max_batch_tokens(self) -> int:
        """Padded tokens per forward batch: the memory model's (or the caller's) size, under any limit an
        out-of-memory error taught this process (models/memory.py)."""
        learned = memory.learned_limit(self.memory_shape, self.device, "forward")
        return self._max_batch_tokens if learned is None else min(self._max_batch_tokens, learned)

    @max_batch_tokens.setter
    def max_batch_tokens(self, tokens: int) -> None:
        self._max_batch_tokens = tokens

    @property
    def memory_shape(self) -> memory.Shape:
        """What the memory model reads from this model (its activations' dtype under fast mode's autocast)."""
        return memory.shape_of(self.model, self.autocast_dtype)

    def rows_per_batch(self, length: int, wanted: int, kind: str = "backward", within_batch_tokens: bool = True) -> int:
        """Rows of ``length`` tokens one ``kind`` pass may take at once (at least 1, at most ``wanted``): the
        memory budget (EXWB_MEMORY_GB, models/memory.py) and, unless told otherwise, ``max_batch_tokens``."""
        cap = self.max_batch_tokens if within_batch_tokens else None
        return memory.rows_within(self.memory_shape, self.device, length, kind, wanted, cap)

    def run_halving(self, run, rows: int, length: int, kind: str = "backward"):
        """``run(rows)``, retried with half the rows after an out-of-memory error (models/memory.run_halving)."""
        return memory.run_halving(run, rows, length, self.memory_shape, self.device, kind)

    @property
    def num_labels(self) -> int:
        return len(self.labels)

    @property
    def summary_token(self) -> str:
        """Where the head reads: "first" ([CLS]), "last" (decoders: the pooled token) or "eos" (encoder-decoders)."""
        return self.architecture.summary_token if self.architecture is not None else "first"

    @property
    def causal(self) -> bool:
        """A decoder-only classifier: each token sees only the tokens before it (paper 003 section 4.2.1)."""
        return self.summary_token == "last"

    def _architecture_warnings(self) -> list[str]:
        """What every explanation of this model should say about its architecture."""
        return pad_is_eos_warning(self.model, self.tokenizer) if self.causal else []

    def with_model(self, model, fingerprint: str, name: str | None = None) -> TextClassifier:
        """A new classifier around other weights (e.g. a randomized copy), sharing the tokenizer."""
        return TextClassifier(model, self.tokenizer, name=name or self.name, fingerprint=fingerprint,
                              device=self.device, source=self.source, manifest=self.manifest,
                              max_batch_tokens=self._max_batch_tokens, warnings=self.warnings,
                              throughput=self.throughput, architecture=self.architecture,
                              autocast_dtype=self.autocast_dtype, first_token=self.first_token)

    def fast_variant(self, dtype: torch.dtype | None = None) -> TextClassifier:
        """The same model object under reduced-precision autocast (the opt-in fast mode, models/precision.py): its
        own fingerprint (so cached explanations never mix precisions), name and logits cache; no weights copied.
        ``dtype`` None = the device's fast precision; where there is none, this classifier itself with a warning."""
        dtype = dtype or precision.fast_dtype(self.device)
        if dtype is None or self.autocast_dtype is not None:
            variant = copy.copy(self)
            if dtype is None:
                variant.warnings = (*self.warnings, precision.unavailable_note(self.device))
            return variant
        variant = copy.copy(self)  # shares the model, tokenizer and architecture; new caches below
        short = precision.dtype_name(dtype)
        variant.autocast_dtype = dtype
        variant.full_precision = self
        variant.name = f"{self.name} [fast: {short}]"
        variant._fingerprint = f"{self.fingerprint}-{short}"
        variant.throughput = Throughput(self.throughput.rate, self.throughput.nominal_rate)
        variant._logits_cache, variant._logits_lock = OrderedDict(), threading.Lock()
        variant.warnings = (*self.warnings, f"Fast mode: {short} autocast, not full precision; the provenance "
                            f"shows how far this input's class probabilities moved. Metrics never use it.")
        return variant

    def _autocast(self):
        return precision.autocast(self.device, self.autocast_dtype)

    def describe(self) -> dict:
        return {"name": self.name, "source": self.source, "fingerprint": self.fingerprint,
                "model_type": getattr(self.model.config, "model_type", "?"), "labels": self.labels,
                "device": str(self.device), "max_length": self.max_length,
                "parameters": sum(p.numel() for p in self.model.parameters()), "warnings": list(self.warnings),
                "last_layer": self.first_token.note,
                "reads": {"first": "the first token ([CLS])", "last": "the pooled token (last non-pad; causal)",
                          "eos": "the decoder state at the last </s> (encoder-decoder)"}[self.summary_token]}

    # ----- tokenization ----------------------------------------------------------------------------
    def encode(self, text: str, pair: str | None = None) -> Encoding:
        return build_encoding(self.tokenizer, text, pair, self.max_length)

    def unknown_words(self, encoding: Encoding) -> list[int]:
        """Indices of the words the vocabulary does not cover: at least one of their tokens is [UNK]."""
        unk = self.tokenizer.unk_token_id
        if unk is None:
            return []
        return sorted({w for w, token in zip(encoding.token_word, encoding.input_ids) if w >= 0 and token == unk})

    def pooled_index(self, encoding: Encoding | None = None, input_ids=None) -> int:
        """Position of the token the head reads: 0 for encoders; for decoders Hugging Face's rule, the last token that
        is not the pad token; for encoder-decoders the last </s> (the last token when there is none)."""
        ids = list(encoding.input_ids if encoding is not None else input_ids)
        if self.summary_token == "first":
            return 0
        if self.summary_token == "last":
            pad = self.model.config.pad_token_id
            return max((i for i, t in enumerate(ids) if t != pad), default=len(ids) - 1)
        eos = self.model.config.eos_token_id
        return max((i for i, t in enumerate(ids) if t == eos), default=len(ids) - 1)

    def input_details(self, encoding: Encoding) -> dict:
        """What the provenance records about how this model reads the input: the pooled token."""
        index = self.pooled_index(encoding)
        details = {"pooled_token": {"index": index, "token": encoding.tokens[index],
                                    "rule": {"first": "first token", "last": "last token that is not the pad token",
                                             "eos": "last </s> (decoder state)"}[self.summary_token]},
                   "precision": self.precision_details(encoding)}
        halvings = memory.notes_for(self.memory_shape, self.device)
        if halvings:  # batches were halved after out-of-memory errors in this process: say so
            details["out_of_memory"] = halvings
        return details

    def precision_details(self, encoding: Encoding) -> dict:
        """Full precision, or the fast mode's dtype and its measured max |dp| against full precision on this input
        (both probability vectors come from each classifier's one cached forward pass)."""
        details = {"mode": "full", "dtype": precision.dtype_name(self.dtype),
                   "attention": self.attention_implementation or "model default", "last_layer": self.first_token.note}
        if self.autocast_dtype is None:
            return details
        deviation = float(np.abs(self.proba_of(encoding) - self.full_precision.proba_of(encoding)).max())
        return {**details, "mode": "fast", "autocast": precision.dtype_name(self.autocast_dtype),
                "max_abs_dp_vs_full": deviation}

    def input_warnings(self, encoding: Encoding) -> list[str]:
        """What an explanation of this input should say about it: invisible characters removed, words read as the
        unknown token."""
        removed = invisible_note(encoding.removed_invisible)
        notes = [removed] if removed else []
        unknown = self.unknown_words(encoding)
        if not unknown:
            return notes
        shown = ", ".join(repr(encoding.words[i]) for i in unknown[:8]) + (", ..." if len(unknown) > 8 else "")
        token = self.tokenizer.unk_token
        return notes + [f"{len(unknown)} word(s) not in this model's vocabulary were read as {token}: {shown}. The model sees "
                f"the same {token} token for all of them, so their scores are about {token} at that place, not about "
                f"the words themselves (emoji and scripts the vocabulary lacks, e.g. CJK on an English model)."]

    def tokenize_texts(self, texts: list[str], pairs: list[str] | None = None) -> TokenBatch:
        """Token ids of many texts at once (used by the delete and MLM-fill removal operators)."""
        enc = self.tokenizer(texts, pairs, truncation=True, max_length=self.max_length)
        types = enc.get("token_type_ids") if self._uses_token_types else None
        return TokenBatch(input_ids=enc["input_ids"], token_type_ids=types)

    def batch_of(self, encodings: list[Encoding]) -> TokenBatch:
        types = [list(e.token_type_ids or ()) for e in encodings] if self._uses_token_types and encodings \
            and encodings[0].token_type_ids is not None else None
        return TokenBatch(input_ids=[list(e.input_ids) for e in encodings], token_type_ids=types)

    # ----- prediction ------------------------------------------------------------------------------
    def _run(self, chunk_ids: list[list[int]], zeros, types) -> torch.Tensor:
        """Logits of one padded chunk, float32 in fast mode too."""
        with self._autocast():
            return self._run_chunk(chunk_ids, zeros, types).float()

    def _run_chunk(self, chunk_ids: list[list[int]], zeros, types) -> torch.Tensor:
        """Logits of one padded chunk (the architecture decides the padding side and the inputs)."""
        left = self._left_padded
        ids = batching.pad(chunk_ids, self.tokenizer.pad_token_id, left=left).to(self.device)
        mask = batching.pad([[1] * len(s) for s in chunk_ids], 0, left=left).to(self.device)
        token_types = batching.pad(types, 0, left=left).to(self.device) if types is not None \
            and self._uses_token_types else None
        keep = None
        if zeros is not None:
            keep = 1.0 - batching.pad([[int(z) for z in row] for row in zeros], 0, left=left).to(self.device)
        if self.summary_token == "eos":
            embeds = None if keep is None else self.word_embeddings(ids) * keep.unsqueeze(-1).to(self.dtype)
            return encoder_decoder_logits(self.model, self.name, ids, mask, embeds)
        kwargs = {"attention_mask": mask}
        if token_types is not None:
            kwargs["token_type_ids"] = token_types
        if self.causal:  # the pooled token is the last position: read it as embeddings (see the module docstring)
            embeds = self.word_embeddings(ids)
            return self._decoder_logits(embeds if keep is None else embeds * keep.unsqueeze(-1).to(self.dtype), mask,
                                        token_types)
        if keep is not None:
            kwargs["inputs_embeds"] = self.word_embeddings(ids) * keep.unsqueeze(-1).to(self.dtype)
        else:
            kwargs["input_ids"] = ids
        return self._encoder_logits(**kwargs)

    def _encoder_logits(self, **kwargs) -> torch.Tensor:
        """An encoder's logits: the first-token path where this model supports it, else the model's own forward.
        Only for callers that need logits (never hidden states or attention weights of other positions)."""
        if self.first_token.enabled and self.architecture is not None:
            return first_token_logits(self.model, self.architecture.head, **kwargs)
        return self.model(**kwargs).logits

    def _decoder_logits(self, embeds: torch.Tensor, mask: torch.Tensor, token_types: torch.Tensor | None) -> torch.Tensor:
        return decoder_logits(self.model, embeds, mask, token_types, left_padded=self._left_padded,
                              uses_token_types=self._uses_token_types)

    def predict_logits(self, batch: TokenBatch | list[Encoding]) -> np.ndarray:
        """Logits (n, num_labels) in float64, any n, in batches that fit memory (models/batching.py)."""
        return batching.predict_logits(self, batch if isinstance(batch, TokenBatch) else self.batch_of(batch))

    def logits_of(self, encoding: Encoding) -> np.ndarray:
        """Logits of one input, computed once per classifier (read-only array)."""
        with self._logits_lock:
            if encoding.key in self._logits_cache:
                self._logits_cache.move_to_end(encoding.key)
                return self._logits_cache[encoding.key]
        windowed = getattr(encoding, "document_logits", None)  # a document read in windows (models/windows.py)
        logits = windowed(self) if windowed is not None else self.predict_logits([encoding])[0]
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
        """input_ids, attention_mask and (where used) token_type_ids of one encoding, batch of 1. A decoder's mask
        stops at its pooled token: tokens after it cannot change what the head reads (causal attention)."""
        mask = torch.ones((1, encoding.n_tokens), dtype=torch.long, device=self.device)
        if self.causal:
            mask[0, self.pooled_index(encoding) + 1:] = 0
        out = {"input_ids": torch.tensor([encoding.input_ids], device=self.device), "attention_mask": mask}
        if self._uses_token_types and encoding.token_type_ids is not None:
            out["token_type_ids"] = torch.tensor([encoding.token_type_ids], device=self.device)
        return out

    def word_embeddings(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The word (token) embedding vectors; position and segment embeddings are added by the model."""
        return self.model.get_input_embeddings()(input_ids)

    def forward_embeds(self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor | None = None,
                       token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Logits from word embeddings (differentiable); counted as a forward and, under grad, a backward."""
        with self._autocast():
            logits = self._forward_embeds(inputs_embeds, attention_mask, token_type_ids)
        return logits.float() if self.autocast_dtype is not None else logits

    def _forward_embeds(self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor | None,
                        token_type_ids: torch.Tensor | None) -> torch.Tensor:
        n = inputs_embeds.shape[0]
        if attention_mask is None:
            attention_mask = torch.ones(inputs_embeds.shape[:2], dtype=torch.long, device=inputs_embeds.device)
        if attention_mask.shape[0] != n:
            attention_mask = attention_mask.expand(n, -1)
        if token_type_ids is not None and token_type_ids.shape[0] != n:
            token_type_ids = token_type_ids.expand(n, -1)
        if self.causal:
            logits = self._decoder_logits(inputs_embeds, attention_mask, token_type_ids)
        elif self.summary_token == "eos":
            logits = encoder_decoder_logits(self.model, self.name, placeholder_ids(self.model, self.tokenizer,
                                                                                   attention_mask),
                                            attention_mask, inputs_embeds)
        else:
            kwargs = {"inputs_embeds": inputs_embeds, "attention_mask": attention_mask}
            if token_type_ids is not None and self._uses_token_types:
                kwargs["token_type_ids"] = token_type_ids
            logits = self._encoder_logits(**kwargs)
        count(forward=n, backward=n if torch.is_grad_enabled() else 0, batches=1)
        return logits

    @torch.inference_mode()
    def attentions(self, encoding: Encoding) -> np.ndarray:
        """Attention weights, shape (layers, heads, tokens, tokens) (the eager kernel: SDPA returns none)."""
        with eager_attention(self.model), self._autocast():
            outputs = self.model(**self.tensors(encoding), output_attentions=True)
        count(forward=1, batches=1)
        # an encoder-decoder's output (Seq2SeqSequenceClassifierOutput) has encoder and decoder attentions: the
        # encoder's are the ones over the input tokens
        weights = getattr(outputs, "encoder_attentions", None) or getattr(outputs, "attentions", None)
        if not weights:
            raise ModelError(f"Model '{self.name}' returned no attention weights (its attention implementation "
                             f"cannot output them).")
        return torch.stack([a[0] for a in weights]).double().cpu().numpy()

