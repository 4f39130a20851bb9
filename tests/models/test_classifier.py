"""The classifier layer on tiny models built in code: word alignment, batching, embeddings, the perturbation engine,
loading and its error messages."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from tiny_models import tiny_bert, tiny_tokenizer
from tolerances import float32_tolerance, sum_tolerance

from models import InputError, ModelError, ModelNotPrepared, Operator, load_classifier, metered, perturb
from models.perturb import perturbed_proba


def test_words_and_subword_alignment(random_classifier):
    enc = random_classifier.encode("the plot was unbelievably good !")
    assert enc.words == ("the", "plot", "was", "unbelievably", "good", "!")
    assert enc.tokens == ("[CLS]", "the", "plot", "was", "un", "##believ", "##ably", "good", "!", "[SEP]")
    assert enc.token_word == (-1, 0, 1, 2, 3, 3, 3, 4, 5, -1)
    assert enc.special == (True,) + (False,) * 8 + (True,)


def test_sentence_pair_segments(random_classifier):
    enc = random_classifier.encode("a good movie", "a bad film")
    assert enc.word_segment == (0, 0, 0, 1, 1, 1)
    assert enc.segment_boundary == 3
    assert enc.token_type_ids == (0, 0, 0, 0, 0, 1, 1, 1, 1)
    assert enc.words_of_segment(1) == ["a", "bad", "film"]


def test_punctuation_and_unknown_characters_stay_inside_their_word(random_classifier):
    enc = random_classifier.encode("good, 😀 日本 <b>")
    assert enc.words == ("good,", "😀", "日本", "<b>")
    assert all(w >= 0 for w, s in zip(enc.token_word, enc.special) if not s)
    assert sorted(set(w for w in enc.token_word if w >= 0)) == [0, 1, 2, 3]


def test_empty_and_whitespace_text_is_refused(random_classifier):
    for text in ("", "   \n\t "):
        with pytest.raises(InputError, match="empty"):
            random_classifier.encode(text)
    with pytest.raises(InputError, match="hypothesis"):  # never read silently as a single sentence
        random_classifier.encode("good", "   ")


def test_long_text_is_truncated_and_counted(random_classifier):
    enc = random_classifier.encode("good " * 500)
    assert enc.n_tokens == random_classifier.max_length == 64
    assert enc.n_words == 62 and enc.truncated_tokens == 500 + 2 - 64 and enc.truncated_words == 438


def test_batched_prediction_equals_one_by_one(keyword_classifier):
    texts = ["the movie was excellent", "some scenes", "it is a film that had music and actors and plot"] * 7
    encodings = [keyword_classifier.encode(t) for t in texts]
    one_by_one = np.vstack([keyword_classifier.predict_proba([e]) for e in encodings])
    keyword_classifier.max_batch_tokens, saved = 40, keyword_classifier.max_batch_tokens  # forces many small batches
    try:
        with metered() as meter:
            batched = keyword_classifier.predict_proba(encodings)
    finally:
        keyword_classifier.max_batch_tokens = saved
    np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=float32_tolerance(1.0))
    assert meter.forward_passes == len(texts) and meter.batches > 3
    np.testing.assert_allclose(batched.sum(axis=1), 1.0, rtol=0, atol=sum_tolerance(2))


def test_forward_from_embeddings_matches_forward_from_ids(keyword_classifier):
    enc = keyword_classifier.encode("the movie was excellent", "some music")
    tensors = keyword_classifier.tensors(enc)
    embeds = keyword_classifier.word_embeddings(tensors["input_ids"])
    from_embeds = keyword_classifier.forward_embeds(embeds, tensors["attention_mask"], tensors.get("token_type_ids"))
    direct = keyword_classifier.predict_logits([enc])[0]
    np.testing.assert_allclose(from_embeds.detach().numpy()[0], direct, rtol=0, atol=float32_tolerance(direct))


def test_attention_weights_are_returned(keyword_classifier):
    enc = keyword_classifier.encode("the movie was excellent")
    attention = keyword_classifier.attentions(enc)
    assert attention.shape == (2, 2, enc.n_tokens, enc.n_tokens)
    np.testing.assert_allclose(attention.sum(axis=-1), 1.0, rtol=0, atol=sum_tolerance(enc.n_tokens))


def test_fingerprint_follows_the_weights(random_classifier):
    model = tiny_bert(seed=0)
    same = random_classifier.with_model(model, fingerprint=None)
    assert same.fingerprint == random_classifier.fingerprint
    other = random_classifier.with_model(tiny_bert(seed=1), fingerprint=None)
    assert other.fingerprint != random_classifier.fingerprint


@pytest.mark.parametrize("operator, token", [("mask", "[MASK]"), ("pad", "[PAD]"), ("unk", "[UNK]")])
def test_token_operators_replace_every_subword_and_keep_special_tokens(random_classifier, operator, token):
    enc = random_classifier.encode("the plot was unbelievably good")
    keep = np.array([[True, False, True, False, True]])
    batch = perturb(random_classifier, enc, keep, operator)
    tokens = random_classifier.tokenizer.convert_ids_to_tokens(batch.input_ids[0])
    assert tokens == ["[CLS]", "the", token, "was", token, token, token, "good", "[SEP]"]


def test_delete_operator_retokenizes_the_remaining_words(random_classifier):
    enc = random_classifier.encode("the plot was unbelievably good", "a bad film")
    keep = np.array([[False, True, True, False, True, True, False, True]])
    batch = perturb(random_classifier, enc, keep, Operator.DELETE)
    expected = random_classifier.tokenizer("plot was good", "a film")
    assert batch.input_ids[0] == expected["input_ids"]
    assert batch.token_type_ids[0] == expected["token_type_ids"]


def test_zero_embedding_operator_equals_zeroed_embeddings(keyword_classifier):
    enc = keyword_classifier.encode("the movie was excellent")
    keep = np.array([[True, True, True, False], [True, True, True, True]])
    probabilities = perturbed_proba(keyword_classifier, enc, keep, "zero")
    tensors = keyword_classifier.tensors(enc)
    embeds = keyword_classifier.word_embeddings(tensors["input_ids"]).detach().clone()
    embeds[0, 4] = 0.0  # token 4 = "excellent"
    with torch.no_grad():
        logits = keyword_classifier.forward_embeds(embeds, tensors["attention_mask"], tensors["token_type_ids"])
    np.testing.assert_allclose(probabilities[0], torch.softmax(logits, -1)[0].numpy(), rtol=0, atol=float32_tolerance(1.0))
    np.testing.assert_allclose(probabilities[1], keyword_classifier.predict_proba([enc])[0], rtol=0,
                               atol=float32_tolerance(1.0))


def test_perturbation_checks_the_mask_shape(random_classifier):
    enc = random_classifier.encode("the plot")
    with pytest.raises(ValueError, match="2 words"):
        perturb(random_classifier, enc, np.ones((1, 3), dtype=bool), "mask")
    with pytest.raises(ModelError, match="masked-LM filler"):
        perturb(random_classifier, enc, np.ones((1, 2), dtype=bool), "mlm")


# ----- loading --------------------------------------------------------------------------------------------
def _save(tmp_path, with_head: bool = True, name: str = "model"):
    from transformers import BertModel

    folder = tmp_path / name
    model = tiny_bert() if with_head else BertModel(tiny_bert().config)
    model.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return folder


def test_folder_model_loads_and_predicts(tmp_path):
    classifier = load_classifier(str(_save(tmp_path)))
    assert classifier.labels == ["class 0", "class 1"] and classifier.source.endswith("model")
    assert classifier.predict_text("the movie").shape == (2,)


def test_model_without_classification_head_is_refused(tmp_path):
    with pytest.raises(ModelError, match="without a sequence-classification head"):
        load_classifier(str(_save(tmp_path, with_head=False)))


def test_checkpoint_with_untrained_head_is_refused(tmp_path):
    folder = _save(tmp_path, with_head=False)
    config = json.loads((folder / "config.json").read_text())
    config["architectures"] = ["BertForSequenceClassification"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="no trained classification head"):
        load_classifier(str(folder))


def test_unknown_model_and_empty_folder_messages(tmp_path):
    with pytest.raises(ModelError, match="hub access is off"):
        load_classifier("someone/some-model-that-is-not-cached")
    with pytest.raises(ModelError, match="no config.json"):
        load_classifier(str(tmp_path))
    with pytest.raises(ModelError, match="does not exist"):
        load_classifier(str(tmp_path / "missing" / "folder"))
    with pytest.raises(ModelError, match="No model given"):
        load_classifier("  ")


def test_built_in_model_not_prepared(isolated_cache):
    with pytest.raises(ModelNotPrepared, match="cli.py prepare --model default-nli"):
        load_classifier("default-nli")
