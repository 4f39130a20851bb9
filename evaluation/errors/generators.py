"""Counterfactual generators (LIT's Datapoint Generator): propose edited inputs, re-predict every one, and
list those that flip the prediction as diffs.

- **Word replacer** (LIT's ``WordReplacer``): the user's rules, one per line, ``great -> terrible | bad``; each
  occurrence of a rule's word (whole word, case-insensitive) replaced by each of its replacements, one at a time.
- **Masked-LM substitution**: the ``words`` most important words (by a word-level explanation, leave-one-out unless
  the caller passes scores) each replaced by the masked LM's top ``per_word`` candidates in the original sentence
  (``models/mlm/filler.py``, never the word itself).
- **HotFlip** (Ebrahimi et al. 2018, ACL, section 3; LIT's ``HotFlip``): one backward pass gives the gradient g_i of
  the loss -log p(target) at each input embedding; replacing token w_i by w' changes the loss by about
  (e_w' - e_w_i) . g_i (first order), so each single-token word's best replacement is the argmax of that score over
  the vocabulary's whole-word tokens (never the token itself); the ``words`` positions with the largest gain are
  flipped, one at a time. Words of several tokens are skipped (the first-order score covers one token).

Every candidate goes through the one perturbation engine (a fixed fill of the ``mlm`` operator, like the minimal-flip
search's replacements) in one batch; a ``Flip`` per candidate (``found``: the prediction changed).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import torch

from evaluation.errors.counterfactual import Flip, probabilities_after
from explainers import create
from models import Encoding, Operator, TextClassifier, UserFacingError
from models.mlm import MaskedLMFiller

if TYPE_CHECKING:  # pandas is imported where a frame is built: the module loads without it
    import pandas as pd

WORD_REPLACER, MASKED_LM, HOTFLIP = "word-replacer", "masked-lm", "hotflip"
GENERATORS = {WORD_REPLACER: "word replacer (your rules)", MASKED_LM: "masked-LM substitution of the top words",
              HOTFLIP: "HotFlip (first-order gradient substitution)"}
WORDS, PER_WORD = 3, 3
RULES_HELP = "One rule a line: a word, '->', its replacements separated by '|' (e.g. great -> terrible | bad)."

Change = dict[int, str]


def parse_rules(text: str) -> dict[str, list[str]]:
    """``"great -> terrible | bad"`` lines -> {"great": ["terrible", "bad"]} (keys lower-cased)."""
    rules: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line.count("->") != 1:
            raise UserFacingError(f"Rule on line {number} needs one '->' between a word and its replacements. "
                                  + RULES_HELP)
        source, targets = (part.strip() for part in line.split("->"))
        replacements = [t.strip() for t in targets.split("|") if t.strip()]
        if not source or " " in source or not replacements:
            raise UserFacingError(f"Rule on line {number} needs one word on the left and at least one replacement "
                                  f"on the right. " + RULES_HELP)
        rules.setdefault(source.lower(), []).extend(r for r in replacements if r not in rules.get(source.lower(), []))
    if not rules:
        raise UserFacingError("No rule given. " + RULES_HELP)
    return rules


def replacer_changes(encoding: Encoding, rules: dict[str, list[str]]) -> list[Change]:
    return [{i: replacement} for i, word in enumerate(encoding.words) for replacement in rules.get(word.lower(), [])
            if replacement != word]


def mlm_changes(filler: MaskedLMFiller, encoding: Encoding, word_scores: np.ndarray, words: int = WORDS,
                per_word: int = PER_WORD) -> list[Change]:
    """The ``words`` highest-scoring words, each replaced by up to ``per_word`` masked-LM candidates."""
    top = [int(i) for i in np.argsort(-np.asarray(word_scores), kind="stable")[:words]]
    found = filler.with_options(exclude_original=True).top_k([encoding] * len(top), top, k=per_word)
    return [{i: candidate.word} for i, row in zip(top, found) for candidate in row]


@lru_cache(maxsize=8)
def _whole_word_tokens(tokenizer) -> tuple[np.ndarray, tuple[str, ...]]:
    """Ids of the tokens that are a word by themselves, and that word: no special, unused or continuation token
    (WordPiece's ##), and where the vocabulary marks word starts (BPE's Ġ, SentencePiece's ▁) only those."""
    vocabulary = tokenizer.get_vocab()
    special = set(tokenizer.all_special_ids)
    marked = sum(token.startswith(("Ġ", "▁")) for token in vocabulary) > len(vocabulary) // 10
    ids, words = [], []
    for token, index in sorted(vocabulary.items(), key=lambda item: item[1]):
        if index in special or token.startswith("##") or re.fullmatch(r"\[unused\d+\]|<.*>|\[.*\]", token):
            continue
        if marked and not token.startswith(("Ġ", "▁")):
            continue
        word = tokenizer.convert_tokens_to_string([token]).strip()
        if word and not any(c.isspace() for c in word):
            ids.append(index)
            words.append(word)
    return np.array(ids), tuple(words)


def _gradient(classifier: TextClassifier, encoding: Encoding, target: int) -> torch.Tensor:
    tensors = classifier.tensors(encoding)
    embeds = classifier.word_embeddings(tensors["input_ids"]).detach().requires_grad_(True)
    logits = classifier.forward_embeds(embeds, tensors["attention_mask"], tensors.get("token_type_ids"))
    loss = -torch.log_softmax(logits.float(), dim=-1)[0, target]
    (gradient,) = torch.autograd.grad(loss, embeds)
    return gradient[0].float()


def loss_gradient(classifier: TextClassifier, encoding: Encoding, target: int) -> tuple[np.ndarray, np.ndarray]:
    """(gradient of -log p(target) at each token's word embedding (tokens, dim), the embedding matrix (vocab, dim))."""
    matrix = classifier.model.get_input_embeddings().weight.detach().float().cpu().numpy()
    return _gradient(classifier, encoding, target).cpu().numpy(), matrix


def hotflip_choices(classifier: TextClassifier, encoding: Encoding, target: int) -> list[tuple[int, str, float]]:
    """Per single-token word: (word index, best replacement word, its first-order loss increase), best first."""
    gradient = _gradient(classifier, encoding, target)
    ids, words = _whole_word_tokens(classifier.tokenizer)
    with torch.no_grad():  # e_w' . g_i for every token w' and position i at once: (vocab, tokens)
        projected = (classifier.model.get_input_embeddings().weight.detach().float() @ gradient.T).cpu().numpy()
    choices = []
    for word in range(encoding.n_words):
        tokens = [t for t, w in enumerate(encoding.token_word) if w == word]
        if len(tokens) != 1:
            continue
        position = tokens[0]
        original = encoding.input_ids[position]
        scores = projected[ids, position] - projected[original, position]  # (e_w' - e_w) . g_i
        scores[ids == original] = -np.inf
        best = int(np.argmax(scores))
        choices.append((word, words[best], float(scores[best])))
    return sorted(choices, key=lambda choice: -choice[2])


def hotflip_changes(classifier: TextClassifier, encoding: Encoding, target: int, words: int = WORDS) -> list[Change]:
    return [{i: word} for i, word, _ in hotflip_choices(classifier, encoding, target)[:words]]


def repredict(classifier: TextClassifier, encoding: Encoding, changes: list[Change], generator: str) -> list[Flip]:
    """Every candidate classified in one batch through the perturbation engine; flips first, then by how far the
    original class's probability fell."""
    original = classifier.proba_of(encoding)
    target = int(np.argmax(original))
    changes = list({tuple(sorted(c.items())): c for c in changes}.values())  # one of each
    if not changes:
        return []
    probabilities = probabilities_after(classifier, encoding, changes, Operator.MLM)
    flips = [Flip(tuple(encoding.words), tuple(encoding.word_segment), tuple(change.items()), target,
                  float(original[target]), int(np.argmax(row)), float(row[target]), int(np.argmax(row)) != target,
                  len(changes), generator) for change, row in zip(changes, probabilities)]
    return sorted(flips, key=lambda f: (not f.found, f.new_probability))


def generate(classifier: TextClassifier, encoding: Encoding, generator: str, *, rules: str | None = None,
             filler: MaskedLMFiller | None = None, word_scores: np.ndarray | None = None, words: int = WORDS,
             per_word: int = PER_WORD) -> list[Flip]:
    """The candidates of one generator for one input, re-predicted (see the module docstring)."""
    if generator not in GENERATORS:
        raise UserFacingError(f"Unknown generator '{generator}'; use one of {', '.join(GENERATORS)}.")
    if encoding.n_words == 0:
        raise UserFacingError("The text has no words to change; type a sentence first.")
    target = int(np.argmax(classifier.proba_of(encoding)))
    if generator == WORD_REPLACER:
        changes = replacer_changes(encoding, parse_rules(rules or ""))
    elif generator == MASKED_LM:
        if filler is None:
            raise UserFacingError("Masked-LM substitution needs a masked LM: prepare one (cli.py prepare-mlm) or "
                                  "pick one on the Counterfactuals page.")
        if word_scores is None:
            word_scores = create("leave_one_out").explain(classifier, encoding, target).word_scores
        changes = mlm_changes(filler, encoding, word_scores, words, per_word)
    else:
        changes = hotflip_changes(classifier, encoding, target, words)
    return repredict(classifier, encoding, changes, generator)


def flips_frame(flips: list[Flip], labels: list[str], source: dict | None = None) -> pd.DataFrame:
    """One row per candidate: the counterfactual text (and pair), the prediction before and after, flipped or not;
    its ``text`` / ``pair`` columns make the CSV a dataset file every page can read."""
    import pandas as pd

    rows = []
    for flip in flips:
        text, pair = flip.texts()
        rows.append({**(source or {}), "generator": flip.mode, "text": text, "pair": pair,
                     "changes": "; ".join(f"{flip.words[i]} -> {r}" for i, r in flip.changes),
                     "original_prediction": labels[flip.original_class], "prediction": labels[flip.new_class],
                     "p_original_before": round(flip.original_probability, 4),
                     "p_original_after": round(flip.new_probability, 4), "flipped": flip.found})
    frame = pd.DataFrame(rows)
    return frame.drop(columns="pair") if len(frame) and frame["pair"].isna().all() else frame


def dataset_counterfactuals(classifier: TextClassifier, examples: list, indices: list[int], generator: str,
                            progress=None, **options) -> pd.DataFrame:
    """The candidates of ``generator`` for each example ``indices`` names (a slice of Error analysis), with the
    example's ``index`` and ``id``: the rows with a flip make a slice, the CSV a dataset of counterfactuals."""
    import pandas as pd

    frames = []
    for done, index in enumerate(indices, start=1):
        example = examples[index]
        encoding = classifier.encode(example.text, example.pair)
        if encoding.n_words:
            flips = generate(classifier, encoding, generator, **options)
            frames.append(flips_frame(flips, list(classifier.labels), {"index": int(index), "id": example.id}))
        if progress:
            progress(done, len(indices))
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["index", "id", "generator", "text", "changes", "original_prediction", "prediction", "flipped"])
