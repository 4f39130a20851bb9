"""AML with the attribution model G on another backbone than the explained classifier F (paper 004 s. 3.3, decoder
setting: a RoBERTa G explains Llama-2 / Mistral; seeds-002-004.md 004.2).

G is ``aml_model.AttributionModel`` on an encoder of its own (e.g. the default MiniLM encoder's backbone, with its
tokenizer); F is any classifier, a decoder included. G reads only the input v (the text, and a pair where there
is one) in its own tokenization, with F's prediction y_v appended as in the encoder setting. Its token scores reach
F's tokens through the words both tokenizations share (a word is a run of non-whitespace, ``corpora.records``):

- many-to-one (several G tokens make one word): the word's score is the **max** of its G tokens' scores (paper
  004 footnote 6; mean "performs on par");
- one-to-many (a word that F splits into several tokens): every F token of the word gets the word's score
  (**replicate**).

The paper aligns token to token with ``pytokenizations`` (not installed here); aligning through words gives the same
scores wherever a G token and an F token cover the same characters, which is the case within whitespace words. Only
v's tokens are masked (s. 3.3): F's special tokens (a BOS, the decoder's read-out token) keep their embeddings in x'
and x''. The loss is Eq. 4-7 of ``aml_model.py`` with a = the F token scores above in L_p and L_inv, and
L_a = -(1/k) sum_j log(1 - a_j) over G's k tokens of v (its own special tokens and the prediction slot left out).
The mask embedding m is F's [MASK] where F's tokenizer has one, else [UNK] (the paper's choice for Llama / Mistral).
"""
from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import load_file

from explainers.mask_learning.aml_model import (
    AttributionModel,
    conditioning,
    inverse_loss,
    mask_token_id,
    prediction_loss,
)
from explainers.mask_learning.aml_store import MANIFEST, WEIGHTS, AMLNotPrepared, model_argument, read_manifest
from explainers.mask_learning.selection import SelectionMetric
from models import InputError, ModelError, TextClassifier, cached_classifier
from models.encoding import Encoding
from models.prepare import models_dir

CROSS_REFERENCE = "paper 004 s. 3.3 (decoder setting: G on another backbone; replicate on split, max on merge)"


