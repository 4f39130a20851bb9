"""AML (paper 004): each loss term against a direct formula, the attribution model G, pAML trained on the keyword
task, the cached checkpoint and its manifest, the refusal for another model, fAML's constant-rate steps, and the
selection metric against evaluation's own implementation."""
from __future__ import annotations

import math
import re
import shutil

import numpy as np
import pytest
import torch
from roar_fixtures import save_keyword_model
from tiny_models import keyword_sentences, tiny_bert, tiny_tokenizer

from evaluation.faithfulness.curves import evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from explainers import create
from explainers.cache import cache_key
from explainers.mask_learning.aml_model import (
    AttributionModel,
    aml_terms,
    attribution_loss,
    inverse_loss,
    mask_token_id,
    prediction_loss,
    soft_masked,
)
from explainers.mask_learning.aml_store import AMLNotPrepared, load_attribution_model, read_manifest, save_checkpoint
from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml, search_lambdas
from explainers.mask_learning.selection import METRICS, best_index, metric_values
from models import ModelError, TextClassifier, UserFacingError, load_classifier

LOGITS = torch.tensor([[1.5, -0.5], [0.2, 0.9], [-1.0, 2.0]])


def softmax_np(row):
    e = np.exp(np.asarray(row, dtype=np.float64) - max(row))
    return e / e.sum()


# ----- the loss terms (Eq. 4-7) -----------------------------------------------------------------------------
def test_prediction_loss_is_soft_cross_entropy():
    y = torch.tensor([[0.7, 0.3], [0.1, 0.9], [1.0, 0.0]])
    expected = np.mean([-sum(y[i, j].item() * math.log(softmax_np(LOGITS[i].tolist())[j]) for j in range(2))
                        for i in range(3)])
    assert float(prediction_loss(LOGITS, y)) == pytest.approx(expected, abs=1e-6)


def test_inverse_loss_is_minus_log_one_minus_p():
    label = torch.tensor([0, 1, 1])
    expected = np.mean([-math.log(1 - softmax_np(LOGITS[i].tolist())[int(label[i])]) for i in range(3)])
    assert float(inverse_loss(LOGITS, label)) == pytest.approx(expected, abs=1e-6)
    three = torch.tensor([[0.3, 2.0, -1.0]])
    p = softmax_np([0.3, 2.0, -1.0])
    assert float(inverse_loss(three, torch.tensor([1]))) == pytest.approx(-math.log(1 - p[1]), abs=1e-6)


def test_attribution_loss_is_mean_minus_log_one_minus_a_over_real_tokens():
    scores = torch.tensor([[0.3, -2.0, 1.0, 5.0], [2.5, 0.0, -1.0, -1.0]])
    attention = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])  # the first input has 3 tokens and one pad
    a = 1 / (1 + np.exp(-scores.numpy().astype(np.float64)))
    expected = np.mean([-np.mean(np.log(1 - a[0, :3])), -np.mean(np.log(1 - a[1]))])
    assert float(attribution_loss(scores, attention)) == pytest.approx(expected, abs=1e-6)


def test_soft_masking_is_a_convex_combination():
    x = torch.arange(12.0).reshape(1, 3, 4)
    m = torch.full((4,), -1.0)
    a = torch.tensor([[1.0, 0.0, 0.25]])
    out = soft_masked(x, m, a)
    assert torch.equal(out[0, 0], x[0, 0]) and torch.equal(out[0, 1], m)
    assert torch.allclose(out[0, 2], 0.25 * x[0, 2] + 0.75 * m)


