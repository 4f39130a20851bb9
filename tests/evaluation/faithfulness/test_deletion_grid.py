"""Paper 000's single-word deletion grid (Figs. A17/A18): each row's label and confidence against the
plain model on the text with that word removed, tokenized afresh; spans, pairs, operators and bad requests."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import KEYWORD

from evaluation.faithfulness.deletion_grid import deletion_grid
from models import UserFacingError

TEXT = f"the movie had some {KEYWORD} scenes with music"


def plain(classifier, text: str, pair: str | None = None) -> np.ndarray:
    inputs = classifier.tokenizer(text, pair, return_tensors="pt")
    with torch.no_grad():
        return torch.softmax(classifier.model(**inputs).logits.double(), -1)[0].numpy()


def test_each_deletion_against_the_plain_model(keyword_classifier):
    grid, note = deletion_grid(keyword_classifier, keyword_classifier.encode(TEXT))
    words = TEXT.split()
    assert note is None and len(grid) == len(words) + 1 and grid.iloc[0]["removed"].startswith("(none")
    for i, row in enumerate(grid.iloc[1:].itertuples()):
        text = " ".join(words[:i] + words[i + 1:])
        assert row.text == text and row.removed == words[i]
        expected = plain(keyword_classifier, text)
        assert row.prediction == keyword_classifier.labels[int(np.argmax(expected))]
        assert row.confidence == pytest.approx(expected.max(), abs=1e-5)
        assert row.p_original_class == pytest.approx(expected[1], abs=1e-5)
    assert list(grid[grid["flipped"]]["removed"]) == [KEYWORD]  # only the keyword's deletion flips it


def test_spans_pairs_and_other_operators(keyword_classifier):
    encoding = keyword_classifier.encode("the movie had some", pair="excellent scenes")
    grid, _ = deletion_grid(keyword_classifier, encoding, width=2)
    assert list(grid["removed"].iloc[1:]) == ["the movie", "movie had", "had some", "excellent scenes"]
    assert grid.iloc[-1]["text"] == "the movie had some ‖ "
    masked, _ = deletion_grid(keyword_classifier, keyword_classifier.encode(TEXT), operator="mask")
    assert masked.iloc[1]["text"] == "[MASK] " + " ".join(TEXT.split()[1:])
    for bad, kwargs in (("word", {}), (TEXT, {"width": 0}), (TEXT, {"width": 99})):
        with pytest.raises(UserFacingError):
            deletion_grid(keyword_classifier, keyword_classifier.encode(bad), **kwargs)
