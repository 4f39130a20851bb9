"""Removal curves with a contrast class read p(A) - p(B) after removal, checked against the perturbation
engine called directly; a metric that reads one class refuses a contrastive run."""
from __future__ import annotations

import numpy as np
import pytest
from tiny_models import wide_three_class

from evaluation.faithfulness.curves import RemovalOptions, evaluate_orders, keep_rows, target_class
from evaluation.faithfulness.presets import BY_ID
from explainers import create
from explainers.scores import softmax
from models.perturb import perturbed_logits

TEXT = "the movie was excellent and the music was long"


@pytest.fixture(scope="module")
def three_class():
    return wide_three_class()


def test_curve_scores_are_the_probability_difference_after_removal(three_class):
    encoding = three_class.encode(TEXT)
    metric = BY_ID["comprehensiveness-eraser"]
    order = np.arange(encoding.n_words)[::-1]
    options = RemovalOptions(target=0, contrast=2)
    (result,) = evaluate_orders(three_class, encoding, [metric], order[None], options)
    curve = result.curves[metric.id]
    keep = keep_rows(order, np.asarray(curve.counts), metric.mode)
    p = softmax(perturbed_logits(three_class, encoding, keep, metric.operator))
    np.testing.assert_allclose(curve.scores, p[:, 0] - p[:, 2], rtol=1e-6, atol=1e-9)
    p0 = softmax(three_class.logits_of(encoding)[None])[0]
    assert curve.start == pytest.approx(p0[0] - p0[2])
    plain = evaluate_orders(three_class, encoding, [metric], order[None], RemovalOptions(target=0))[0]
    assert not np.allclose(plain.curves[metric.id].scores, curve.scores)  # the contrast changed what is read


def test_the_explanation_and_the_metric_must_share_the_contrast(three_class):
    encoding = three_class.encode(TEXT)
    metric = BY_ID["comprehensiveness-eraser"]
    explanation = create("leave_one_out", contrast=1).explain(three_class, encoding, 0)
    order = np.argsort(-explanation.word_scores)
    evaluate_orders(three_class, encoding, [metric], order[None], RemovalOptions(target=0, contrast=1),
                    explanation=explanation)  # the same contrast: accepted
    with pytest.raises(ValueError, match="same --contrast"):
        evaluate_orders(three_class, encoding, [metric], order[None], RemovalOptions(target=0, contrast=2),
                        explanation=explanation)
    with pytest.raises(ValueError, match="same --contrast"):
        evaluate_orders(three_class, encoding, [metric], order[None], RemovalOptions(target=0),
                        explanation=explanation)


def test_a_metric_that_reads_one_class_refuses_a_contrast(three_class):
    logits = three_class.logits_of(three_class.encode(TEXT))
    assert target_class(RemovalOptions(target=0), logits) == 0
    with pytest.raises(ValueError, match="without a contrast class"):
        target_class(RemovalOptions(target=0, contrast=1), logits)
