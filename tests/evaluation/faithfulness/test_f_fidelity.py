"""F-Fidelity (Zheng et al. 2025): the metric against a direct loop over its definition, the true keyword ordering
against the random band on a fine-tuned tiny model, and the fine-tune job's resume."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from roar_fixtures import save_keyword_model, write_keyword_csv
from tiny_models import KEYWORD
from tolerances import float32_tolerance

from evaluation.baselines import band, random_explanation
from evaluation.batch import evaluate_batch
from evaluation.faithfulness import f_fidelity
from evaluation.faithfulness.f_fidelity import FFidOptions, ffid_values, uniform_draws
from evaluation.faithfulness.f_fidelity_finetune import (
    CHECKPOINT,
    MANIFEST,
    WEIGHTS,
    FinetuneConfig,
    find_finetuned,
    folder_of,
    run_finetune,
    with_fingerprint,
)
from evaluation.runs.store import ResultStore
from models import UserFacingError, cached_classifier, perturbed_proba

SENTENCES = ["the movie was excellent and the plot had music", "excellent story with some old actors",
             "this film had long scenes and it is excellent", "rather short story , quite excellent music"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("ffid")
    folder = save_keyword_model(keyword_classifier, root / "model")
    train = write_keyword_csv(root / "train.csv", 200, seed=3)
    return SimpleNamespace(root=root, folder=str(folder), train=train)


def _explanation(encoding, scores, target=1):
    return random_explanation(encoding, target, "positive", np.asarray(scores, dtype=float), 0, 0)


def test_the_metric_equals_a_direct_loop_over_its_definition(keyword_classifier):
    classifier, target = keyword_classifier, 1
    encoding = classifier.encode(SENTENCES[0])
    options = FFidOptions(ffid_preset="quick", ffid_samples=6, ffid_alpha=0.5, ffid_beta=0.3)
    order = np.random.default_rng(5).permutation(encoding.n_words)
    draws = uniform_draws(7, encoding.key, len(options.levels), options.samples, encoding.n_words)
    got = ffid_values(classifier, encoding, [order], target, options, draws, "mask")[0]

    n = encoding.n_words
    p_full = perturbed_proba(classifier, encoding, np.ones((1, n), dtype=bool), "mask")[0, target]
    plus, minus = [], []
    for level_index, level in enumerate(options.levels):
        size = max(1, int(level * n + 1e-9))
        ratio = 0.3 * n / size if 0.5 * size > 0.3 * n else 0.5  # alpha, capped at beta n words on average
        for side, part, out in ((0, order[:size], plus), (1, order[n - size:], minus)):
            drops = []
            for i in range(options.samples):  # one forward pass per masked copy
                keep = np.ones(n, dtype=bool)
                for word in part:
                    if draws[level_index, side, i, word] < ratio:
                        keep[word] = False
                drops.append(p_full - perturbed_proba(classifier, encoding, keep[None], "mask")[0, target])
            out.append(np.mean(drops))
    tolerance = float32_tolerance(1.0)
    assert got["ffid_plus"] == pytest.approx(np.mean(plus), abs=tolerance)
    assert got["ffid_minus"] == pytest.approx(np.mean(minus), abs=tolerance)
    assert got["curve"]["ffid_plus"] == pytest.approx(plus, abs=tolerance)


def test_the_removal_ratio_is_capped_at_beta_n_words():
    assert f_fidelity.removal_probability(part=2, n_words=20, alpha=0.5, beta=0.1) == 0.5  # 1 word <= 2 words
    assert f_fidelity.removal_probability(part=10, n_words=20, alpha=0.5, beta=0.1) == pytest.approx(0.2)  # 2 of 10


def test_a_missing_fine_tune_says_how_to_build_it(keyword_classifier, isolated_cache):
    encoding = keyword_classifier.encode(SENTENCES[1])
    explanation = _explanation(encoding, np.arange(encoding.n_words))
    with pytest.raises(UserFacingError, match="prepare-ffid"):
        evaluate_batch(["ffid"], keyword_classifier, encoding, None, {"m": explanation}, {}, 0)


def _config(tiny, **overrides) -> FinetuneConfig:
    values = dict(model=tiny.folder, train_data=tiny.train, train_size=0, beta=0.1, steps=40, chunks=2,
                  batch_size=16, lr=1e-3, max_length=32, seed=0)
    values.update(overrides)
    return with_fingerprint(FinetuneConfig(**values))


@pytest.mark.training  # fine-tunes the model's copy
def test_the_true_keyword_ordering_beats_the_random_band_on_the_fine_tuned_copy(tiny, isolated_cache):
    config = _config(tiny)
    _, summary = run_finetune(config, ResultStore(isolated_cache / "runs.sqlite"))
    assert summary.status == "finished" and not summary.errors
    manifest = find_finetuned(config.model_fingerprint, 0.1, "mask")
    assert manifest["steps"] == 40 and manifest["train_size"] == 200 and manifest["data_hash"]
    classifier = cached_classifier(tiny.folder)
    true_plus, true_minus, random_plus, random_minus = [], [], [], []
    for sentence in SENTENCES:
        encoding = classifier.encode(sentence)
        scores = np.zeros(encoding.n_words)
        scores[encoding.words.index(KEYWORD)] = 1.0
        batch = evaluate_batch(["ffid"], classifier, encoding, None, {"true": _explanation(encoding, scores)},
                               {"ffid_preset": "quick"}, 20)
        values = batch.values["ffid"]["true"]
        assert values.details["ffid_plus"]["model"].startswith("fine-tuned copy")
        true_plus.append(values["ffid_plus"])
        true_minus.append(values["ffid_minus"])
        random_plus.append(batch.random["ffid_plus"])
        random_minus.append(batch.random["ffid_minus"])
    # the random band of the product: the spread of the per-ordering means over the inputs (baselines.band)
    low, high = band(np.mean(random_plus, axis=0))
    assert np.mean(true_plus) > high
    assert np.mean(true_minus) < np.mean(random_minus)


def test_a_stopped_fine_tune_resumes_from_its_last_chunk_and_ends_where_an_uninterrupted_one_does(
        tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "whole"))
    config = _config(tiny, steps=6, chunks=3, batch_size=8)
    run_finetune(config, ResultStore(tmp_path / "whole.sqlite"))
    whole = torch.load(folder_of(config) / WEIGHTS)

    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "halves"))
    store = ResultStore(tmp_path / "halves.sqlite")
    done = []
    _, first = run_finetune(config, store, progress=lambda d, total, left: done.append(d),
                            should_stop=lambda: bool(done) and done[-1] >= 1)
    folder = folder_of(config)
    assert first.status == "cancelled" and first.done == 1
    assert (folder / CHECKPOINT.format(0)).exists() and not (folder / MANIFEST).exists()
    chunk_0 = store.cells(first.run_id)["chunk-0"]
    _, second = run_finetune(config, store)
    assert second.status == "finished" and second.done == 3
    assert store.cells(second.run_id)["chunk-0"] == chunk_0  # not recomputed: the resume started at chunk 1
    resumed = torch.load(folder / WEIGHTS)
    for name, tensor in whole.items():
        assert torch.equal(tensor, resumed[name]), name
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["steps"] == 6 and len(manifest["chunk_losses"]) == 3
    assert not list(folder.glob("checkpoint-*.pt"))
