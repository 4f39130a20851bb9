"""explainers/shared_passes.py: methods that share a pass give, from the group, the scores each gives alone; the
pass runs once (counted passes); each member is cached under its own key with a provenance naming the group."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from captum.attr import InputXGradient as CaptumInputXGradient
from tolerances import float32_tolerance

from explainers import create
from explainers.cache import ExplanationCache, cached_only
from explainers.embedding_forward import embedding_function
from explainers.shared_passes import explain_all, pass_groups, sharing

TEXT = "the movie was a film that this story had excellent scenes with actors and music"

GRADIENT = [("saliency", {}), ("saliency", {"reduction": "onehot-l2"}), ("saliency", {"reduction": "sum"}),
            ("saliency", {"reduction": "l1"}), ("input_x_gradient", {}), ("input_x_gradient", {"absolute": True})]
IG = [("integrated_gradients", {}), ("integrated_gradients", {"absolute": True})]
REMOVAL = [("leave_one_out", {}), ("leave_one_out", {"score": "probability"}),
           ("occlusion", {"window": 1, "operator": "delete"}),
           ("occlusion", {"window": 1, "operator": "delete", "score": "logit"})]


def build(specs):
    return [create(method, **overrides) for method, overrides in specs]


def assert_same_scores(grouped, alone):
    for shared, single in zip(grouped, alone):
        assert shared.method_id == single.method_id
        tolerance = float32_tolerance(single.word_scores)
        assert np.allclose(shared.word_scores, single.word_scores, rtol=0, atol=tolerance), shared.method_id
        if single.token_scores is not None:
            assert np.allclose(shared.token_scores, single.token_scores, rtol=0,
                               atol=float32_tolerance(single.token_scores))


def passes(explanations) -> tuple[int, int]:
    return (sum(e.provenance["forward_passes"] for e in explanations),
            sum(e.provenance["backward_passes"] for e in explanations))


def test_the_groups_are_found_before_anything_runs():
    explainers = build(GRADIENT + IG + REMOVAL + [("occlusion", {}), ("saliency", {"output": "probability"}),
                                                  ("leave_one_out", {"operator": "unk"})])
    groups = pass_groups(explainers)
    assert groups == [[0, 1, 2, 3, 4, 5], [6, 7], [8, 9, 10, 11]]  # window 3, another output / operator: alone


@pytest.mark.parametrize("specs", [GRADIENT, IG, REMOVAL], ids=["gradient", "ig", "removal"])
def test_every_member_from_the_group_equals_the_method_alone_on_the_tiny_model(keyword_classifier, specs):
    encoding = keyword_classifier.encode(TEXT)
    keyword_classifier.logits_of(encoding)  # the unperturbed logits are memoized per classifier: out of the count
    alone = [explainer.explain(keyword_classifier, encoding) for explainer in build(specs)]
    grouped = explain_all(build(specs), keyword_classifier, encoding, None, cache=None)
    assert_same_scores(grouped, alone)
    forward_alone, backward_alone = passes(alone)
    forward_grouped, backward_grouped = passes(grouped)
    first = alone[0].provenance
    assert (forward_grouped, backward_grouped) == (first["forward_passes"], first["backward_passes"])  # one pass
    assert (forward_alone, backward_alone) == (len(specs) * forward_grouped, len(specs) * backward_grouped)
    for explanation in grouped:
        record = explanation.provenance["shared_pass"]
        assert record["computed_by"] == specs[0][0] and len(record["shared_with"]) == len(specs) - 1


def test_without_sharing_every_method_pays_its_own_pass(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    grouped = explain_all(build(GRADIENT), keyword_classifier, encoding, None, cache=None, share=False)
    assert passes(grouped)[1] == len(GRADIENT)
    assert all("shared_pass" not in e.provenance for e in grouped)


def test_input_x_gradient_from_the_shared_pass_equals_captum(keyword_classifier):
    """Computed another way: Captum's own InputXGradient on the same embedding function."""
    encoding = keyword_classifier.encode(TEXT)
    with sharing():
        explain_all(build([("saliency", {})]), keyword_classifier, encoding, 1, cache=None)  # fills the pass
        shared = create("input_x_gradient").explain(keyword_classifier, encoding, 1)
    forward, embeddings = embedding_function(keyword_classifier, encoding, "logit")
    captum = CaptumInputXGradient(forward).attribute(embeddings.clone().requires_grad_(), target=1)[0].sum(-1)
    expected = captum.detach().numpy()
    assert shared.provenance["backward_passes"] == 0  # it reused saliency's pass
    assert np.allclose(shared.token_scores, expected, rtol=0, atol=float32_tolerance(expected))


def test_occlusion_window_one_equals_leave_one_out_on_the_same_scale(keyword_classifier):
    """Computed another way: LOO with the same operator and score is occlusion of window 1 by definition."""
    encoding = keyword_classifier.encode(TEXT)
    loo, occlusion = explain_all(build([("leave_one_out", {"score": "probability"}),
                                        ("occlusion", {"window": 1, "operator": "delete"})]),
                                 keyword_classifier, encoding, None, cache=None)
    assert np.allclose(occlusion.word_scores, loo.word_scores, rtol=0, atol=float32_tolerance(1.0))
    assert occlusion.provenance["forward_passes"] == 0


def test_each_member_is_cached_under_its_own_key_and_served_to_a_lone_request(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    cache = ExplanationCache(directory=None)
    grouped = explain_all(build(IG), keyword_classifier, encoding, None, cache=cache)
    for explainer, explanation in zip(build(IG), grouped):
        hit = cached_only(explainer, keyword_classifier, encoding, None, cache)
        assert hit is not None and hit.provenance["cache"] == "memory"
        assert np.array_equal(hit.word_scores, explanation.word_scores)
        assert hit.provenance["shared_pass"]["pass"].startswith("one integrated-gradients path")
    again = explain_all(build(IG), keyword_classifier, encoding, None, cache=cache)
    assert all(e.provenance["cache"] == "memory" for e in again)


def test_a_pass_is_not_shared_across_targets_or_inputs(keyword_classifier):
    encoding, other = keyword_classifier.encode(TEXT), keyword_classifier.encode("a film with music")
    with sharing():
        zero = create("saliency").explain(keyword_classifier, encoding, 0)
        one = create("saliency").explain(keyword_classifier, encoding, 1)
        elsewhere = create("saliency").explain(keyword_classifier, other, 1)
    assert one.provenance["backward_passes"] == 1 and elsewhere.provenance["backward_passes"] == 1
    assert not np.allclose(zero.token_scores, one.token_scores)


@pytest.mark.integration
def test_members_equal_the_methods_alone_on_the_quick_model(quick_classifier):
    encoding = quick_classifier.encode("a gorgeous , witty , seductive movie that never quite finds its footing .")
    specs = GRADIENT + [("integrated_gradients", {"n_steps": 20}),
                        ("integrated_gradients", {"n_steps": 20, "absolute": True})] + REMOVAL
    with torch.no_grad():
        quick_classifier.logits_of(encoding)
    alone = [explainer.explain(quick_classifier, encoding) for explainer in build(specs)]
    grouped = explain_all(build(specs), quick_classifier, encoding, None, cache=None)
    assert_same_scores(grouped, alone)
    assert passes(grouped)[1] == 1 + 20  # one backward for the six gradient members, one path for the two IGs
