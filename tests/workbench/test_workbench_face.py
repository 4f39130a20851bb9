"""The library face on the tiny keyword model: the same numbers as the app's path, round trips through the versioned
file, the tables it returns against the evaluation code computed directly, escaped HTML, importers and datasets."""
from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace

import jsonschema
import numpy as np
import pandas as pd
import pytest
import torch
from conftest import ROOT
from matplotlib.figure import Figure

import workbench as wb
from evaluation.faithfulness.curves import evaluate_scores
from evaluation.faithfulness.one_input import evaluate_input
from evaluation.faithfulness.presets import BY_ID
from evaluation.metric import RANDOM_METHOD
from explainers import create
from explainers.choices import MethodChoice
from explainers.export import FormatError, read_document
from explainers.plan import make_plan, run_now

TEXT = "an excellent film , not boring"
METHODS = ["saliency", "integrated_gradients", "leave_one_out"]


@pytest.fixture(scope="module")
def explained(keyword_classifier):
    return wb.explain(keyword_classifier, TEXT, methods=METHODS)


def test_the_face_gives_bit_identical_scores_to_the_app_path_and_to_the_method_itself(keyword_classifier, explained):
    encoding = keyword_classifier.encode(TEXT)
    plan = make_plan([MethodChoice(m, None, {}) for m in METHODS], keyword_classifier, encoding, None,
                     budget=float("inf"))
    run_now(plan, keyword_classifier, encoding, None)
    for method, face in zip(METHODS, explained):
        app = plan.results[method]
        plain = create(method).explain(keyword_classifier, encoding, None)
        assert face.word_scores.tobytes() == app.word_scores.tobytes() == plain.word_scores.tobytes()
        assert face.target == app.target == plain.target


def test_to_frame_has_one_row_per_method_and_word(explained):
    frame = explained.to_frame()
    assert len(frame) == 3 * len(explained[0].words)
    saliency = frame[frame.method == "saliency"]
    assert saliency.word.tolist() == list(explained[0].words)
    np.testing.assert_array_equal(saliency.score.to_numpy(), explained[0].word_scores)


def test_save_then_load_gives_identical_scores_and_provenance_and_follows_the_schema(explained, tmp_path):
    path = explained.save(tmp_path / "e.json")
    document = json.loads(path.read_text())
    schema = json.loads((ROOT / "assets" / "schema" / "explanation-workbench-1.json").read_text())
    jsonschema.validate(document, schema)
    assert document["format"] == "explanation-workbench/1"
    loaded = wb.load(path)
    assert loaded.context == explained.context
    for a, b in zip(explained, loaded):
        assert a.word_scores.tobytes() == b.word_scores.tobytes()
        assert json.loads(json.dumps(a.provenance, default=str)) == b.provenance


def test_the_reader_keeps_reading_the_unversioned_cli_and_app_layouts(explained):
    items = [e.to_dict() for e in explained]
    old_cli = {"model": {"name": "m", "fingerprint": "f"}, "text": TEXT, "pair": None, "prediction": {"a": 1.0},
               "predicted": "a", "explanations": items, "skipped": {}}
    old_app = {"context": {"text": TEXT}, "display": {"normalization": "none", "absolute": False}, "explanations": items}
    for old in (old_cli, old_app):
        document = read_document(old)
        assert document.format == "unversioned" and document.context["text"] == TEXT
        assert document.explanations[1].word_scores.tobytes() == explained[1].word_scores.tobytes()
    with pytest.raises(FormatError, match="roar --import"):
        read_document({"format": "explanation-workbench-run/1", "explanations": []})


def test_faithfulness_is_the_evaluation_table_with_its_random_band(keyword_classifier, explained):
    table = wb.faithfulness(explained, n_random=4)
    direct = evaluate_input(keyword_classifier, keyword_classifier.encode(TEXT), {e.method_id: e for e in explained},
                            list(wb.scoring.DEFAULT_METRICS), None, n_random=4).table()
    pd.testing.assert_frame_equal(table, direct)
    assert {"random_low", "random_high", "vs_random"} <= set(table.columns) and RANDOM_METHOD in set(table.method)


