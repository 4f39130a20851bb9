"""AML under model randomization: a randomized copy is another model, so AML is run with the original
model's G and says so (pAML), or fine-tunes that G on each copy (fAML); never silently, never an error per stage."""
from __future__ import annotations

import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv
from tiny_models import keyword_sentences

from evaluation.runs.store import ResultStore
from evaluation.sanity.dataset import results_frame, run_sanity_study
from evaluation.sanity.one_input import run_sanity
from evaluation.sanity.trained_methods import for_randomized_copies, randomization_note
from explainers import create
from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
from models import load_classifier

RECIPE = AMLRecipe(train_size=60, validation_size=12, epochs=1.0, lr=1e-3)  # the flow, not a good G
TEXT = "the movie was excellent and the music was long"


@pytest.fixture(scope="module")
def trained(keyword_classifier, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(tmp_path_factory.mktemp("aml-cache")))
        texts, _ = keyword_sentences(100, seed=7)
        yield prepare_aml(keyword_classifier, [(t, None) for t in texts], RECIPE, data_id="keyword-sentences",
                          log=lambda _: None)


def test_without_the_rule_every_randomized_stage_fails_for_aml(keyword_classifier, trained):
    result = run_sanity(keyword_classifier, keyword_classifier.encode(TEXT), {"aml": create("aml")}, cache=None)
    original, *randomized = result.stages
    assert "aml" in original.explanations
    assert randomized and all("No AML attribution model" in stage.errors["aml"] for stage in randomized)


def test_paml_on_randomized_copies_is_labelled_as_the_original_models_g(keyword_classifier, trained):
    explainers, notes = for_randomized_copies({"aml": create("aml"), "saliency": create("saliency")},
                                              keyword_classifier)
    assert list(notes) == ["aml"] and "the original model's G" in notes["aml"] and "fAML" in notes["aml"]
    assert explainers["aml"].params.source_fingerprint == keyword_classifier.fingerprint
    assert explainers["saliency"].params == create("saliency").params  # other methods untouched
    result = run_sanity(keyword_classifier, keyword_classifier.encode(TEXT), explainers, cache=None)
    original, *randomized = result.stages
    assert not any(stage.errors for stage in result.stages)
    assert not [w for w in original.explanations["aml"].warnings if "not for this one" in w]  # its own G
    for stage in randomized:
        explanation = stage.explanations["aml"]
        assert stage.fingerprint != keyword_classifier.fingerprint
        assert any(keyword_classifier.fingerprint in w and "not for this one" in w for w in explanation.warnings)
        assert explanation.provenance["details"]["trained_for_fingerprint"] == keyword_classifier.fingerprint


def test_faml_fine_tunes_the_original_g_on_each_copy_and_says_so(keyword_classifier, trained):
    explainers, notes = for_randomized_copies({"aml:fAML": create("aml", preset="fAML")}, keyword_classifier)
    assert "fine-tuned with fAML for 5 steps on each copy" in notes["aml:fAML"]
    assert explainers["aml:fAML"].preset == "fAML" and explainers["aml:fAML"].params.finetune_steps == 5
    result = run_sanity(keyword_classifier, keyword_classifier.encode(TEXT), explainers, cache=None)
    last = result.stages[-1].explanations["aml:fAML"].provenance["details"]
    assert last["mode"] == "fAML" and len(last["finetune_losses"]) == 5
    assert all(change > 0 for change in last["finetune_map_change"])  # the copy's own outputs move the map


def test_methods_that_train_nothing_get_no_note(keyword_classifier):
    assert randomization_note(create("marc"), keyword_classifier) is None
    assert randomization_note(create("lime"), keyword_classifier) is None
    named = create("aml", checkpoint="/some/folder")
    assert "checkpoint you named" in randomization_note(named, keyword_classifier)
    explainers, _ = for_randomized_copies({"aml": named}, keyword_classifier)
    assert explainers["aml"] is named  # refused per stage unless trained for that model, as the store says


def test_dataset_runs_apply_the_same_rule(keyword_classifier, tmp_path, monkeypatch):
    """A dataset sanity run explains every randomized stage with AML (the original model's G), with the note."""
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    folder = save_keyword_model(keyword_classifier, tmp_path / "model")
    texts, _ = keyword_sentences(100, seed=7)
    prepare_aml(load_classifier(str(folder)), [(t, None) for t in texts], RECIPE, data_id="keyword-sentences",
                log=lambda _: None)
    store, summary = run_sanity_study(str(folder), write_keyword_csv(tmp_path / "data.csv", 2, seed=5), ["aml"],
                                      store=ResultStore(tmp_path / "store.sqlite"))
    cells = list(store.cells(summary.run_id).values())
    assert all(not cell["errors"] and "the original model's G" in cell["notes"]["aml"] for cell in cells)
    frame = results_frame(store, summary.run_id)
    assert set(frame[frame["method"] == "aml"]["stage_index"]) >= {0, 1, 2}
