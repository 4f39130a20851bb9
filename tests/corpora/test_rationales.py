"""Human rationales: the SST tree rule (hand-checked trees and real rows), the e-SNLI index fix, ERASER spans
and user files, on real rows of ../shared/data."""
from __future__ import annotations

import csv
import json

import pytest

from corpora import DATASETS, DataError, load_dataset, load_user_file, split_words
from corpora.eraser_spans import evidence_mask
from corpora.locate import find_dataset_dir
from corpora.snli import parse_highlight_indices
from corpora.sst import parse_tree
from corpora.sst_rationale import SstRule, node_polarity, rationale_from_tree

MINIMAL = SstRule("minimal", "any", 0.5)
PAPER000 = SstRule("paper000", "any", 0.5)


def _rationale(tree: str, polarity: int, rule: SstRule) -> tuple[int, ...]:
    root, _words = parse_tree(tree)
    return rationale_from_tree(root, polarity, rule)


# ----- the SST rule on hand-checked trees -------------------------------------------------------------------
def test_minimal_rule_picks_the_smallest_agreeing_node():
    # "It is good fun" (positive): agreeing nodes: root 3, "is good fun" 4, "good fun" 3, "good" 3 -> minimal "good"
    tree = "(3 (2 It) (4 (2 is) (3 (3 good) (2 fun))))"
    assert _rationale(tree, +1, MINIMAL) == (0, 0, 1, 0)
    # paper 000: every agreeing phrase of at most 2 words (50 % of 4): "good fun" and "good"
    assert _rationale(tree, +1, PAPER000) == (0, 0, 1, 1)


def test_negation_marks_the_whole_phrase():
    # "It is not good" (negative): "not good" is 1, neither "not" (2) nor "good" (3) is negative on its own
    tree = "(1 (2 It) (1 (2 is) (1 (2 not) (3 good))))"
    assert _rationale(tree, -1, MINIMAL) == (0, 0, 1, 1)
    # paper 000: "is not good" (3 words > 2) and the root are too long; "good" disagrees
    assert _rationale(tree, -1, PAPER000) == (0, 0, 1, 1)


def test_phrases_of_the_other_polarity_are_ignored():
    # "the plot but great" (positive): "the plot" is negative (1) and ignored; minimal agreeing: "great"
    tree = "(3 (1 (2 the) (1 plot)) (3 (2 but) (4 great)))"
    assert _rationale(tree, +1, MINIMAL) == (0, 0, 0, 1)
    assert _rationale(tree, +1, PAPER000) == (0, 0, 1, 1)  # "but great" (3) and "great" (4)
    # the same tree read as a negative sentence marks the negative phrase's minimal node "plot"
    assert _rationale(tree, -1, MINIMAL) == (0, 1, 0, 0)


def test_length_cap_and_strength():
    # only the root agrees: 2 words > 50 % of 2 -> empty; without the cap the whole sentence
    assert _rationale("(3 (2 a) (2 film))", +1, MINIMAL) == (0, 0)
    assert _rationale("(3 (2 a) (2 film))", +1, SstRule("minimal", "any", None)) == (1, 1)
    # strength "strong" counts only labels 0 / 4
    tree = "(4 (3 (3 nice) (2 film)) (4 (2 and) (4 superb)))"
    assert _rationale(tree, +1, MINIMAL) == (1, 0, 0, 1)
    assert _rationale(tree, +1, SstRule("minimal", "strong", 0.5)) == (0, 0, 0, 1)
    assert [node_polarity(label) for label in range(5)] == [-1, -1, 0, 1, 1]
    assert [node_polarity(label, "strong") for label in range(5)] == [-1, 0, 0, 0, 1]
    with pytest.raises(ValueError):
        _rationale("(2 (2 a) (2 b))", 0, MINIMAL)
    with pytest.raises(ValueError, match="rule"):
        SstRule("largest")


