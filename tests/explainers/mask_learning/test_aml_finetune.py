"""fAML's per-input steps (explainers/mask_learning/finetune.py) against the plain loop they replaced: the same maps,
losses, selection values and selected step to float32 rounding, with fewer passes (G: steps + 1 forwards instead of
2 steps + 1; the selection: candidates that rank the same words share their perturbed copies), and the cached G
left untouched."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from explainers import create
from explainers.aggregate import aggregate_to_words
from explainers.mask_learning.aml_model import AttributionModel, aml_terms, conditioning
from explainers.mask_learning.aml_store import load_attribution_model, save_checkpoint
from explainers.mask_learning.finetune import finetune_maps
from explainers.mask_learning.selection import METRICS, best_index, metric_values
from models import metered

LAMBDAS = (1.0, 10.0, 10.0)
LR = 1e-3  # larger than fAML's 4e-5 so that five steps of a tiny untrained G move the map far beyond the tolerance
TEXT = "the movie was excellent and the music was long"


def reference_faml(classifier, model, ids, attention, y, label, mask_id, steps, lr):
    """fAML as first written: a deep copy of G, AdamW's per-tensor loop, a separate no-grad pass for each map."""
    with torch.no_grad():
        maps = [torch.sigmoid(model(ids, attention, y))[0]]
    tuned = copy.deepcopy(model).eval()
    for parameter in tuned.parameters():
        parameter.requires_grad_(True)
    tuned.freeze_embeddings()
    tuned.z0.requires_grad_(False)
    tuned.class_embeddings.requires_grad_(False)
    optimizer = torch.optim.AdamW([q for q in tuned.parameters() if q.requires_grad], lr=lr, foreach=False)
    losses = []
    for _ in range(steps):
        loss = sum(aml_terms(classifier, tuned, ids, attention, None, y, label, mask_id, LAMBDAS).values())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        with torch.no_grad():
            maps.append(torch.sigmoid(tuned(ids, attention, y))[0])
    return maps, losses


def untrained_g(classifier):
    model = AttributionModel.from_classifier(classifier, seed=3).eval()
    with torch.no_grad():  # class embeddings as far apart as trained ones, so y_v matters
        model.class_embeddings.normal_(0.0, 1.0, generator=torch.Generator().manual_seed(0))
    return model


def inputs(classifier, text=TEXT):
    encoding = classifier.encode(text)
    tensors = classifier.tensors(encoding)
    probabilities = torch.as_tensor(classifier.proba_of(encoding)[None], dtype=torch.float32)
    label = probabilities.argmax(dim=1)
    y = conditioning(probabilities, label, "soft")
    return encoding, tensors["input_ids"], tensors["attention_mask"], y, label


@pytest.fixture
def checkpoint(keyword_classifier, tmp_path):
    """An untrained G saved as the checkpoint of the keyword model (what the explainer loads)."""
    manifest = {"explained_model": {"name": keyword_classifier.name, "fingerprint": keyword_classifier.fingerprint},
                "lambdas": dict(zip(("lambda_p", "lambda_a", "lambda_inv"), LAMBDAS)),
                "tuned_for": {"id": "comprehensiveness-eraser", "label": "Comprehensiveness (AOPC)"}}
    return save_checkpoint(untrained_g(keyword_classifier), manifest, tmp_path / "aml")


@pytest.fixture
def g_forwards():
    """Every forward pass of any attribution model G (the cached one and fAML's copy) while the test runs."""
    calls = []

    def hook(module, _args, _output):
        if isinstance(module, AttributionModel):
            calls.append(module)

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    yield calls
    handle.remove()


def test_finetune_maps_equal_the_plain_loop_with_one_g_pass_per_step(keyword_classifier, g_forwards):
    model = untrained_g(keyword_classifier)
    _encoding, ids, attention, y, label = inputs(keyword_classifier)
    mask_id = keyword_classifier.tokenizer.mask_token_id
    expected_maps, expected_losses = reference_faml(keyword_classifier, model, ids, attention, y, label, mask_id, 5, LR)
    g_forwards.clear()
    maps, losses = finetune_maps(keyword_classifier, model, ids, attention, None, y, label, mask_id, LAMBDAS, 5, LR)
    assert len(g_forwards) == 5 + 1  # the plain loop ran 2 x 5 + 1
    assert float((expected_maps[-1] - expected_maps[0]).abs().max()) > 1e-3  # the steps move the map ...
    for mine, theirs in zip(maps, expected_maps, strict=True):  # ... and both ways alike (float32 map in [0, 1]; the
        torch.testing.assert_close(mine, theirs, atol=1e-5, rtol=0)  # fused AdamW rounds its update differently)
    assert losses == pytest.approx(expected_losses, rel=1e-5)  # float32 sums of a few terms of size ~1-10
    unfused, _ = finetune_maps(keyword_classifier, model, ids, attention, None, y, label, mask_id, LAMBDAS, 5, LR,
                               fused=False)
    for mine, theirs in zip(unfused, expected_maps, strict=True):  # the per-tensor AdamW is the plain loop's update
        torch.testing.assert_close(mine, theirs, atol=1e-6, rtol=0)


