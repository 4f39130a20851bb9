"""Dataset loaders on the real files in ../shared/data, plus error paths on broken or missing data."""
from __future__ import annotations

import json

import pytest

from corpora import DataError, load_dataset, load_user_file, mask_from_spans, split_words
from corpora.snli import parse_highlight_indices
from corpora.sst import parse_tree


@pytest.mark.parametrize("dataset_id, count", [
    ("sst2:train", 6920), ("sst2:dev", 872), ("sst2:test", 1821),
    ("sst-trees:dev", 872), ("sst-trees:test", 1821), ("sst-trees:train", 6920),
    ("eraser-movies:train", 12575), ("eraser-movies:validation", 1374), ("eraser-movies:test", 2549),
    ("snli:dev", 9842), ("snli:test", 9824), ("esnli-highlights:train", 90),
    ("mr:all", 10662), ("mr:train", 9596), ("mr:test", 1066),
])
def test_dataset_sizes_match_the_source_files(dataset_id, count):
    assert len(load_dataset(dataset_id)) == count


def test_sst2_labels_and_text():
    dev = load_dataset("sst2:dev")
    assert sum(e.label for e in dev) == 444  # SOURCE.md: dev 428 negative / 444 positive
    assert dev[0].text == "one long string of cliches ." and dev[0].label == 0
    assert dev[0].label_names == ("negative", "positive")


def test_sst_trees_binarised_dev_matches_sst2_dev_labels():
    sst2 = {e.text: e.label for e in load_dataset("sst2:dev")}
    trees = load_dataset("sst-trees:dev")
    matched = [(e.text.lower(), e.label) for e in trees if e.text.lower() in sst2]
    assert len(matched) > 800  # the rest differ only by bracket escaping ("-lrb-" vs "(")
    assert all(sst2[text] == label for text, label in matched)


def test_tree_parser_handles_multi_word_leaves():
    root, words = parse_tree("(3 (2 (2 8 1\\/2) (2 is)) (4 great))")
    assert words == ["8", "1/2", "is", "great"]
    assert (root.label, root.start, root.end) == (3, 0, 4)
    first_leaf = root.children[0].children[0]
    assert first_leaf.is_leaf and (first_leaf.start, first_leaf.end) == (0, 2)


def test_eraser_rationale_is_the_union_of_evidence_spans():
    rows = [json.loads(line) for line in open(_data("eraser-movies-sentences/validation.jsonl"))]
    examples = {e.text: e for e in load_dataset("eraser-movies:validation")}
    by_sentence: dict[str, list[str]] = {}
    for row in rows:
        by_sentence.setdefault(row["sentence"].strip(), []).append(row["evidence"]["text"])
    multi = [s for s, ev in by_sentence.items() if len(ev) > 1][:20]
    assert multi, "the validation split has sentences with several evidence spans"
    for sentence in multi:
        marked = {w for w, m in zip(split_words(sentence), examples[sentence].rationale) if m}
        assert marked == {w for text in by_sentence[sentence] for w in split_words(text)}


def test_esnli_highlight_index_quirk_is_corrected_on_real_rows():
    import csv

    rows = list(csv.DictReader(open(_data("esnli-highlights-sample/assigned_samples_training.csv"), encoding="utf-8")))
    quirky = [r for r in rows if any(int(v) >= 2000 for v in r["Sentence2_Highlighted_1"].strip("{}").split(",") if v)]
    assert quirky, "the sample contains indices >= 2000"
    examples = {e.id: e for e in load_dataset("esnli-highlights:train")}
    for row in rows:
        example = examples[f"esnli-highlights:{row['pairID']}"]
        n_premise = len(split_words(row["Sentence1"]))
        marked = [w.strip("*") for w in split_words(row["Sentence2_marked_1"]) if w.startswith("*")]
        hypothesis_mask = example.rationale[n_premise:]
        chosen = [w for w, m in zip(split_words(row["Sentence2"]), hypothesis_mask) if m]
        assert [w.strip(".,") for w in chosen] == [w.strip(".,") for w in marked]
    assert parse_highlight_indices("{}", 5) == [] and parse_highlight_indices("2003,1", 5) == [1, 3]


def test_mr_reads_latin1_text_with_next_line_characters():
    mr = load_dataset("mr:all")
    assert sum(e.label for e in mr) == 5331
    assert any("\x85" in e.text for e in mr)  # U+0085 must not split a line (str.splitlines would)


def test_snli_pairs_have_labels_and_explanations():
    dev = load_dataset("snli:dev")
    assert dev[0].pair and dev[0].label_names == ("entailment", "neutral", "contradiction")
    assert len(dev[0].extra["explanations"]) == 3


