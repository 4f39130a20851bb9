"""The classifier's passes in AML training run in length groups: the groups are the cheapest split (checked by
brute force) and the logits and input gradients equal one padded pass."""
from __future__ import annotations

import itertools

import pytest
import torch

from explainers.mask_learning.length_groups import grouped_forward_embeds, length_groups


def brute_force_cost(lengths: list[int], overhead: int) -> int:
    """The cheapest split of the sorted lengths into contiguous groups, over every set of cut points."""
    ordered = sorted(lengths)
    n = len(ordered)
    best = None
    for k in range(n):
        for cuts in itertools.combinations(range(1, n), k):
            bounds = [0, *cuts, n]
            cost = sum((b - a) * ordered[b - 1] + overhead for a, b in zip(bounds, bounds[1:]))
            best = cost if best is None else min(best, cost)
    return best


@pytest.mark.parametrize("lengths,overhead", [([5, 40, 6, 41, 7, 39, 8], 20), ([10, 10, 10], 5), ([3, 60], 100),
                                              ([12, 3, 30, 17, 25, 4, 9, 44], 16), ([7], 64)])
def test_length_groups_are_the_cheapest_split(lengths, overhead):
    groups = length_groups(lengths, overhead)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))  # every row exactly once
    cost = sum(len(group) * max(lengths[i] for i in group) + overhead for group in groups)
    assert cost == brute_force_cost(lengths, overhead)


def test_short_and_long_rows_are_split_when_padding_costs_more_than_a_pass():
    assert sorted(map(sorted, length_groups([5, 40, 6, 41], 20))) == [[0, 2], [1, 3]]
    assert length_groups([5, 40, 6, 41], 1000) == [[0, 2, 1, 3]]  # one pass when passes are dear


def test_grouped_logits_and_gradients_equal_one_padded_pass(keyword_classifier):
    texts = ["excellent", "the movie was a film that had some scenes with actors and music it is very long",
             "the plot is old", "this story had excellent music and the plot is rather old and quite long", "fun"]
    encodings = [keyword_classifier.encode(t) for t in texts]
    width = max(e.n_tokens for e in encodings)
    ids = torch.full((len(texts), width), keyword_classifier.tokenizer.pad_token_id)
    attention = torch.zeros((len(texts), width), dtype=torch.long)
    for row, e in enumerate(encodings):
        ids[row, :e.n_tokens] = torch.tensor(e.input_ids)
        attention[row, :e.n_tokens] = 1
    embeds = keyword_classifier.word_embeddings(ids).detach()
    plain_in = embeds.clone().requires_grad_(True)
    grouped_in = embeds.clone().requires_grad_(True)
    weights = torch.linspace(-1.0, 1.0, 2 * len(texts)).reshape(len(texts), 2)  # a loss that reads every logit
    plain = keyword_classifier.forward_embeds(plain_in, attention)
    lengths = attention.sum(1).tolist()
    assert len(length_groups(lengths, overhead=0)) == len(set(lengths)) >= 3  # free passes: a group per length
    grouped = grouped_forward_embeds(keyword_classifier, grouped_in, attention, overhead=0)
    (plain * weights).sum().backward()
    (grouped * weights).sum().backward()
    # float32 logits of O(10) and their gradients; the padded pass sums over more (zero-weighted) keys
    torch.testing.assert_close(grouped, plain, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grouped_in.grad, plain_in.grad, rtol=1e-4, atol=1e-6)
