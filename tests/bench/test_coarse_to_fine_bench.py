"""bench/bench_coarse_to_fine.py scores coarse to fine's rules without running them: its window-row count of every
rule equals the forward passes the metered run itself makes on a document read in windows, and its word-level count
equals word-level leave-one-out's."""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest
from tiny_models import FILLER, KEYWORD

from explainers import create
from explainers.coarse_rules import RULES, SentenceRule
from explainers.coarse_to_fine import coarse_to_fine
from models import metered
from models.windows import DocumentEncoding, encode_document

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_coarse_to_fine", ROOT / "bench" / "bench_coarse_to_fine.py")
bench = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def document(keyword_classifier):
    rng = random.Random(4)
    words = [rng.choice(FILLER) for _ in range(150)]
    words[99] = KEYWORD
    for end in range(9, 150, 10):
        words[end] += "."
    encoding = encode_document(keyword_classifier, " ".join(words))
    assert isinstance(encoding, DocumentEncoding) and len(encoding.windows) > 2
    keyword_classifier.logits_of(encoding)
    return encoding


def test_word_level_rows_are_leave_one_out_s_forward_passes(keyword_classifier, document):
    with metered() as meter:
        create("leave_one_out", operator="pad").explain(keyword_classifier, document, target=1)
    players = [range(w, w + 1) for w in range(document.n_words)]
    assert bench.window_rows(document, players) == meter.forward_passes


@pytest.mark.parametrize("rule", [*RULES.values(), SentenceRule("density", top_k=2, budget_share=0.5,
                                                                second_round=True)])
def test_each_rule_s_rows_are_its_forward_passes(keyword_classifier, document, rule):
    loo = create("leave_one_out", operator="pad")
    full = loo.explain(keyword_classifier, document, target=1).word_scores
    with metered() as meter:
        result = coarse_to_fine(loo, keyword_classifier, document, target=1, rule=rule)
    chosen, more, cost = bench.rule_cost(rule, document, list(result.sentences), result.sentence_scores, full)
    assert chosen + more == result.chosen
    assert cost == meter.forward_passes
