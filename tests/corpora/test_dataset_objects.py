"""Datasets from Python objects and parquet with named columns (corpora/objects.py, issue 34): every source gives
the same examples as the same rows in a CSV file."""
from __future__ import annotations

import datasets
import pandas as pd
import pytest

from corpora import DataError
from corpora.objects import examples_from
from corpora.user_file import load_user_file

ROWS = [{"sentence": "a fine film", "gold": "positive", "hypothesis": None},
        {"sentence": "a dull film", "gold": "negative", "hypothesis": None}]
LABELS = ("negative", "positive")


def plain(examples):
    return [(e.text, e.label, e.pair, e.rationale) for e in examples]


def test_a_list_a_frame_a_hugging_face_dataset_and_parquet_give_the_csv_file_s_examples(tmp_path):
    csv = tmp_path / "rows.csv"
    csv.write_text("text,label\na fine film,positive\na dull film,negative\n")
    expected = plain(load_user_file(csv, label_names=LABELS))
    frame = pd.DataFrame(ROWS)
    frame.to_parquet(tmp_path / "rows.parquet")
    sources = [ROWS, frame, datasets.Dataset.from_pandas(frame), tmp_path / "rows.parquet"]
    for source in sources:
        got = examples_from(source if not hasattr(source, "suffix") else str(source), text_column="sentence",
                            label_column="gold", pair_column=None, label_names=LABELS)
        assert plain(got) == expected


def test_plain_texts_and_a_pair_column():
    assert [e.text for e in examples_from(["one text", "another"])] == ["one text", "another"]
    pairs = examples_from([{"premise": "a dog runs", "hyp": "an animal moves", "label": 0}], text_column="premise",
                          pair_column="hyp", label_names=("entailment", "neutral", "contradiction"))
    assert (pairs[0].pair, pairs[0].label) == ("an animal moves", 0)


def test_a_missing_column_is_named_with_the_option_that_fixes_it():
    with pytest.raises(DataError, match="text_column="):
        examples_from(ROWS)
    with pytest.raises(DataError, match="no column 'stars'"):
        examples_from(ROWS, text_column="sentence", label_column="stars")
    with pytest.raises(DataError, match="row 1"):
        examples_from([{"text": ""}])
