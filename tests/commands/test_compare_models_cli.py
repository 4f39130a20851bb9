"""`cli.py compare-models` on the tiny keyword model saved in a folder (its own known-feature twin): the JSON on
stdout equals the file, the .csv holds the rows, the printed summary names every model, a rerun computes nothing,
and bad input gets one line."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model

import cli


@pytest.fixture(scope="module")
def tiny(keyword_classifier, tmp_path_factory):
    folder = str(save_keyword_model(keyword_classifier, tmp_path_factory.mktemp("models") / "keyword"))
    data = write_rationale_csv(tmp_path_factory.mktemp("data") / "keyword.csv", 4, seed=3)
    return folder, ["compare-models", "--models", folder, "--dataset", data, "--limit", "3", "--methods",
                    "saliency,leave_one_out", "--checks", "known_feature,plausibility", "--random-orderings", "2",
                    "--known-feature-dataset", data, "--known-feature-model", f"{folder}={folder}"]


def test_json_csv_and_text_outputs(tiny, isolated_cache, tmp_path, capsys):
    folder, argv = tiny
    assert cli.main(argv + ["--json", "--out", str(tmp_path / "cmp.json")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "cmp.json").read_text())
    assert [m["model"] for m in printed["models"]] == [folder] and printed["models"][0]["blocks"] == 2
    assert {(r["metric"], r["method"]) for r in printed["rows"]} == {
        (metric, method) for metric in ("known-feature.precision@k", "known-feature.rank-fraction", "plaus_auprc")
        for method in ("saliency", "leave_one_out")}
    assert sum(printed["computed_examples"].values()) > 0

    # the rerun reopens the stored studies: nothing computed, the same rows, as CSV
    assert cli.main(argv + ["--out", str(tmp_path / "cmp.csv")]) == 0
    out = capsys.readouterr().out
    assert f"{folder}: " in out and "Ground-truth overlap" in out and "reference band" in out
    table = pd.read_csv(tmp_path / "cmp.csv")
    assert len(table) == len(printed["rows"])
    np_means = sorted(r["mean"] for r in printed["rows"])
    assert sorted(table["mean"]) == pytest.approx(np_means)


@pytest.mark.parametrize("extra, message", [
    (["--checks", "speed"], "--checks: unknown speed"),
    (["--known-feature-model", "nofolder"], "MODEL=FOLDER"),
    (["--out", "cmp.html"], "--out"),
    (["--limit", "0"], "--limit must be at least 1"),
    (["--attack-steps", "0"], "--attack-steps must be at least 1"),
    (["--attack-methods", "lime"], "--attack-methods: choose from"),
])
def test_bad_input_gets_one_line(tiny, isolated_cache, extra, message, capsys):
    assert cli.main(tiny[1] + extra) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ----- one input, several models (`--text`) --------------------------------------------------------------------
TEXT = "the acting is superb , but the plot is dull"


def test_one_input_on_two_models_side_by_side(tiny, random_classifier, keyword_classifier, isolated_cache, tmp_path,
                                              capsys):
    from scipy.stats import spearmanr

    first = tiny[0]
    second = str(save_keyword_model(random_classifier, tmp_path / "random"))
    argv = ["compare-models", "--models", f"{first},{second}", "--text", TEXT, "--methods", "saliency,leave_one_out"]
    assert cli.main(argv + ["--json", "--out", str(tmp_path / "one.json")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "one.json").read_text())
    # each model's prediction, as the classifier gives it directly
    for entry, classifier in zip(printed["models"], (keyword_classifier, random_classifier)):
        probabilities = classifier.predict_proba([classifier.encode(TEXT)])[0]
        assert entry["explained_class"] == classifier.labels[int(probabilities.argmax())]
    rows = pd.DataFrame(printed["rows"])
    for _, part in rows.groupby(["method", "model"]):
        assert list(part["word"]) == TEXT.split()  # aligned by word on both tokenizers
    # the agreement between the models is Spearman's rho of their |word scores|, computed here with scipy
    for method in ("saliency", "leave_one_out"):
        a, b = (rows[(rows["method"] == method) & (rows["model"] == m)]["score"].abs().to_numpy()
                for m in (first, second))
        table = {row["model"]: row for row in printed["agreement"][method]}
        assert table[first][second] == pytest.approx(spearmanr(a, b).statistic, abs=1e-6)
        assert table[first][first] == pytest.approx(1.0)

    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert f"{first}: predicts" in out and f"{second}: predicts" in out and "Agreement between models" in out


@pytest.mark.parametrize("models, extra, message", [
    ("ONE", [], "at least two"),
    ("ONE,no-such-model", [], "not a built-in model"),
    ("ONE,ONE2", ["--text", "   "], "The text is empty"),
    ("ONE,BROKEN", [], "Cannot load"),  # a folder the code cannot read: transformers' message was several lines
])
def test_one_input_bad_input_gets_one_line(tiny, random_classifier, isolated_cache, tmp_path, models, extra, message,
                                           capsys):
    second = str(save_keyword_model(random_classifier, tmp_path / "random"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-architecture"}')
    models = models.replace("ONE2", second).replace("ONE", tiny[0]).replace("BROKEN", str(broken))
    argv = ["compare-models", "--models", models, "--text", TEXT, "--methods", "saliency"] + extra
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_protocol_paper_003_compares_the_thesis_measures_on_the_twin(tiny, isolated_cache, capsys):
    """--protocol paper-003: faithfulness is the thesis's Def. 2.1 / 2.2 (|delta p|) on the model's twin; the
    protocol and the name of each check are in the export and the printed summary."""
    folder, argv = tiny
    args = [a if a != "known_feature,plausibility" else "faithfulness" for a in argv] + ["--protocol", "paper-003"]
    assert cli.main(args + ["--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["protocol"] == "paper-003" and "Def. 2.2" in printed["checks"]["faithfulness"]
    assert {r["metric"] for r in printed["rows"]} == {"comprehensiveness-003-code", "sufficiency-003-code"}
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "Protocol: paper-003." in out and "Comprehensiveness (paper 003 Def. 2.2" in out


def test_a_csv_that_is_no_dataset_is_refused_in_one_line(isolated_cache, tmp_path, capsys):
    """the header check runs before any run or progress bar; the message names the column to add."""
    import cli

    table = tmp_path / "accounts.csv"
    table.write_text("user,password\nalice,hunter2\n")
    assert cli.main(["compare-models", "--models", "default", "--dataset", f"file:{table}"]) == 2
    err = capsys.readouterr().err
    assert "'text' column is required" in err and "hunter2" not in err and len(err.strip().splitlines()) == 1
