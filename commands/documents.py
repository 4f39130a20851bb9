"""The long-document flags shared by `cli.py explain` and `cli.py evaluate` (``models/documents.py``)."""
from __future__ import annotations

from models import InputError
from models.documents import LONG_DOCUMENT_MODES
from models.granularity import GRANULARITIES
from models.windows import AGGREGATES, LONG_DOCUMENT_WORDS


def add_document_options(parser, granularities=GRANULARITIES) -> None:
    group = parser.add_argument_group("long documents (texts longer than the model's window)")
    group.add_argument("--long-documents", choices=LONG_DOCUMENT_MODES, default=None,
                       help="windows (default): read the whole text in overlapping windows; truncate: the model's "
                            "own cut (reported)")
    group.add_argument("--window-size", type=int, default=None,
                       help="tokens per window, special tokens included (default: the model's maximum)")
    group.add_argument("--window-stride", type=int, default=None,
                       help="tokens between window starts (default: 75 %% of a window's words, a 25 %% overlap)")
    group.add_argument("--window-aggregate", choices=AGGREGATES, default=None,
                       help="the document's prediction from its windows' logits: mean (default), max or first")
    group.add_argument("--allow-long", action="store_true",
                       help=f"explain texts of more than {LONG_DOCUMENT_WORDS:,} words (refused otherwise, with a "
                            f"cost estimate)")
    group.add_argument("--granularity", choices=granularities, default=None,
                       help="the players of removal methods: words (default) or sentences (gradient methods' word "
                            "scores are summed per sentence) or spans (--spans)")
    group.add_argument("--spans", default=None, metavar="START:END,...",
                       help="the spans of --granularity span, e.g. 0:12,40:55 (character ranges; word ranges with "
                            "--span-unit word); the words outside them are grouped between the spans")
    group.add_argument("--span-unit", choices=("char", "word"), default=None, help="what --spans counts (char)")


def document_options_of(args) -> dict:
    """The flags given, as a run's options (absent ones are left out, so earlier runs keep their ids)."""
    values = {"long_documents": args.long_documents, "window_size": args.window_size,
              "window_stride": args.window_stride, "window_aggregate": args.window_aggregate,
              "allow_long": args.allow_long or None, "granularity": args.granularity,
              "spans": parse_spans(args.spans) if getattr(args, "spans", None) else None,
              "span_unit": getattr(args, "span_unit", None)}
    return {key: value for key, value in values.items() if value is not None}


def parse_spans(text: str) -> list[list[int]]:
    """"0:12,40:55" -> [[0, 12], [40, 55]]; a bad entry gets a message that names it."""
    spans = []
    for part in text.split(","):
        start, colon, end = part.strip().partition(":")
        if not colon or not start.strip().isdigit() or not end.strip().isdigit():
            raise InputError(f"--spans: '{part.strip()}' is not START:END (two whole numbers), e.g. 0:12,40:55.")
        spans.append([int(start), int(end)])
    return spans
