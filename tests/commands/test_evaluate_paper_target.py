"""`cli.py evaluate --metrics paper-002` measures the gold label, as paper 002 does (s. 4.2, Eq. 10-11: M is the
probability of the ground-truth class), and refuses a file without gold labels. A tiny keyword model
saved to a folder and user files whose gold labels disagree with the model, so the two targets differ."""
from __future__ import annotations

import numpy as np
import pytest
from tiny_models import keyword_sentences

import cli
from corpora import load_dataset
from evaluation.faithfulness.curves import evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from evaluation.runs.store import ResultStore
from evaluation.summary import results_frame
from models import load_classifier


@pytest.fixture()
def model_and_data(keyword_classifier, tmp_path, monkeypatch):
    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))  # a private result store
    texts, labels = keyword_sentences(4, seed=3)
    flipped = tmp_path / "flipped.csv"  # every gold label is the class the model does not predict
    flipped.write_text("text,label\n" + "".join(f"{t},{1 - label}\n" for t, label in zip(texts, labels)))
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_text("text\n" + "".join(f"{t}\n" for t in texts))
    return folder, flipped, unlabelled


def _evaluate(folder, data, *flags) -> int:
    return cli.main(["evaluate", "--model", str(folder), "--dataset", f"file:{data}", "--methods", "leave_one_out",
                     "--random-orderings", "0", *flags])


def test_paper_002_measures_the_gold_label(model_and_data, capsys):
    folder, flipped, _ = model_and_data
    assert _evaluate(folder, flipped, "--metrics", "paper-002") == 0
    assert "target gold" in capsys.readouterr().out
    store = ResultStore()
    (run,) = store.list_runs()
    classifier = load_classifier(str(folder))
    examples = {e.id: e for e in load_dataset(f"file:{flipped}", label_names=classifier.labels)}
    frame = results_frame(store, run["id"])
    for key, cell in store.cells(run["id"]).items():
        example = examples[cell["example_id"]]
        encoding = classifier.encode(example.text)
        predicted = int(np.argmax(classifier.predict_proba([encoding])[0]))
        assert example.label != predicted  # the two targets differ on every example
        explanation = cell["explanations"]["leave_one_out"]
        assert explanation["target"] == example.label  # LOO explains the gold class
        # Eq. 10 read for the gold class: the metric itself, told the gold class explicitly
        expected = evaluate_scores(classifier, encoding, [BY_ID["comprehensiveness-002"]], explanation["scores"],
                                   {"target": example.label}).values["comprehensiveness-002"]
        value = frame[(frame["example_id"] == key) & (frame["metric"] == "comprehensiveness-002")
                      & (frame["method"] == "leave_one_out")]["value"].item()
        assert value == pytest.approx(expected, abs=1e-9)


def test_paper_002_without_gold_labels_is_refused_with_what_to_do(model_and_data, capsys):
    folder, _, unlabelled = model_and_data
    assert _evaluate(folder, unlabelled, "--metrics", "paper-002") != 0
    error = capsys.readouterr().err
    assert "4 of 4 examples" in error and "no gold label" in error and "--target predicted" in error
    assert "Traceback" not in error
    assert _evaluate(folder, unlabelled, "--metrics", "paper-002", "--target", "predicted") == 0  # the user's choice


def test_a_mixed_run_keeps_the_predicted_class_and_says_paper_002_would_read_gold(model_and_data, capsys):
    folder, flipped, _ = model_and_data
    assert _evaluate(folder, flipped, "--metrics", "eraser,paper-002") == 0
    captured = capsys.readouterr()
    assert "target predicted" in captured.out
    assert "note: comprehensiveness-002 reads the gold label in paper 002" in captured.err