def test_total_loss_weights_each_term_and_drops_zero_weights(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent")
    tensors = keyword_classifier.tensors(encoding)
    ids, attention = tensors["input_ids"], tensors["attention_mask"]
    model = AttributionModel.from_classifier(keyword_classifier, dropout=0.0).eval()
    y = torch.tensor([[0.2, 0.8]])
    label = torch.tensor([1])
    mask_id = keyword_classifier.tokenizer.mask_token_id
    with torch.no_grad():
        terms = aml_terms(keyword_classifier, model, ids, attention, None, y, label, mask_id, (2.0, 3.0, 5.0))
        a = torch.sigmoid(model(ids, attention, y))
        x = keyword_classifier.word_embeddings(ids)
        m = keyword_classifier.word_embeddings(torch.tensor(mask_id))
        kept = keyword_classifier.forward_embeds(a[..., None] * x + (1 - a[..., None]) * m, attention)
        removed = keyword_classifier.forward_embeds((1 - a[..., None]) * x + a[..., None] * m, attention)
        none = aml_terms(keyword_classifier, model, ids, attention, None, y, label, mask_id, (1.0, 0.0, 0.0))
    p_kept = torch.softmax(kept.double(), -1)[0]
    p_removed = torch.softmax(removed.double(), -1)[0]
    assert float(terms["prediction"]) == pytest.approx(2.0 * -(0.2 * math.log(p_kept[0]) + 0.8 * math.log(p_kept[1])),
                                                       rel=1e-4)
    assert float(terms["attribution"]) == pytest.approx(3.0 * -float(torch.log(1 - a.double()).mean()), rel=1e-4)
    assert float(terms["inverse"]) == pytest.approx(5.0 * -math.log(1 - float(p_removed[1])), rel=1e-4)
    assert set(none) == {"prediction"}


# ----- the attribution model G ------------------------------------------------------------------------------
def test_prediction_encoding_is_appended_after_each_input_and_padding_changes_nothing(keyword_classifier):
    model = AttributionModel.from_classifier(keyword_classifier, dropout=0.0).eval()
    with torch.no_grad():  # trained class embeddings are far apart; the N(0, 0.02) start barely separates them
        model.class_embeddings.normal_(0.0, 1.0, generator=torch.Generator().manual_seed(0))
    short = keyword_classifier.tensors(keyword_classifier.encode("the film was excellent"))
    long = keyword_classifier.tensors(keyword_classifier.encode("the movie had some scenes with actors and music"))
    width = long["input_ids"].shape[1]
    padded = torch.full((1, width), keyword_classifier.tokenizer.pad_token_id)
    padded[0, :short["input_ids"].shape[1]] = short["input_ids"][0]
    attention = torch.zeros((1, width), dtype=torch.long)
    attention[0, :short["input_ids"].shape[1]] = 1
    ids = torch.cat([padded, long["input_ids"]])
    mask = torch.cat([attention, long["attention_mask"]])
    y = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    with torch.no_grad():
        batch = model(ids, mask, y)
        alone_short = model(short["input_ids"], short["attention_mask"], y[:1])
        alone_long = model(long["input_ids"], long["attention_mask"], y[1:])
        flipped = model(short["input_ids"], short["attention_mask"], y[1:])
    n = short["input_ids"].shape[1]
    torch.testing.assert_close(batch[0, :n], alone_short[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(batch[1], alone_long[0], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(flipped, alone_short, atol=1e-4)  # G reads the prediction it explains


def test_attribution_model_copies_the_backbone_and_freezes_its_embeddings(keyword_classifier):
    model = AttributionModel.from_classifier(keyword_classifier)
    encoder = keyword_classifier.model.base_model
    assert model.encoder is not encoder
    assert torch.equal(model.encoder.encoder.layer[0].attention.self.query.weight,
                       encoder.encoder.layer[0].attention.self.query.weight)
    assert not any(p.requires_grad for p in model.encoder.embeddings.parameters())
    assert all(p.requires_grad for p in model.encoder.encoder.parameters())
    assert model.z0.requires_grad and model.class_embeddings.shape == (2, keyword_classifier.model.config.hidden_size)
    assert [type(m).__name__ for m in model.head] == ["Dropout", "Linear", "Tanh", "Linear"]
    assert model.head[1].out_features == model.head[1].in_features and model.head[3].out_features == 1


def test_mask_token_falls_back_to_unk_with_a_note():
    tokenizer = tiny_tokenizer()
    no_mask = TextClassifier(tiny_bert(), tokenizer, name="no-mask", device="cpu")
    assert mask_token_id(no_mask, "mask") == (tokenizer.mask_token_id, None)
    tokenizer_without = tiny_tokenizer()
    tokenizer_without.mask_token = None
    without = TextClassifier(tiny_bert(), tokenizer_without, name="no-mask", device="cpu")
    token, note = mask_token_id(without, "mask")
    assert token == tokenizer_without.unk_token_id and "[UNK]" in note


# ----- pAML on the keyword task -----------------------------------------------------------------------------
RECIPE = AMLRecipe(train_size=200, validation_size=40, epochs=3.0, lr=1e-3)  # a tiny model learns faster


@pytest.fixture(scope="module")
def trained(keyword_classifier, tmp_path_factory):
    """G trained against the keyword model, cached in a private cache folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(tmp_path_factory.mktemp("aml-cache")))
        texts, _ = keyword_sentences(300, seed=7)
        folder = prepare_aml(keyword_classifier, [(t, None) for t in texts], RECIPE, data_id="keyword-sentences",
                             log=lambda _: None)
        yield folder


def test_paml_puts_its_highest_score_on_the_keyword(keyword_classifier, trained):
    texts, labels = keyword_sentences(30, seed=99)
    positives = [t for t, label in zip(texts, labels) if label == 1]
    for text in positives:
        explanation = create("aml", preset="pAML").explain(keyword_classifier, keyword_classifier.encode(text))
        assert explanation.target == 1
        assert explanation.words[int(np.argmax(explanation.word_scores))] == "excellent", text
        assert np.all((explanation.word_scores >= 0) & (explanation.word_scores <= 1)) and not explanation.signed


def test_manifest_and_tuned_for_badge(keyword_classifier, trained):
    manifest = read_manifest(trained)
    assert manifest["explained_model"]["fingerprint"] == keyword_classifier.fingerprint
    assert manifest["tuned_for"]["id"] == "comprehensiveness-eraser"
    assert manifest["lambdas"] == {"lambda_p": 1.0, "lambda_a": 10.0, "lambda_inv": 10.0}
    assert manifest["train_inputs"] == 200 and manifest["validation_inputs"] == 40
    assert len(manifest["train_data_sha256"]) == 64 and manifest["seconds"] > 0
    history = manifest["validation_history"]
    best = max(score for _, score in history)  # AOPC comprehensiveness: higher is better
    assert manifest["validation_score"] == pytest.approx(best, abs=1e-6)
    explanation = create("aml").explain(keyword_classifier, keyword_classifier.encode("the film was excellent"))
    details = explanation.provenance["details"]
    assert details["badge"] == "tuned for Comprehensiveness (AOPC)"
    assert details["tuned_for"] == "comprehensiveness-eraser"
    assert details["trained_for_fingerprint"] == keyword_classifier.fingerprint and details["mode"] == "pAML"


def test_refuses_another_models_fingerprint(keyword_classifier, random_classifier, trained):
    encoding = random_classifier.encode("the film was excellent")
    with pytest.raises(ModelError, match="explains only the model it was trained on"):
        create("aml", checkpoint=str(trained)).explain(random_classifier, encoding)
    with pytest.raises(AMLNotPrepared, match="prepare-aml"):
        create("aml").explain(random_classifier, encoding)
    # a randomized copy may be explained with the original's G when the caller says so, and the result says it
    labelled = create("aml", source_fingerprint=keyword_classifier.fingerprint).explain(random_classifier, encoding)
    assert any(keyword_classifier.fingerprint in w and "not for this one" in w for w in labelled.warnings)


def test_faml_steps_change_the_map_with_a_constant_rate(keyword_classifier, trained):
    encoding = keyword_classifier.encode("the movie was excellent and the music was long")
    faml = create("aml", preset="fAML").explain(keyword_classifier, encoding)
    details = faml.provenance["details"]
    assert details["mode"] == "fAML" and len(details["finetune_losses"]) == 5
    assert all(change > 0 for change in details["finetune_map_change"])  # the rate is not 0 ...
    assert details["finetune_map_change"][-1] > details["finetune_map_change"][0]  # ... and the steps add up
    frozen = create("aml", preset="fAML", finetune_lr=0.0).explain(keyword_classifier, encoding)
    assert frozen.provenance["details"]["finetune_map_change"] == [0.0] * 5  # the reference code's schedule
    values = details["selection_values"]
    assert len(values) == 6 and details["selected_step"] == best_index(values, METRICS["aopc-comprehensiveness"])
    paml = create("aml").explain(keyword_classifier, encoding)
    assert values[0] == pytest.approx(metric_values(keyword_classifier, encoding, [paml.word_scores],
                                                    METRICS["aopc-comprehensiveness"])[0], abs=1e-6)  # rounded


# ----- the selection metric is evaluation's metric ------------------------------------------------------------
@pytest.mark.parametrize("name", list(METRICS))
def test_selection_metrics_equal_the_evaluation_presets(keyword_classifier, name):
    metric = METRICS[name]
    rng = np.random.default_rng(0)
    texts, _ = keyword_sentences(8, seed=3)
    for text in texts + ["the movie was excellent and the music was very long and quite old"]:
        encoding = keyword_classifier.encode(text)
        candidates = [rng.normal(size=encoding.n_words), np.zeros(encoding.n_words)]  # ties are broken alike
        mine = metric_values(keyword_classifier, encoding, candidates, metric)
        for scores, value in zip(candidates, mine):
            theirs = evaluate_scores(keyword_classifier, encoding, [BY_ID[metric.id]], scores).values[metric.id]
            assert value == pytest.approx(theirs, abs=1e-6)  # float32 logits, batches padded differently
        assert BY_ID[metric.id].higher_is_better == metric.higher_is_better


def test_lambda_search_says_how_to_get_optuna(keyword_classifier):
    pytest.importorskip  # noqa: B018 (documentation: the search itself runs only where optuna is installed)
    try:
        import optuna  # noqa: F401
    except ImportError:
        with pytest.raises(UserFacingError, match="pip install optuna"):
            search_lambdas(keyword_classifier, [], [], RECIPE, trials=1)
    else:
        pytest.skip("optuna is installed; the missing-package message cannot be reached")


def test_prepare_aml_command_errors_are_one_line_messages(random_classifier):
    from commands.prepare_aml import parse_lambdas, training_inputs

    assert parse_lambdas("1,10,10") == {"lambda_p": 1.0, "lambda_a": 10.0, "lambda_inv": 10.0}
    with pytest.raises(UserFacingError, match="three numbers"):
        parse_lambdas("1,10")
    with pytest.raises(UserFacingError, match="--data"):
        training_inputs(random_classifier, None)  # a model without a manifest naming its training data


def test_an_input_filling_every_position_gets_a_message(keyword_classifier, trained):
    encoding = keyword_classifier.encode(" ".join(["the movie was excellent"] * 30))
    assert encoding.n_tokens == keyword_classifier.max_length
    with pytest.raises(UserFacingError, match="shorten it"):
        create("aml").explain(keyword_classifier, encoding)


def test_one_word_input(keyword_classifier, trained):
    for preset in ("pAML", "fAML"):
        explanation = create("aml", preset=preset).explain(keyword_classifier, keyword_classifier.encode("excellent"))
        assert explanation.word_scores.shape == (1,) and 0 <= explanation.word_scores[0] <= 1


def test_a_rebuilt_checkpoint_is_never_served_from_the_cache(keyword_classifier, trained, tmp_path):
    """The checkpoint's weights hash is part of every AML explanation's cache key (after a rebuild, the old
    attribution model's explanations no longer match)."""
    copy = tmp_path / "checkpoint"
    shutil.copytree(trained, copy)
    explainer = create("aml", checkpoint=str(copy))
    encoding = keyword_classifier.encode("the film was excellent")
    before = cache_key(keyword_classifier, encoding, explainer, None)
    assert before == cache_key(keyword_classifier, encoding, explainer, None)
    model = load_attribution_model(keyword_classifier, copy)
    with torch.no_grad():
        model.head[1].weight.add_(0.01)
    save_checkpoint(model, read_manifest(copy), copy)
    assert read_manifest(copy)["weights_sha256"] != read_manifest(trained).get("weights_sha256")
    assert cache_key(keyword_classifier, encoding, explainer, None) != before


def test_the_build_command_names_a_folder_model_by_its_path(random_classifier, tmp_path):
    folder = save_keyword_model(random_classifier, tmp_path / "my-model")  # no attribution model exists for it
    classifier = load_classifier(str(folder))
    with pytest.raises(AMLNotPrepared, match=f"prepare-aml --model {re.escape(str(folder))} --tune"):
        create("aml").explain(classifier, classifier.encode("the film was excellent"))
