"""Documents longer than the window: the windowed classifier against values computed another way."""
import random

import numpy as np
import pytest
import torch
from tiny_models import FILLER, KEYWORD

from explainers import create
from models import InputError
from models.perturb import perturb, perturbed_logits
from models.windows import DocumentEncoding, WindowConfig, blend_weights, encode_document, perturbed_document_logits


def document(n_words: int = 150, seed: int = 0, keyword_at: int | None = None) -> str:
    rng = random.Random(seed)
    words = [rng.choice(FILLER) for _ in range(n_words)]
    if keyword_at is not None:
        words[keyword_at] = KEYWORD
    return " ".join(words)


def plain_logits(classifier, text: str) -> np.ndarray:
    """The model itself on a text that fits (no wrapper): tokenizer + model."""
    enc = classifier.tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        return classifier.model(**enc).logits[0].double().numpy()


def test_short_text_is_an_ordinary_encoding(keyword_classifier):
    encoding = encode_document(keyword_classifier, "a short text")
    assert not isinstance(encoding, DocumentEncoding)
    assert encoding.key == keyword_classifier.encode("a short text").key


def test_windows_cover_every_word_within_the_window(keyword_classifier):
    text = document(150)
    doc = encode_document(keyword_classifier, text)
    assert isinstance(doc, DocumentEncoding) and doc.truncated_tokens == 0
    assert doc.n_words == 150 and len(doc.windows) > 2
    covered = set()
    for window in doc.windows:
        assert window.encoding.n_tokens <= keyword_classifier.max_length
        assert list(window.encoding.words) == list(doc.words[window.words.start:window.words.stop])
        covered.update(window.words)
    assert covered == set(range(150))
    for before, after in zip(doc.windows, doc.windows[1:]):  # neighbours overlap
        assert after.words.start < before.words.stop


@pytest.mark.parametrize("how", ["mean", "max", "first"])
def test_document_prediction_is_the_aggregate_of_the_windows_logits(keyword_classifier, how):
    text = document(150, keyword_at=70)
    doc = encode_document(keyword_classifier, text, config=WindowConfig(aggregate=how))
    # each window's text through the tokenizer and the model directly
    direct = np.stack([plain_logits(keyword_classifier, " ".join(text.split()[w.words.start:w.words.stop]))
                       for w in doc.windows])
    expected = {"mean": direct.mean(axis=0), "max": direct.max(axis=0), "first": direct[0]}[how]
    np.testing.assert_allclose(keyword_classifier.logits_of(doc), expected, atol=1e-5)


def test_size_and_stride_are_configurable(keyword_classifier):
    text = document(150)
    small = encode_document(keyword_classifier, text, config=WindowConfig(size=32, stride=10))
    default = encode_document(keyword_classifier, text)
    assert len(small.windows) > len(default.windows)
    assert small.window_size == 32 and small.window_stride == 10
    assert all(w.encoding.n_tokens <= 32 for w in small.windows)
    assert small.key != default.key  # the prediction depends on the windows: so does the cache key


def test_blend_weights_are_linear_ramps_summing_to_one():
    weights = blend_weights([range(0, 10), range(7, 17)])
    np.testing.assert_allclose(weights[0][7:], [3 / 4, 2 / 4, 1 / 4])
    np.testing.assert_allclose(weights[1][:3], [1 / 4, 2 / 4, 3 / 4])
    np.testing.assert_allclose(weights[0][:7], 1.0)


def test_a_word_in_an_overlap_gets_the_blend_of_its_two_windows_gradients(keyword_classifier):
    doc = encode_document(keyword_classifier, document(150, keyword_at=40))
    method = create("saliency")
    explanation = method.explain(keyword_classifier, doc, target=1)
    assert explanation.provenance["input"]["windows"]["windows"] == len(doc.windows)
    first, second = doc.windows[0], doc.windows[1]
    per_window = [method.explain(keyword_classifier, w.encoding, target=1).word_scores for w in (first, second)]
    m = first.words.stop - second.words.start
    assert m > 1
    for j in range(m):  # j-th word of the overlap
        word = second.words.start + j
        earlier, later = (m - j) / (m + 1), (j + 1) / (m + 1)
        expected = earlier * per_window[0][word - first.words.start] + later * per_window[1][j]
        assert explanation.word_scores[word] == pytest.approx(expected, rel=1e-6, abs=1e-9)
    # a word in the first window only: that window's score alone
    assert explanation.word_scores[0] == pytest.approx(per_window[0][0], rel=1e-6)


