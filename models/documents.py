"""What a model reads of any text, from a run's or a command's options: windows and granularity.

``read_input(classifier, text, pair, options)`` is the one place the CLI, dataset runs and pages turn a text into
an encoding: a text longer than the model's window is read in overlapping windows (``models/windows.py``, never
cut), and ``granularity`` "sentence" makes the sentences the players (``models/granularity.py``). Options (all
optional, so runs started without them keep their ids): ``long_documents`` ("windows", the default, or
"truncate": the model's own cut, reported as before), ``window_size``, ``window_stride``, ``window_aggregate``
("mean" | "max" | "first"), ``allow_long`` (texts over ``LONG_DOCUMENT_WORDS`` words), ``granularity``
("word" | "sentence" | "span"), ``spans`` (pairs of start, end) and ``span_unit`` ("char" | "word").
"""
from __future__ import annotations

from models.encoding import Encoding
from models.errors import InputError
from models.granularity import by_units
from models.windows import WindowConfig, encode_document

LONG_DOCUMENT_MODES = ("windows", "truncate")
DOCUMENT_OPTIONS = ("long_documents", "window_size", "window_stride", "window_aggregate", "allow_long",
                    "granularity", "spans", "span_unit")


def window_config(options: dict) -> WindowConfig:
    size, stride = options.get("window_size"), options.get("window_stride")
    return WindowConfig(size=int(size) if size else None, stride=int(stride) if stride else None,
                        aggregate=options.get("window_aggregate") or "mean")


def read_input(classifier, text: str, pair: str | None = None, options: dict | None = None) -> Encoding:
    options = options or {}
    mode = options.get("long_documents") or "windows"
    if mode not in LONG_DOCUMENT_MODES:
        raise InputError(f"Unknown long-document mode '{mode}'; choose {' or '.join(LONG_DOCUMENT_MODES)}.")
    if mode == "truncate":
        encoding = classifier.encode(text, pair)
    else:
        encoding = encode_document(classifier, text, pair, window_config(options),
                                   allow_long=bool(options.get("allow_long")))
    return by_units(encoding, options.get("granularity") or "word", spans=options.get("spans"),
                    span_unit=options.get("span_unit") or "char")


def document_options(options: dict) -> dict:
    """The document options present in ``options`` (what a run's spec carries)."""
    return {key: options[key] for key in DOCUMENT_OPTIONS if options.get(key) not in (None, "")}
