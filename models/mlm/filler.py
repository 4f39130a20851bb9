"""The masked-LM filler: replacement words and their likelihoods for masked words (paper 000).

One ``MaskedLMFiller`` serves three uses:

- ``top_k(inputs, positions, k)``: for each input and word position, the masked LM's most likely
  replacement words with their probabilities, batched. The word is replaced by **one** mask token
  and the masked LM sees the whole input, both segments of a pair (paper 000 section 2 and [code]).
  Probabilities are the softmax over the whole vocabulary; sub-word continuations (``##ing``),
  special and unused tokens are never proposed as words (their mass is simply not listed).
- ``fill(encoding, keep)``: the ``WordFiller`` the perturbation engine's ``mlm`` operator calls:
  every removed word becomes the masked LM's top-1 word (DeletionBERT, ROAR-BERT, LIME-BERT,
  LOO-with-fill). ``mode="joint"`` masks all removed words of a row at once (one forward per row);
  ``mode="sequential"`` fills them left to right, each conditioned on the words filled before it
  (paper 000's code default; footnote 3 finds both give similar LIME-BERT results).
- ``describe()``: name, source, fingerprint and, for the offline stand-in, its held-out accuracy.

Also here: ``FixedFill``. The candidate inspector (paper 000 figure 1) is ``models/mlm/inspector.py``; loading a
masked LM by name is ``models/mlm/loading.py``.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch  # noqa: E402  (runtime sets the environment first)

from corpora.records import split_words
from models import memory, runtime
from models.encoding import Encoding
from models.errors import ModelError
from models.fingerprint import weights_fingerprint

BUILT_IN_MLM = "mlm"
FILL_MODES = ("joint", "sequential")
FILL_CACHE_ROWS = 50_000  # remembered fills (a row is one input's words: a few MB at most)


@dataclass(frozen=True)
class Candidate:
    """One replacement word proposed for a masked position."""

    word: str
    probability: float
    token_id: int

    def matches(self, word: str) -> bool:
        """Same word as ``word`` ignoring case (paper 000 App. B counts uncased exact matches)."""
        return self.word.lower() == word.lower()


Rows = list[tuple[list[str], list[int]]]  # per input: its words and the segment (0/1) of each word


def _as_row(item) -> tuple[list[str], list[int]]:
    """An Encoding, a text, or a (text, pair) tuple -> (words, segments)."""
    if isinstance(item, Encoding):
        return list(item.words), list(item.word_segment)
    if isinstance(item, str):
        words = split_words(item)
        return words, [0] * len(words)
    if isinstance(item, tuple) and len(item) == 2:
        first, second = split_words(item[0] or ""), split_words(item[1] or "")
        return first + second, [0] * len(first) + [1] * len(second)
    raise TypeError(f"an input must be an Encoding, a text or a (text, pair) tuple, not {type(item).__name__}")


class MaskedLMFiller:
    """A masked language model wrapped for word-level counterfactuals (see the module docstring)."""

    def __init__(self, model, tokenizer, *, name: str, source: str = "", manifest: dict | None = None,
                 fingerprint: str | None = None, device=None, mode: str = "joint", exclude_original: bool = False,
                 max_batch_tokens: int | None = None):
        if tokenizer.mask_token_id is None:
            raise ModelError(f"'{name}' has no mask token, so it cannot fill masked words.")
        if not getattr(tokenizer, "is_fast", False):
            raise ModelError(f"'{name}' has only a slow (Python) tokenizer; the masked-LM filler needs a fast one.")
        if mode not in FILL_MODES:
            raise ModelError(f"Unknown fill mode '{mode}'; use one of {', '.join(FILL_MODES)}.")
        self.device = torch.device(device) if device is not None else runtime.choose_device()
        self.model = model.to(self.device).eval()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)
        self.tokenizer = tokenizer
        self.name = name
        self.source = source
        self.manifest = manifest or {}
        self.mode = mode
        self.exclude_original = exclude_original
        # a speed cap on padded tokens per batch; the memory model may allow fewer (``_chunks``)
        self.max_batch_tokens = max_batch_tokens or (65_536 if self.device.type == "cuda" else 8_192)
        self.memory_shape = memory.shape_of(self.model)
        self.max_length = int(min(getattr(model.config, "max_position_embeddings", 512),
                                  tokenizer.model_max_length if 0 < tokenizer.model_max_length < 100_000 else 512))
        self._fingerprint = fingerprint
        self._words, self._valid = self._vocabulary()
        self.forward_passes = 0  # masked-LM sequences run (the classifier's meter counts only its own passes)
        self._fills: OrderedDict = OrderedDict()  # (mode, input, removed set) -> filled words; twins share it
        self._fills_lock = threading.Lock()

    # ----- identity --------------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = weights_fingerprint(self.model)
        return self._fingerprint

    def identity(self) -> dict:
        """What makes this filler's output differ: part of every cache key that uses it."""
        return {"mlm": self.name, "fingerprint": self.fingerprint, "mode": self.mode,
                "exclude_original": self.exclude_original}

    def with_options(self, mode: str | None = None, exclude_original: bool | None = None) -> MaskedLMFiller:
        """The same masked LM with another fill mode (the model and tokenizer are shared, not copied)."""
        twin = object.__new__(MaskedLMFiller)
        twin.__dict__.update(self.__dict__)
        if mode is not None:
            if mode not in FILL_MODES:
                raise ModelError(f"Unknown fill mode '{mode}'; use one of {', '.join(FILL_MODES)}.")
            twin.mode = mode
        if exclude_original is not None:
            twin.exclude_original = exclude_original
        return twin

    def describe(self) -> dict:
        evaluation = self.manifest.get("evaluation", {})
        return {"name": self.name, "source": self.source, "fingerprint": self.fingerprint,
                "model_type": getattr(self.model.config, "model_type", "?"),
                "parameters": sum(p.numel() for p in self.model.parameters()), "device": str(self.device),
                "stand_in": bool(self.manifest.get("stand_in")), "evaluation": evaluation,
                "mode": self.mode, "exclude_original": self.exclude_original,
                **({"out_of_memory": notes} if (notes := memory.notes_for(self.memory_shape, self.device)) else {})}

    # ----- vocabulary ------------------------------------------------------------------------------
    def _vocabulary(self) -> tuple[list[str], np.ndarray]:
        """The word each vocabulary entry stands for, and which entries may be proposed as a word."""
        tokenizer = self.tokenizer
        size = self._output_size()
        tokens = tokenizer.convert_ids_to_tokens(list(range(min(size, len(tokenizer)))))
        tokens += [""] * (size - len(tokens))
        special = set(tokenizer.all_special_ids)
        prefixed = sum(t.startswith(("\u0120", "\u2581")) for t in tokens if t) > 0.2 * len(tokens)
        words, valid = [], np.zeros(size, dtype=bool)
        for index, token in enumerate(tokens):
            if not token or index in special or token.startswith("##") or re.fullmatch(r"\[unused\d+\]|<.*>", token):
                words.append(token or "")
                continue
            word = tokenizer.convert_tokens_to_string([token]).strip() if prefixed else token
            words.append(word)
            valid[index] = bool(word) and not any(ch.isspace() for ch in word)
        return words, valid

    def _output_size(self) -> int:
        output = self.model.get_output_embeddings()
        if output is not None and getattr(output, "weight", None) is not None:
            return int(output.weight.shape[0])
        return int(self.model.config.vocab_size)

    # ----- the masked LM forward -------------------------------------------------------------------
    def _encode(self, rows: Rows, masked: list[set[int]]) -> list[tuple[list[int], list[int] | None]]:
        """Token ids (and segment ids) of each row with the masked words replaced by one mask token each."""
        mask = self.tokenizer.mask_token
        unk = self.tokenizer.unk_token or ""
        out = []
        for (words, segments), chosen in zip(rows, masked):
            parts: tuple[list[str], list[str]] = ([], [])
            for index, (word, segment) in enumerate(zip(words, segments)):
                # a literal mask token typed by a user would be taken for one of ours: make it unknown
                parts[segment].append(mask if index in chosen else word.replace(mask, unk))
            text = " ".join(parts[0])
            pair = " ".join(parts[1]) if 1 in segments else None
            encoded = self.tokenizer(text, pair, truncation=True, max_length=self.max_length)
            out.append((encoded["input_ids"], encoded.get("token_type_ids")))
        return out

    def _chunks(self, lengths: list[int]):
        """Row indices grouped by similar length, each padded batch under ``max_batch_tokens`` and within the memory
        budget of a forward pass (models/memory.py: EXWB_MEMORY_GB, and what an out-of-memory error taught)."""
        order = np.argsort(lengths, kind="stable")
        budget = memory.budget_bytes(self.device)  # read once: /proc/meminfo or the device's free memory
        chunk: list[int] = []
        for index in order:  # ascending lengths: the newest row is the longest of its chunk
            width = lengths[index]
            limit = min(self.max_batch_tokens, memory.budget_tokens(self.memory_shape, self.device, width,
                                                                    "forward", budget))
            if chunk and width * (len(chunk) + 1) > limit:
                yield chunk
                chunk = []
            chunk.append(int(index))
        if chunk:
            yield chunk

    def _head(self):
        """(encoder, LM head) so the vocabulary projection runs at the masked positions only, or None."""
        for name in ("cls", "lm_head"):
            head = getattr(self.model, name, None)
            if head is not None and getattr(self.model, "base_model", None) is not None:
                return self.model.base_model, head
        return None

    @torch.inference_mode()
    def _run(self, rows: Rows, masked: list[set[int]], reduce, head_batch: int = 256) -> list[list]:
        """For each row, ``reduce``'s result at each of its masked words (in word order).

        ``reduce(probabilities, owners)`` gets the vocabulary distributions (m, vocab) of up to ``head_batch``
        masks at once, float64, and ``owners`` = (row, word index) of each; it returns one result per mask.
        Only that many distributions exist at a time, so memory stays small however many rows there are.
        A masked word cut off by truncation gets None.
        """
        encoded = self._encode(rows, masked)
        order = [sorted(m) for m in masked]
        results: list[list] = [[None] * len(m) for m in masked]
        lengths = [len(ids) for ids, _ in encoded]
        split = self._head()
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        mask_id = self.tokenizer.mask_token_id
        uses_types = getattr(self.model.config, "type_vocab_size", 0) > 1

        def run_batch(chunk: list[int]) -> None:
            width = max(lengths[i] for i in chunk)
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            types = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, i in enumerate(chunk):
                sequence, segment_ids = encoded[i]
                ids[row, :len(sequence)] = torch.as_tensor(sequence)
                attention[row, :len(sequence)] = 1
                if segment_ids is not None:
                    types[row, :len(sequence)] = torch.as_tensor(segment_ids)
            kwargs = {"input_ids": ids.to(self.device), "attention_mask": attention.to(self.device)}
            if uses_types and any(encoded[i][1] is not None for i in chunk):
                kwargs["token_type_ids"] = types.to(self.device)
            where = (ids == mask_id).to(self.device)
            if split is not None:
                encoder, head = split
                hidden = encoder(**kwargs).last_hidden_state[where]
                project = head
            else:
                hidden = self.model(**kwargs).logits[where]
                project = None
            self.forward_passes += len(chunk)
            owners: list[tuple[int, int] | None] = []
            for row, i in enumerate(chunk):
                found = int(where[row].sum())  # fewer than asked when truncation cut some masks off
                owners += [(i, order[i][j]) if j < len(order[i]) else None for j in range(found)]
            for start in range(0, len(owners), head_batch):
                part = hidden[start:start + head_batch]
                logits = project(part) if project is not None else part
                probabilities = torch.softmax(logits.double(), dim=-1)
                mine = owners[start:start + head_batch]
                kept = [(j, owner) for j, owner in enumerate(mine) if owner is not None]
                values = reduce(probabilities[[j for j, _ in kept]], [owner for _, owner in kept]) if kept else []
                for (_, (i, word)), value in zip(kept, values):
                    results[i][order[i].index(word)] = value

        for chunk in self._chunks(lengths):
            chunk = [i for i in chunk if masked[i]]
            # on out-of-memory the chunk's rows run in halves; rows already reduced are not run again
            memory.in_batches(chunk, len(chunk), max((lengths[i] for i in chunk), default=1), self.memory_shape,
                              self.device, "forward", run_batch)
        return results

    def mask_distributions(self, rows: Rows, masked: list[set[int]]) -> list[list[np.ndarray | None]]:
        """The whole vocabulary distribution at every masked word (for small inputs: tests, diagnostics)."""
        return self._run(rows, masked, lambda probabilities, owners: list(probabilities.cpu().numpy()))

    # ----- the public API --------------------------------------------------------------------------
    def word_ids(self, word: str) -> list[int]:
        """Vocabulary entries that spell ``word`` (uncased); empty if the word needs several pieces."""
        if not hasattr(self, "_by_word"):
            by_word: dict[str, list[int]] = {}
            for index in np.flatnonzero(self._valid):
                by_word.setdefault(self._words[index].lower(), []).append(int(index))
            self._by_word = by_word
        return self._by_word.get(word.lower(), [])

    def word_probability(self, distribution, word: str) -> float:
        """The masked LM's probability of ``word`` itself at a masked position (0 if it is not one entry)."""
        return float(sum(float(distribution[i]) for i in self.word_ids(word) if i < len(distribution)))

    def _ranked(self, probabilities: torch.Tensor, k: int, min_probability: float,
                originals: list[str | None]) -> list[list[Candidate]]:
        """Top-k proposable words of each distribution (rows of ``probabilities``), most likely first.

        ``originals[r]`` (or None) is a word row r must not propose (``exclude_original``).
        """
        scores = probabilities.clone()
        valid = torch.as_tensor(self._valid[:scores.shape[1]], device=scores.device)
        scores[:, ~valid] = -1.0
        for row, original in enumerate(originals):
            if original is not None:
                ids = [i for i in self.word_ids(original) if i < scores.shape[1]]
                if ids:
                    scores[row, ids] = -1.0
        duplicates = getattr(self, "_duplicates", None)
        if duplicates is None:
            valid_words = [self._words[i].lower() for i in np.flatnonzero(self._valid)]
            duplicates = self._duplicates = len(set(valid_words)) < len(valid_words)
        take = min(scores.shape[1], k + (16 if duplicates else 0))
        values, indices = torch.topk(scores, take, dim=1)
        out = []
        for row_values, row_indices in zip(values.tolist(), indices.tolist()):
            candidates: dict[str, Candidate] = {}
            for value, index in zip(row_values, row_indices):
                if value <= 0 or value < min_probability:
                    break
                word = self._words[index]
                if word in candidates:  # two vocabulary entries spelling the same word (BPE): add their mass
                    old = candidates[word]
                    candidates[word] = Candidate(word, old.probability + value, old.token_id)
                elif len(candidates) < k:
                    candidates[word] = Candidate(word, value, int(index))
            out.append(list(candidates.values()))
        return out

    def top_k(self, inputs: Sequence, positions: Sequence[int], k: int = 10,
              min_probability: float = 0.0) -> list[list[Candidate]]:
        """For each (input, word position): up to ``k`` replacement words, most likely first.

        ``inputs`` are Encodings, texts or (text, pair) tuples; ``positions`` one word index per input.
        With ``min_probability`` > 0 only words at least that likely are kept (paper 000's IM variant with
        sigma = 1e-5 uses all of them: pass a large ``k``). All inputs go through the masked LM in batches.
        A word cut off by the masked LM's length limit gets no candidates.
        """
        if len(inputs) != len(positions):
            raise ValueError(f"{len(inputs)} inputs but {len(positions)} positions")
        if k < 1:
            raise ValueError("k must be at least 1")
        rows = [_as_row(item) for item in inputs]
        for (words, _), position in zip(rows, positions):
            if not 0 <= int(position) < len(words):
                raise ValueError(f"word position {position} is outside an input of {len(words)} words")

        def reduce(probabilities, owners):
            originals = [rows[i][0][w] if self.exclude_original else None for i, w in owners]
            return self._ranked(probabilities, k, min_probability, originals)

        results = self._run(rows, [{int(p)} for p in positions], reduce)
        return [r[0] if r[0] is not None else [] for r in results]

    def top1_words(self, rows: Rows, masked: list[set[int]]) -> list[list[str]]:
        """Each row with its masked words replaced by the top-1 word, all masks of a row predicted jointly.

        A word without a candidate (cut off by truncation) stays as it is.
        """
        def reduce(probabilities, owners):
            originals = [rows[i][0][w] if self.exclude_original else None for i, w in owners]
            return [c[0].word if c else None for c in self._ranked(probabilities, 1, 0.0, originals)]

        results = self._run(rows, masked, reduce)
        out = []
        for (words, _), chosen, predicted in zip(rows, masked, results):
            filled = list(words)
            for index, word in zip(sorted(chosen), predicted):
                if word is not None:
                    filled[index] = word
            out.append(filled)
        return out

    def fill(self, encoding: Encoding, keep: np.ndarray) -> list[list[str]]:
        """WordFiller for the perturbation engine: every removed word (keep False) becomes the top-1 word.

        The fill of a set of removed words of an input is always the same, so it is computed once per (input,
        removed set, fill mode) and remembered: ROAD's MoRF and LeRF, DeletionBERT and every method's and random
        ordering of the input share the masked-LM passes (``FILL_CACHE_ROWS`` rows, least recently used first out).
        """
        keep = np.atleast_2d(np.asarray(keep, dtype=bool))
        text = (self.mode, self.exclude_original, tuple(encoding.words), tuple(encoding.word_segment))
        keys = [(text, row.tobytes()) for row in keep]
        with self._fills_lock:
            missing = [i for i, key in enumerate(keys) if key not in self._fills]
        todo = list({keys[i]: i for i in missing}.values())  # one row per distinct removed set
        if todo:
            filled = self._fill_rows(encoding, keep[todo])
            with self._fills_lock:
                for index, words in zip(todo, filled):
                    self._fills[keys[index]] = tuple(words)
        with self._fills_lock:
            out = []
            for key in keys:
                self._fills.move_to_end(key)
                out.append(list(self._fills[key]))
            while len(self._fills) > FILL_CACHE_ROWS:
                self._fills.popitem(last=False)
        return out

    def _fill_rows(self, encoding: Encoding, keep: np.ndarray) -> list[list[str]]:
        """``fill`` without the memo: the masked LM's passes for these rows."""
        words, segments = list(encoding.words), list(encoding.word_segment)
        removed = [set(np.flatnonzero(~row).tolist()) for row in keep]
        if self.mode == "joint":
            return self.top1_words([(words, segments)] * len(keep), removed)
        # sequential: left to right, the later masks see the words already filled
        current = [list(words) for _ in keep]
        pending = [sorted(r) for r in removed]
        while any(pending):
            active = [r for r in range(len(keep)) if pending[r]]
            rows = [(current[r], segments) for r in active]
            masked = [set(pending[r]) for r in active]

            def reduce(probabilities, owners):  # only each row's leftmost pending mask is used this round
                originals = [words[w] if self.exclude_original else None for _, w in owners]
                return [c[0].word if c else None for c in self._ranked(probabilities, 1, 0.0, originals)]

            results = self._run(rows, masked, reduce)
            for position, r in enumerate(active):
                index = pending[r].pop(0)
                predicted = results[position][0]
                current[r][index] = predicted if predicted is not None else words[index]
        return current


class FixedFill:
    """A WordFiller returning given word lists: counterfactuals chosen elsewhere (e.g. IM's candidates) still go
    through the perturbation engine's ``mlm`` operator, so they are tokenized like every other fill."""

    name = "fixed"

    def __init__(self, rows: list[list[str]]):
        self.rows = rows

    def fill(self, encoding: Encoding, keep: np.ndarray) -> list[list[str]]:
        keep = np.atleast_2d(keep)
        if len(keep) != len(self.rows) or any(len(r) != encoding.n_words for r in self.rows):
            raise ValueError("FixedFill: the rows do not match the keep mask or the input's words")
        return [list(r) for r in self.rows]