@pytest.mark.parametrize("operator", ["pad", "delete", "zero"])
def test_window_reuse_equals_recomputing_every_window(keyword_classifier, operator):
    doc = encode_document(keyword_classifier, document(150, keyword_at=100))
    rng = np.random.default_rng(0)
    keep = np.ones((12, doc.n_words), dtype=bool)
    for row in keep[1:]:
        row[rng.choice(doc.n_words, size=rng.integers(1, 5), replace=False)] = False
    reused = perturbed_document_logits(keyword_classifier, doc, keep, operator, None, perturb, reuse=True)
    every = perturbed_document_logits(keyword_classifier, doc, keep, operator, None, perturb, reuse=False)
    np.testing.assert_allclose(reused, every, atol=1e-5)
    np.testing.assert_allclose(reused[0], keyword_classifier.logits_of(doc), atol=1e-5)


def test_pad_removal_equals_the_windows_run_by_hand(keyword_classifier):
    text = document(150, keyword_at=60)
    doc = encode_document(keyword_classifier, text)
    keep = np.ones(doc.n_words, dtype=bool)
    keep[60] = False
    got = perturbed_logits(keyword_classifier, doc, keep[None], "pad")[0]
    pad = keyword_classifier.tokenizer.pad_token
    words = text.split()
    direct = []
    for w in doc.windows:  # the window's words, the removed one written as [PAD] (one token per word here)
        chunk = [pad if i == 60 else words[i] for i in w.words]
        direct.append(plain_logits(keyword_classifier, " ".join(chunk)))
    np.testing.assert_allclose(got, np.mean(direct, axis=0), atol=1e-5)


def test_leave_one_out_runs_on_the_whole_document(keyword_classifier):
    doc = encode_document(keyword_classifier, document(150, keyword_at=120))
    explanation = create("leave_one_out").explain(keyword_classifier, doc, target=1)
    assert len(explanation.word_scores) == 150
    assert int(np.argmax(explanation.word_scores)) == 120  # the keyword, beyond the first window


def test_a_very_long_text_is_refused_with_a_cost_estimate(keyword_classifier):
    text = " ".join(["fine"] * 25_000)
    with pytest.raises(InputError, match="opt-in"):
        encode_document(keyword_classifier, text)
    assert isinstance(encode_document(keyword_classifier, text, allow_long=True), DocumentEncoding)


def test_bad_window_settings_get_a_clear_message():
    with pytest.raises(InputError, match="aggregate"):
        WindowConfig(aggregate="median")
    with pytest.raises(InputError, match="too small"):
        WindowConfig(size=2)


def test_reuse_runs_only_the_windows_a_removal_touches(keyword_classifier):
    from models import metered

    doc = encode_document(keyword_classifier, document(150))
    keep = ~np.eye(doc.n_words, dtype=bool)
    with metered() as reused:
        perturbed_document_logits(keyword_classifier, doc, keep, "pad", None, perturb, reuse=True)
    with metered() as every:
        perturbed_document_logits(keyword_classifier, doc, keep, "pad", None, perturb, reuse=False)
    touched = sum(len(w.words) for w in doc.windows)  # a word's row re-runs each window that holds it
    assert reused.forward_passes == touched + len(doc.windows)  # + the unperturbed windows once
    assert every.forward_passes == doc.n_words * len(doc.windows)


def test_every_method_explains_every_word_of_a_document(keyword_classifier):
    from explainers import REGISTRY

    doc = encode_document(keyword_classifier, document(150, keyword_at=100))
    small = {"lime": {"n_samples": 30}, "kernel_shap": {"n_samples": 30}, "shapley_sampling": {"n_samples": 2},
             "marc": {"max_steps": 3}, "integrated_gradients": {"n_steps": 4}, "smoothgrad": {"n_samples": 2},
             "gradient_shap": {"n_samples": 2}, "partition_shap": {"max_evals": 60}}
    skipped = {m for m, cls in REGISTRY.items() if cls.needs_mlm or cls.trains or cls.family == "ensemble"}
    for method_id in sorted(set(REGISTRY) - skipped):
        params = {k: v for k, v in small.get(method_id, {}).items()
                  if k in REGISTRY[method_id].Params.__dataclass_fields__}
        explanation = create(method_id, **params).explain(keyword_classifier, doc, target=1)
        assert len(explanation.word_scores) == 150, method_id
        assert np.isfinite(explanation.word_scores).all(), method_id
