"""Contrastive targets: "why A rather than B" against values computed another way.

For a method linear in its output the contrastive explanation must equal the explanation of A minus the
explanation of B (two single-class runs); for a non-linear one (a gradient's l2 norm) it must equal the method
applied to the difference, computed here by hand with autograd.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import wide_three_class

from explainers import ParamError, create
from explainers import contrast as contrast_policy
from explainers.cache import ExplanationCache, cache_key
from explainers.embedding_forward import embedding_function

TEXT = "the movie was excellent and the music was long"

LINEAR = [  # (method, params): linear in the score they read, so contrast = explain(A) - explain(B)
    ("input_x_gradient", {}),
    ("input_x_gradient", {"output": "probability"}),
    ("integrated_gradients", {"n_steps": 16}),
    ("leave_one_out", {"score": "probability"}),
    ("leave_one_out", {"score": "log2-odds", "operator": "mask"}),
    ("occlusion", {"score": "logit"}),
]


@pytest.fixture(scope="module")
def three_class():
    return wide_three_class()


@pytest.mark.parametrize("method,params", LINEAR, ids=[f"{m}-{'-'.join(map(str, p.values()))}" for m, p in LINEAR])
def test_linear_methods_equal_the_difference_of_two_single_class_explanations(three_class, method, params):
    encoding = three_class.encode(TEXT)
    a, b = 0, 2
    one = create(method, **params).explain(three_class, encoding, a)
    other = create(method, **params).explain(three_class, encoding, b)
    both = create(method, contrast=b, **params).explain(three_class, encoding, a)
    difference = one.word_scores - other.word_scores
    assert np.abs(difference).max() > 1e-6  # the two classes' explanations differ, so the check is not vacuous
    np.testing.assert_allclose(both.word_scores, difference, rtol=1e-4, atol=1e-6)
    assert np.abs(difference).max() > 1e-2  # of the order of the scores
    assert both.provenance["target"]["contrast"]["index"] == b
    assert both.target == a


def test_signed_saliency_gradient_is_the_difference_of_the_two_gradients(three_class):
    """Saliency without abs: its gradient pass (before any reduction) for A against B is grad A - grad B. (The
    signed sum over hidden units vanishes on BERT-style models, VANISHING_SUM, so the vectors are compared.)"""
    from explainers.shared_passes import gradient_pass

    encoding = three_class.encode(TEXT)
    for output in ("logit", "probability"):
        _, grad_a = gradient_pass(three_class, encoding, 0, output)
        _, grad_b = gradient_pass(three_class, encoding, 2, output)
        with contrast_policy.contrasting(2):
            _, grad_ab = gradient_pass(three_class, encoding, 0, output)
        assert (grad_a - grad_b).abs().max() > 1e-6
        torch.testing.assert_close(grad_ab, grad_a - grad_b, rtol=1e-4, atol=1e-7)


def test_ig_completeness_holds_for_the_logit_difference(three_class):
    encoding = three_class.encode(TEXT)
    explanation = create("integrated_gradients", n_steps=64, contrast=1).explain(three_class, encoding, 0)
    forward, embeddings = embedding_function(three_class, encoding, "logit")
    from explainers.embedding_forward import baseline_embeddings

    with torch.no_grad():
        z_input = forward(embeddings)[0]
        z_base = forward(baseline_embeddings(three_class, encoding, "pad"))[0]
    gap = float((z_input[0] - z_input[1]) - (z_base[0] - z_base[1]))  # forward is outside the contrast: plain z
    assert explanation.token_scores.sum() == pytest.approx(gap, abs=2e-3 * max(1.0, abs(gap)))


def test_l2_saliency_is_the_norm_of_the_gradient_of_the_difference(three_class):
    """Non-linear: not the difference of the two norms, but the norm of d(z_A - z_B)/dx, by hand."""
    encoding = three_class.encode(TEXT)
    forward, embeddings = embedding_function(three_class, encoding, "logit")
    x = embeddings.clone().requires_grad_()
    logits = forward(x)[0]
    (gradient,) = torch.autograd.grad(logits[1] - logits[2], x)
    expected = gradient[0].norm(dim=-1).numpy()
    explanation = create("saliency", reduction="l2", contrast=2).explain(three_class, encoding, 1)
    np.testing.assert_allclose(explanation.token_scores, expected, rtol=1e-4, atol=1e-7)


def test_runner_up_is_the_most_likely_other_class(three_class):
    encoding = three_class.encode(TEXT)
    logits = three_class.logits_of(encoding)
    order = np.argsort(-logits)
    explanation = create("leave_one_out", contrast="runner-up").explain(three_class, encoding)
    assert explanation.target == order[0]
    assert explanation.provenance["target"]["contrast"]["index"] == order[1]
    assert explanation.provenance["target"]["contrast"]["requested"] == "runner-up"


def test_bad_contrasts_get_a_message(three_class):
    encoding = three_class.encode(TEXT)
    with pytest.raises(ParamError, match="target class itself"):
        create("saliency", contrast=1).explain(three_class, encoding, 1)
    with pytest.raises(ParamError, match="does not exist"):
        create("saliency", contrast=7).explain(three_class, encoding, 0)
    with pytest.raises(ParamError, match="contrast must be"):
        create("saliency", contrast="other")
    with pytest.raises(ParamError, match="does not take a contrast"):
        create("marc", contrast=1)


def test_a_method_that_reads_no_class_says_the_contrast_changes_nothing(three_class):
    encoding = three_class.encode(TEXT)
    plain = create("attention").explain(three_class, encoding, 0)
    contrasted = create("attention", contrast=1).explain(three_class, encoding, 0)
    np.testing.assert_array_equal(plain.word_scores, contrasted.word_scores)
    assert contrasted.provenance["target"]["contrast"] is None
    assert "changes nothing" in contrasted.provenance["target"]["contrast_note"]


def test_the_cache_key_includes_the_contrast(three_class):
    encoding = three_class.encode(TEXT)
    plain, contrasted = create("saliency"), create("saliency", contrast=1)
    assert cache_key(three_class, encoding, plain, 0) != cache_key(three_class, encoding, contrasted, 0)
    assert cache_key(three_class, encoding, contrasted, 0) == cache_key(three_class, encoding,
                                                                        create("saliency", contrast="1"), 0)


def test_shared_passes_keep_contrastive_and_plain_apart(three_class):
    """Inside one sharing() block a plain and a contrastive member must not reuse each other's pass."""
    from explainers.shared_passes import explain_all

    encoding = three_class.encode(TEXT)
    methods = [create("input_x_gradient"), create("input_x_gradient", contrast=2), create("saliency", reduction="sum",
                                                                                             contrast=2)]
    plain, contrasted, saliency = explain_all(methods, three_class, encoding, 0, cache=ExplanationCache(directory=None))
    alone = create("input_x_gradient", contrast=2).explain(three_class, encoding, 0)
    np.testing.assert_allclose(contrasted.word_scores, alone.word_scores, rtol=1e-5, atol=1e-7)
    assert np.abs(plain.word_scores - contrasted.word_scores).max() > 1e-6


def test_policy_parse():
    assert contrast_policy.parse(None) is None and contrast_policy.parse("none") is None
    assert contrast_policy.parse("2") == 2 and contrast_policy.parse("Runner-up") == "runner-up"
    assert contrast_policy.resolve("runner-up", [0.1, 3.0, 2.0], 1) == 2


def test_exports_name_the_contrast_class(three_class):
    import csv
    import io
    import json

    from explainers.export import scores_csv, scores_json

    encoding = three_class.encode(TEXT)
    contrasted = create("leave_one_out", contrast=2).explain(three_class, encoding, 0)
    plain = create("leave_one_out").explain(three_class, encoding, 0)
    rows = list(csv.DictReader(io.StringIO(scores_csv([contrasted, plain]))))
    assert {r["contrast"] for r in rows if r["method"] == "leave_one_out"} == {"2", ""}
    assert rows[0]["contrast_label"] == three_class.labels[2]
    document = json.loads(scores_json([contrasted]))
    assert document["explanations"][0]["provenance"]["target"]["contrast"]["index"] == 2
