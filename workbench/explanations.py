"""``Explanations``: the explanations of one input as a notebook reads them (a table, a figure, inline HTML, a file).

It wraps the app's own ``explainers.Explanation`` records, unchanged: the scores, the provenance and the figures are
those of the Heatmaps page (``ui/figures/heatmap_html.py``, ``ui/figures/heatmap_png.py``), and ``save`` writes the
one versioned JSON layout of the app and the command line (``explainers/export.py``, ``"explanation-workbench/1"``).
"""
from __future__ import annotations

import html
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from explainers import Explanation, format_spec
from explainers.export import explanations_document, read_document
from models import Encoding, TextClassifier
from ui.figures.heatmap_html import CSS, explanation_row_html, legend_html, provenance_line
from ui.figures.heatmap_png import heatmap_figure


class Explanations(Sequence[Explanation]):
    """Explanations of one input (one per method), with the model facts they were computed under.

    A sequence of ``explainers.Explanation`` (``explanations[0].word_scores``, ``.provenance``); ``by_method(id)``
    finds one by method id or "method:preset" label.
    """

    def __init__(self, explanations: Sequence[Explanation], context: dict | None = None,
                 classifier: TextClassifier | None = None, encoding: Encoding | None = None,
                 skipped: dict[str, str] | None = None):
        self._items = list(explanations)
        self.context = dict(context or {})
        self.classifier = classifier  # None after ``load``: scoring then needs the model passed in
        self.encoding = encoding
        self.skipped = dict(skipped or {})  # method -> why it did not run

    def __getitem__(self, index):
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Explanation]:
        return iter(self._items)

    def __repr__(self) -> str:
        methods = ", ".join(e.method_id for e in self._items)
        return f"Explanations({len(self)} of {self.context.get('text', '')!r}: {methods})"

    @property
    def text(self) -> str | None:
        return self.context.get("text")

    @property
    def pair(self) -> str | None:
        return self.context.get("pair")

    def by_method(self, method: str) -> Explanation:
        for e in self._items:
            if method in (e.method_id, e.provenance.get("spec"), _spec(e)):
                return e
        raise KeyError(f"No explanation by '{method}' here; these are: {', '.join(_spec(e) for e in self._items)}.")

    def to_frame(self, normalization: str = "none", absolute: bool = False) -> pd.DataFrame:
        """One row per (method, word): method, word index and word, segment (0 text, 1 pair), the raw score and the
        score as displayed (``normalization``: none | max-abs | l1 | abs-sum; ``absolute``: |score|)."""
        rows = []
        for e in self._items:
            shown = e.scores("word", normalization, absolute)
            for index, (word, segment, raw, display) in enumerate(zip(e.words, e.word_segment, e.word_scores, shown)):
                rows.append({"method": _spec(e), "method_label": e.method_label, "target": e.target,
                             "target_label": e.target_label, "word_index": index, "word": word, "segment": segment,
                             "score": float(raw), "display_score": float(display)})
        return pd.DataFrame(rows, columns=["method", "method_label", "target", "target_label", "word_index", "word",
                                           "segment", "score", "display_score"])

    def to_wide(self) -> pd.DataFrame:
        """Words x methods (raw scores): the heatmap as numbers."""
        frame = self.to_frame()
        return frame.pivot_table(index=["word_index", "word"], columns="method", values="score", sort=False)

    def figure(self, normalization: str = "none", absolute: bool = False, title: str | None = None):
        """The word-level heatmaps as a ``matplotlib.figure.Figure`` (the app's PNG export; no pyplot state, so
        display it with ``display(fig)`` or save it with ``fig.savefig``)."""
        heading = title if title is not None else f"Explanations of \"{(self.text or '')[:60]}\""
        return heatmap_figure(self._items, normalization, absolute, title=heading, prediction=self._prediction())

    def html(self, level: str = "word", normalization: str = "none", absolute: bool = False,
             palette: str | None = None) -> str:
        """The app's heatmap rows (every word escaped), with each method's provenance line and both colour scales."""
        rows = []
        for e in self._items:
            rows.append(f"<div class='xw-name'>{html.escape(e.method_label)}</div><div class='xw-legend'>"
                        f"{html.escape(provenance_line(e, normalization))}</div>"
                        + explanation_row_html(e, level, normalization, absolute, palette=palette))
        prediction = self._prediction()
        shown = f"<div class='xw-prediction'>{html.escape(prediction)}</div>" if prediction else ""
        return CSS + shown + legend_html(palette=palette) + "".join(rows)

    def _repr_html_(self) -> str:
        return self.html()

    def _prediction(self) -> str:
        c = self.context
        if not c.get("predicted"):
            return ""
        probability = (c.get("probabilities") or {}).get(c["predicted"])
        share = f" ({probability:.1%})" if probability is not None else ""
        return f"Prediction: {c['predicted']}{share}"

    def to_dict(self, normalization: str = "none", absolute: bool = False) -> dict:
        """The versioned document (``"format": "explanation-workbench/1"``), as the app and the CLI write it."""
        return explanations_document(self._items, normalization, absolute, context=self.context,
                                     **({"skipped": self.skipped} if self.skipped else {}))

    def save(self, path: str | Path, normalization: str = "none", absolute: bool = False) -> Path:
        """Write the versioned JSON document; ``workbench.load(path)`` reads it back with the same scores."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(normalization, absolute), indent=2, ensure_ascii=False,
                                   default=str), encoding="utf-8")
        return path


def load(source: str | Path | dict) -> Explanations:
    """Explanations from a file written by ``Explanations.save``, the app's JSON export or ``cli.py explain
    --json`` (any version this library reads; ``explainers.export.FormatError`` says why not otherwise)."""
    document = read_document(source)
    return Explanations(document.explanations, document.context)


def _spec(e: Explanation) -> str:
    return format_spec(e.method_id, e.provenance.get("preset"))
