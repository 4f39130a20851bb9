"""Method agreement (rank correlations by hand) and the exports (CSV, JSON, HTML, PNG)."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from evaluation.agreement.measures import CAVEAT, agreement_matrix, top_k_table, top_words
from explainers import Explanation, create
from explainers.export import CSV_COLUMNS, scores_csv, scores_json


def explanation_record(method_id, words, scores, signed=True):
    """An Explanation record with given scores (the record type itself, as the cache stores it)."""
    n = len(words)
    return Explanation(method_id=method_id, method_label=method_id.title(), family="perturbation", signed=signed,
                       tokens=("[CLS]",) + tuple(words) + ("[SEP]",), token_word=(-1,) + tuple(range(n)) + (-1,),
                       words=tuple(words), word_segment=(0,) * n, word_scores=np.asarray(scores, dtype=float),
                       token_scores=None, target=1, target_label="positive",
                       provenance={"target": {"label": "positive", "how": "predicted"}, "baseline": "b",
                                   "removal_operator": "pad", "sign": "signed: x", "seed": 3, "preset": None,
                                   "seconds": 0.1, "forward_passes": 4, "backward_passes": 0,
                                   "model": {"fingerprint": "abc"}})


def ranks(values):
    order = np.argsort(values, kind="stable")
    result = np.empty(len(values))
    result[order] = np.arange(1, len(values) + 1)
    return result


def test_spearman_and_kendall_by_hand():
    words = ["a", "b", "c", "d", "e"]
    x = [0.1, -0.9, 0.5, 0.3, 0.7]
    y = [0.2, 0.1, 0.4, -0.8, 0.6]
    first, second = explanation_record("one", words, x), explanation_record("two", words, y)
    signed = agreement_matrix([first, second], "spearman", absolute=False)
    rx, ry = ranks(np.array(x)), ranks(np.array(y))
    d = rx - ry
    assert signed.matrix[0, 1] == pytest.approx(1 - 6 * (d ** 2).sum() / (5 * (25 - 1)))  # no ties
    assert signed.matrix[0, 0] == pytest.approx(1.0) and signed.matrix[1, 0] == signed.matrix[0, 1]
    kendall = agreement_matrix([first, second], "kendall", absolute=True)
    ax, ay = np.abs(x), np.abs(y)
    concordant = discordant = 0
    for i in range(5):
        for j in range(i + 1, 5):
            sign = np.sign(ax[i] - ax[j]) * np.sign(ay[i] - ay[j])
            concordant += sign > 0
            discordant += sign < 0
    assert kendall.matrix[0, 1] == pytest.approx((concordant - discordant) / 10)
    rows = kendall.to_rows()
    assert rows[0]["method"] == "One" and rows[0]["Two"] == pytest.approx(kendall.matrix[0, 1])
    assert "not faithfulness" in CAVEAT


def test_agreement_equals_scipy_for_every_pair_with_ties():
    from evaluation.statistics import kendall, spearman

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    vectors = [np.round(rng.normal(size=12), 1) for _ in range(5)]  # rounding makes ties
    records = [explanation_record(f"m{k}", words, v) for k, v in enumerate(vectors)]
    for measure, reference in (("spearman", spearman), ("kendall", kendall)):
        for absolute in (False, True):
            matrix = agreement_matrix(records, measure, absolute=absolute).matrix
            for a in range(5):
                for b in range(5):
                    x, y = (np.abs(vectors[a]), np.abs(vectors[b])) if absolute else (vectors[a], vectors[b])
                    assert matrix[a, b] == pytest.approx(reference(x, y), abs=1e-12)


def test_constant_scores_give_nan_and_other_inputs_are_refused():
    words = ["a", "b", "c"]
    constant = explanation_record("flat", words, [0.0, 0.0, 0.0])
    varied = explanation_record("varied", words, [1.0, 2.0, 3.0])
    matrix = agreement_matrix([constant, varied]).matrix
    assert np.isnan(matrix[0, 1]) and matrix[1, 1] == pytest.approx(1.0)
    assert agreement_matrix([constant, varied]).to_rows()[0]["Varied"] is None
    with pytest.raises(ValueError, match="same input"):
        agreement_matrix([varied, explanation_record("x", ["p", "q", "r"], [1, 2, 3])])


def test_top_words_signed_and_absolute():
    e = explanation_record("m", ["good", "bad", "film", "plot"], [0.5, -0.9, 0.1, 0.3])
    assert [w for w, _ in top_words(e, 3)] == ["good", "plot", "film"]
    assert [w for w, _ in top_words(e, 3, absolute=True)] == ["bad", "good", "plot"]
    row = top_k_table([e], k=2, absolute=True)[0]
    assert row["#1"] == "bad (-0.9)" and row["#2"] == "good (+0.5)"


@pytest.fixture(scope="module")
def explanations():
    from smooth_models import smooth_classifier

    classifier = smooth_classifier()
    encoding = classifier.encode("<b>bold</b> & \"quoted\" $x$ words", "the pair")
    return [create(m).explain(classifier, encoding) for m in ("leave_one_out", "saliency", "random")]


def test_csv_has_one_row_per_method_and_word_with_raw_and_display_scores(explanations):
    text = scores_csv(explanations, normalization="max-abs", absolute=False)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_COLUMNS
    n = explanations[0].n_words
    assert len(rows) == 3 * n
    loo = [r for r in rows if r["method"] == "leave_one_out"]
    raw = explanations[0].word_scores
    np.testing.assert_allclose([float(r["score"]) for r in loo], raw)
    np.testing.assert_allclose([float(r["display_score"]) for r in loo], raw / np.abs(raw).max())
    assert [r["word"] for r in loo] == list(explanations[0].words)
    assert [int(r["segment"]) for r in loo] == list(explanations[0].word_segment)
    assert {r["seed"] for r in rows if r["method"] == "random"} == {"0"}
    assert {r["removal_operator"] for r in loo} == {"delete"}


def test_json_keeps_provenance_and_display_scores(explanations):
    document = json.loads(scores_json(explanations, "abs-sum", True, context={"text": "x"}))
    assert document["display"]["normalization"] == "abs-sum" and document["context"] == {"text": "x"}
    first = document["explanations"][0]
    assert first["provenance"]["method"] == "leave_one_out"
    assert sum(first["display_word_scores"]) == pytest.approx(1.0)
    assert first["word_scores"] == pytest.approx(list(explanations[0].word_scores))


def test_html_export_is_self_contained_and_escaped(explanations):
    from ui.widgets.heatmap import export_html

    page = export_html(explanations, normalization="l1", title="<script>alert(1)</script>", header="h & h")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "&lt;script&gt;" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold" not in page
    assert page.count("<h2>") == 3 and "normalization: l1" in page and "seed: 0" in page
    assert "xw-sep" in page  # the pair boundary


def test_png_export_draws_every_method(explanations):
    from PIL import Image

    from ui.figures.heatmap_png import heatmap_png

    one = Image.open(io.BytesIO(heatmap_png(explanations[:1])))
    three = Image.open(io.BytesIO(heatmap_png(explanations, title="t $x$")))
    assert one.format == "PNG" and three.height > one.height  # a row per method
    pixels = np.asarray(three.convert("RGB")).reshape(-1, 3)
    assert (np.abs(pixels[:, 0].astype(int) - pixels[:, 2]) > 40).any()  # coloured cells, not a blank image
    with pytest.raises(ValueError):
        heatmap_png([])


# ----- the exports read on their own: the prediction and both colour scales (signed blue/red, unsigned purple) -----
@pytest.fixture(scope="module")
def bundle():
    """The page's export bundle of one signed method only, with the model context the Heatmaps page builds."""
    from smooth_models import smooth_classifier

    from ui.views.export import ExportBundle, page_context

    classifier = smooth_classifier()
    encoding = classifier.encode("a gentle and funny film")
    explanation = create("leave_one_out").explain(classifier, encoding, target=0)
    probabilities = classifier.proba_of(encoding)
    predicted = int(np.argmax(probabilities))
    expected = (f"Prediction: {classifier.labels[predicted]} ({probabilities[predicted]:.1%}) · explaining: "
                f"{classifier.labels[0]}")
    return ExportBundle([explanation], "word", "none", False, page_context(classifier, encoding, 0)), expected


