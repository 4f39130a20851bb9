"""The attack over a document's windows (evaluation/adversarial/documents.py): a document of one window is the
plain attack; the windowed objective and its gradient equal the ones computed by autograd on the plain model run on
each window's own text, combined by the rule written out by hand; a long document is refused with a cost estimate
unless the caller opts in; a dataset run of documents records attacks, not skipped inputs."""
from __future__ import annotations

import random
from dataclasses import fields

import numpy as np
import pytest
import torch
from roar_fixtures import save_keyword_model
from tiny_models import FILLER, KEYWORD

from evaluation.adversarial import dataset as adversarial
from evaluation.adversarial.attack import attack, attack_many
from evaluation.adversarial.attribution import differentiable_attribution
from evaluation.adversarial.config import config_for
from evaluation.adversarial.documents import MAX_ATTACK_WINDOWS, DocumentState, attack_seconds
from evaluation.adversarial.result import AttackError, AttackResult
from evaluation.runs.store import ResultStore
from explainers.embedding_forward import baseline_embeddings, embedding_function
from explainers.windowed import explain_in_windows
from models.attention_kernel import eager_attention
from models.encoding import Encoding, build_encoding
from models.windows import (
    UNLIMITED,
    DocumentEncoding,
    Window,
    WindowConfig,
    blend_weights,
    encode_document,
    window_encoding,
    window_positions,
)


def document_text(words: int, seed: int = 2, keyword_at: int = 40) -> str:
    rng = random.Random(seed)
    chosen = [rng.choice(FILLER) for _ in range(words)]
    chosen[keyword_at] = KEYWORD
    return " ".join(chosen)


def one_window_document(classifier, text: str) -> DocumentEncoding:
    """The text as a document read in a single window of its own length (what encode_document never builds: a
    text that fits is read as itself)."""
    full = build_encoding(classifier.tokenizer, text, None, UNLIMITED)
    words = range(0, full.n_words)
    room = int((full.token_word_array >= 0).sum())
    values = {f.name: getattr(full, f.name) for f in fields(Encoding)}
    return DocumentEncoding(**values, windows=(Window(words, window_encoding(full, words, room)),), aggregate="mean",
                            window_size=full.n_tokens, window_stride=room, blend=tuple(blend_weights([words])))


# ----- one window: the plain attack ------------------------------------------------------------------------------
@pytest.mark.parametrize("method, preset, objective", [
    ("saliency", "paper-003", "unconstrained"), ("input_x_gradient", "paper-003", "constrained"),
    ("input_x_gradient", "paper-003-code", "constrained"), ("integrated_gradients", "paper-003", "unconstrained")])
def test_a_document_of_one_window_gives_the_plain_attack(keyword_classifier, method, preset, objective):
    text = document_text(30, keyword_at=10)
    plain = keyword_classifier.encode(text)
    document = one_window_document(keyword_classifier, text)
    assert plain.truncated_tokens == 0 and list(document.input_ids) == list(plain.input_ids)
    config = config_for(preset, steps=8, ig_steps=4, objective=objective, seed=3)
    ours, theirs = attack(keyword_classifier, document, method, config), attack(keyword_classifier, plain, method,
                                                                                 config)
    assert ours.windows is not None and ours.windows["windows"] == 1 and theirs.windows is None
    assert (ours.positions, ours.k, ours.steps_taken, ours.stop_reason) == \
        (theirs.positions, theirs.k, theirs.steps_taken, theirs.stop_reason)
    assert (ours.original_class, ours.attacked_class) == (theirs.original_class, theirs.attacked_class)
    np.testing.assert_allclose(ours.original_scores, theirs.original_scores, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.attacked_shares, theirs.attacked_shares, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours.delta, theirs.delta, rtol=1e-4, atol=1e-5)
    assert ours.attacked_probability == pytest.approx(theirs.attacked_probability, abs=1e-5)
    assert ours.measures() == pytest.approx(theirs.measures(), abs=1e-4)


