"""Warnings about the model and the input: a classification head that was never trained, and words the
vocabulary lacks (read as [UNK]). Both reach every explanation's warnings (shown on the page) and its provenance."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import ROOT
from tiny_models import keyword_sentences, save_tiny_architecture, tiny_architecture, tiny_bert, tiny_tokenizer
from transformers import GPT2Config, GPT2ForSequenceClassification

from explainers import create
from explainers.cache import ExplanationCache, explain_cached
from models import load_classifier
from models.loading import untrained_head_warning
from models.untrained_head import HEAD_PREFIXES


def save(model, folder):
    model.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    return str(folder)


def test_a_saved_untrained_head_is_loaded_with_a_warning(tmp_path):
    classifier = load_classifier(save(tiny_bert(), tmp_path / "untrained"))  # saved straight after construction
    [warning] = classifier.warnings
    assert "untrained" in warning and "LABEL_0" in warning
    explanation = create("leave_one_out").explain(classifier, classifier.encode("the movie was good"))
    assert warning in explanation.warnings
    assert explanation.provenance["model"]["warnings"] == [warning]
    assert classifier.describe()["warnings"] == [warning]
    randomized = classifier.with_model(classifier.model, "other-fingerprint")  # sanity checks keep the warning
    assert randomized.warnings == classifier.warnings


def test_an_untrained_head_with_named_classes_is_still_warned_about(tmp_path):
    model = tiny_bert()
    model.config.id2label, model.config.label2id = {0: "negative", 1: "positive"}, {"negative": 0, "positive": 1}
    [warning] = load_classifier(save(model, tmp_path / "named")).warnings
    assert "untrained" in warning and "LABEL_0" not in warning


def test_a_trained_head_gets_no_warning_even_with_generic_class_names(keyword_classifier, tmp_path):
    model = keyword_classifier.model
    assert load_classifier(save(model, tmp_path / "trained")).warnings == ()
    generic = tiny_bert()
    generic.load_state_dict(model.state_dict())  # trained weights, LABEL_0 / LABEL_1 names
    assert load_classifier(save(generic, tmp_path / "trained-generic")).warnings == ()


def test_a_head_moved_off_its_initialization_gets_no_warning():
    model = tiny_bert()
    assert untrained_head_warning(model) is not None
    with torch.no_grad():
        model.classifier.bias.add_(1e-3)  # one optimizer step moves every bias
    assert untrained_head_warning(model) is None
    scaled = tiny_bert()
    with torch.no_grad():
        scaled.classifier.weight.mul_(3.0)  # weights far from N(0, 0.02), biases still 0
    assert untrained_head_warning(scaled) is None


def test_a_head_without_biases_is_judged_by_its_weights_whatever_the_class_names():
    config = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=1, n_head=2, num_labels=2,
                        pad_token_id=0)
    torch.manual_seed(0)
    model = GPT2ForSequenceClassification(config)
    assert model.score.bias is None
    assert "LABEL_0" in untrained_head_warning(model)
    model.config.id2label = {0: "negative", 1: "positive"}  # named classes: still untrained
    assert "untrained" in untrained_head_warning(model) and "LABEL_0" not in untrained_head_warning(model)
    with torch.no_grad():
        model.score.weight.mul_(3.0)  # weights far from N(0, 0.02)
    assert untrained_head_warning(model) is None


def _train_head(model, tokenizer, steps: int, lr: float) -> None:
    """A few optimizer steps on the classification head, on the keyword task (the body stays as it is)."""
    texts, labels = keyword_sentences(64)
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    head = [p for name, p in model.named_parameters() if name.split(".")[0] in HEAD_PREFIXES]
    optimizer = torch.optim.Adam(head, lr=lr)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                     labels=torch.tensor(labels)).loss
        loss.backward()
        optimizer.step()
    model.eval()


@pytest.mark.parametrize("architecture", ["t5", "gpt2", "bart", "llama"])
def test_every_architecture_s_untrained_head_is_warned_about_and_a_trained_one_is_not(architecture, tmp_path):
    """T5's head is drawn from N(0, factor / sqrt(d_model)), not N(0, initializer_range); GPT-2's and Llama's have
    no bias. Each is compared with a fresh draw of its own initializer; a few steps of training clear the warning."""
    folder = save_tiny_architecture(architecture, tmp_path / architecture)  # named classes: negative / positive
    [warning] = [w for w in load_classifier(folder).warnings if "head" in w and "untrained" in w]
    assert "LABEL_0" not in warning
    model, tokenizer = tiny_architecture(architecture)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        model.config.pad_token_id = tokenizer.pad_token_id
    _train_head(model, tokenizer, steps=10, lr=0.1)
    model.save_pretrained(tmp_path / "trained")
    tokenizer.save_pretrained(tmp_path / "trained")
    assert not any("untrained" in w for w in load_classifier(str(tmp_path / "trained")).warnings)


def test_words_read_as_unknown_are_warned_about(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent 😀")
    assert keyword_classifier.unknown_words(encoding) == [4]
    explanation = create("leave_one_out").explain(keyword_classifier, encoding)
    [warning] = [w for w in explanation.warnings if "[UNK]" in w]
    assert "'😀'" in warning and warning.startswith("1 word(s)")
    assert explanation.provenance["input"]["unknown_words"] == ["😀"]
    assert explanation.provenance["model"]["warnings"] == []  # the trained keyword model itself is fine
    clean = create("leave_one_out").explain(keyword_classifier, keyword_classifier.encode("the movie was excellent"))
    assert clean.warnings == () and clean.provenance["input"]["unknown_words"] == []


def test_warnings_survive_the_disk_cache(keyword_classifier, tmp_path):
    cache = ExplanationCache(directory=tmp_path)
    encoding = keyword_classifier.encode("a 😀 film")
    computed = explain_cached(create("leave_one_out"), keyword_classifier, encoding, cache=cache)
    cache.clear()
    served = explain_cached(create("leave_one_out"), keyword_classifier, encoding, cache=cache)
    assert served.provenance["cache"] == "disk" and served.warnings == computed.warnings != ()
    assert json.loads(json.dumps(served.provenance["input"]["unknown_words"])) == ["😀"]


@pytest.mark.integration
def test_the_prepared_default_model_gets_no_warning(quick_classifier):
    assert quick_classifier.warnings == ()


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_the_command_line_prints_each_warning_once(tmp_path):
    folder = save(tiny_bert(), tmp_path / "untrained")
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "explain", "--model", folder, "--text",
                             "the movie 😀", "--methods", "leave_one_out,occlusion"], capture_output=True, text=True,
                            cwd=ROOT, timeout=300, env={**os.environ, "EXWB_DISK_CACHE": "0", "EXWB_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("warning: ")]
    assert len(lines) == 2 and "untrained" in lines[0] and "'😀'" in lines[1]
