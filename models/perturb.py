"""The one perturbation engine: every method and metric that removes words does it here.

Leave-one-out, occlusion, LIME, SHAP, Input Marginalization, every deletion-style metric and ROAR
call ``perturb`` with a boolean keep-mask over words, so "remove" means the same thing everywhere and
a metric can tell which removal operator it shares with which method (the bias paper 000 warns about).

Special tokens are never removed. A decoder's perturbed copies that keep the input's token layout are read at the
input's pooled token (``TokenBatch.readout``), never at a position a written pad token would move it to.

A tokenizer without the operator's token (GPT-2, Llama, Qwen2, T5 have no [MASK]; Qwen2 no [UNK]) falls back to
``delete`` (``resolve_operator``; the explanation records both and says why): every tokenizer can delete, it writes
no token that could be the pad token a decoder's head locates its read-out by (a pitfall of paper 003's code on
GPT-2), and a
model never pre-trained with a mask token sees a shorter but natural text instead of an unseen placeholder
(paper 003 sections 2.2.3.2 and 4.2.1). Operators:

| id     | what a removed word becomes                                     | length    |
|--------|-----------------------------------------------------------------|-----------|
| delete | nothing: the remaining words are re-tokenized                   | shorter   |
| mask   | one [MASK] per sub-word token                                   | kept      |
| pad    | one [PAD] per sub-word token                                    | kept      |
| unk    | one [UNK] per sub-word token                                    | kept      |
| zero   | its tokens keep their ids but get a zero word-embedding vector  | kept      |
| mlm    | the masked LM's top-1 word for a [MASK] at its place (filler)   | re-tokenized |
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

import numpy as np

from models.classifier import TextClassifier, TokenBatch
from models.encoding import Encoding
from models.errors import ModelError
from models.granularity import is_units
from models.windows import DocumentEncoding, is_document, perturbed_document_logits


class Operator(str, Enum):
    DELETE = "delete"
    MASK = "mask"
    PAD = "pad"
    UNK = "unk"
    ZERO = "zero"
    MLM = "mlm"


@dataclass(frozen=True)
class OperatorInfo:
    label: str
    description: str


OPERATORS = {
    Operator.DELETE: OperatorInfo("delete", "the word is removed and the rest re-tokenized (shorter input)"),
    Operator.MASK: OperatorInfo("[MASK]", "each sub-word token of the word becomes [MASK]"),
    Operator.PAD: OperatorInfo("[PAD]", "each sub-word token of the word becomes [PAD]"),
    Operator.UNK: OperatorInfo("[UNK]", "each sub-word token of the word becomes [UNK]"),
    Operator.ZERO: OperatorInfo("zero embedding", "the word's token embeddings are set to zero vectors"),
    Operator.MLM: OperatorInfo("MLM fill", "the word is replaced by a masked LM's most likely word"),
}


class WordFiller(Protocol):
    """What the MLM-fill operator needs from a masked-LM filler (models/ provides one)."""

    name: str

    def fill(self, encoding: Encoding, keep: np.ndarray) -> list[list[str]]:
        """For each row of ``keep`` (n, n_words), the word list with every removed word replaced."""


FALLBACK = Operator.DELETE  # what an operator whose token the tokenizer lacks becomes (see the module docstring)


def _token_id(classifier: TextClassifier, operator: Operator) -> int | None:
    tokenizer = classifier.tokenizer
    return {Operator.MASK: tokenizer.mask_token_id, Operator.PAD: tokenizer.pad_token_id,
            Operator.UNK: tokenizer.unk_token_id}.get(operator)


def resolve_operator(classifier: TextClassifier, operator: Operator | str) -> tuple[Operator, str | None]:
    """The operator that really runs, and a note for the provenance and the screen when it is not the one asked."""
    operator = Operator(operator)
    if operator not in (Operator.MASK, Operator.PAD, Operator.UNK) or _token_id(classifier, operator) is not None:
        return operator, None
    return FALLBACK, (f"The tokenizer of '{classifier.name}' has no {OPERATORS[operator].label} token, so removed "
                      f"words were deleted instead (operator '{FALLBACK.value}': every tokenizer supports it, and it "
                      f"writes no placeholder the model never saw in training).")


def _special_id(classifier: TextClassifier, operator: Operator) -> int:
    token_id = _token_id(classifier, operator)
    if token_id is None:
        raise ModelError(f"The tokenizer of '{classifier.name}' has no {OPERATORS[operator].label} token; "
                         f"choose another removal operator (delete or zero embedding always work).")
    return int(token_id)


def _texts_from_words(encoding: Encoding, rows: list[list[str]] | np.ndarray, keep: np.ndarray | None):
    """Per row, the segment texts made of the kept (or filled) words, joined by single spaces."""
    segments = np.asarray(encoding.word_segment)
    texts, pairs = [], []
    for r in range(len(rows)):
        words = rows[r]
        chosen = np.ones(len(words), dtype=bool) if keep is None else keep[r]
        texts.append(" ".join(w for w, k, s in zip(words, chosen, segments) if k and s == 0))
        pairs.append(" ".join(w for w, k, s in zip(words, chosen, segments) if k and s == 1))
    return texts, (pairs if encoding.pair is not None else None)


def perturb(classifier: TextClassifier, encoding: Encoding, keep: np.ndarray, operator: Operator | str,
            filler: WordFiller | None = None) -> TokenBatch:
    """Token ids for every row of ``keep`` (bool, shape (n, n_words); False = remove the word). An operator whose
    token the tokenizer lacks runs as ``resolve_operator`` says."""
    operator, _ = resolve_operator(classifier, operator)
    keep = np.atleast_2d(np.asarray(keep, dtype=bool))
    if is_units(encoding):  # sentences or spans as players: remove every word of a removed unit
        return perturb(classifier, encoding.base, encoding.word_keep(keep), operator, filler)
    if is_document(encoding):
        raise ValueError("a document read in windows has no single token batch: use perturbed_logits (models/windows)")
    if keep.shape[1] != encoding.n_words:
        raise ValueError(f"keep mask has {keep.shape[1]} columns for {encoding.n_words} words")
    token_word = encoding.token_word_array
    is_word_token = token_word >= 0
    # removed[r, t]: token t belongs to a word removed in row r
    removed = np.zeros((len(keep), encoding.n_tokens), dtype=bool)
    removed[:, is_word_token] = ~keep[:, token_word[is_word_token]]
    # same layout as the input: read where the input is read (None for encoders: they read the first token)
    readout = [classifier.pooled_index(encoding)] * len(keep) if classifier.causal else None

    if operator in (Operator.MASK, Operator.PAD, Operator.UNK):
        ids = np.tile(np.asarray(encoding.input_ids), (len(keep), 1))
        ids[removed] = _special_id(classifier, operator)
        types = [list(encoding.token_type_ids)] * len(keep) if encoding.token_type_ids is not None else None
        return TokenBatch(input_ids=ids.tolist(), token_type_ids=types, readout=readout)
    if operator is Operator.ZERO:
        types = [list(encoding.token_type_ids)] * len(keep) if encoding.token_type_ids is not None else None
        return TokenBatch(input_ids=[list(encoding.input_ids)] * len(keep), token_type_ids=types,
                          zero_masks=removed.tolist(), readout=readout)
    if operator is Operator.DELETE:
        rows = [list(encoding.words)] * len(keep)
        texts, pairs = _texts_from_words(encoding, rows, keep)
        return classifier.tokenize_texts(texts, pairs)
    if filler is None:
        raise ModelError("The MLM-fill operator needs a masked-LM filler; prepare one (cli.py prepare --model mlm) "
                         "or choose another removal operator.")
    filled = filler.fill(encoding, keep)
    texts, pairs = _texts_from_words(encoding, filled, None)
    return classifier.tokenize_texts(texts, pairs)


def perturbed_proba(classifier: TextClassifier, encoding: Encoding, keep: np.ndarray, operator: Operator | str,
                    filler: WordFiller | None = None) -> np.ndarray:
    """Class probabilities (n, num_labels) of every perturbed copy, in batched forward passes."""
    logits = perturbed_logits(classifier, encoding, keep, operator, filler)
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def perturbed_logits(classifier: TextClassifier, encoding: Encoding, keep: np.ndarray, operator: Operator | str,
                     filler: WordFiller | None = None) -> np.ndarray:
    """Logits of every perturbed copy; a document read in windows re-runs only the windows a row changes."""
    if is_units(encoding):  # sentences or spans as players: remove every word of a removed unit
        return perturbed_logits(classifier, encoding.base, encoding.word_keep(keep), operator, filler)
    if isinstance(encoding, DocumentEncoding):  # units over a document were read just above
        return perturbed_document_logits(classifier, encoding, keep, operator, filler, perturb)
    return classifier.predict_logits(perturb(classifier, encoding, keep, operator, filler))
