"""pAML training (explainers/mask_learning/aml_training.py): the faster compute path trains the same G as the plain one, the
batched validation score is the mean of the per-input metric, and Optuna's lambda search runs and is recorded."""
from __future__ import annotations

import sys
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import ROOT
from tiny_models import keyword_sentences

from explainers.aggregate import aggregate_to_words
from explainers.mask_learning.aml_model import AttributionModel
from explainers.mask_learning.aml_store import read_manifest
from explainers.mask_learning.aml_training import (
    AMLRecipe,
    ValidationSet,
    prepare_aml,
    search_lambdas,
    split_inputs,
    train_attribution_model,
    validation_score,
)
from explainers.mask_learning.length_groups import length_groups
from explainers.mask_learning.selection import METRICS, metric_values
from models import UserFacingError

TINY = AMLRecipe(train_size=80, validation_size=20, epochs=2.0, lr=1e-3, eval_every=0.5)  # 8 steps of batch 20


def tiny_split(seed: int = 7):
    """Keyword sentences of 3 to 9 words and some three times as long, so that batches mix lengths."""
    texts, _ = keyword_sentences(120, seed=seed)
    texts = [" ".join([t] * 3) if i % 8 == 0 else t for i, t in enumerate(texts)]
    return split_inputs([(t, None) for t in texts], TINY)


def test_length_grouped_training_trains_the_same_model_as_the_plain_passes(keyword_classifier):
    train, validation = tiny_split()
    lengths = [keyword_classifier.encode(text).n_tokens for text, _ in train[:20]] * 2  # x' and x'' of a batch
    assert len(length_groups(lengths)) > 1  # the fast path does split the classifier's passes
    runs = {}
    for grouped in (False, True):  # False: the code path before the speed-up (two padded classifier passes)
        losses = []
        model, record = train_attribution_model(keyword_classifier, train, validation,
                                                replace(TINY, group_lengths=grouped),
                                                progress=lambda step, total, info: losses.append(info["loss"]))
        runs[grouped] = model.state_dict(), record, losses
    (plain, plain_record, plain_losses), (fast, fast_record, fast_losses) = runs[False], runs[True]
    assert plain_record["steps"] == fast_record["steps"] == 8
    np.testing.assert_allclose(fast_losses, plain_losses, rtol=1e-5)  # float32 sums of O(10) terms
    assert fast_record["validation_history"] == plain_record["validation_history"]  # rounded to 6 decimals
    assert fast_record["best_step"] == plain_record["best_step"]
    steps = fast_record["steps"]
    for name, weight in plain.items():
        if name.endswith("attention.self.key.bias"):
            # its gradient is 0 in exact arithmetic (softmax ignores a shift of every key), so Adam steps it along
            # float rounding noise: each step moves it by at most lr, whichever pass made the noise
            torch.testing.assert_close(fast[name], weight, rtol=0.0, atol=TINY.lr * steps)
        else:  # float32 weights of O(1) after 8 steps: rounding of the gradients, not different training
            torch.testing.assert_close(fast[name], weight, rtol=1e-5, atol=1e-6, msg=name)


def test_batched_validation_score_is_the_mean_of_the_per_input_metric(keyword_classifier):
    """Against the pre-change computation: G's map of each input alone, its metric through ``metric_values``."""
    _, validation = tiny_split(seed=11)
    validation = validation + [("the movie was excellent and the music was very long and quite old", None)]
    model = AttributionModel.from_classifier(keyword_classifier, dropout=0.0).eval()
    with torch.no_grad():  # a G whose maps differ between inputs (its N(0, 0.02) start is nearly flat)
        model.class_embeddings.normal_(0.0, 1.0, generator=torch.Generator().manual_seed(0))
    for name in ("aopc-comprehensiveness", "sufficiency", "log-odds"):
        metric = METRICS[name]
        expected = []
        for text, pair in validation:
            encoding = keyword_classifier.encode(text, pair)
            tensors = keyword_classifier.tensors(encoding)
            y = torch.as_tensor(keyword_classifier.proba_of(encoding)[None], dtype=torch.float32)
            with torch.no_grad():
                token_map = torch.sigmoid(model(tensors["input_ids"], tensors["attention_mask"], y))[0].double()
            words = aggregate_to_words(token_map.numpy(), encoding.token_word, encoding.n_words, "max")
            expected.append(metric_values(keyword_classifier, encoding, [words], metric)[0])
        held_out = ValidationSet(keyword_classifier, validation, TINY)
        assert len(held_out.encodings) == len(validation)
        score = validation_score(keyword_classifier, model, held_out, metric, batch_size=7)  # several G chunks
        # float32 maps of inputs padded differently: a near-tie in the ranking is the only way to differ more
        assert score == pytest.approx(float(np.mean(expected)), abs=1e-6)
    assert len({round(v, 6) for v in expected}) > 1  # the inputs do score differently


