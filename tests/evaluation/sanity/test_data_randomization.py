"""The data-randomization test on the tiny keyword model: fine-tuned on permuted labels its predictions agree with the
true labels only at chance, a gradient method's maps change, a model-independent map does not, and the build is a
cached job whose folder loads like any model."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_models import keyword_sentences

import cli
from evaluation.runs.store import ResultStore
from evaluation.sanity import data_randomization as dr
from evaluation.sanity.dataset import summarize
from models import ModelError, load_classifier

OPTIONS = dr.BuildOptions(steps=200, batch_size=32, lr=3e-3, seed=1)


def test_permuting_keeps_the_label_counts():
    labels = [0, 1, 1, 0, 1, 1, 1, 0]
    shuffled = dr.permuted(labels, seed=4)
    assert sorted(shuffled) == sorted(labels) and shuffled != labels
    assert dr.permuted(labels, seed=4) == shuffled  # seeded


def test_permuted_labels_erase_what_the_model_learned_and_the_gradient_maps(keyword_classifier):
    texts, labels = keyword_sentences(64, seed=0)  # the first 64 inputs the keyword model was trained on
    before = keyword_classifier.predict_proba([keyword_classifier.encode(t) for t in texts]).argmax(axis=1)
    assert np.mean(before == labels) > 0.95
    model, record = dr.train_permuted(keyword_classifier, texts, labels, OPTIONS)
    # it fits the permuted labels (memorizes: measured 0.84) and so agrees with the true ones only at chance:
    # 64 inputs, binomial sd 0.0625 around 0.5 (measured 0.59; the permutation itself agrees on 0.53)
    assert record["agreement_permuted"] > 0.7
    assert abs(record["agreement_true"] - 0.5) < 0.2 and abs(record["permuted_vs_true"] - 0.5) < 0.2
    assert abs(record["probability_true"] - 0.5) < 0.1  # no longer separates the true classes (measured 0.52)
    assert record["steps"] == OPTIONS.steps and not record["stopped"]
    permuted_model = keyword_classifier.with_model(model, "permuted-labels-test")
    sims, randoms, chance = [], [], []
    for text in texts[:8]:
        encoding = keyword_classifier.encode(text)
        frame, band, errors = dr.compare_maps(keyword_classifier, permuted_model, encoding, ["saliency", "random"],
                                              cache=None, chance_draws=50)
        assert not errors
        values = frame.set_index("method")["spearman"]
        sims.append(values["saliency"])
        randoms.append(values["random"])
        chance.append(band["spearman"]["mean"])
    assert np.nanmean(sims) < 0.8  # the gradient maps changed
    assert randoms == pytest.approx([1.0] * 8, abs=1e-12)  # a map that ignores the model cannot change: flagged
    assert abs(np.mean(chance)) < 0.2  # the random band: rankings unrelated to the original, about 0


@pytest.fixture(scope="module")
def keyword_folder(keyword_classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("keyword-model")
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    return str(folder)


def test_the_build_is_a_cached_job_and_the_study_stores_intervals(keyword_folder, isolated_cache, tmp_path, capsys):
    texts, labels = keyword_sentences(64, seed=5)
    data = tmp_path / "train.jsonl"
    data.write_text("\n".join(json.dumps({"text": t, "label": y}) for t, y in zip(texts, labels)))
    store = ResultStore(tmp_path / "results.sqlite")
    options = dr.BuildOptions(steps=4, batch_size=16, lr=3e-3)
    folder = dr.build(keyword_folder, f"file:{data}", options, store=store)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["permuted_labels"] and manifest["training"]["steps"] == 4 and manifest["train_examples"] == 64
    assert dr.find_built(keyword_folder, f"file:{data}", options) == folder
    loaded = load_classifier(str(folder))
    assert loaded.fingerprint != load_classifier(keyword_folder).fingerprint and loaded.labels == ["negative", "positive"]
    assert dr.build(keyword_folder, f"file:{data}", options, store=store) == folder  # found, not rebuilt
    assert len(store.list_runs(dr.BUILD_KIND)) == 1

    store, summary = dr.run_study(keyword_folder, str(folder), f"file:{data}", ["saliency", "random"], limit=4,
                                  store=store)
    assert summary.status == "finished" and not summary.errors
    frame = dr.results_frame(store, summary.run_id)
    part = frame[(frame["method"] == "random") & (frame["metric"] == "sanity_data_randomization")]
    assert len(part) == 4 and np.allclose(part["value"], 1.0, rtol=0, atol=1e-12)
    table = summarize(frame)
    row = table[(table["method"] == "saliency") & (table["metric"] == "sanity_data_randomization")].iloc[0]
    values = frame[(frame["method"] == "saliency") & (frame["metric"] == "sanity_data_randomization")]["value"]
    assert row["mean"] == pytest.approx(values.mean()) and row["low"] <= row["mean"] <= row["high"]
    # the command line: build (4 steps, the CLI's own batch and rate) and study, with intervals and the random band
    code = cli.main(["sanity", "--model", keyword_folder, "--data-randomization", "--steps", "4", "--train-data",
                     f"file:{data}", "--dataset", f"file:{data}", "--limit", "3", "--methods", "saliency,random",
                     "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["permuted_model"]["training"]["steps"] == 4 and report["status"] == "finished"
    part = report["measures"]["sanity_data_randomization"]
    assert part["band"] is not None and {r["method"] for r in part["rows"]} == {"saliency", "random"}
    assert cli.main(["sanity", "--model", keyword_folder, "--data-randomization", "--steps", "0"]) == 2
    assert "--steps" in capsys.readouterr().err


def test_a_file_that_mixes_pairs_and_single_sentences_gets_a_clear_message(keyword_folder, isolated_cache, tmp_path):
    # the first row is a pair, the second is not: the tokenizer used to get a None among the pairs and fail
    texts, labels = keyword_sentences(8, seed=5)
    rows = [{"text": t, "label": y, **({"pair": "and so on"} if i % 2 == 0 else {})}
            for i, (t, y) in enumerate(zip(texts, labels))]
    data = tmp_path / "mixed.jsonl"
    data.write_text("\n".join(json.dumps(row) for row in rows))
    store = ResultStore(tmp_path / "results.sqlite")
    with pytest.raises(ModelError, match="mixes sentence pairs and single sentences"):
        dr.build(keyword_folder, f"file:{data}", dr.BuildOptions(steps=1, batch_size=4), store=store)