class CrossBackboneAML:
    """G on ``source``'s encoder backbone and tokenizer, explaining ``classifier`` (its classes, its tokens)."""

    def __init__(self, classifier: TextClassifier, source: TextClassifier, dropout: float = 0.1, seed: int = 0,
                 mask_token: str = "mask"):
        base = getattr(source.model, "base_model", None)
        if base is None or base is source.model or source.causal:
            raise ModelError(f"The attribution model needs an encoder backbone; '{source.name}' has none (choose an "
                             f"encoder such as the default model).")
        self.classifier, self.source = classifier, source
        generator_state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        try:  # z_v after v: G is an encoder, every token sees it
            self.model = AttributionModel(copy.deepcopy(base), classifier.num_labels, dropout, "after")
        finally:
            torch.random.set_rng_state(generator_state)
        self.model.to(classifier.device)
        self.mask_id, self.mask_note = mask_token_id(classifier, "unk" if classifier.causal else mask_token)

    # ----- the word alignment ------------------------------------------------------------------------------------
    def source_encoding(self, encoding: Encoding) -> Encoding:
        """G's tokenization of the same input; refused when the words differ (one side truncated the text)."""
        mine = self.source.encode(encoding.text, encoding.pair)
        if tuple(mine.words) != tuple(encoding.words) or mine.truncated_tokens or encoding.truncated_tokens:
            raise InputError("The attribution model and the classifier do not read the same words of this input (one "
                             "of them truncates it): shorten the text.")
        return mine

    def token_scores(self, encoding: Encoding, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(a over F's tokens, G's scores of its word tokens, word scores): differentiable in G's weights."""
        mine = self.source_encoding(encoding)
        tensors = self.source.tensors(mine)
        logits = self.model(tensors["input_ids"], tensors["attention_mask"], y, tensors.get("token_type_ids"))[0]
        scores = torch.sigmoid(logits)
        source_word = torch.as_tensor(mine.token_word_array, device=scores.device)
        word_scores = word_max(scores, source_word, encoding.n_words)
        return replicate(word_scores, encoding.token_word_array, scores.device), scores[source_word >= 0], word_scores

    # ----- the loss (Eq. 4-7) ------------------------------------------------------------------------------------
    def terms(self, encoding: Encoding, target: int, lambdas: tuple[float, float, float],
              prediction_target: str = "soft") -> dict[str, torch.Tensor]:
        """The weighted terms of Eq. 4 for one input; a term whose lambda is 0 is absent."""
        classifier = self.classifier
        probabilities = torch.as_tensor(classifier.proba_of(encoding)[None], dtype=torch.float32,
                                        device=classifier.device)
        label = torch.tensor([target], device=classifier.device)
        how = prediction_target if target == int(probabilities.argmax()) else "argmax"
        y = conditioning(probabilities, label, how)
        a, source_scores, _ = self.token_scores(encoding, y)
        lambda_p, lambda_a, lambda_inv = lambdas
        tensors = classifier.tensors(encoding)
        x = classifier.word_embeddings(tensors["input_ids"]).detach()[0]
        m = classifier.word_embeddings(torch.tensor(self.mask_id, device=x.device)).detach()
        is_word = torch.as_tensor(encoding.token_word_array >= 0, device=x.device)[:, None]
        weight = a[:, None].to(x.dtype)
        inputs = {}
        if lambda_p:
            inputs["kept"] = torch.where(is_word, weight * x + (1 - weight) * m, x)
        if lambda_inv:
            inputs["removed"] = torch.where(is_word, (1 - weight) * x + weight * m, x)
        outputs = {}
        if inputs:
            copies = len(inputs)
            types = tensors.get("token_type_ids")
            logits = classifier.forward_embeds(torch.stack(list(inputs.values())),
                                               tensors["attention_mask"].repeat(copies, 1),
                                               types.repeat(copies, 1) if types is not None else None)
            outputs = dict(zip(inputs, logits.split(1)))
        terms = {}
        if lambda_p:
            terms["prediction"] = lambda_p * prediction_loss(outputs["kept"], y)
        if lambda_a:
            terms["attribution"] = lambda_a * -torch.log1p(-source_scores.clamp(max=1 - 1e-7)).mean()
        if lambda_inv:
            terms["inverse"] = lambda_inv * inverse_loss(outputs["removed"], label)
        return terms

    def train(self, encodings: list[Encoding], lambdas: tuple[float, float, float] = (1.0, 10.0, 0.0),
              epochs: int = 1, lr: float = 4e-5, seed: int = 0,
              on_step: Callable[[float], None] | None = None,
              should_stop: Callable[[], bool] | None = None) -> list[float]:
        """pAML (s. 3.1): AdamW on the mean loss over the inputs, one input per step, F's predicted class as y_v;
        returns each step's loss. Defaults: the reference code's lambdas before its search and rate. ``on_step``
        hears each step's loss (progress); ``should_stop`` is asked before each step (a Stop raises ModelError,
        as the own-backbone training does, so nothing half-trained is saved)."""
        torch.manual_seed(seed)
        self.model.train()
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(trainable, lr=lr)
        losses = []
        for _ in range(epochs):
            for encoding in encodings:
                if should_stop is not None and should_stop():
                    self.model.eval()
                    raise ModelError("Building the AML attribution model was stopped; nothing was saved.")
                target = int(self.classifier.proba_of(encoding).argmax())
                loss = functools.reduce(torch.add, self.terms(encoding, target, lambdas).values())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
                if on_step is not None:
                    on_step(losses[-1])
        self.model.eval()
        return losses

    @torch.no_grad()
    def word_scores(self, encoding: Encoding, target: int | None = None,
                    prediction_target: str = "soft") -> torch.Tensor:
        """pAML's map of one input as word scores in [0, 1] (one forward of G, one of F for y_v)."""
        probabilities = torch.as_tensor(self.classifier.proba_of(encoding)[None], dtype=torch.float32,
                                        device=self.classifier.device)
        predicted = int(probabilities.argmax())
        target = predicted if target is None else target
        label = torch.tensor([target], device=self.classifier.device)
        y = conditioning(probabilities, label, prediction_target if target == predicted else "argmax")
        self.model.eval()
        return self.token_scores(encoding, y)[2]


def word_max(scores: torch.Tensor, token_word, n_words: int) -> torch.Tensor:
    """Each word's largest token score (many-to-one: max, paper 004 footnote 6); differentiable."""
    token_word = torch.as_tensor(token_word, device=scores.device)
    member = token_word[None, :] == torch.arange(n_words, device=scores.device)[:, None]  # (words, tokens)
    if not bool(member.any(dim=1).all()):
        raise InputError("A word of this input has no token in the attribution model's tokenization.")
    return scores[None, :].masked_fill(~member, float("-inf")).max(dim=1).values


def replicate(word_scores: torch.Tensor, token_word, device) -> torch.Tensor:
    """Each of F's tokens gets its word's score (one-to-many: replicate); special tokens 1 (never masked)."""
    token_word = torch.as_tensor(token_word, device=device)
    return torch.where(token_word >= 0, word_scores[token_word.clamp(min=0)], torch.ones_like(token_word,
                                                                                               dtype=word_scores.dtype))


# ----- checkpoints: one folder per explained model, metric and G backbone -----------------------------------------
def cross_folder(fingerprint: str, metric: SelectionMetric, generator: str) -> Path:
    """``aml-<fingerprint>-<metric>-g-<generator>``: beside the own-backbone checkpoint, never in its place."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", generator.strip()).strip("_.")[-60:] or "generator"
    return models_dir() / f"aml-{fingerprint}-{metric.name}-g-{slug}"


def resolve_cross_checkpoint(classifier: TextClassifier, metric: SelectionMetric, generator: str,
                             source_fingerprint: str = "") -> tuple[Path, dict, list[str]]:
    """(folder, manifest, warnings) of the G on ``generator``'s backbone trained for this classifier (or, named by
    ``source_fingerprint``, for its original: a randomized copy in a sanity check), or a clear refusal."""
    wanted = source_fingerprint or classifier.fingerprint
    folder = cross_folder(wanted, metric, generator)
    if not (folder / MANIFEST).is_file():  # the pages offer to build it (evaluation/suite/aml_cross_build.py)
        raise AMLNotPrepared(
            f"No AML attribution model on '{generator}' tuned for {metric.name} exists for '{classifier.name}' "
            f"(fingerprint {wanted}). Build it once with `python cli.py prepare-aml --model "
            f"{model_argument(classifier)} --generator {generator} --tune {metric.name}`.")
    manifest = read_manifest(folder)
    trained_for = manifest.get("explained_model", {}).get("fingerprint")
    if trained_for != wanted:
        raise ModelError(f"The AML checkpoint in {folder} was trained for another model; rebuild it with "
                         f"`python cli.py prepare-aml --generator {generator} --force`.")
    warnings = []
    if trained_for != classifier.fingerprint:
        warnings.append(f"Explained with the AML attribution model on '{generator}' trained for the model with "
                        f"fingerprint {trained_for}, not for this one ({classifier.fingerprint}).")
    return folder, manifest, warnings


_loaded: dict[str, tuple[float, CrossBackboneAML]] = {}


def load_cross(classifier: TextClassifier, folder: Path, manifest: dict) -> CrossBackboneAML:
    """The trained G of a checkpoint around its generator model (loaded by the spec it was trained with, checked
    by fingerprint), kept in memory per folder and classifier."""
    folder = Path(folder)
    stamp = (folder / WEIGHTS).stat().st_mtime
    key = f"{folder}|{classifier.fingerprint}"
    hit = _loaded.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    generator = manifest["generator"]
    source = cached_classifier(generator["spec"])
    if source.fingerprint != generator["fingerprint"]:
        raise ModelError(f"The generator model '{generator['spec']}' changed since the AML checkpoint in {folder} was "
                         f"trained (fingerprint {source.fingerprint}, trained on {generator['fingerprint']}): rebuild "
                         f"it with `python cli.py prepare-aml --generator {generator['spec']} --force`.")
    aml = CrossBackboneAML(classifier, source, dropout=float(manifest.get("recipe", {}).get("dropout", 0.1)))
    aml.model.load_state_dict(load_file(str(folder / WEIGHTS), device=str(classifier.device)))
    aml.model.eval().requires_grad_(False)
    _loaded[key] = (stamp, aml)
    return aml