def test_loaded_explanations_score_the_same_with_the_model_passed(keyword_classifier, explained, tmp_path):
    loaded = wb.load(explained.save(tmp_path / "e.json"))
    with pytest.raises(wb.UserFacingError, match="pass the model"):
        wb.faithfulness(loaded)
    pd.testing.assert_frame_equal(wb.faithfulness(loaded, model=keyword_classifier, n_random=3),
                                  wb.faithfulness(explained, n_random=3))


def test_agreement_of_a_method_with_itself_is_one_and_the_matrix_is_symmetric(explained):
    matrix = wb.agreement(explained)
    np.testing.assert_allclose(np.diag(matrix.to_numpy()), 1.0)
    np.testing.assert_allclose(matrix.to_numpy(), matrix.to_numpy().T)


def test_html_escapes_the_input_and_the_figure_is_a_plain_figure(keyword_classifier):
    e = wb.explain(keyword_classifier, "excellent <script>alert(1)</script>", methods=["saliency"])
    html = e._repr_html_()
    # typed text is split as the datasets are ("<", "script", ">"), and each word is escaped
    assert "<script" not in html and html.count("&lt;") >= 2
    assert isinstance(e.figure(), Figure)


def test_target_by_label_name_and_bad_targets_get_a_message(keyword_classifier):
    first = keyword_classifier.labels[0]
    e = wb.explain(keyword_classifier, TEXT, methods=["saliency"], target=first)
    assert e[0].target == 0
    with pytest.raises(wb.UserFacingError, match="no class"):
        wb.explain(keyword_classifier, TEXT, methods=["saliency"], target="nonsense")


# ----- importers: other tools' scores, scored by hand on the same numbers ---------------------------------------
@dataclass
class FerretExplanation:  # ferret's layout (ferret/explainers/explanation.py): text, tokens, scores, explainer, target
    text: str
    tokens: list
    scores: list
    explainer: str
    target: int


def hand_word_scores(encoding, token_scores):
    return np.array([sum(s for s, w in zip(token_scores, encoding.token_word) if w == word)
                     for word in range(encoding.n_words)])