def test_missing_data_directory_names_the_places_tried(monkeypatch, tmp_path):
    import settings
    from corpora import registry

    monkeypatch.setenv("EXWB_DATA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr(settings, "ROOT", tmp_path / "checkout")  # no ../shared/data beside it either
    registry._load_cached.cache_clear()
    with pytest.raises(DataError) as error:
        load_dataset("sst2:dev")
    message = str(error.value)
    assert str(tmp_path / "nowhere" / "sst2-sentences") in message and "EXWB_DATA_DIR" in message
    assert "EXWB_ALLOW_HUB" in message
    registry._load_cached.cache_clear()


def test_malformed_data_file_gives_line_number(monkeypatch, tmp_path):
    from corpora import registry

    folder = tmp_path / "sst2-sentences"
    folder.mkdir()
    (folder / "stsa.binary.dev").write_text("1 a fine film\nnot-a-label oops\n")
    monkeypatch.setenv("EXWB_DATA_DIR", str(tmp_path))
    registry._load_cached.cache_clear()
    with pytest.raises(DataError, match="line 2"):
        load_dataset("sst2:dev")
    registry._load_cached.cache_clear()


def test_unknown_dataset_and_split_messages():
    with pytest.raises(DataError, match="Known:"):
        load_dataset("imdb:train")
    with pytest.raises(DataError, match="choose one of"):
        load_dataset("sst2:validation-typo")


def test_user_csv_with_indices_and_marked_rationales(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text('text,label,rationale\n"a great film",positive,"[1]"\n"a dull plot",negative,"a *dull* plot"\n')
    examples = load_user_file(path)
    assert [e.rationale for e in examples] == [(0, 1, 0), (0, 1, 0)]
    assert examples[0].label_names == ("negative", "positive") and examples[1].label == 0


def test_user_jsonl_with_pairs(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"text": "a dog runs", "pair": "an animal moves", "label": 0, "rationale": [1, 4]}) + "\n")
    example = load_user_file(path)[0]
    assert example.pair == "an animal moves" and example.rationale == (0, 1, 0, 0, 1, 0)


def test_user_file_reports_every_malformed_row(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text('text,label,rationale\n"",1,\n"ok text",1,"[7]"\n"fine",1,\n"x y",zzz,\n')
    with pytest.raises(DataError) as error:
        load_user_file(path, label_names=("negative", "positive"))
    message = str(error.value)
    assert "row 1: empty text" in message and "row 2" in message and "outside" in message and "row 4" in message


def test_user_file_without_text_column_and_bad_json(tmp_path):
    (tmp_path / "a.csv").write_text("sentence,label\nhello,1\n")
    with pytest.raises(DataError, match="'text' column is required"):
        load_user_file(tmp_path / "a.csv")
    (tmp_path / "b.jsonl").write_text('{"text": "ok"}\n{not json\n')
    with pytest.raises(DataError, match="line 2: not valid JSON"):
        load_user_file(tmp_path / "b.jsonl")
    with pytest.raises(DataError, match="unsupported file type"):
        load_user_file(tmp_path / "c.xlsx", content="x")


def test_mask_from_spans_marks_overlapping_words():
    assert mask_from_spans("a very good film", [(2, 11)]) == (0, 1, 1, 0)


def _data(relative: str):
    """A raw data file, found where the loaders look (EXWB_DATA_DIR first, then ../shared/data)."""
    import settings

    return next(place / relative for place in settings.data_dir_candidates() if (place / relative).exists())


def test_known_feature_dataset_ids():
    examples = load_dataset("known-feature:dev:3", limit=4)
    assert all(e.rationale[-1] == 1 and sum(e.rationale) == 1 for e in examples)
    assert [e.label for e in examples] == [e.label for e in load_dataset("known-feature:dev:3", limit=4)]


def test_the_known_feature_task_is_in_the_catalogue_like_any_dataset():
    from corpora import DATASETS, parse_dataset_id
    from corpora.known_feature import make_known_feature

    info = DATASETS["known-feature"]
    assert info.splits == ("train", "dev") and info.default_split == "dev" and info.has_rationales
    assert parse_dataset_id("known-feature") == ("known-feature", "dev")
    # the catalogue's examples are the task built by hand from SST-2 dev with the same label seed
    by_hand = make_known_feature(load_dataset("sst2:dev")[:5], seed=3)
    assert load_dataset("known-feature:dev:3", limit=5) == by_hand
    assert load_dataset("known-feature:dev", limit=5) == make_known_feature(load_dataset("sst2:dev")[:5], seed=0)
    with pytest.raises(DataError, match="train or dev"):
        load_dataset("known-feature:test")

