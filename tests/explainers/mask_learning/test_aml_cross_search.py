"""Paper 004's lambda search (App. A.2) for a G on another backbone: `cli.py prepare-aml --generator G
--search-trials N` on a tiny Llama explained with the tiny keyword BERT's G."""
from __future__ import annotations

import numpy as np
import pytest
from roar_fixtures import save_keyword_model
from tiny_models import keyword_sentences, save_tiny_architecture

import cli
from explainers.mask_learning.aml_cross_training import usable
from explainers.mask_learning.aml_lambda_search import LAMBDA_NAMES, cross_trial_score
from explainers.mask_learning.aml_store import read_manifest
from explainers.mask_learning.aml_training import AMLRecipe, split_inputs
from explainers.mask_learning.cross_backbone import cross_folder
from explainers.mask_learning.selection import DEFAULT_METRIC, metric_named
from models import cached_classifier, load_classifier


def test_the_search_runs_its_trials_and_the_final_g_is_the_best_trial(keyword_classifier, tmp_path, isolated_cache,
                                                                      capsys):
    pytest.importorskip("optuna")  # requirements.txt installs it; prepare-aml works without it
    llama = save_tiny_architecture("llama", tmp_path / "llama", seed=1)
    generator = str(save_keyword_model(keyword_classifier, tmp_path / "keyword"))
    texts, labels = keyword_sentences(30, seed=2)
    data = tmp_path / "keyword.csv"
    data.write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in zip(texts, labels)))
    assert cli.main(["prepare-aml", "--model", llama, "--generator", generator, "--data", f"file:{data}",
                     "--train-size", "12", "--validation-size", "4", "--epochs", "1", "--search-trials", "2"]) == 0
    assert sum(line.startswith("trial ") for line in capsys.readouterr().out.splitlines()) == 2
    classifier = load_classifier(llama)
    metric = metric_named(DEFAULT_METRIC)
    manifest = read_manifest(cross_folder(classifier.fingerprint, metric, generator))
    search = manifest["lambda_search"]
    assert search["trials"] == 2 and [t["trial"] for t in search["history"]] == [0, 1]
    best = search["best"]
    assert all(isinstance(best[k], int) and 1 <= best[k] <= 100 for k in LAMBDA_NAMES)
    assert search["best_value"] == max(t["value"] for t in search["history"])  # AOPC comprehensiveness: higher
    assert manifest["lambdas"] == {k: float(v) for k, v in best.items()}  # the final G trained with the best
    # one epoch with the best lambdas on the same inputs is the best trial again, through prepare's own loop
    assert manifest["validation_score"] == pytest.approx(search["best_value"], abs=1e-9)
    # and a trial's value re-computed from scratch with its lambdas
    recipe = AMLRecipe(train_size=12, validation_size=4, epochs=1.0)
    train, validation = split_inputs([(t, None) for t in dict.fromkeys(texts)], recipe)
    source = cached_classifier(generator)
    first = search["history"][0]
    value = cross_trial_score(classifier, source, usable(classifier, source, train),
                              usable(classifier, source, validation), metric,
                              {k: float(first[k]) for k in LAMBDA_NAMES}, recipe.lr)
    assert value == pytest.approx(first["value"], abs=1e-9)
    assert np.isfinite(value)
