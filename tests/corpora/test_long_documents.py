"""The long-document datasets, checked against the shared files read another way."""
import collections
import json

from corpora import load_dataset
from corpora.locate import find_dataset_dir
from corpora.records import split_words


def test_eraser_documents_group_the_shared_rows_by_review():
    docs = load_dataset("eraser-movies-docs:test")
    rows = [json.loads(line) for line in open(find_dataset_dir("eraser-movies-sentences") / "test.jsonl")]
    by_doc = collections.defaultdict(list)
    for row in rows:
        by_doc[row["evidence"]["docid"]].append(row)
    assert len(docs) == len(by_doc) == 200
    lengths = sorted(len(split_words(d.text)) for d in docs)
    assert 350 <= lengths[100] <= 480 and lengths[-1] > 1000  # the issue: median ~417, max ~1,300
    for doc in docs[:20]:
        assert len(doc.rationale) == len(split_words(doc.text))
        ordered = sorted(by_doc[doc.extra["docid"]], key=lambda r: r["evidence"]["start_sentence"])
        assert doc.text.startswith(" ".join(split_words(ordered[0]["sentence"]))[:40])
        for row in ordered:  # every rationale span is in the document, marked
            span = " ".join(split_words(row["evidence"]["text"]))
            assert span in doc.text
        assert doc.label == ordered[0]["label"] and sum(doc.rationale) > 0


def test_known_feature_long_plants_one_label_word():
    docs = load_dataset("known-feature-long:dev")
    assert len(docs) == 200
    for doc in docs[:50]:
        words = split_words(doc.text)
        assert sum(doc.rationale) == 1
        planted = doc.rationale.index(1)
        assert words[planted] == ("positive" if doc.label == 1 else "negative")
        assert planted == doc.extra["planted_at"]
        assert 50 <= len(words)
    assert 0.3 < sum(d.label for d in docs) / len(docs) < 0.7
