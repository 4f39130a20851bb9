"""Datasets from Python objects and parquet with named columns (corpora/objects.py): every source gives
the same examples as the same rows in a CSV file."""
from __future__ import annotations

import json

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


# ----- file: datasets with named columns (the command line's --text-column ...) ---------------------------------
def test_a_file_id_with_columns_and_a_parquet_file_load_like_the_plain_csv(tmp_path):
    from corpora import load_dataset
    from corpora.registry import with_columns

    plain_csv = tmp_path / "plain.csv"
    plain_csv.write_text("text,label\na fine film,positive\na dull film,negative\n")
    renamed = tmp_path / "renamed.csv"
    renamed.write_text("sentence,gold\na fine film,positive\na dull film,negative\n")
    pd.DataFrame(ROWS).to_parquet(tmp_path / "rows.parquet")
    expected = plain(load_dataset(f"file:{plain_csv}", label_names=LABELS))
    dataset_id = with_columns(f"file:{renamed}", text="sentence", label="gold")
    assert dataset_id == f"file:{renamed}?text=sentence&label=gold"
    assert plain(load_dataset(dataset_id, label_names=LABELS)) == expected
    parquet_id = with_columns(f"file:{tmp_path / 'rows.parquet'}", text="sentence", label="gold", pair="hypothesis")
    assert plain(load_dataset(parquet_id, label_names=LABELS)) == expected
    with pytest.raises(DataError, match="no text column 'words'"):
        load_dataset(with_columns(f"file:{renamed}", text="words"))
    with pytest.raises(DataError, match="built-in dataset"):
        with_columns("sst2:dev", text="sentence")


def test_the_command_line_reads_a_file_through_its_column_options(keyword_classifier, tmp_path, capsys):
    import cli

    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    data = tmp_path / "reviews.csv"
    data.write_text("review,stars\nan excellent film,1\na dull film,0\nexcellent acting,1\n")
    assert cli.main(["errors", "--model", str(folder), "--dataset", f"file:{data}", "--text-column", "review",
                     "--label-column", "stars", "--method", "saliency", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["accuracy"] == pytest.approx(1.0)
    assert cli.main(["errors", "--model", str(folder), "--dataset", f"file:{data}", "--text-column", "text"]) == 2
    assert "no text column 'text'" in capsys.readouterr().err
