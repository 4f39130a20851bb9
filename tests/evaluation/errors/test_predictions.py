"""The predictions table on the tiny keyword model: values against one-at-a-time predictions, chunks
stored as they finish (stop and resume), an instant reopen with no forward pass, unlabelled datasets."""
from __future__ import annotations

import numpy as np
import pytest
from tiny_models import keyword_sentences
from tolerances import float32_tolerance

from corpora import Example
from evaluation.errors import LABELS_NEEDED, dataset_hash, predict_dataset, predictions, stored_run
from evaluation.runs.store import ResultStore
from models import WorkStopped, metered

LABELS = ("negative", "positive")


def examples(n: int = 20, flip_every: int = 5, labelled: bool = True) -> list[Example]:
    """Keyword sentences; every ``flip_every``-th gold label is wrong, so the model errs there."""
    texts, labels = keyword_sentences(n, seed=3)
    return [Example(id=f"kw:{i}", text=text, label=(1 - label if i % flip_every == 0 else label) if labelled else None,
                    label_names=LABELS, dataset="kw") for i, (text, label) in enumerate(zip(texts, labels))]


@pytest.fixture()
def store(tmp_path):
    return ResultStore(tmp_path / "results.sqlite")


def test_table_matches_one_at_a_time_predictions(keyword_classifier, store):
    data = examples()
    table = predict_dataset(keyword_classifier, data, "kw", store=store)
    frame = table.frame
    assert list(frame["id"]) == [e.id for e in data] and list(frame["text"]) == [e.text for e in data]
    alone = np.array([keyword_classifier.predict_proba([keyword_classifier.encode(e.text)])[0] for e in data])
    assert list(frame["prediction"]) == list(alone.argmax(axis=1))
    assert np.allclose(frame["confidence"], alone.max(axis=1), rtol=0, atol=float32_tolerance(1.0))
    assert list(frame["gold"]) == [e.label for e in data]
    assert list(frame["correct"]) == [e.label == p for e, p in zip(data, alone.argmax(axis=1))]
    assert list(frame["length"]) == [len(e.text.split()) for e in data]
    assert list(frame["gold_label"]) == [LABELS[e.label] for e in data]
    assert table.has_labels and table.accuracy == pytest.approx(np.mean(frame["correct"].astype(bool)))
    # the keyword model is right on the true labels, so the flipped ones are the errors
    assert set(frame.index[~frame["correct"].astype(bool)]) == {i for i in range(20) if i % 5 == 0}


def test_chunks_resume_after_a_stop_and_reopen_without_a_forward_pass(keyword_classifier, store, monkeypatch):
    monkeypatch.setattr(predictions, "CHUNK", 6)
    data = examples(20)
    seen = []
    with pytest.raises(WorkStopped):
        predict_dataset(keyword_classifier, data, "kw", store=store, progress=lambda d, t: seen.append((d, t)),
                        should_stop=lambda: len(seen) >= 2)
    run = store.list_runs("predictions")[0]
    assert run["status"] == "stopped" and run["done"] == 1 and seen == [(0, 20), (6, 20)]
    assert stored_run(store, keyword_classifier, data) is None
    seen.clear()
    with metered() as meter:
        table = predict_dataset(keyword_classifier, data, "kw", store=store, progress=lambda d, t: seen.append(d))
    assert meter.forward_passes == 14 == table.computed  # only the chunks not stored
    assert seen == [6, 12, 18, 20] and store.get_run(table.run_id)["done"] == 4
    assert stored_run(store, keyword_classifier, data) == table.run_id
    # the chunks are cut by token length: each holds the next-shortest inputs
    lengths = [keyword_classifier.encode(e.text).n_tokens for e in data]
    chunk_lengths = [[lengths[r["index"]] for r in cell["rows"]] for cell in store.cells(table.run_id).values()]
    assert sorted(sum(chunk_lengths, [])) == sum(sorted(chunk_lengths, key=min), [])
    with metered() as meter:
        again = predict_dataset(keyword_classifier, data, "kw", store=store)
    assert meter.forward_passes == 0 == again.computed and again.run_id == table.run_id
    assert again.frame.equals(table.frame)


def test_the_run_is_keyed_by_content(keyword_classifier, store):
    data = examples(10)
    first = predict_dataset(keyword_classifier, data, "kw", store=store)
    relabelled = [Example(id=e.id, text=e.text, label=1 - e.label, label_names=LABELS) for e in data]
    assert dataset_hash(relabelled) != dataset_hash(data)
    second = predict_dataset(keyword_classifier, relabelled, "kw", store=store)
    assert second.run_id != first.run_id
    assert list(second.frame["correct"]) == [not c for c in first.frame["correct"]]
    renamed = predict_dataset(keyword_classifier, data, "another name", store=store)
    assert renamed.run_id == first.run_id


def test_a_dataset_without_labels_gets_predictions_only(keyword_classifier, store):
    table = predict_dataset(keyword_classifier, examples(8, labelled=False), "kw", store=store)
    assert not table.has_labels and table.accuracy is None
    assert table.frame["correct"].isna().all() and table.frame["gold"].isna().all()
    assert table.frame["prediction"].notna().all()
    assert "needs labels" in LABELS_NEEDED and "'label' column" in LABELS_NEEDED


def test_whether_predicting_waits_for_a_click_does_not_depend_on_the_measured_speed(keyword_classifier, monkeypatch):
    """the same link gives every browser the same page; the seconds shown follow the measured speed, the
    decision follows the work units at the nominal rate (models/metering.py rule (g))."""
    rows = examples(100)
    throughput = keyword_classifier.throughput
    shown, decisions = [], set()
    for measured in (throughput.nominal_rate / 10, throughput.nominal_rate * 10):
        monkeypatch.setattr(throughput, "measured_rate", measured)
        seconds, at_once = predictions.estimated_cost(keyword_classifier, rows)
        shown.append(seconds)
        decisions.add(at_once)
    assert shown[0] == pytest.approx(100 * shown[1])  # the estimate shown follows the measured speed ...
    assert len(decisions) == 1  # ... the decision does not
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "0")
    assert predictions.estimated_cost(keyword_classifier, rows)[1] is False
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "1e9")
    assert predictions.estimated_cost(keyword_classifier, rows)[1] is True
