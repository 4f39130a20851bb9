"""The Counterfactuals page with AppTest on the real quick classifier.

The masked LM is a tiny one written into an isolated cache here (random weights over MiniLM's vocabulary, with
the output bias of "the" raised so the masked LM predicts "the" as itself with p ~ 1): the page must flag that
word, and IM must give it ~0, whatever the classifier does. A second test checks the page without any masked
LM built: a clear message and a build button, no traceback.
"""
from __future__ import annotations

import html
import json

import pytest
import torch
from conftest import ROOT
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/6_Counterfactuals.py"
TEXT = "the acting is superb , but the plot is dull"


@pytest.fixture()
def page_cache(monkeypatch, quick_cache):
    """An isolated cache that sees the prepared default-quick classifier but no masked LM."""
    from explainers.cache import DEFAULT_CACHE
    from models.mlm import clear_loaded

    cache = quick_cache.parent
    monkeypatch.setattr(DEFAULT_CACHE, "directory", cache / "explanations")
    clear_loaded()
    yield cache
    clear_loaded()


def install_tiny_mlm() -> str:
    """A tiny BertForMaskedLM with MiniLM's vocabulary written where ``load_filler('mlm')`` finds it."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from models.mlm import evaluate_filler, mlm_folder
    from models.mlm.filler import MaskedLMFiller
    from models.prepare import base_model_dir, file_sha256

    tokenizer = AutoTokenizer.from_pretrained(base_model_dir())
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32, max_position_embeddings=128))
    with torch.no_grad():
        model.cls.predictions.bias[tokenizer.convert_tokens_to_ids("the")] = 40.0
    folder = mlm_folder()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    filler = MaskedLMFiller(model, tokenizer, name="mlm", device="cpu")
    evaluation = {"sst2:dev": evaluate_filler(filler, [("the film is good", None), ("a dull , long movie", None)])}
    manifest = {"name": "mlm", "stand_in": True, "weights_sha256": file_sha256(folder / "model.safetensors"),
                "evaluation": evaluation}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder.name


def _open(monkeypatch) -> AppTest:
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"]
    at.run()
    assert not at.exception, at.exception
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input(TEXT).run()
    assert not at.exception, at.exception
    return at


def _html(at) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def test_page_without_a_masked_lm_says_how_to_build_it(monkeypatch, page_cache):
    at = _open(monkeypatch)
    assert [t.value for t in at.title] == ["Masked-LM counterfactuals"]
    assert any("not built on this machine" in w.value and "prepare-mlm" in w.value for w in at.warning)
    assert any(b.label == "Build the masked LM now" for b in at.button)
    assert not at.error
    # nothing computed with a masked LM (the deletion grid and the word replacer need none)
    assert not any("top-1" in d.value.columns or any(str(c).startswith("Input Marginalization") for c in d.value.columns)
                   for d in at.dataframe)
    assert any("removed" in d.value.columns for d in at.dataframe)  # the deletion grid


def test_inspector_flags_predictable_words_and_im_gives_them_zero(monkeypatch, page_cache):
    install_tiny_mlm()
    at = _open(monkeypatch)
    assert not at.error, [e.value for e in at.error]
    assert any("small stand-in for BERT" in i.value and "top-1" in i.value for i in at.info)
    table = next(df.value for df in at.dataframe if "top-1" in df.value.columns)
    assert list(table["word"]) == TEXT.split()
    the_rows = table[table["word"] == "the"]
    assert the_rows["top-1"].eq("the").all() and (the_rows["p1"] > 0.99).all() and the_rows["predictable"].all()
    assert not table[table["word"] != "the"]["predictable"].any()
    assert (table[table["word"] != "the"]["top-1"] == "the").all()  # the raised bias wins everywhere
    assert any("near zero by construction" in w.value and "'the'" in w.value for w in at.warning)
    assert at.metric[0].value == "2 / 10"
    page = _html(at)
    assert "&#9888;" in page and html.escape("superb") in page
    scores = next(df.value for df in at.dataframe if "p(original)" in df.value.columns and "predictable" in
                  df.value.columns and any(c.startswith("Input Marginalization") for c in df.value.columns))
    im = scores[[c for c in scores.columns if c.startswith("Input Marginalization")][0]]
    loo = scores[[c for c in scores.columns if c.startswith("Leave-one-out")][0]]
    assert im[scores["word"] == "the"].abs().max() < 1e-6  # p(the) ~ 1: IM cannot see the word
    assert loo[scores["word"] == "the"].abs().max() > 1e-3  # deleting it does change the prediction a little
    assert any(m.value.startswith("**Input Marginalization**") for m in at.markdown)
    # lower the flag threshold: the same table, more words cannot be flagged (only "the" is top-1 itself)
    at.slider(key="cf-threshold").set_value(0.05).run()
    assert not at.exception, at.exception
    assert at.metric[0].value == "2 / 10"


def test_minimal_flip_without_a_masked_lm_removes_words(monkeypatch, page_cache, quick_classifier):
    from evaluation.errors import minimal_flip

    at = _open(monkeypatch)
    assert not at.exception and not at.error
    expected = minimal_flip(quick_classifier, quick_classifier.encode(TEXT))
    assert at.radio(key="cf-flip-mode").options == ["remove words (deleted, the rest re-tokenized)"]
    diff = next(h.proto.body for h in at.get("html") if 'class="xw-flip"' in h.proto.body)
    assert diff.count("<del") == expected.size
    for status, word, _ in expected.diff():
        if status == "removed":
            assert f">{html.escape(word)}</del>" in diff
    if expected.found:
        assert any(m.value.startswith(f"**Removing {expected.size} word(s)**") for m in at.markdown)
    else:
        assert any("No change of at most" in w.value for w in at.warning)
    # the page says which search ran (greedy unless the exact search proved the size)
    assert any(f"search: **{expected.search}**" in c.value for c in at.caption)
    said = "exact search" if expected.search == "exact" else "greedy search"
    assert any(said in m.value for m in [*at.markdown, *at.warning])


def test_minimal_flip_with_the_masked_lm_replaces_words(monkeypatch, page_cache):
    install_tiny_mlm()
    at = _open(monkeypatch)
    mode = at.radio(key="cf-flip-mode")
    assert len(mode.options) == 2
    mode.set_value("replace").run()
    assert not at.exception and not at.error, at.exception
    diff = next(h.proto.body for h in at.get("html") if 'class="xw-flip"' in h.proto.body)
    if any(m.value.startswith("**Replacing") for m in at.markdown):
        assert diff.count("<ins") >= 1 and diff.count("<ins") == diff.count("<del")
    else:
        assert any("No change of at most" in w.value for w in at.warning)


def test_edit_in_place_shows_the_prediction_and_heatmaps_of_the_edit(monkeypatch, page_cache, quick_classifier):
    at = _open(monkeypatch)
    box = next(t for t in at.text_area if t.label == "Edit the text")
    assert box.value == TEXT
    edited = "the acting is superb , and the plot is gripping"
    box.input(edited).run()
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if list(df.value["input"]) == ["original", "edited"])
    expected = quick_classifier.predict_text(edited)
    label = quick_classifier.labels[1]
    assert table[label].iloc[1] == pytest.approx(expected[1], abs=1e-3)
    page = _html(at)
    assert "gripping" in page and "dull" in page  # the edited and the original rows
    next(t for t in at.text_area if t.label == "Edit the text").input("   ").run()
    assert any("edited text is empty" in w.value for w in at.warning)
    assert at.text_area(key="text").value == TEXT  # the page's input is untouched