def _rgba(rgb, alpha):
    return f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{alpha})"


def test_html_export_carries_the_prediction_and_both_colour_scales(bundle):
    from ui.widgets.heatmap import NEGATIVE, POSITIVE, UNSIGNED

    bundle, expected = bundle
    assert bundle.explanations[0].signed  # only a signed row: the purple scale must still be explained
    page = bundle.html()
    assert html_escape(expected) in page
    legend = page[page.index('class="xw-legend"'):]
    assert "signed methods" in legend and "unsigned methods" in legend
    assert _rgba(NEGATIVE, 0.8) in legend and _rgba(POSITIVE, 0.8) in legend and _rgba(UNSIGNED, 0.8) in legend
    assert page.index('class="xw-legend"') < page.index('class="xw-row"')  # above the rows, not after them


def test_png_export_carries_the_prediction_and_both_colour_scales(bundle):
    import matplotlib.pyplot as plt
    from PIL import Image

    from ui.figures.heatmap_png import heatmap_figure
    from ui.widgets.heatmap import UNSIGNED

    bundle, expected = bundle
    figure = heatmap_figure(bundle.explanations, title=bundle.title, prediction=bundle.prediction)
    texts = [t.get_text() for t in figure.axes[0].texts]
    plt.close(figure)
    assert expected in texts
    assert "signed methods:" in texts and "unsigned methods:" in texts
    pixels = np.asarray(Image.open(io.BytesIO(bundle.png())).convert("RGB")).reshape(-1, 3).astype(int)
    # the darkest purple of the scale (alpha 0.8 over white) is drawn although no row is unsigned
    purple = np.array([round(0.8 * c + 0.2 * 255) for c in UNSIGNED])
    assert (np.abs(pixels - purple).max(axis=1) <= 3).any()


def html_escape(text: str) -> str:
    import html

    return html.escape(text)