def test_faml_selects_like_the_plain_loop_and_leaves_the_cached_g_alone(keyword_classifier, checkpoint, g_forwards):
    encoding, ids, attention, y, label = inputs(keyword_classifier)
    cached = load_attribution_model(keyword_classifier, checkpoint)
    before = {name: tensor.clone() for name, tensor in cached.state_dict().items()}
    flags = [parameter.requires_grad for parameter in cached.parameters()]
    explainer = create("aml", preset="fAML", checkpoint=str(checkpoint), finetune_lr=LR)
    g_forwards.clear()
    with metered() as meter:
        explanation = explainer.explain(keyword_classifier, encoding)
    details = explanation.provenance["details"]
    assert len(g_forwards) == 5 + 1

    mask_id = keyword_classifier.tokenizer.mask_token_id
    maps, losses = reference_faml(keyword_classifier, untrained_g(keyword_classifier), ids, attention, y, label,
                                  mask_id, 5, LR)
    words = [aggregate_to_words(m.double().numpy(), encoding.token_word, encoding.n_words, "max") for m in maps]
    metric = METRICS["aopc-comprehensiveness"]
    one_by_one = [metric_values(keyword_classifier, encoding, [w], metric)[0] for w in words]  # nothing shared
    assert details["selection_values"] == pytest.approx(one_by_one, abs=1e-5)  # probabilities, float32 logits
    assert details["selected_step"] == best_index(one_by_one, metric)
    assert details["finetune_losses"] == pytest.approx(losses, rel=1e-5, abs=1e-6)  # rounded to 6 decimals
    np.testing.assert_allclose(explanation.token_scores, maps[details["selected_step"]].double().numpy(), atol=1e-5)

    forward, backward = explainer.estimate_passes(encoding)
    assert backward == meter.backward_passes == 2 * 5  # x' and x'' each step
    assert meter.forward_passes <= forward  # the selection's share is an upper bound: shared copies run once
    after = cached.state_dict()
    assert all(torch.equal(before[name], after[name]) for name in before)
    assert [parameter.requires_grad for parameter in cached.parameters()] == flags
    assert all(parameter.grad is None for parameter in cached.parameters())


def test_candidates_ranking_the_same_words_share_their_perturbed_copies(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and the music was very long and quite old")
    keyword_classifier.logits_of(encoding)  # the clean pass, outside the count
    metric = METRICS["aopc-comprehensiveness"]
    scores = np.random.default_rng(0).normal(size=encoding.n_words)
    candidates = [scores, 2 * scores + 1, scores.copy(), -scores]  # two distinct rankings
    with metered() as meter:
        values = metric_values(keyword_classifier, encoding, candidates, metric)
    counts = [int(np.floor(round(f * encoding.n_words, 9))) for f in metric.fractions]
    bins = sum(0 < count < encoding.n_words for count in counts)
    assert bins >= 2 and meter.forward_passes == 2 * bins  # not 4 x bins
    alone = [metric_values(keyword_classifier, encoding, [c], metric)[0] for c in candidates]
    assert values == pytest.approx(alone, abs=1e-6)  # probabilities from float32 logits
    assert values[0] == values[1] == values[2] != values[3]


# ----- a causal backbone reads z_v first ----------------------------------------------------------------------------
@pytest.mark.parametrize("architecture", ["gpt2", "causal-bert"])
def test_g_of_a_causal_model_reads_the_prediction_it_explains(architecture, tmp_path):
    """Appended after the last token, z_v is invisible to every token of a causal backbone (G gave the same map
    for every y_v); first, every token reads it."""
    from tiny_models import tiny_architecture

    from models import ModelError, TextClassifier

    model, tokenizer = tiny_architecture(architecture)
    classifier = TextClassifier(model, tokenizer, name=f"tiny-{architecture}", device="cpu")
    assert classifier.causal
    g = untrained_g(classifier)
    assert g.prediction_slot == "first"
    tensors = classifier.tensors(classifier.encode("the film was excellent and long"))
    with torch.no_grad():
        one, other = (g(tensors["input_ids"], tensors["attention_mask"], torch.tensor([y]))
                      for y in ([1.0, 0.0], [0.0, 1.0]))
    assert one.shape == tensors["input_ids"].shape
    assert float((one - other).abs().max()) > 1e-3  # float32 scores of order 1
    manifest = {"explained_model": {"name": classifier.name, "fingerprint": classifier.fingerprint}}
    folder = save_checkpoint(g, manifest, tmp_path / "aml")  # a manifest without the slot: built before the fix
    with pytest.raises(ModelError, match="prepare-aml .*--force"):
        load_attribution_model(classifier, folder)
    save_checkpoint(g, {**manifest, "prediction_slot": "first"}, folder)
    assert load_attribution_model(classifier, folder).prediction_slot == "first"
