"""`cli.py evaluate` warns where AML is scored by the metric it was selected on: a tiny model saved to a
folder, an attribution model built for it in a private cache, a three-line user file."""
from __future__ import annotations

import cli


def test_aml_scored_on_its_selection_metric_gets_a_warning_line(keyword_classifier, tmp_path, monkeypatch, capsys):
    from tiny_models import keyword_sentences

    from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
    from models import load_classifier

    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    cache = tmp_path / "cache"
    texts, labels = keyword_sentences(40, seed=2)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))  # a private cache: the attribution model and the result store
    prepare_aml(load_classifier(str(folder)), [(t, None) for t in texts],
                AMLRecipe(train_size=24, validation_size=8, epochs=1.0), log=lambda _: None)
    data = tmp_path / "three.csv"
    data.write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in zip(texts[:3], labels[:3])))

    def evaluate(metrics: str) -> str:
        assert cli.main(["evaluate", "--model", str(folder), "--dataset", f"file:{data}", "--methods", "aml,saliency",
                         "--metrics", metrics, "--random-orderings", "0"]) == 0
        return capsys.readouterr().err

    warnings = [line for line in evaluate("eraser").splitlines() if "optimistic by construction" in line]
    assert warnings == ["warning: AML (attributive masking learning) is tuned for Comprehensiveness (AOPC): its "
                        "Comprehensiveness (AOPC) score is optimistic by construction (it was selected on that "
                        "metric); compare methods on another one."]
    assert "optimistic by construction" not in evaluate("deletion")
