"""Plausibility with real models: word alignment under truncation, the evaluator on a model whose evidence is
known, a dataset run through the shared runner (random baseline, sweep, paper 000 table) and the CLI path."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_models import FILLER, KEYWORD

from corpora import SENTIMENT_LABELS, Example
from evaluation.baselines import generic_random_values
from evaluation.metric import RANDOM_METHOD
from evaluation.plausibility.alignment import align, kept_word_indices
from evaluation.plausibility.dataset import metric_table, paper000_table, run_report, sweep_curves, wide_table
from evaluation.plausibility.metrics import PLAUSIBILITY, compute_plausibility, example_metrics
from evaluation.runs.store import ResultStore
from evaluation.suite.plausibility_run import run_plausibility
from evaluation.summary import results_frame
from explainers import create


def _example(text, rationale, label=1, pair=None):
    return Example(id=f"test:{text[:20]}", text=text, pair=pair, label=label, label_names=SENTIMENT_LABELS,
                   rationale=tuple(rationale), dataset="test")


def test_alignment_drops_or_misses_truncated_words(keyword_classifier):
    words = [FILLER[i % len(FILLER)] for i in range(70)]  # one token per word; the tiny model keeps 62 of 70
    text = " ".join(words)
    encoding = keyword_classifier.encode(text)
    assert encoding.n_words == 62 and kept_word_indices(encoding) == list(range(62))
    human = [0] * 70
    human[5] = human[65] = human[69] = 1
    dropped = align(encoding, np.arange(62, dtype=float), human, "drop")
    assert dropped.human.size == 62 and dropped.human.sum() == 1 and dropped.human_cut == 2 and dropped.words_cut == 8
    missed = align(encoding, np.arange(62, dtype=float), human, "miss")
    assert missed.human.size == 70 and np.isnan(missed.scores[62:]).all() and missed.human_cut == 2
    # cut words count as never highlighted: recall over all 3 human words at most 1/3
    assert example_metrics(missed.scores, missed.human)["plaus_token_recall_tau"] <= 1 / 3
    # a pair: longest-first truncation cuts the (longer) premise, the hypothesis survives whole
    pair_encoding = keyword_classifier.encode(text, "the movie was excellent")
    kept = kept_word_indices(pair_encoding)
    assert kept == list(range(57)) + [70, 71, 72, 73]  # 64 - 3 special tokens - 4 hypothesis words = 57
    aligned = align(pair_encoding, np.zeros(pair_encoding.n_words), human + [0, 0, 0, 1], "drop")
    assert aligned.human.tolist()[-4:] == [False, False, False, True] and aligned.segments[-1] == 1
    with pytest.raises(ValueError, match="marks 3 words but the input has 70"):
        align(encoding, np.zeros(62), [1, 0, 0], "drop")


def test_evaluator_on_a_model_with_known_evidence(keyword_classifier):
    # the tiny model is positive iff "excellent" appears: leave-one-out must rank it first
    example = _example("the movie was excellent and the plot had music", [0, 0, 0, 1, 0, 0, 0, 0, 0])
    encoding = keyword_classifier.encode(example.text)
    explanation = create("leave_one_out").explain(keyword_classifier, encoding)
    assert explanation.target == 1
    values = compute_plausibility(keyword_classifier, encoding, explanation, example, {})
    assert values["plaus_precision_at_k"] == 1 and values["plaus_mean_rank"] == 1 and values["plaus_auprc"] == 1
    assert values["plaus_token_f1_topk"] == pytest.approx(2 / 3)  # top-2 of 9 words holds the 1 human word
    # no rationale -> nothing to compare; only_correct skips a wrongly labelled example
    assert compute_plausibility(keyword_classifier, encoding, explanation, None, {}) == {}
    wrong = _example(example.text, example.rationale, label=0)
    assert compute_plausibility(keyword_classifier, encoding, explanation, wrong, {"plausibility": "paper000"}) == {}
    assert compute_plausibility(keyword_classifier, encoding, explanation, wrong, {}) != {}


def test_random_baseline_of_the_runner_matches_closed_forms(random_classifier):
    # uniform random scores over n = 10 words with |H| = 3: E[precision@3] = 3/10, E[recall @ top-2] = 2/10,
    # E[mean rank] = E[max position of 3 of 10] = 3 * 11 / 4 = 8.25
    example = _example("the movie was a film that this story had some", [1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    encoding = random_classifier.encode(example.text)
    values = generic_random_values(PLAUSIBILITY, random_classifier, encoding, example, {}, 0, 3000, 0)
    assert np.mean(values["plaus_precision_at_k"]) == pytest.approx(0.3, abs=0.02)
    assert np.mean(values["plaus_token_recall_topk"]) == pytest.approx(0.2, abs=0.02)
    assert np.mean(values["plaus_mean_rank"]) == pytest.approx(8.25, abs=0.1)


@pytest.fixture(scope="module")
def keyword_folder(keyword_classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("keyword-model")
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    return str(folder)


def _keyword_file(path, n=8):
    rows = []
    for i in range(n):
        words = [FILLER[(3 * i + j) % len(FILLER)] for j in range(5)]
        if i % 2:
            words.insert(2, KEYWORD)
        rationale = " ".join(f"*{w}*" if w == KEYWORD else w for w in words) if i % 2 else "[]"
        rows.append({"text": " ".join(words), "label": i % 2, "rationale": rationale})
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return path


def test_dataset_run_tables_and_cli_path(keyword_folder, tmp_path, isolated_cache):
    data = _keyword_file(tmp_path / "keyword.jsonl")
    store = ResultStore(tmp_path / "results.sqlite")
    store, run_id, summary = run_plausibility(keyword_folder, f"file:{data}", ["leave_one_out"], store=store,
                                              options={"random_orderings": 10})
    assert summary.status == "finished" and summary.done == 8
    frame = results_frame(store, run_id)
    assert set(frame["method"]) == {"leave_one_out", RANDOM_METHOD}
    table = metric_table(frame).set_index(["method", "metric"])
    # the keyword is the evidence of every positive example: LOO finds it, random does not
    assert table.loc[("leave_one_out", "plaus_precision_at_k"), "mean"] == 1
    assert table.loc[("leave_one_out", "plaus_precision_at_k"), "n"] == 4  # negatives have no human words (NaN)
    assert table.loc[(RANDOM_METHOD, "plaus_precision_at_k"), "mean"] < 0.5
    assert table.loc[("leave_one_out", "plaus_human_coverage"), "mean"] == pytest.approx((4 * 1 / 6 + 4 * 0) / 8)
    assert table.loc[("leave_one_out", "plaus_human_coverage"), "vs_random"] == "property of the data"
    assert table.loc[("leave_one_out", "plaus_mean_rank"), "vs_random"] == "better than random"
    curves = sweep_curves(frame)
    assert len(curves[curves["method"] == "leave_one_out"]) == 19
    p000 = paper000_table(frame).set_index("method")
    assert p000.loc["leave_one_out", "f1"] > p000.loc[RANDOM_METHOD, "f1"]
    best = curves[(curves["method"] == "leave_one_out")].set_index("tau").loc[p000.loc["leave_one_out", "best_tau"]]
    assert p000.loc["leave_one_out", "f1"] == pytest.approx(
        2 * best["precision"] * best["recall"] / (best["precision"] + best["recall"]))
    report = run_report(store, run_id)
    assert report["family"].startswith("plausibility") and not report["errors"]
    json.dumps(report, default=str)  # exportable
    assert "leave_one_out" in wide_table(metric_table(frame)).index
    # the command-line path: the shared runner with --metrics plausibility gives the same per-example values
    from evaluation.suite.runner import run_evaluation

    store2, _summary = run_evaluation(keyword_folder, f"file:{data}", ["leave_one_out"], ["plausibility"],
                                      store=ResultStore(tmp_path / "cli.sqlite"), options={"random_orderings": 10})
    cli_run = store2.list_runs()[0]["id"]
    cli = results_frame(store2, cli_run)
    ours = frame[frame["metric"].isin(set(cli["metric"]))]
    merged = cli.merge(ours, on=["example_id", "method", "metric"], suffixes=("_cli", "_app"))
    assert len(merged) == len(cli) > 0
    assert np.allclose(merged["value_cli"], merged["value_app"], equal_nan=True)


def test_dataset_without_rationales_is_refused(keyword_folder, tmp_path, isolated_cache):
    data = tmp_path / "plain.csv"
    data.write_text("text,label\nthe movie,0\n")
    with pytest.raises(ValueError, match="no human rationales"):
        run_plausibility(keyword_folder, f"file:{data}", ["leave_one_out"], store=ResultStore(tmp_path / "r.sqlite"))
    with pytest.raises(ValueError, match="top_k"):
        run_plausibility(keyword_folder, f"file:{data}", ["leave_one_out"], options={"plausibility_top_k": "x"})


def test_top_p_binarization_replaces_the_top_k_scores_in_the_report(keyword_folder, tmp_path, isolated_cache):
    # paper 002's top-p is fitted over the run's documents: the report's top-p token scores must be those of
    # top_p_binarize over the stored word scores and the file's rationales, computed here by hand
    from evaluation.plausibility.top_p import top_p_binarize

    data = _keyword_file(tmp_path / "keyword.jsonl")
    store = ResultStore(tmp_path / "results.sqlite")
    store, run_id, summary = run_plausibility(keyword_folder, f"file:{data}", ["leave_one_out"], store=store,
                                              options={"random_orderings": 5, "plausibility": {"binarization": "top-p"}})
    assert summary.status == "finished"
    cells = store.cells(run_id)
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    ids = list(cells)
    scores = [np.array(cells[i]["explanations"]["leave_one_out"]["scores"]) for i in ids]
    humans = [np.array([w.startswith("*") for w in r["rationale"].split()]) if r["rationale"] != "[]"
              else np.zeros(len(r["text"].split()), dtype=bool) for r in rows]
    by_text = {r["text"]: h for r, h in zip(rows, humans)}
    humans = [by_text[" ".join(cells[i]["explanations"]["leave_one_out"]["words"])] for i in ids]
    selected = top_p_binarize(scores, humans).selected
    f1s = []
    for chosen, human in zip(selected, humans):
        tp = int((chosen & human).sum())
        p = tp / chosen.sum() if chosen.sum() else (1.0 if not human.any() else 0.0)
        r = tp / human.sum() if human.sum() else 1.0
        f1s.append(2 * p * r / (p + r) if p + r else 0.0)
    report = {(row["method"], row["metric"]): row for row in run_report(store, run_id)["metrics"]}
    assert report[("leave_one_out", "plaus_token_f1_topp")]["mean"] == pytest.approx(np.mean(f1s), rel=1e-12)
    assert ("leave_one_out", "plaus_token_f1_topk") not in report  # replaced, not shown twice
    assert (RANDOM_METHOD, "plaus_token_f1_topp") in report  # the random baseline is fitted the same way
    assert report[("leave_one_out", "plaus_auprc")]["mean"] == 1  # other metrics are untouched


def test_the_command_lines_table_applies_top_p_as_the_page_does(keyword_folder, tmp_path, isolated_cache):
    # `evaluate --plausibility-preset paper002-top-p` reported the top-k token scores: its table (run_table) must
    # give the page's top-p numbers (run_report) and no top-k token rows
    from evaluation.suite.run_report import run_table
    from evaluation.suite.runner import run_evaluation

    data = _keyword_file(tmp_path / "keyword.jsonl")
    store, summary = run_evaluation(keyword_folder, f"file:{data}", ["leave_one_out"], ["plausibility"],
                                    store=ResultStore(tmp_path / "cli.sqlite"),
                                    options={"random_orderings": 5, "plausibility": {"preset": "paper002-top-p"}})
    table = run_table(store, summary.run_id).set_index(["method", "metric"])
    page = {(row["method"], row["metric"]): row for row in run_report(store, summary.run_id)["metrics"]}
    assert page[("leave_one_out", "plaus_token_f1_topp")]["mean"] == pytest.approx(
        table.loc[("leave_one_out", "plaus_token_f1_topp"), "mean"], rel=1e-12)
    assert not table.index.get_level_values("metric").str.endswith("_topk").any()