# ----- the SST rule on real rows ------------------------------------------------------------------------------
def test_sst_rationales_on_real_dev_rows():
    examples = load_dataset("sst-rationales:dev")
    assert len(examples) == 872 and DATASETS["sst-rationales"].has_rationales  # = the SST-2 dev sentences
    first = examples[0]
    # hand-checked in the tree: the two leaves "lovely" (label 3) are the only minimal positive nodes
    assert first.text == "It 's a lovely film with lovely performances by Buy and Accorsi ."
    assert [w for w, m in zip(first.words, first.rationale) if m] == ["lovely", "lovely"]
    assert first.rationale.index(1) == 3 and first.label == 1
    # "A warm , funny , engaging film ." : leaves warm (3), funny (3), engaging (4)
    third = examples[2]
    assert [w for w, m in zip(third.words, third.rationale) if m] == ["warm", "funny", "engaging"]
    assert all(e.id.startswith("sst-rationales:dev:") and e.dataset == "sst-rationales" for e in examples)


def _agreeing_nodes(root, polarity):
    stack, found = [root], []
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node_polarity(node.label) == polarity:
            found.append(node)
    return found


def test_every_marked_word_is_under_an_agreeing_short_node():
    """An independent check of both rules on all dev sentences: each marked word lies in an agreeing node of at
    most half the sentence; for 'minimal' that node has no agreeing descendant; unmarked words lie in none."""
    for dataset, minimal in (("sst-rationales:dev", True), ("sst-rationales-p000:dev", False)):
        for example in load_dataset(dataset):
            root = example.extra["tree"]
            polarity = 1 if example.label == 1 else -1
            n = len(example.words)
            assert len(example.rationale) == n == root.end
            nodes = [node for node in _agreeing_nodes(root, polarity) if node.end - node.start <= n / 2]
            if minimal:
                nodes = [node for node in nodes
                         if not any(d is not node for d in _agreeing_nodes(node, polarity))]
            covered = {i for node in nodes for i in range(node.start, node.end)}
            assert {i for i, m in enumerate(example.rationale) if m} == covered, example.id


def test_paper000_rule_marks_a_superset_of_the_minimal_rule():
    minimal, paper = load_dataset("sst-rationales:dev"), load_dataset("sst-rationales-p000:dev")
    assert all(all(p >= m for m, p in zip(a.rationale, b.rationale)) for a, b in zip(minimal, paper))
    assert sum(map(sum, (e.rationale for e in paper))) > sum(map(sum, (e.rationale for e in minimal)))


# ----- e-SNLI: the >= 2000 index quirk ------------------------------------------------------------------------------
def _marked(field: str) -> list[int]:
    return [int(w.startswith("*") and w.endswith("*") and len(w) > 1) for w in split_words(field)]


def test_esnli_index_fix_on_real_rows():
    assert parse_highlight_indices("{2000,1,2}", 3) == [0, 1, 2]
    assert parse_highlight_indices("{4,5,2006}", 7) == [4, 5, 6]
    assert parse_highlight_indices("{}", 3) == []
    path = find_dataset_dir("esnli-highlights-sample") / "assigned_samples_training.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = {row["pairID"]: row for row in csv.DictReader(handle)}
    examples = load_dataset("esnli-highlights:train")
    assert len(examples) == 90
    quirky = 0
    for example in examples:
        row = rows[example.id.split(":", 1)[1]]
        quirky += any(int(v) >= 2000 for key in ("Sentence1_Highlighted_1", "Sentence2_Highlighted_1")
                      for v in row[key].strip("{}").split(",") if v.strip().isdigit())
        # the asterisk-marked words of the *_marked_1 columns are an independent record of the same highlights
        expected = _marked(row["Sentence1_marked_1"]) + _marked(row["Sentence2_marked_1"])
        assert list(example.rationale) == expected, example.id
    assert quirky >= 10  # the sample has many rows with the quirk (index 2000 + i)
    farming = next(e for e in examples if e.id.endswith("2590318805.jpg#1r1n"))  # hypothesis {2000,1,2}
    assert farming.pair == "they are farming" and farming.rationale[-3:] == (1, 1, 1)


