"""Datasets as plain records (no torch, no streamlit)."""
from corpora.records import NLI_LABELS, SENTIMENT_LABELS, DataError, Example, mask_from_spans, split_words, word_spans
from corpora.registry import DATASETS, check_dataset_id, load_dataset, parse_dataset_id
from corpora.typed_text import normalize_typed_text, typed_words
from corpora.user_file import load_user_file

__all__ = ["DATASETS", "DataError", "check_dataset_id", "Example", "NLI_LABELS", "SENTIMENT_LABELS", "load_dataset",
           "load_user_file", "mask_from_spans", "normalize_typed_text", "parse_dataset_id", "split_words", "typed_words",
           "word_spans"]
