"""`cli.py explain` names the metric an AML explanation was selected on ("tuned for ..."), as the app's badge does
(mask learning): a tiny model saved to a folder and an attribution model built for it in a private cache."""
from __future__ import annotations

import cli


def test_explain_prints_amls_tuned_for_badge(keyword_classifier, tmp_path, monkeypatch, capsys):
    from tiny_models import keyword_sentences

    from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
    from models import load_classifier

    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    texts, _ = keyword_sentences(30, seed=2)
    prepare_aml(load_classifier(str(folder)), [(t, None) for t in texts],
                AMLRecipe(train_size=16, validation_size=8, epochs=1.0), log=lambda _: None)
    assert cli.main(["explain", "--model", str(folder), "--text", "the film was excellent", "--methods",
                     "aml,saliency", "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    aml = [line for line in lines if line.startswith("aml ")]
    assert len(aml) == 1 and aml[0].endswith("  [tuned for Comprehensiveness (AOPC)]")
    assert not [line for line in lines if line.startswith("saliency ") and "tuned for" in line]
