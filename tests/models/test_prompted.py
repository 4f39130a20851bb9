"""Prompted causal LMs as classifiers (paper 004 section 3.3): tiny GPT-2 and Llama LMs built here, the class
probabilities against a direct computation, only the input's words explained, padding, a chat template, bad specs."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from tolerances import EPS32, REORDERED_ULPS
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from explainers import create
from models import InputError, ModelError, load_classifier
from models.prompted import PromptedClassifier

TEMPLATE = "Review: {text}\nSentiment:"
CORPUS = ["the film was good", "the film was bad", "Review: a great movie\nSentiment: good",
          "Review: a dull movie\nSentiment: bad", "a fine cast and a dull plot",
          "premise: a man sleeps hypothesis: nobody sleeps answer: no", "answer: a"]


def byte_bpe_tokenizer() -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(CORPUS * 10, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                                   unk_token="<|endoftext|>")


def tiny_lm(kind: str, vocab: int):
    torch.manual_seed(0)
    if kind == "gpt2":
        config = GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=0,
                            eos_token_id=0)
        return GPT2LMHeadModel(config)
    config = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64, bos_token_id=0,
                         eos_token_id=0)
    return LlamaForCausalLM(config)


def write_spec(folder, lm_kind: str = "gpt2", **changes) -> str:
    tokenizer = byte_bpe_tokenizer()
    lm = tiny_lm(lm_kind, len(tokenizer))
    lm.save_pretrained(folder / "lm")
    tokenizer.save_pretrained(folder / "lm")
    spec = {"kind": "prompted-lm", "model": "lm", "template": TEMPLATE,
            "labels": {"negative": " bad", "positive": " good"}, **changes}
    path = folder / f"{lm_kind}-prompt.json"
    path.write_text(json.dumps(spec))
    return str(path)


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def prompted(request, tmp_path_factory) -> PromptedClassifier:
    return load_classifier(write_spec(tmp_path_factory.mktemp(request.param), request.param))


def test_probabilities_are_the_softmax_over_the_label_words_next_token_logits(prompted):
    encoding = prompted.encode("the film was good")
    tokenizer = prompted.tokenizer
    ids = tokenizer("Review: the film was good\nSentiment:", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        next_token = prompted.model.lm(input_ids=ids).logits[0, -1]
    label_ids = [tokenizer(" bad", add_special_tokens=False)["input_ids"][0],
                 tokenizer(" good", add_special_tokens=False)["input_ids"][0]]
    expected = torch.softmax(next_token[label_ids], dim=-1).numpy()
    np.testing.assert_allclose(prompted.predict_proba([encoding])[0], expected, atol=1e-5)
    assert prompted.labels == ["negative", "positive"]


def test_only_the_input_words_are_words_and_the_prompt_is_kept(prompted):
    encoding = prompted.encode("the film was good")
    assert encoding.words == ("the", "film", "was", "good")
    prompt_tokens = [t for t, w in zip(encoding.tokens, encoding.token_word) if w < 0]
    assert "".join(prompt_tokens).replace("Ġ", " ").replace("Ċ", "\n").replace("▁", " ").strip().startswith("Re")
    assert sorted(set(w for w in encoding.token_word if w >= 0)) == [0, 1, 2, 3]


def test_padded_batches_of_different_lengths_match_one_at_a_time(prompted):
    encodings = [prompted.encode(t) for t in ["the film was good", "a dull plot", "the film was bad and dull"]]
    together = prompted.predict_logits(encodings)
    alone = np.vstack([prompted.predict_logits([e]) for e in encodings])
    np.testing.assert_allclose(together, alone, atol=REORDERED_ULPS * EPS32 * max(1.0, np.abs(alone).max()))


def test_methods_explain_the_input_words_and_leave_one_out_checks_directly(prompted):
    encoding = prompted.encode("the film was good")
    for method in ("saliency", "integrated_gradients", "attention"):
        explanation = create(method).explain(prompted, encoding)
        assert explanation.word_scores.shape == (4,) and np.isfinite(explanation.word_scores).all()
        assert any("prompted causal LM" in w for w in explanation.warnings)
    loo = create("leave_one_out", score="probability").explain(prompted, encoding)
    target = loo.target
    full = prompted.predict_proba([encoding])[0, target]
    without_film = prompted.predict_proba([prompted.encode("the was good")])[0, target]
    assert loo.word_scores[1] == pytest.approx(full - without_film, abs=1e-5)


def test_sentence_pairs_fill_both_slots(tmp_path):
    classifier = load_classifier(write_spec(tmp_path, template="premise: {text} hypothesis: {pair} answer:",
                                            labels={"entailment": " no", "contradiction": " a"}))
    encoding = classifier.encode("a man sleeps", "nobody sleeps")
    assert encoding.words == ("a", "man", "sleeps", "nobody", "sleeps") and encoding.word_segment == (0, 0, 0, 1, 1)


def test_a_chat_template_wraps_the_prompt_and_keeps_the_words(tmp_path):
    path = write_spec(tmp_path, chat=True)
    folder = tmp_path / "lm"
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}<assistant>"
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    classifier = load_classifier(path)
    encoding = classifier.encode("the film was good")
    assert encoding.words == ("the", "film", "was", "good")
    assert "".join(encoding.tokens).replace("Ġ", " ").startswith("<user>")


def test_a_long_input_is_cut_and_the_prompt_stays_whole(tmp_path):
    classifier = load_classifier(write_spec(tmp_path))
    encoding = classifier.encode(" ".join(["the film was good"] * 40))
    assert encoding.n_tokens <= classifier.max_length and encoding.truncated_words > 0
    assert "".join(encoding.tokens[-5:]).replace("Ċ", "\n").endswith("Sentiment:")


@pytest.mark.parametrize("changes, message", [
    ({"template": "Review: the text\nSentiment:"}, "no {text} slot"),
    ({"labels": {"negative": " bad", "positive": " wonderfully"}}, "tokens"),
    ({"labels": {"negative": " good", "positive": " good"}}, "same label token"),
    ({"kind": "something-else"}, "not a prompted-model file"),
])
def test_bad_specs_get_clear_messages(tmp_path, changes, message):
    with pytest.raises(ModelError, match=message):
        load_classifier(write_spec(tmp_path, **changes))


def test_a_template_longer_than_the_model_is_refused(tmp_path):
    classifier = load_classifier(write_spec(tmp_path, template="Review " * 70 + "{text} Sentiment:"))
    with pytest.raises(InputError, match="shorten the template"):
        classifier.encode("the film was good")
