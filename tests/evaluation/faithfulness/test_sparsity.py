"""Paper 001's sparsity curves (App. E): each point against numpy's cumsum of the sorted shares, computed
here another way; the dataset curves' means and intervals; `cli.py sparsity` on the tiny keyword model."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from tiny_models import keyword_sentences

from corpora import Example
from evaluation.faithfulness.sparsity import (
    KS,
    PERCENTS,
    TOP_K,
    TOP_X,
    dataset_sparsity,
    sparsity_frame,
    top_k_curve,
    top_x_curve,
)


def reference(scores, k: int) -> float:
    """The share of the k largest |a|, written out: sort descending, cumsum, divide by the total."""
    shares = np.sort(np.abs(scores))[::-1]
    return float(np.cumsum(shares)[min(k, len(shares)) - 1] / shares.sum()) if k > 0 else 0.0


def test_curves_against_numpy_cumsum_of_sorted_shares():
    rng = np.random.default_rng(0)
    for n in (1, 3, 7, 10, 25, 60):
        scores = rng.normal(size=n)
        assert np.allclose(top_k_curve(scores), [reference(scores, k) for k in KS])
        assert np.allclose(top_x_curve(scores), [reference(scores, math.ceil(x * n / 100)) for x in PERCENTS])
        assert top_x_curve(scores)[-1] == pytest.approx(1.0) and top_x_curve(scores)[0] == 0.0
    one_word = np.array([0.0, 5.0, 0.0, 0.0])
    assert np.allclose(top_k_curve(one_word), 1.0)  # all the importance on one word
    assert np.isnan(top_k_curve(np.zeros(4))).all()  # no importance: no curve


def test_dataset_curve_is_the_mean_with_an_interval():
    rng = np.random.default_rng(1)
    explanations = {"a": [rng.normal(size=n) for n in (5, 12, 30, 8)], "b": [np.eye(6)[0]] * 3}
    frame = sparsity_frame(explanations, resamples=500)
    row = frame[(frame["method"] == "a") & (frame["axis"] == TOP_K) & (frame["x"] == 3)].iloc[0]
    assert row["mean"] == pytest.approx(np.mean([reference(s, 3) for s in explanations["a"]]))
    assert row["low"] <= row["mean"] <= row["high"] and row["n"] == 4
    assert (frame[frame["method"] == "b"]["mean"].iloc[1:len(KS)] == 1.0).all()
    assert set(frame["axis"]) == {TOP_K, TOP_X} and len(frame) == 2 * (len(KS) + len(PERCENTS))


def test_dataset_sparsity_and_the_command(keyword_classifier, isolated_cache, tmp_path, monkeypatch, capsys):
    texts, labels = keyword_sentences(6, seed=2)
    examples = [Example(id=str(i), text=t, label=y, label_names=("negative", "positive"), dataset="kw")
                for i, (t, y) in enumerate(zip(texts, labels))]
    frame = dataset_sparsity(keyword_classifier, examples, ["leave_one_out", "saliency"])
    assert set(frame["method"]) == {"leave_one_out", "saliency"} and (frame["n"] == 6).all()
    from explainers import create

    loo = [create("leave_one_out").explain(keyword_classifier, keyword_classifier.encode(e.text)).word_scores
           for e in examples]
    row = frame[(frame["method"] == "leave_one_out") & (frame["axis"] == TOP_K) & (frame["x"] == 1)].iloc[0]
    assert row["mean"] == pytest.approx(np.mean([reference(s, 1) for s in loo]))
    # the command line, on the same model saved to a folder
    import cli

    folder = tmp_path / "model"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    data = tmp_path / "kw.jsonl"
    data.write_text("\n".join(json.dumps({"text": e.text, "label": e.label}) for e in examples))
    assert cli.main(["sparsity", "--model", str(folder), "--dataset", f"file:{data}", "--methods",
                     "leave_one_out", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    first = next(r for r in printed["curves"] if r["axis"] == TOP_K and r["x"] == 1)
    # the folder reloads under another attention kernel and last-layer path: equal within float32 noise of LOO
    assert first["mean"] == pytest.approx(row["mean"], abs=5e-3) and printed["examples"] == 6
