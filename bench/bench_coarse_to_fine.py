#!/usr/bin/env python
"""Coarse to fine's sentence rules on ``eraser-movies-docs:test`` documents, against word-level
leave-one-out: share of its time (target <= 15 %) and precision of the top-10 words (target >= 0.8).

Leave-one-out's fine pass removes one chosen word at a time with everything else kept, which is word-level
leave-one-out's own row for that word: its fine scores equal the word-level scores. So each document is explained
once at word level and once at sentence level (``--collect``, timed, stored in ``--scores``), and every rule
(``explainers.coarse_to_fine.RULES``) is then scored from those: which words it explains, their top-10 precision,
and its cost in window rows (the coarse pass's rows + the fine pass's rows, each row re-running the windows that
hold its removed words, as the engine does) as a share of word-level leave-one-out's window rows. The oracle line:
the fewest rows any choice of sentences needs to hold 8 of the top-10 words (a lower bound for every rule). Leave-one-out's
time is proportional to its window rows (1.12x its forward floor, docs/benchmarks.md), so the row share is the time
share; ``--verify`` runs the default rule itself on each document and times it.

    EXWB_THREADS=1 python bench/bench_coarse_to_fine.py --collect --docs 5 --scores /tmp/c2f.json
    EXWB_THREADS=1 python bench/bench_coarse_to_fine.py --scores /tmp/c2f.json [--verify]
Figures measured on a machine shared with other work must say so (docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import numpy as np  # noqa: E402

from bench.machine import describe  # noqa: E402
from corpora import load_dataset  # noqa: E402
from explainers import create  # noqa: E402
from explainers.coarse_rules import DEFAULT_RULE, RULES, choose, rows_per_word, second_round  # noqa: E402
from explainers.coarse_to_fine import coarse_to_fine, top_precision  # noqa: E402
from models import load_classifier, metered  # noqa: E402
from models.granularity import by_units  # noqa: E402
from models.windows import encode_document, is_document  # noqa: E402


def documents(words_min: int, words_max: int, docs: int):
    return [e for e in load_dataset("eraser-movies-docs:test")
            if words_min <= len(e.text.split()) <= words_max][:docs]


def collect(classifier, loo, examples, path: Path) -> None:
    """Word-level and sentence-level leave-one-out of each document, timed, stored in ``path`` (resumable)."""
    stored = json.loads(path.read_text()) if path.exists() else {}
    for example in examples:
        if example.id in stored:
            continue
        encoding = encode_document(classifier, example.text)
        target = int(np.argmax(classifier.logits_of(encoding)))
        started = time.perf_counter()
        with metered() as meter:
            words = loo.explain(classifier, encoding, target=target).word_scores
        word_seconds, word_passes = time.perf_counter() - started, meter.forward_passes
        sentences = by_units(encoding, "sentence")
        started = time.perf_counter()
        coarse = loo.explain(classifier, sentences, target=target).word_scores
        stored[example.id] = {"words": encoding.n_words, "target": target, "word_scores": list(map(float, words)),
                              "sentence_scores": list(map(float, coarse)),
                              "groups": [[g.start, g.stop] for g in sentences.groups],
                              "word_seconds": word_seconds, "word_passes": word_passes,
                              "sentence_seconds": time.perf_counter() - started}
        path.write_text(json.dumps(stored))
        print(f"  {example.id}: {encoding.n_words} words, word LOO {word_seconds:.1f} s ({word_passes} window rows)",
              flush=True)


def window_rows(encoding, players) -> int:
    """Window rows leave-one-out runs with these players (word ranges): the unperturbed windows once, then per
    player the windows that hold one of its words (the engine's reuse rule)."""
    if not is_document(encoding):
        return 1 + len(players)
    windows = encoding.windows
    return len(windows) + sum(sum(1 for w in windows if w.words.start < p.stop and p.start < w.words.stop)
                              for p in players)


def fine_players(words, n_words: int) -> list[range]:
    """The fine pass's players: each word alone, each run of other words between them one block."""
    players, last = [], 0
    for w in sorted(words):
        if w > last:
            players.append(range(last, w))
        players.append(range(w, w + 1))
        last = w + 1
    if last < n_words:
        players.append(range(last, n_words))
    return players


def words_of(chosen, groups) -> list[int]:
    return sorted(w for i in chosen for w in groups[i])


def rule_cost(rule, encoding, groups, coarse, full):
    """The rule's sentences (first round, second round) and its window rows: each pass (coarse, fine, a second
    fine) runs the unperturbed windows once and its players' windows (``window_rows``)."""
    word_rows = rows_per_word(encoding)
    chosen = choose(rule, coarse, groups, encoding.n_words, word_rows)
    cost = window_rows(encoding, groups) + window_rows(encoding, fine_players(words_of(chosen, groups),
                                                                              encoding.n_words))
    more = second_round(rule, coarse, groups, encoding.n_words, chosen, full[words_of(chosen, groups)], word_rows)
    if more:  # leave-one-out's fine scores are its word-level scores (module docstring)
        cost += window_rows(encoding, fine_players(words_of(more, groups), encoding.n_words))
    return chosen, more, cost


def oracle_rows(encoding, groups, coarse, full, needed: int = 8) -> int:
    """The fewest window rows any choice of sentences costs (coarse pass included) whose words hold ``needed`` of
    word-level leave-one-out's top-10: a lower bound for every sentence rule at precision needed / 10."""
    top = np.argsort(-full, kind="stable")[:10]
    holding = sorted({i for i, g in enumerate(groups) for w in top if w in g})
    best = None
    for mask in range(1, 2 ** len(holding)):
        picked = [holding[j] for j in range(len(holding)) if mask >> j & 1]
        if sum(1 for w in top if any(w in groups[i] for i in picked)) < needed:
            continue
        cost = window_rows(encoding, groups) + window_rows(encoding, fine_players(words_of(picked, groups),
                                                                                  encoding.n_words))
        best = cost if best is None else min(best, cost)
    return best


def score_rules(classifier, examples, path: Path) -> dict:
    """Per rule: (row share, top-10 precision, words refined) per document, from the stored scores."""
    stored = json.loads(path.read_text())
    table: dict[str, list] = {}
    for example in examples:
        row = stored.get(example.id)
        if row is None:
            continue
        encoding = encode_document(classifier, example.text)
        groups = [range(a, b) for a, b in row["groups"]]
        full, coarse = np.array(row["word_scores"]), np.array(row["sentence_scores"])
        word_cost = window_rows(encoding, [range(w, w + 1) for w in range(encoding.n_words)])
        oracle = oracle_rows(encoding, groups, coarse, full)
        table.setdefault("oracle: fewest rows, precision 0.8", []).append((oracle / word_cost, 0.8, 0))
        for name, rule in RULES.items():
            chosen, more, cost = rule_cost(rule, encoding, groups, coarse, full)
            explained = np.zeros(encoding.n_words, dtype=bool)
            explained[words_of(chosen + more, groups)] = True
            precision = top_precision(np.where(explained, full, -np.inf), full)
            table.setdefault(name, []).append((cost / word_cost, precision, int(explained.sum())))
    return table


def verify(classifier, loo, examples, path: Path, rule: str) -> None:
    """The rule run for real on each document, timed, against the stored word-level time and scores."""
    stored = json.loads(path.read_text())
    for example in examples:
        row = stored.get(example.id)
        if row is None:
            continue
        encoding = encode_document(classifier, example.text)
        started = time.perf_counter()
        result = coarse_to_fine(loo, classifier, encoding, row["target"], rule=rule)
        seconds = time.perf_counter() - started
        full = np.array(row["word_scores"])
        same = np.allclose(result.word_scores[result.explained], full[result.explained], atol=1e-6)
        print(f"  {example.id}: {rule} {seconds:.1f} s = {seconds / row['word_seconds']:.1%} of word LOO's "
              f"{row['word_seconds']:.1f} s, top-10 precision "
              f"{top_precision(np.where(result.explained, result.word_scores, -np.inf), full):.2f}, fine scores equal "
              f"word-level: {same}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--docs", type=int, default=5)
    parser.add_argument("--words-min", type=int, default=450)
    parser.add_argument("--words-max", type=int, default=650)
    parser.add_argument("--scores", type=Path, default=Path("/tmp/exwb-coarse-to-fine.json"))
    parser.add_argument("--collect", action="store_true", help="compute the word- and sentence-level scores first")
    parser.add_argument("--verify", action="store_true", help="run the default rule itself on each document")
    args = parser.parse_args()
    classifier = load_classifier(args.model)
    loo = create("leave_one_out", operator="pad")
    examples = documents(args.words_min, args.words_max, args.docs)
    print(f"machine: {describe()}\nmodel {classifier.name}; {len(examples)} documents of {args.words_min}-"
          f"{args.words_max} words", flush=True)
    if args.collect:
        collect(classifier, loo, examples, args.scores)
    table = score_rules(classifier, examples, args.scores)
    print(f"{'rule':36s}{'docs':>5s}{'row share':>11s}{'max share':>11s}{'top-10 prec.':>13s}{'min prec.':>10s}"
          f"{'words':>7s}")
    for name, rows in table.items():
        share, precision, words = (np.array(c) for c in zip(*rows))
        print(f"{name:36s}{len(rows):5d}{share.mean():11.1%}{share.max():11.1%}{precision.mean():13.2f}"
              f"{precision.min():10.2f}{words.mean():7.0f}")
    if args.verify:
        verify(classifier, loo, examples, args.scores, DEFAULT_RULE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
