"""The Heatmaps page builds AML's attribution model G on another encoder (paper 004 s. 3.3's decoder setting), with
AppTest: an AML choice that names a generator and has no G on it shows the offer with its estimate, a click builds it
in the background with the run's progress, and the page then explains with it (pAML, G on the generator). The real
default-quick is the explained model, G sits on the tiny keyword BERT (saved as a folder, as a user's model); a
decoder (the zoo's minilm-causal, where prepared) is offered G on the default encoder beside its own build."""
from __future__ import annotations

import time

import pytest
from conftest import ROOT
from roar_fixtures import save_keyword_model

pytestmark = pytest.mark.integration

TEXT = "the acting is superb but the plot is thin"
AML = "AML (attributive masking learning)"
TINY_BUDGET = "train_size=16,validation_size=8,epochs=1"  # a few steps: the flow, not the recipe


@pytest.fixture()
def cross_env(quick_classifier, keyword_classifier, tmp_path, monkeypatch):
    """default-quick as the app's model in a cache without any AML; the keyword BERT saved as G's generator."""
    from explainers import cache
    from models.prepare import find_prepared

    models = tmp_path / "cache" / "models"
    models.mkdir(parents=True)
    prepared = find_prepared("default-quick")
    (models / prepared.name).symlink_to(prepared)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setenv("EXWB_AML_BUDGET", TINY_BUDGET)
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    cache.DEFAULT_CACHE.clear()
    generator = str(save_keyword_model(keyword_classifier, tmp_path / "keyword"))
    yield models, generator
    cache.DEFAULT_CACHE.clear()


def open_page(methods, **state):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = TEXT
    at.session_state["keep:methods"] = list(methods)
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def set_generator(at, generator: str) -> None:
    """AML's 'Attribution model backbone' in the method settings (widgets generated from its Params)."""
    at.session_state["methods-settings"] = True
    at.session_state["methods-settings-of"] = "aml"
    at.run()
    next(w for w in at.text_input if w.key == "methods-aml-None-generator").set_value(generator)
    at.run()
    assert not at.exception, at.exception


def test_an_aml_choice_with_a_generator_offers_g_on_it_builds_it_then_explains(cross_env):
    from evaluation.runs.jobs import JOBS
    from explainers.mask_learning.aml_store import read_manifest

    models, generator = cross_env
    at = open_page(["aml"])
    set_generator(at, generator)
    notes = [i.value for i in at.info if i.value.startswith(f"{AML} needs an attribution model on '{generator}'")]
    assert len(notes) == 1 and "Comprehensiveness (AOPC)" in notes[0] and "none exists yet" in notes[0]
    label = f"Build the attribution model on '{generator}' (about "
    assert [b.label for b in at.button if b.label.startswith(label) and b.label.endswith(" min)")] != []
    assert not [b for b in at.button if b.label.startswith("Build the attribution model (about ")]  # not its own
    assert not [f for f in models.iterdir() if f.name.startswith("aml-")]  # nothing built before a click
    next(b for b in at.button if b.label.startswith(label)).click()
    at.run()
    assert not at.exception, at.exception
    assert any(p.text.startswith("0 of 1 builds") for p in at.get("progress"))  # the run's progress
    assert [b for b in at.button if b.label == "Stop building"]
    deadline = time.monotonic() + 300
    while JOBS.active():
        assert time.monotonic() < deadline, "the build did not finish"
        time.sleep(0.05)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    folders = [f for f in models.iterdir() if f.name.startswith("aml-")]
    assert len(folders) == 1 and "-g-" in folders[0].name  # beside the own-backbone folder, never in its place
    manifest = read_manifest(folders[0])
    assert manifest["generator"]["spec"] == generator and manifest["train_inputs"] <= 16  # the test's budget
    shown = at.session_state["heatmaps:export"].explanations
    assert [e.method_id for e in shown] == ["aml"]
    details = shown[0].provenance["details"]
    assert details["generator"]["spec"] == generator and details["mode"] == "pAML"
    assert not [b for b in at.button if b.label.startswith("Build the attribution model")]


def test_a_decoder_is_offered_g_on_the_default_encoder_beside_its_own(quick_classifier, tmp_path, monkeypatch):
    from models.prepare import find_prepared

    prepared = [find_prepared(name) for name in ("minilm-causal", "default")]
    if None in prepared:
        pytest.skip("needs the zoo's prepared minilm-causal and default (`cli.py prepare --model minilm-causal`)")
    models = tmp_path / "cache" / "models"  # both models, no attribution model of either
    models.mkdir(parents=True)
    for folder in prepared:
        (models / folder.name).symlink_to(folder)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EXWB_MODEL", "minilm-causal")
    at = open_page(["aml"])
    buttons = [b.label for b in at.button if b.label.startswith("Build the attribution model")]
    assert any(b.startswith("Build the attribution model (about ") for b in buttons)  # its own backbone
    assert any(b.startswith("Build the attribution model on 'default' (about ") for b in buttons)
    assert any("pAML-encoder-G" in c.value and "decoder" in c.value for c in at.caption)
    assert not at.error, [e.value for e in at.error]
    assert not [f for f in models.iterdir() if f.name.startswith("aml-")]  # nothing built before a click
