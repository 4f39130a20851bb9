"""Paper 002's Table 1 on whole documents (tiny budget: two ERASER test reviews in 128-token windows, cheap
settings): every word of each review scored by every method; the stored table's numbers recomputed here from the
stored explanations another way (mAP with scikit-learn, the top-p token F1 by hand, the 19-point metrics as plain
means of the per-document rows); the page's Table 1 equal to the mean over seeds of the stored tables; the bench
script's report of the stored run equal to seed 0's table. Structure and resume: test_reproduce_runs.py (paper 002
is one of its tiny runs).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, f1_score

from corpora import load_dataset, split_words
from evaluation.plausibility.top_p import top_p_binarize
from evaluation.reproduce import BUDGETS, results, run_reproduce, write_page
from evaluation.reproduce import table1_002 as table1
from evaluation.reproduce.seed_models import sst_model
from evaluation.runs.store import ResultStore
from evaluation.summary import results_frame

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("table1-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(folder))
        store = ResultStore(folder / "results.sqlite")
        _, summary = run_reproduce("002", "tiny", store=store, machine="test machine")
        assert summary.done == summary.total and not summary.errors, summary.errors
        yield {"store": store, "run_id": summary.run_id, "folder": folder}


def test_every_word_of_each_review_is_scored_and_the_table_is_recomputed_another_way(tiny_run):
    store = tiny_run["store"]
    setting = table1.SETTINGS["tiny"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(tiny_run["folder"]))
        model = sst_model(BUDGETS["tiny"], 0)
        found = table1.compute(store, model, "tiny", 0)  # reopened: nothing recomputed
    documents = {e.id: e for e in load_dataset(table1.DATASET, limit=setting.documents)}
    assert sorted(found["documents"]) == sorted(documents) and len(documents) == 2
    cells = store.cells(found["run"])
    frame = results_frame(store, found["run"])
    for name, spec in setting.methods.items():
        scores, humans = [], []
        for doc_id, example in documents.items():
            words = split_words(example.text)
            stored = np.asarray(cells[doc_id]["explanations"][spec]["scores"], dtype=float)
            assert stored.size == len(words) > 128  # read whole, in several 128-token windows: no word cut
            scores.append(stored)
            humans.append(np.asarray(example.rationale, dtype=bool))
        row = found["rows"][name]
        for key, metric in (("comp", "comprehensiveness-002"), ("suff", "sufficiency-002")):
            per_document = frame[(frame["method"] == spec) & (frame["metric"] == metric)]["value"]
            assert len(per_document) == 2 and row[key] == pytest.approx(per_document.mean(), abs=1e-12)
        if min(s.min() for s in scores) >= 0:  # unsigned scores: sklearn's average precision is the paper's mAP
            expected = np.mean([average_precision_score(h, s) for s, h in zip(scores, humans)])
            assert row["map"] == pytest.approx(expected, abs=1e-9)
        # the top-p share from the regression, then F1 by scikit-learn on the selected words
        chosen = top_p_binarize(scores, humans).selected
        expected_f1 = np.mean([f1_score(h, c, zero_division=0.0) for c, h in zip(chosen, humans)])
        assert row["token_f1"] == pytest.approx(expected_f1, abs=1e-9)
        assert 0 <= row["iou_f1"] <= 1 and found["seconds"][name] >= 0


def _page_numbers(page: str) -> dict[str, list[float]]:
    section = page.split("## Table 1 on whole documents", 1)[1].split("## The seeded models", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| method"):
            name = line.split("|")[1].strip()
            columns = line.split("|")[3:3 + len(table1.COLUMNS)]
            rows[name] = [float(re.match(r"\s*(-?\d+\.\d{3})", c).group(1)) for c in columns]
    return rows


def test_the_pages_table1_is_the_mean_of_the_stored_tables(tiny_run, tmp_path):
    store, run_id = tiny_run["store"], tiny_run["run_id"]
    page = write_page(store, run_id, tmp_path, "python cli.py reproduce --paper 002 --budget tiny").read_text()
    shown = _page_numbers(page)
    tables = table1.seed_tables(results(store, run_id))
    assert sorted(tables) == [0, 1, 2] and set(shown) == set(table1.SETTINGS["tiny"].methods)
    for name, values in shown.items():
        expected = [np.mean([t["rows"][name][key] for t in tables.values()]) for key, _, _ in table1.COLUMNS]
        assert values == pytest.approx(expected, abs=5.1e-4)  # printed to 3 decimals
    assert "/ 0.518" in page and "(not in the paper)" in page  # MaRC's Comp. beside ours; leave-one-out is ours


def test_the_bench_reports_the_stored_run(tiny_run, tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_table1
    out = tmp_path / "table.md"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(tiny_run["folder"]))
        code = bench_table1.main(["--budget", "tiny", "--documents", "2", "--seed", "0", "--report-only",
                                  "--store", str(tiny_run["folder"] / "results.sqlite"), "--out", str(out)])
    assert code == 0
    seed0 = table1.seed_tables(results(tiny_run["store"], tiny_run["run_id"]))[0]
    written = out.read_text()
    assert f"run `{seed0['run']}`" in written and "2 of 2" in written
    marc = next(line for line in written.splitlines() if line.startswith("| MaRC "))
    assert f"{seed0['rows']['MaRC']['comp']:.3f} / 0.518" in marc