def test_a_ferret_explanation_imported_and_scored_gives_the_numbers_of_its_summed_word_scores(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    token_scores = np.linspace(-1, 2, len(encoding.tokens))
    ferret = [FerretExplanation(TEXT, list(encoding.tokens), list(token_scores), "Partition SHAP", 1)]
    imported = wb.from_ferret(ferret, keyword_classifier)
    expected_words = hand_word_scores(encoding, token_scores)
    np.testing.assert_allclose(imported[0].word_scores, expected_words)
    metric = "comprehensiveness-ferret"
    table = wb.faithfulness(imported, metrics=[metric], n_random=0)
    by_hand = evaluate_scores(keyword_classifier, encoding, [BY_ID[metric]], expected_words,
                              {"target": "1"}).values[metric]
    assert table.value.iloc[0] == pytest.approx(by_hand, abs=1e-12)


def test_an_inseq_output_imported_takes_the_last_step_summed_over_the_hidden_size(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    n, steps, hidden = len(encoding.tokens), 3, 4
    rng = np.random.default_rng(0)
    granular = torch.tensor(rng.normal(size=(n, steps, hidden)))
    source = [SimpleNamespace(token=t, id=i) for t, i in zip(encoding.tokens, encoding.input_ids)]
    output = SimpleNamespace(sequence_attributions=[SimpleNamespace(source=source, target=[],
                             source_attributions=granular, target_attributions=None)],
                             info={"input_texts": [TEXT], "attribution_method": "integrated_gradients"})
    imported = wb.from_inseq(output, keyword_classifier, target=1)
    expected = hand_word_scores(encoding, granular.numpy()[:, -1, :].sum(axis=1))
    np.testing.assert_allclose(imported[0].word_scores, expected)
    table = wb.faithfulness(imported, metrics=["comprehensiveness-eraser"], n_random=0)
    by_hand = evaluate_scores(keyword_classifier, encoding, [BY_ID["comprehensiveness-eraser"]], expected,
                              {"target": "1"}).values["comprehensiveness-eraser"]
    assert table.value.iloc[0] == pytest.approx(by_hand, abs=1e-12)


def test_tokens_of_another_tokenizer_are_refused_with_a_message(keyword_classifier):
    with pytest.raises(wb.UserFacingError, match="do not match"):
        wb.from_token_scores(keyword_classifier, TEXT, ["x", "y"], [0.1, 0.2], method="other")


def test_plausibility_is_score_example_per_method_with_a_random_band(keyword_classifier, explained):
    from evaluation.plausibility.metrics import PlausibilityConfig
    from evaluation.plausibility.one_input import score_example

    rationale = [0, 1, 0, 0, 0, 0]  # "excellent"
    table = wb.plausibility(explained, rationale).set_index("method")
    encoding = keyword_classifier.encode(TEXT)
    for e in explained:
        direct = score_example(encoding, e.word_scores, rationale, PlausibilityConfig()).metrics
        assert table.loc[e.method_id, list(direct)].tolist() == pytest.approx(list(direct.values()), nan_ok=True)
    numeric = table.loc[["random_low", "random", "random_high"]].select_dtypes("number").dropna(axis=1)
    assert (numeric.loc["random_low"] <= numeric.loc["random"] + 1e-12).all()
    assert (numeric.loc["random"] <= numeric.loc["random_high"] + 1e-12).all()


def test_sanity_is_run_sanity_s_frame_with_its_chance_band(keyword_classifier):
    from evaluation.sanity.one_input import run_sanity

    e = wb.explain(keyword_classifier, TEXT, methods=["saliency"])
    frame = wb.sanity(e)
    direct = run_sanity(keyword_classifier, keyword_classifier.encode(TEXT), ["saliency"], target=e[0].target)
    pd.testing.assert_frame_equal(frame[direct.frame().columns], direct.frame())
    assert "chance_spearman_high" in frame.columns


def test_a_contrast_class_gives_leave_one_out_of_the_difference_of_the_two_classes_scores(keyword_classifier):
    from explainers.scores import class_score
    from models import Operator, perturbed_logits

    e = wb.explain(keyword_classifier, TEXT, methods=["leave_one_out"], target=1, contrast=0,
                   params={"leave_one_out": {"score": "probability"}})
    encoding = keyword_classifier.encode(TEXT)
    n = encoding.n_words
    keep = np.ones((n + 1, n), dtype=bool)
    keep[np.arange(1, n + 1), np.arange(n)] = False  # row 0 the input, row i + 1 without word i
    logits = perturbed_logits(keyword_classifier, encoding, keep, Operator(e[0].provenance["removal_operator"]))
    difference = class_score(logits, 1, "probability") - class_score(logits, 0, "probability")
    np.testing.assert_allclose(e[0].word_scores, difference[0] - difference[1:], atol=1e-6)
    assert e[0].provenance["target"]["contrast"]["index"] == 0  # the app's contrast path (explainers/contrast.py)
    refused = wb.explain(keyword_classifier, TEXT, methods=["saliency", "marc"], target=1, contrast=0)
    assert [x.method_id for x in refused] == ["saliency"] and "contrast" in refused.skipped["marc"]


def test_compare_models_on_one_input_is_the_page_s_comparison(keyword_classifier, random_classifier):
    from evaluation.suite.model_comparison import compare_models

    scores, matrices = wb.compare_models({"keyword": keyword_classifier, "random": random_classifier}, TEXT,
                                         methods=["leave_one_out"])
    direct = compare_models({"keyword": keyword_classifier, "random": random_classifier}, TEXT, None,
                            ["leave_one_out"])
    pd.testing.assert_frame_equal(scores, direct.scores_frame())
    np.testing.assert_allclose(matrices["leave_one_out"].to_numpy(), direct.agreement("leave_one_out").matrix)


def test_a_document_longer_than_the_window_is_explained_over_every_word_as_the_cli_reads_it(keyword_classifier):
    """The face reads a text as the CLI and the pages do (models/documents.read_input): whole, in windows."""
    from models.documents import read_input

    document = " ".join(["a good movie ."] * 300)  # 1,200 words, far beyond the tiny model's window
    e = wb.explain(keyword_classifier, document, methods=["leave_one_out"], target=1)
    direct = read_input(keyword_classifier, document)
    assert e[0].provenance["input"]["windows"]["windows"] > 1 and len(e[0].word_scores) == direct.n_words == 1200
    sentences = wb.explain(keyword_classifier, document, methods=["leave_one_out"], target=1,
                           document={"granularity": "sentence"})
    assert len(sentences[0].word_scores) == 300