def test_lambda_search_runs_its_trials_and_the_manifest_records_them(keyword_classifier, isolated_cache):
    pytest.importorskip("optuna")  # requirements.txt installs it; prepare-aml works without it
    texts, _ = keyword_sentences(60, seed=5)
    recipe = AMLRecipe(train_size=40, validation_size=12, epochs=1.0, lr=1e-3)
    lines = []
    folder = prepare_aml(keyword_classifier, [(t, None) for t in texts], recipe, data_id="keyword-sentences",
                         search_trials=3, log=lines.append)
    manifest = read_manifest(folder)
    search = manifest["lambda_search"]
    assert search["trials"] == 3 and [t["trial"] for t in search["history"]] == [0, 1, 2]
    assert sum(line.startswith("trial ") for line in lines) == 3
    for trial in search["history"]:
        assert all(isinstance(trial[k], int) and 1 <= trial[k] <= 100 for k in ("lambda_p", "lambda_a", "lambda_inv"))
        assert np.isfinite(trial["value"])
    best = search["best"]
    assert set(best) == {"lambda_p", "lambda_a", "lambda_inv"}
    assert all(isinstance(v, int) and 1 <= v <= 100 for v in best.values())
    assert search["best_value"] == max(t["value"] for t in search["history"])  # AOPC comprehensiveness: higher
    assert manifest["lambdas"] == {k: float(v) for k, v in best.items()}  # the final G trained with the best
    assert manifest["recipe"]["lambda_p"] == best["lambda_p"]


def test_the_lambda_search_package_is_installed_by_make_run(monkeypatch, keyword_classifier):
    """Paper 004's lambda search is a user feature: Optuna is pinned in requirements.txt (what `make run` installs),
    not only in requirements-test.txt, at the version this environment runs; where it is missing anyway the
    message says how to install it."""
    def pins(name: str) -> dict:
        lines = (Path(ROOT) / name).read_text().splitlines()
        return dict(line.split("==") for line in lines if "==" in line and not line.startswith("#"))

    assert pins("requirements.txt").get("optuna") == version("optuna")
    assert "optuna" not in pins("requirements-test.txt")
    assert "requirements.txt" in (Path(ROOT) / "Makefile").read_text()  # the file `make run` installs
    monkeypatch.setitem(sys.modules, "optuna", None)  # an environment without it: import fails
    with pytest.raises(UserFacingError, match=r"pip install -r requirements.txt"):
        search_lambdas(keyword_classifier, [], [], AMLRecipe(), trials=1)


def test_a_recipe_without_any_lambda_is_refused_with_a_message(capsys):
    """lambda_p = lambda_a = lambda_inv = 0 leaves Eq. 4 no term: the recipe says so, and `prepare-aml --lambdas
    0,0,0` answers with that message before loading anything (the empty sum was the int 0, and training failed on
    its `.backward()` with a traceback)."""
    import cli
    from commands.common import EXIT_USER_ERROR

    with pytest.raises(UserFacingError, match="at least one non-zero lambda"):
        AMLRecipe(lambda_p=0.0, lambda_a=0.0, lambda_inv=0.0)
    assert AMLRecipe(lambda_p=0.0, lambda_a=10.0, lambda_inv=0.0).lambdas == (0.0, 10.0, 0.0)  # one term is enough
    assert cli.main(["prepare-aml", "--model", "no-such-model", "--lambdas", "0,0,0"]) == EXIT_USER_ERROR
    assert "at least one non-zero lambda" in capsys.readouterr().err


def test_with_lambdas_sets_the_three_lambdas_and_keeps_the_rest():
    changed = TINY.with_lambdas({"lambda_p": 3, "lambda_a": 40, "lambda_inv": 7})
    assert changed.lambdas == (3.0, 40.0, 7.0) and all(isinstance(v, float) for v in changed.lambdas)
    assert changed == replace(TINY, lambda_p=3.0, lambda_a=40.0, lambda_inv=7.0)