# ----- the windowed objective and gradient against the plain model window by window --------------------------
def reference(classifier, document: DocumentEncoding, delta: torch.Tensor, method: str, config, target: int,
              top: torch.Tensor, clean_match: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(objective, d objective / d delta): each window's own encoding through the plain model (its own embedding
    function and tensors), its attribution kept in one autograd graph, the scores blended and the rule and the
    objective written out by hand."""
    delta = delta.clone().requires_grad_(True)
    applied = delta.clamp(-config.epsilon, config.epsilon)
    scores = torch.zeros(document.n_tokens, dtype=torch.float64)
    window_logits = []
    for window, weight in zip(document.windows, document.blend):
        forward, embeddings = embedding_function(classifier, window.encoding, "logit")
        order = torch.as_tensor(window_positions(document, window))
        word_token = torch.tensor([not s for s in window.encoding.special])
        moved = embeddings + applied[:, order] * word_token[None, :, None]  # special tokens are never moved
        baseline = baseline_embeddings(classifier, window.encoding, "pad") if method == "integrated_gradients" \
            else None
        window_scores, logits, _ = differentiable_attribution(forward, moved, baseline, target, method,
                                                              config.ig_steps, True, config.gradient_reduction)
        words = np.asarray(window.encoding.token_word)
        token_weight = torch.tensor([weight[w] if w >= 0 else 0.0 for w in words], dtype=torch.float64)
        scores = scores.index_add(0, order, token_weight * window_scores)
        window_logits.append(logits)
    stacked = torch.stack(window_logits)
    logits = {"mean": stacked.sum(dim=0) / len(window_logits), "max": stacked.max(dim=0).values,
              "first": stacked[0]}[document.aggregate]
    words = torch.tensor([i for i, special in enumerate(document.special) if not special])
    magnitude = scores[words].abs()
    objective = magnitude[top].sum() / magnitude.sum()
    if config.objective == "constrained":
        objective = config.alpha * objective + config.beta * (clean_match - torch.softmax(logits, -1)[target]) ** 2
    return objective, torch.autograd.grad(objective, delta)[0]


@pytest.fixture(scope="module")
def keyword64(keyword_classifier):
    from tiny_models import keyword_classifier as build

    classifier = build()
    classifier.model.double()
    return classifier


@pytest.mark.parametrize("rule", ["mean", "max", "first"])
@pytest.mark.parametrize("method, objective", [("input_x_gradient", "constrained"), ("saliency", "unconstrained"),
                                               ("integrated_gradients", "constrained")])
def test_the_windowed_objective_and_gradient_equal_the_plain_model_window_by_window(keyword64, rule, method,
                                                                                    objective):
    document = encode_document(keyword64, document_text(120), config=WindowConfig(aggregate=rule))
    assert isinstance(document, DocumentEncoding) and len(document.windows) >= 3
    config = config_for("paper-003", objective=objective, ig_steps=3, epsilon=0.5)
    generator = torch.Generator().manual_seed(0)
    with eager_attention(keyword64.model):
        # one pass (a window per call, or all in one padded call) and two passes (1 or 2 windows per call)
        for per_batch, one_pass in ((1, True), (len(document.windows), True), (1, False), (2, False)):
            state = DocumentState.prepare_document(keyword64, document, method, config, 0, per_batch=per_batch,
                                                   one_pass=one_pass)
            assert len(state.plan.batches) == -(-len(document.windows) // per_batch)
            start = torch.randn(state.delta.shape, generator=generator, dtype=torch.float64) * 0.3
            with torch.no_grad():
                state.delta.copy_(start)
            got, _, _ = state.gradient_step(method, config, 3)
            expected, gradient = reference(keyword64, document, start, method, config, state.target, state.top,
                                           state.clean_match)
            assert float(got) == pytest.approx(expected.item(), rel=1e-9, abs=1e-12)
            word_rows = state.word_mask[0, :, 0].bool()
            np.testing.assert_allclose(state.delta.grad[0, word_rows].numpy(), gradient[0, word_rows].numpy(),
                                       rtol=1e-7, atol=1e-10)
            assert float(state.delta.grad[0, ~word_rows].abs().max()) == 0.0  # special tokens never move


def test_the_clean_explanation_is_the_heatmaps_blended_word_scores(keyword_classifier):
    """Summed per word, the attack's clean token scores are the windowed explainer's blended word scores."""
    from explainers import REGISTRY

    document = encode_document(keyword_classifier, document_text(120))
    result = attack(keyword_classifier, document, "input_x_gradient", config_for("paper-003", steps=1))
    words = np.asarray(document.token_word)[result.positions]
    ours = np.bincount(words, weights=result.original_scores, minlength=document.n_words)
    explainer = REGISTRY["input_x_gradient"]()
    theirs = explain_in_windows(explainer, keyword_classifier, document, result.original_class)["word_scores"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5 * np.abs(theirs).max())


def test_the_attack_keeps_the_documents_class_and_epsilon(keyword_classifier):
    document = encode_document(keyword_classifier, document_text(150))
    result = attack(keyword_classifier, document, "saliency", config_for("paper-003", steps=15, epsilon=0.5))
    assert result.class_kept and result.delta_linf <= 0.5 + 1e-7
    assert result.windows["windows"] == len(document.windows) and result.windows["aggregate"] == "mean"
    assert len(result.original_shares) == len(result.positions) == sum(not s for s in document.special)


# ----- very long documents: a cost estimate and an opt-in ------------------------------------------------------
def test_a_document_over_the_window_limit_needs_the_opt_in(keyword_classifier):
    document = encode_document(keyword_classifier, document_text(600))
    assert len(document.windows) > MAX_ATTACK_WINDOWS
    config = config_for("paper-003", steps=1)
    refused = attack_many(keyword_classifier, [document], "saliency", config)[0]
    assert isinstance(refused, AttackError)
    minutes = attack_seconds(keyword_classifier, document, "saliency", config_for("paper-003")) / 60
    assert f"{len(document.windows)} windows" in str(refused) and f"about {minutes:,.0f} min" in str(refused)
    assert "--allow-long" in str(refused)
    allowed = attack_many(keyword_classifier, [document], "saliency", config, allow_long=True)[0]
    assert isinstance(allowed, AttackResult) and allowed.steps_taken == 1


def test_the_estimate_counts_every_window_and_the_values_pass(keyword_classifier):
    from evaluation.adversarial.config import passes
    from evaluation.adversarial.documents import document_passes

    document = encode_document(keyword_classifier, document_text(150))
    config = config_for("paper-003", steps=10)
    windows = len(document.windows)
    forward, backward = passes("saliency", config)
    assert document_passes(document, "saliency", config, windows) == (forward * windows, backward * windows)
    assert document_passes(document, "saliency", config, 1) == ((forward + 10) * windows, (backward + 10) * windows)


# ----- a dataset of documents ------------------------------------------------------------------------------------
def test_a_dataset_run_on_documents_records_attacks(tmp_path, keyword_classifier, isolated_cache):
    model = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    data = tmp_path / "docs.csv"
    data.write_text("text,label\n" + "".join(f"{document_text(110 + 10 * i, seed=i)},1\n" for i in range(3)))
    config = config_for(None, steps=3)
    store = ResultStore(tmp_path / "results.sqlite")
    _, summary = adversarial.run_attacks(model, f"file:{data}", ["input_x_gradient"], 3, config, store)
    assert summary.status == "finished"
    cells = store.cells(summary.run_id)
    assert len(cells) == 3 and adversarial.skipped_inputs(store, summary.run_id) == {}
    frame = adversarial.results_frame(store, summary.run_id)
    assert set(frame["metric"]) >= {"rank_change", "top_k_sum_change", "probability_change", "class_kept"}
    assert len(frame[frame["metric"] == "steps_taken"]) == 3
    assert all(cell["words"] >= 110 for cell in cells.values())
