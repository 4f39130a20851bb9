"""Paper 000's Table 4 as a stored, resumable run (evaluation/faithfulness/perturbation_shift_run.py): the pooled
table equals ``accuracy_drop`` on the same examples, a stopped run resumes with only the missing inputs, and bad
settings get one-line messages. On the keyword model saved to a folder, with a labelled CSV."""
from __future__ import annotations

import pandas as pd
import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv

from corpora import load_dataset
from corpora.records import DataError
from evaluation.faithfulness.perturbation_shift import accuracy_drop
from evaluation.faithfulness.perturbation_shift_run import (
    PAPER_TABLE_4,
    accuracy_cell,
    reading,
    start_accuracy_drop,
    stored_run_id,
    stored_table,
    table_a1_reference,
    with_paper_figures,
)
from evaluation.runs.jobs import run_cells
from evaluation.runs.store import ResultStore
from models import cached_classifier


@pytest.fixture()
def keyword_run(keyword_classifier, isolated_cache, tmp_path):
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    dataset = write_keyword_csv(tmp_path / "data.csv", 12, seed=3)
    return folder, dataset


def test_the_stored_run_equals_accuracy_drop_and_resumes(keyword_run):
    folder, dataset = keyword_run
    store = ResultStore()
    store_, run_id, cells = start_accuracy_drop(folder, dataset, 12, ["loo", "lime"], lime_samples=7, seed=4,
                                                store=store)
    assert stored_table(store, run_id) is None  # nothing finished yet
    stops = iter([False] * 5 + [True] * 100)  # stop after 5 inputs
    first = run_cells(store, run_id, cells, accuracy_cell, should_stop=lambda: next(stops))
    assert first.status == "cancelled" and first.done == 5
    partial = stored_table(store, run_id)
    assert int(partial["n_inputs"].iloc[0]) == 5
    again = run_cells(store, run_id, cells, accuracy_cell)
    assert again.status == "finished" and again.done == 12
    assert len(store.cell_seconds(run_id)) == 12  # the first 5 were not computed twice
    classifier = cached_classifier(folder)
    examples = load_dataset(dataset, limit=12, label_names=classifier.labels)
    direct = accuracy_drop(classifier, examples, ("loo", "lime"), lime_samples=7, seed=4)
    pd.testing.assert_frame_equal(stored_table(store, run_id), direct)
    assert 0 < direct.set_index("scheme").loc["lime", "drop_points"] < 100  # the check can fail
    # the same configuration finds the stored run (the page reopens it without a click); another seed does not
    assert stored_run_id(store, classifier, folder, dataset, examples, ["loo", "lime"], 7, 4) == run_id
    assert stored_run_id(store, classifier, folder, dataset, examples, ["loo", "lime"], 7, 5) is None


def test_bad_settings_get_one_line_messages(keyword_run, tmp_path):
    folder, dataset = keyword_run
    for kwargs, message in (({"limit": 0}, "at least 1"), ({"schemes": []}, "at least one perturbation"),
                            ({"schemes": ["nope"]}, "Unknown perturbation"), ({"lime_samples": 0}, "LIME samples")):
        arguments = {"limit": 5, "schemes": ["loo", "lime"], "lime_samples": 5, **kwargs}
        with pytest.raises(DataError, match=message) as error:
            start_accuracy_drop(folder, dataset, **arguments)
        assert "\n" not in str(error.value)
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_text("text\nthe movie was excellent\na dull long plot\n")
    with pytest.raises(DataError, match="no gold label"):
        start_accuracy_drop(folder, f"file:{unlabelled}", 5, ["loo"])


def _table(drops: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"scheme": s, "drop_points": d, "drop_low": lo, "drop_high": hi}
                         for s, (d, lo, hi) in drops.items()])


def test_the_reading_follows_the_numbers():
    apart = reading(_table({"loo": (3.0, 1.0, 5.0), "im": (2.0, 0.5, 4.0), "lime": (20.0, 15.0, 25.0)}))
    assert "3.0 accuracy points" in apart and "(paper 000 on SST: 3.52)" in apart and "20.0 points" in apart
    assert "do not overlap" in apart and "IM's replacements stay closer" in apart
    overlapping = reading(_table({"loo": (5.0, 1.0, 9.0), "im": (6.0, 2.0, 9.0), "lime": (8.0, 4.0, 12.0)}))
    assert "overlap: on these inputs" in overlapping and "deletion stays as close" in overlapping
    figures = with_paper_figures(_table({"lime": (1.0, 0.0, 2.0)}))
    assert figures["paper_000_drop_SST"].tolist() == [PAPER_TABLE_4["lime"]["SST"]]


def test_table_a1_reference_puts_the_papers_figures_beside_loo_and_im():
    run = pd.DataFrame([{"method": "leave_one_out:paper-000-empty", "metric": "mean-abs-attribution", "mean": 0.3,
                         "low": 0.2, "high": 0.4, "n": 10},
                        {"method": "saliency", "metric": "mean-abs-attribution", "mean": 0.5, "low": 0.4,
                         "high": 0.6, "n": 10},
                        {"method": "saliency", "metric": "deletion-auc", "mean": 0.1, "low": 0.0, "high": 0.2,
                         "n": 10}])
    reference = table_a1_reference(run).set_index("method")
    assert list(reference.index) == ["leave_one_out:paper-000-empty", "saliency"]
    assert reference.loc["leave_one_out:paper-000-empty", "paper_000_SST"] == "0.22 ± 0.27"
    assert pd.isna(reference.loc["saliency", "paper_000_SST"])  # the paper reports LOOempty and IM only


def test_the_command_line_shares_the_pages_run(keyword_run, capsys):
    """`cli.py evaluate --perturbation-shift` runs the same stored cells: its run is the page's (same id for the same
    settings) and its table is the stored one, equal to ``accuracy_drop``."""
    import json

    import cli

    folder, dataset = keyword_run
    assert cli.main(["evaluate", "--model", folder, "--dataset", dataset, "--limit", "6", "--perturbation-shift",
                     "--lime-samples", "4", "--seed", "2", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    schemes = [row["scheme"] for row in printed["table"]]
    assert "loo" in schemes and "lime" in schemes
    store, run_id, _ = start_accuracy_drop(folder, dataset, 6, schemes, lime_samples=4, seed=2)
    assert printed["run_id"] == run_id and store.get_run(run_id)["done"] == 6
    classifier = cached_classifier(folder)
    examples = load_dataset(dataset, limit=6, label_names=classifier.labels)
    direct = accuracy_drop(classifier, examples, schemes, lime_samples=4, seed=2)
    assert [row["drop_points"] for row in printed["table"]] == pytest.approx(list(direct["drop_points"]), abs=1e-12)
    assert cli.main(["evaluate", "--model", folder, "--dataset", dataset, "--perturbation-shift", "--limit", "-1"]) == 2
    assert "--limit" in capsys.readouterr().err


def test_list_metrics_names_table_4_and_table_a1(capsys):
    import cli

    assert cli.main(["evaluate", "--list-metrics"]) == 0
    listed = capsys.readouterr().out
    assert "attribution-magnitude: Paper 000 Table A1" in listed and "mean-abs-attribution" in listed
    assert "perturbation-shift: paper 000 Table 4" in listed and "--perturbation-shift" in listed