# ----- ERASER ----------------------------------------------------------------------------------------------------
def _eraser_rows(split: str) -> list[dict]:
    path = find_dataset_dir("eraser-movies-sentences") / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_eraser_union_of_evidence_spans_on_real_rows():
    examples = load_dataset("eraser-movies:validation")
    by_text = {e.text: e for e in examples}
    first = by_text["terror train is definitely the cinematic equivalent of a sleeper car ."]
    # evidence "definitely the cinematic equivalent of a sleeper car" = words 3..10
    assert first.rationale == (0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0)
    grouped: dict[str, list[dict]] = {}
    for row in _eraser_rows("validation"):
        grouped.setdefault(row["sentence"], []).append(row)
    for sentence, rows in grouped.items():
        if len(rows) > 1:
            # a sentence with several evidence spans: every evidence word is marked (the union)
            example = by_text[sentence.strip()]
            for row in rows:
                words = split_words(row["evidence"]["text"])
                marked = [w for w, m in zip(example.words, example.rationale) if m]
                assert all(w in marked for w in words)


def test_eraser_repeated_evidence_is_placed_by_document_offset():
    rows = {(split, r["id"]): r for split in ("train", "validation") for r in _eraser_rows(split)}
    # validation 404: "cliche" occurs first inside "cliches"; the evidence is the separate word "cliche"
    row = rows[("validation", 404)]
    sentence = row["sentence"]  # "complaining about cliches = cliche ." with the single evidence "cliche"
    assert row["evidence"]["text"] == "cliche"
    mask = evidence_mask(sentence, [row["evidence"]])
    assert mask == (0, 0, 0, 0, 1, 0)
    # the loader uses the same placement (a first-character match would mark "cliches" instead)
    loader = next(e for e in load_dataset("eraser-movies:validation") if e.text == sentence.strip())
    assert loader.rationale == (0, 0, 0, 0, 1, 0)
    # train 1697 / 1702: "and , and" twice in one sentence, at document tokens 401 and 419 -> two different spans
    pair = [rows[("train", 1697)], rows[("train", 1702)]]
    mask = evidence_mask(pair[0]["sentence"], [p["evidence"] for p in pair])
    assert [p["evidence"]["start_token"] for p in pair] == [401, 419]
    assert sum(mask) == 6 and mask[24:27] == (1, 1, 1) and mask[42:45] == (1, 1, 1)
    # an evidence that occurs once is placed where it occurs, whatever its document offset
    assert evidence_mask("a b c", [{"text": "b c", "start_token": 90, "docid": "d"}]) == (0, 1, 1)


# ----- user files with a rationale column, built from real ERASER rows ------------------------------------------
def test_user_file_rationales_from_real_rows(tmp_path):
    examples = [e for e in load_dataset("eraser-movies:validation", limit=40) if sum(e.rationale)][:10]
    rows = [{"text": e.text, "label": e.label_name,
             "rationale": json.dumps([i for i, m in enumerate(e.rationale) if m])} for e in examples]
    path = tmp_path / "movies.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["text", "label", "rationale"])
        writer.writeheader()
        writer.writerows(rows)
    loaded = load_dataset(f"file:{path}")
    assert [e.rationale for e in loaded] == [e.rationale for e in examples]
    # the same rationale as marked text in JSONL
    marked = [{"text": e.text, "label": e.label,
               "rationale": " ".join(f"*{w}*" if m else w for w, m in zip(e.words, e.rationale))} for e in examples]
    jsonl = tmp_path / "movies.jsonl"
    jsonl.write_text("\n".join(json.dumps(row) for row in marked))
    assert [e.rationale for e in load_user_file(jsonl)] == [e.rationale for e in examples]


def test_user_file_malformed_rationales_are_reported_by_row(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text('text,label,rationale\n"a fine film",1,"[0, 7]"\n"dull",0,"*boring*"\n"ok film",1,"0,1"\n')
    with pytest.raises(DataError) as error:
        load_user_file(path)
    message = str(error.value)
    assert "2 malformed row(s)" in message and "row 1" in message and "outside the 3 words" in message
    assert "row 2" in message and "does not match" in message
