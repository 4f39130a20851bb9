"""MaRC and AML on the Heatmaps page with bad input: a one-word input, a text longer than the model reads,
a model without a [MASK] token, an AML checkpoint of another model. Each gets a clear message, never a traceback.
The app runs a tiny model saved to a folder (64 positions, no [MASK] token) with an attribution model built for it."""
from __future__ import annotations

import time

import pytest
from conftest import ROOT

AML = "AML (attributive masking learning)"
MARC = "MaRC (mask optimization)"


@pytest.fixture(scope="module")
def app_model(keyword_classifier, random_classifier, tmp_path_factory):
    """(folder of the no-[MASK] keyword model, G folder of another model); the app's model is the first."""
    from tiny_models import keyword_sentences

    from explainers import cache
    from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
    from models import load_classifier

    root = tmp_path_factory.mktemp("bad-input")
    folder = root / "keyword-no-mask"
    keyword_classifier.model.save_pretrained(folder)
    tokenizer = keyword_classifier.tokenizer
    saved_mask = tokenizer.mask_token
    tokenizer.mask_token = None  # saved without [MASK]: AML falls back to [UNK]
    try:
        tokenizer.save_pretrained(folder)
    finally:
        tokenizer.mask_token = saved_mask
    recipe = AMLRecipe(train_size=40, validation_size=8, epochs=1.0, lr=1e-3)
    texts, _ = keyword_sentences(60, seed=5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(root / "cache"))
        patch.setenv("EXWB_MODEL", str(folder))
        patch.setattr(cache.DEFAULT_CACHE, "directory", None)
        cache.DEFAULT_CACHE.clear()
        model = load_classifier(str(folder))
        assert model.tokenizer.mask_token is None
        prepare_aml(model, [(t, None) for t in texts], recipe, data_id="keyword-sentences", log=lambda _: None)
        other = prepare_aml(random_classifier, [(t, None) for t in texts], recipe, data_id="keyword-sentences",
                            log=lambda _: None)
        yield folder, other
        cache.DEFAULT_CACHE.clear()


@pytest.fixture()
def background_jobs():
    from explainers.method_jobs import METHOD_JOBS

    yield METHOD_JOBS
    METHOD_JOBS.stop_all(wait=60)


def open_page(text: str, methods=("aml",)):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = text
    at.session_state["keep:methods"] = list(methods)
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    at.run()
    assert not at.exception, at.exception
    return at


def shown(at) -> list[str]:
    return [e.method_id for e in at.session_state["heatmaps:export"].explanations]


def test_one_word_and_no_mask_token(app_model, background_jobs):
    at = open_page("excellent", methods=("aml", "marc"))
    assert not at.error, [e.value for e in at.error]
    assert shown(at) == ["aml"]
    assert any("has no [MASK] token; AML masks toward [UNK] instead" in w.value for w in at.warning)
    assert any(e.label.startswith("Provenance: tuned for ") and "[UNK] embedding" in e.label for e in at.expander)
    next(b for b in at.button if b.label.startswith(f"Run {MARC}")).click()
    at.run()
    deadline = time.monotonic() + 120
    while background_jobs.running():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sorted(shown(at)) == ["aml", "marc"]
    marc = next(e for e in at.session_state["heatmaps:export"].explanations if e.method_id == "marc")
    assert marc.words == ("excellent",) and 0 <= marc.word_scores[0] <= 1


def test_a_text_longer_than_the_model_reads(app_model):
    at = open_page(" ".join(["the movie was excellent and long"] * 20), methods=("aml", "marc"))
    assert any("read whole in" in c.value for c in at.caption)  # long documents: windows, not a cut
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("This text is longer than the 64 tokens the model reads (it is "
                                                     "read in ") and "use MaRC (overlapping segments)" in errors[0]
    assert any(b.label.startswith(f"Run {MARC}") for b in at.button)  # MaRC takes the whole text in segments


def test_an_aml_checkpoint_of_another_model(app_model):
    _, other = app_model
    at = open_page("the film was excellent")
    at.session_state["methods-settings"] = True  # the method settings panel, open on AML
    at.session_state["methods-settings-of"] = "aml"
    at.run()
    at.text_input(key="methods-aml-None-checkpoint").input(str(other))
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "was trained to explain 'tiny-random-0'" in errors[0]
    assert "An AML explains only the model it was trained on" in errors[0] and "\n" not in errors[0]
    assert shown(at) == []
