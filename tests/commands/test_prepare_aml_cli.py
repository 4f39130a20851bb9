"""`cli.py prepare-aml` names the metric its checkpoint was selected on by its label: a tiny keyword
model saved to a folder, a user file of keyword sentences, a tiny recipe, a private cache."""
from __future__ import annotations

from roar_fixtures import save_keyword_model
from tiny_models import keyword_sentences

import cli


def test_prepare_aml_reports_the_metric_it_was_tuned_for(keyword_classifier, tmp_path, isolated_cache, capsys):
    folder = save_keyword_model(keyword_classifier, tmp_path / "keyword")
    texts, labels = keyword_sentences(40, seed=2)
    data = tmp_path / "keyword.csv"
    data.write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in zip(texts, labels)))
    assert cli.main(["prepare-aml", "--model", str(folder), "--data", f"file:{data}", "--train-size", "24",
                     "--validation-size", "8", "--epochs", "1"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("AML for ")]
    assert len(lines) == 1 and " tuned for Comprehensiveness (AOPC): validation " in lines[0], lines
    assert "{" not in lines[0].split(": validation")[0]  # the label, not the manifest's record
