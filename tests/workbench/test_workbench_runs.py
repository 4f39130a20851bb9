"""Dataset runs from the library: Python rows give the numbers of the same rows as a CSV file through
the command line's runner, and a second call resumes the same stored run."""
from __future__ import annotations

import pandas as pd

import workbench as wb
from evaluation.runs.store import ResultStore
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import run_evaluation

ROWS = [{"review": "an excellent film", "stars": 1}, {"review": "a dull film", "stars": 0},
        {"review": "excellent acting , weak plot", "stars": 1}]
OPTIONS = {"target": "predicted", "operator": None, "exclude_special": True, "seed": 0, "random_orderings": 3}


def test_python_rows_run_like_the_same_csv_and_a_second_call_resumes(keyword_classifier, tmp_path, isolated_cache):
    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    store = ResultStore(tmp_path / "runs.sqlite")
    rows = ROWS
    run = wb.evaluate(str(folder), pd.DataFrame(rows), ["saliency", "leave_one_out"], ["eraser"], options=OPTIONS,
                      store=store, text_column="review", label_column="stars")
    assert run.errors == {} and set(run.summary.method) >= {"saliency", "leave_one_out"}
    csv = tmp_path / "rows.csv"
    pd.DataFrame([{"text": r["review"], "label": r["stars"]} for r in rows]).to_csv(csv, index=False)
    direct_store, summary = run_evaluation(str(folder), f"file:{csv}", ["saliency", "leave_one_out"], ["eraser"],
                                           options=OPTIONS, store=ResultStore(tmp_path / "direct.sqlite"))
    direct = run_table(direct_store, summary.run_id)
    pd.testing.assert_series_equal(run.summary["mean"].reset_index(drop=True), direct["mean"].reset_index(drop=True))
    again = wb.evaluate(str(folder), pd.DataFrame(rows), ["saliency", "leave_one_out"], ["eraser"], options=OPTIONS,
                        store=store, text_column="review", label_column="stars")
    assert again.run_id == run.run_id
    pd.testing.assert_frame_equal(again.values, run.values)
