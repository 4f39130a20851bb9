"""pAML for a G on another backbone than the explained classifier (paper 004 s. 3.3's decoder setting: a RoBERTa G
for Llama-2 / Mistral; here e.g. the default MiniLM encoder's G for the zoo's causal model).

G (``explainers/mask_learning/cross_backbone.py``) is trained on the recipe's training inputs, one input per AdamW
step (the two tokenizations differ, so inputs are not batched), the classifier frozen; after every epoch its maps of
the held-out inputs are scored on the recipe's metric and the best epoch is kept (s. 3.1's selection, checked per
epoch instead of every 0.32 epoch). Inputs either model truncates, or that leave G no position for y_v, are left
out and counted. The checkpoint sits beside the own-backbone one (``cross_folder``) with the generator named in
its manifest.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, replace

import numpy as np

from explainers.mask_learning.aml_lambda_search import search_cross_lambdas
from explainers.mask_learning.aml_store import save_checkpoint
from explainers.mask_learning.aml_training import AMLRecipe, Progress, _hash, split_inputs
from explainers.mask_learning.cross_backbone import CROSS_REFERENCE, CrossBackboneAML, cross_folder
from explainers.mask_learning.selection import metric_named, metric_of_inputs
from models import InputError, TextClassifier, UserFacingError, cached_classifier
from models.runtime import library_versions


def usable(classifier: TextClassifier, source: TextClassifier, inputs: list) -> list:
    """Encodings of the inputs both models read whole, with one position left for G's prediction encoding."""
    out = []
    for text, pair in inputs:
        try:
            encoding = classifier.encode(text, pair)
            mine = source.encode(text, pair)
        except InputError:
            continue
        if (encoding.n_words and not encoding.truncated_tokens and not mine.truncated_tokens
                and mine.n_tokens < source.max_length and tuple(mine.words) == tuple(encoding.words)):
            out.append(encoding)
    return out


def prepare_cross_aml(classifier: TextClassifier, generator: str, inputs: list[tuple[str, str | None]],
                      recipe: AMLRecipe | None = None, data_id: str = "", force: bool = False,
                      log: Callable[[str], None] = print, progress: Progress | None = None,
                      should_stop: Callable[[], bool] | None = None, search_trials: int = 0):
    """Build (or find) the G on ``generator``'s backbone that explains ``classifier``; returns its folder.
    ``progress(step, total, info)`` as ``prepare_aml``'s; a Stop raises ModelError and saves nothing."""
    recipe = recipe or AMLRecipe()
    metric = metric_named(recipe.tune)
    folder = cross_folder(classifier.fingerprint, metric, generator)
    if (folder / "manifest.json").is_file() and not force:
        return folder
    started = time.time()
    source = cached_classifier(generator)
    train, validation = split_inputs(inputs, recipe)
    train_encodings, held_out = usable(classifier, source, train), usable(classifier, source, validation)
    if len(train_encodings) < 2 or not held_out:
        raise UserFacingError(f"Too few inputs that both '{classifier.name}' and '{generator}' read whole: "
                              f"{len(train_encodings)} to train on, {len(held_out)} to validate on.")
    search = None
    if search_trials:  # the paper's lambda search first (App. A.2), trained with the best lambdas after
        search = search_cross_lambdas(classifier, source, train_encodings, held_out, metric, search_trials,
                                      recipe.lr, recipe.dropout, recipe.seed, recipe.mask_token, log)
        best_lambdas = search["best"]
        recipe = replace(recipe, lambda_p=float(best_lambdas["lambda_p"]), lambda_a=float(best_lambdas["lambda_a"]),
                         lambda_inv=float(best_lambdas["lambda_inv"]))
    aml = CrossBackboneAML(classifier, source, dropout=recipe.dropout, seed=recipe.seed, mask_token=recipe.mask_token)
    log(f"Training the AML attribution model of '{classifier.name}' on '{generator}' ({len(train_encodings)} inputs, "
        f"{recipe.epochs:g} epochs, lambdas {recipe.lambdas}); selecting on {metric.label}.")
    history, best, losses = [], None, []
    epochs = max(1, int(np.ceil(recipe.epochs)))
    total = epochs * len(train_encodings)

    def on_step(loss: float) -> None:
        losses.append(loss)
        if progress is not None:
            progress(len(losses), total, {"loss": loss, **({"best": best[0]} if best else {})})

    for epoch in range(epochs):
        aml.train(train_encodings, recipe.lambdas, epochs=1, lr=recipe.lr, seed=recipe.seed + epoch,
                  on_step=on_step, should_stop=should_stop)
        maps = [aml.word_scores(e).cpu().double().numpy() for e in held_out]
        score = float(np.mean(metric_of_inputs(classifier, held_out, maps, metric)))
        history.append((epoch + 1, round(score, 6)))
        if best is None or (score > best[0] if metric.higher_is_better else score < best[0]):
            best = (score, epoch + 1, {k: v.detach().clone() for k, v in aml.model.state_dict().items()})
        if progress is not None:
            progress(len(losses), total, {"loss": losses[-1], "validation": score, "best": best[0]})
    assert best is not None  # at least one epoch ran
    aml.model.load_state_dict(best[2])
    manifest = {
        "name": "aml", "explained_model": {"name": classifier.name, "fingerprint": classifier.fingerprint,
                                           "source": classifier.source},
        "generator": {"spec": generator, "name": source.name, "fingerprint": source.fingerprint,
                      "reference": CROSS_REFERENCE},
        "tuned_for": {"id": metric.id, "name": metric.name, "label": metric.label,
                      "higher_is_better": metric.higher_is_better},
        "validation_score": best[0], "validation_history": history, "best_epoch": best[1],
        "lambdas": {"lambda_p": recipe.lambda_p, "lambda_a": recipe.lambda_a, "lambda_inv": recipe.lambda_inv},
        "lambda_search": search, "data": data_id, "train_inputs": len(train_encodings), "train_data_sha256": _hash(train),
        "left_out": len(train) + len(validation) - len(train_encodings) - len(held_out),
        "validation_inputs": len(held_out), "validation_data_sha256": _hash(validation), "recipe": asdict(recipe),
        "training": {"steps": len(losses), "last_losses": [round(v, 6) for v in losses[-5:]],
                     "mask_token_note": aml.mask_note},
        "prediction_slot": "after", "library_versions": library_versions(), "device": str(classifier.device),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(time.time() - started, 1),
    }
    folder = save_checkpoint(aml.model, manifest, folder)
    log(f"Saved the AML attribution model to {folder} ({metric.label} on validation: {best[0]:.4f}).")
    return folder
