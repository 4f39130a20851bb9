"""AML with G on another backbone (paper 004 s. 3.3's decoder setting), on tiny models built in code.

F: a tiny Llama decoder classifier (its tokenizer splits "excellent!" into two tokens, reads "unbelievably" as one
unknown token, and has no [MASK]: G masks toward <unk>, as the paper does for Llama); G: the tiny keyword BERT's
encoder with its word-piece tokenizer ("unbelievably" is three G tokens). Checked: the mask covers every word (each
word's F tokens all carry its score, the max of its G tokens' scores, read from G directly; F's special tokens are
never masked), and the loss terms equal Eq. 4-7 computed here token by token with the plain models.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from cross_backbone_reference import eq_4_to_7
from roar_fixtures import save_keyword_model
from tiny_models import keyword_sentences, save_tiny_architecture, tiny_architecture

import cli
from explainers import create
from explainers.mask_learning.cross_backbone import CrossBackboneAML, load_cross, resolve_cross_checkpoint
from explainers.mask_learning.cross_finetune import cross_finetune_maps
from explainers.mask_learning.selection import DEFAULT_METRIC, metric_named, metric_values
from models import InputError, ModelError, TextClassifier, load_classifier

TEXT = "the movie was unbelievably excellent!"


@pytest.fixture(scope="module")
def decoder():
    model, tokenizer = tiny_architecture("llama", seed=1)
    return TextClassifier(model, tokenizer, name="tiny-llama", device="cpu", source="tests")


@pytest.fixture()
def aml(decoder, keyword_classifier):
    return CrossBackboneAML(decoder, keyword_classifier, dropout=0.0, seed=0)


def test_the_mask_covers_every_word_max_on_merge_and_replicate_on_split(decoder, keyword_classifier, aml):
    encoding = decoder.encode(TEXT)
    source = keyword_classifier.encode(TEXT)
    f_word, g_word = encoding.token_word_array, source.token_word_array
    counts_f = np.bincount(f_word[f_word >= 0], minlength=encoding.n_words)
    counts_g = np.bincount(g_word[g_word >= 0], minlength=encoding.n_words)
    assert (counts_f > 0).all() and (counts_g > 0).all()
    assert counts_g.max() > 1 and counts_f.max() > 1  # both rules are exercised on this input
    y = torch.tensor([[0.3, 0.7]])
    with torch.no_grad():
        a, _, words = aml.token_scores(encoding, y)
        tensors = keyword_classifier.tensors(source)
        g = torch.sigmoid(aml.model(tensors["input_ids"], tensors["attention_mask"], y,
                                    tensors.get("token_type_ids"))[0]).numpy()
    for j in range(encoding.n_words):
        assert float(words[j]) == pytest.approx(g[g_word == j].max(), abs=0)  # max over the word's G tokens
        np.testing.assert_array_equal(a.numpy()[f_word == j], float(words[j]))  # replicated to its F tokens
    np.testing.assert_array_equal(a.numpy()[f_word < 0], 1.0)  # F's special tokens stay unmasked
    assert encoding.n_tokens == len(a)


def test_the_loss_terms_equal_eq_4_to_7(decoder, keyword_classifier, aml):
    encoding = decoder.encode(TEXT)
    target = int(decoder.proba_of(encoding).argmax())
    lambdas = (2.0, 3.0, 5.0)
    with torch.no_grad():
        terms = aml.terms(encoding, target, lambdas)
        expected = eq_4_to_7(decoder, aml, encoding, target, lambdas)
    assert float(terms["prediction"]) == pytest.approx(float(expected["prediction"]), rel=1e-4)
    assert float(terms["inverse"]) == pytest.approx(float(expected["inverse"]), rel=1e-4)
    assert float(terms["attribution"]) == pytest.approx(float(expected["attribution"]), rel=1e-5)
    assert aml.mask_id == decoder.tokenizer.unk_token_id


def test_training_changes_the_map_and_keeps_it_in_range(decoder, aml):
    encodings = [decoder.encode(t) for t in (TEXT, "a good film with great music", "the plot was dull")]
    before = aml.word_scores(encodings[0]).numpy()
    losses = aml.train(encodings, lambdas=(1.0, 10.0, 1.0), epochs=2, lr=1e-2)
    after = aml.word_scores(encodings[0]).numpy()
    assert len(losses) == 6 and np.isfinite(losses).all()
    assert np.abs(after - before).max() > 1e-4
    assert ((after >= 0) & (after <= 1)).all() and after.shape == (encodings[0].n_words,)


def test_a_decoder_cannot_be_the_attribution_model_backbone(decoder):
    with pytest.raises(ModelError, match="encoder backbone"):
        CrossBackboneAML(decoder, decoder)


def test_inputs_read_differently_are_refused(decoder, aml):
    long_text = " ".join(["the movie was excellent"] * 20)  # past the tiny decoder's 60 tokens
    with pytest.raises(InputError, match="same words"):
        aml.word_scores(decoder.encode(long_text))


# ----- end to end: `cli.py prepare-aml --generator`, then the aml method with its generator option ----------------
def test_prepare_aml_with_a_generator_then_explain(keyword_classifier, tmp_path, isolated_cache, capsys):
    llama = save_tiny_architecture("llama", tmp_path / "llama", seed=1)
    generator = str(save_keyword_model(keyword_classifier, tmp_path / "keyword"))
    texts, labels = keyword_sentences(30, seed=2)
    data = tmp_path / "keyword.csv"
    data.write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in zip(texts, labels)))
    assert cli.main(["prepare-aml", "--model", llama, "--generator", generator, "--data", f"file:{data}",
                     "--train-size", "12", "--validation-size", "4", "--epochs", "1", "--lambdas", "1,10,1"]) == 0
    assert any(line.startswith("AML for ") for line in capsys.readouterr().out.splitlines())
    classifier = load_classifier(llama)
    encoding = classifier.encode(TEXT)
    explanation = create("aml", generator=generator).explain(classifier, encoding)
    assert explanation.provenance["details"]["generator"]["spec"] == generator
    # the same scores straight from the trained G: the max of its token scores per word, y_v = F's probabilities
    folder, manifest, warnings = resolve_cross_checkpoint(classifier, metric_named(DEFAULT_METRIC), generator)
    assert warnings == []
    trained = load_cross(classifier, folder, manifest)
    source = trained.source.encode(TEXT)
    tensors = trained.source.tensors(source)
    y = torch.as_tensor(classifier.proba_of(encoding)[None], dtype=torch.float32)
    with torch.no_grad():
        g = torch.sigmoid(trained.model(tensors["input_ids"], tensors["attention_mask"], y,
                                        tensors.get("token_type_ids"))[0]).numpy()
    expected = [g[source.token_word_array == j].max() for j in range(encoding.n_words)]
    np.testing.assert_allclose(explanation.word_scores, expected, rtol=0, atol=1e-6)
    # fAML on the same G: the map kept is the step's map best on the selection metric, each candidate re-scored here
    faml = create("aml", generator=generator, finetune_steps=2, finetune_lr=1e-2).explain(classifier, encoding)
    details = faml.provenance["details"]
    assert details["mode"] == "fAML" and len(details["finetune_losses"]) == 2
    maps, _ = cross_finetune_maps(trained, encoding, int(classifier.proba_of(encoding).argmax()),
                                  tuple(manifest["lambdas"].values()), 2, 1e-2)
    candidates = [m.double().numpy() for m in maps]
    metric = metric_named(DEFAULT_METRIC)
    values = [metric_values(classifier, encoding, [c], metric)[0] for c in candidates]  # one candidate per call
    np.testing.assert_allclose(details["selection_values"], values, rtol=0, atol=1e-5)
    assert details["selected_step"] == int(np.argmax(values))  # AOPC comprehensiveness: higher is better
    np.testing.assert_allclose(faml.word_scores, candidates[details["selected_step"]], rtol=0, atol=1e-6)
    np.testing.assert_allclose(candidates[0], expected, rtol=0, atol=1e-6)  # step 0 is pAML's map
    # a copy with other weights (a sanity check's randomized model) explained with the original's G, and saying so
    other = load_classifier(save_tiny_architecture("llama", tmp_path / "llama-other", seed=3))
    assert other.fingerprint != classifier.fingerprint
    with pytest.raises(ModelError, match="No AML attribution model"):
        create("aml", generator=generator).explain(other, other.encode(TEXT))
    borrowed = create("aml", generator=generator, source_fingerprint=classifier.fingerprint).explain(
        other, other.encode(TEXT))
    assert any(f"trained for the model with fingerprint {classifier.fingerprint}" in w
               for w in borrowed.warnings)
    y_other = torch.as_tensor(other.proba_of(other.encode(TEXT))[None], dtype=torch.float32)
    with torch.no_grad():
        g_other = torch.sigmoid(trained.model(tensors["input_ids"], tensors["attention_mask"], y_other,
                                              tensors.get("token_type_ids"))[0]).numpy()
    np.testing.assert_allclose(borrowed.word_scores, [g_other[source.token_word_array == j].max()
                                                      for j in range(encoding.n_words)], rtol=0, atol=1e-6)
