"""LIME's paper-002 preset (App. A.1): the sampler removes 5-13 % of the words, each with the next three;
the kernel is the unchanged share; the word scores equal sklearn's Ridge fitted here on the same draws and on
probabilities computed by the plain model on hand-built [PAD] inputs."""
from __future__ import annotations

import math

import numpy as np
import torch
from sklearn.linear_model import Ridge
from tiny_models import KEYWORD

from explainers import create_from_spec
from explainers.methods.lime import draw_spans, kernel_weights
from explainers.seeding import seeded

TEXT = f"the movie had some {KEYWORD} scenes with music and the actors were rather long quite old new"


def test_spans_remove_five_to_thirteen_percent_of_starts_each_with_the_next_three():
    with seeded(3):
        keep = draw_spans(400, 40)
    for row in keep:
        removed = np.flatnonzero(~row)
        assert removed.size >= 4 - 0  # at least one span (a span at the end may be cut, not here: n = 40)
        # every removed run is a union of spans of 4: its length is at least 4 unless it reaches the end
        runs = np.split(removed, np.flatnonzero(np.diff(removed) > 1) + 1)
        assert all(len(run) >= 4 or run[-1] == 39 for run in runs)
        assert removed.size <= 4 * math.ceil(0.13 * 40)
        assert 5 <= removed.size <= 4 * 5  # 2 .. 5 distinct starts (5 % .. 13 % of 40), spans may overlap
    # the draws replayed by hand: a share in [5 %, 13 %], that many distinct starts, each start and the next three
    with seeded(7):
        drawn = draw_spans(3, 100)
    with seeded(7):
        for row in drawn:
            share = float(torch.empty(1).uniform_(0.05, 0.13))
            starts = torch.randperm(100)[:max(1, round(share * 100))].tolist()
            assert 5 <= len(starts) <= 13
            assert set(np.flatnonzero(~row)) == {min(s + j, 99) for s in starts for j in range(4) if s + j < 100}
    assert np.allclose(kernel_weights(keep, "unchanged-share", 1.0), keep.sum(axis=1) / 40)


def test_paper_002_preset_equals_a_ridge_fit_on_the_plain_models_probabilities(keyword_classifier):
    classifier, encoding = keyword_classifier, keyword_classifier.encode(TEXT)
    explainer = create_from_spec("lime:paper-002")
    explanation = explainer.explain(classifier, encoding, target=1)
    n = encoding.n_words
    with seeded(explainer.params.seed):
        keep = draw_spans(50, n)
    pad = classifier.tokenizer.pad_token_id
    rows = [[pad if w >= 0 and not row[w] else t for t, w in zip(encoding.input_ids, encoding.token_word)]
            for row in keep]
    with torch.no_grad():
        logits = classifier.model(input_ids=torch.tensor(rows), attention_mask=torch.ones(len(rows), len(rows[0]),
                                                                                         dtype=torch.long)).logits
    probabilities = torch.softmax(logits.double(), -1)[:, 1].numpy()
    expected = Ridge(alpha=1.0).fit(keep.astype(np.float32), probabilities.astype(np.float32),
                                    sample_weight=(keep.sum(axis=1) / n).astype(np.float32)).coef_
    np.testing.assert_allclose(explanation.word_scores, expected, atol=1e-4)
    assert explanation.provenance["details"]["samples"] == 50
    assert int(np.argmax(explanation.word_scores)) == TEXT.split().index(KEYWORD)
