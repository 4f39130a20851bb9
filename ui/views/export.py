"""Heatmaps page: export what is shown (scores as CSV / JSON with provenance, heatmaps as HTML / PNG)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from evaluation.agreement.measures import agreement_report
from explainers import Explanation
from explainers.export import scores_csv, scores_json
from models.precision import dtype_name
from ui.figures.heatmap_png import heatmap_png
from ui.views.heatmaps import probabilities_of
from ui.widgets.heatmap import export_html

STATE_KEY = "heatmaps:export"


@dataclass
class ExportBundle:
    """Everything the export buttons offer, built on demand (the PNG takes a moment to draw)."""

    explanations: list[Explanation]
    level: str
    normalization: str
    absolute: bool
    context: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        text = self.context.get("text", "")
        return f"Explanations of \"{text[:60]}{'...' if len(text) > 60 else ''}\""

    @property
    def header(self) -> str:
        c = self.context
        pair = f" ‖ {c['pair']}" if c.get("pair") else ""
        return (f"model {c.get('model')} ({c.get('fingerprint')}) · predicted {c.get('predicted')} · "
                f"input: {c.get('text')}{pair} · normalization {self.normalization}"
                f"{' · absolute values' if self.absolute else ''}")

    @property
    def prediction(self) -> str:
        """'Prediction: positive (93.1 %) · explaining: positive', or '' without a model context."""
        c = self.context
        if not c.get("predicted"):
            return ""
        probability = c.get("probabilities", {}).get(c["predicted"])
        share = f" ({probability:.1%})" if probability is not None else ""
        explained = f" · explaining: {c['explained']}" if c.get("explained") else ""
        return f"Prediction: {c['predicted']}{share}{explained}"

    def csv(self) -> str:
        return scores_csv(self.explanations, self.normalization, self.absolute)

    def json(self) -> str:
        # method agreement and explanation shape travel with the scores (on |score|, the agreement panel's default)
        return scores_json(self.explanations, self.normalization, self.absolute,
                           context={**self.context, "agreement": agreement_report(self.explanations)})

    def html(self) -> str:
        return export_html(self.explanations, self.level, self.normalization, self.absolute, title=self.title,
                           header=self.header, prediction=self.prediction)

    def png(self) -> bytes:
        return heatmap_png(self.explanations, self.normalization, self.absolute, title=self.title,
                           prediction=self.prediction)


def page_context(classifier, encoding, target: int, explaining=None) -> dict:
    """Model and input facts every export starts with. ``explaining``: the classifier the explanations ran on when it
    is not ``classifier`` (the page's fast mode); the prediction is always ``classifier``'s (full precision)."""

    probabilities = probabilities_of(classifier, encoding)
    dtype = getattr(explaining, "autocast_dtype", None)
    return {"model": classifier.name, "fingerprint": classifier.fingerprint, "text": encoding.text,
            "pair": encoding.pair, "predicted": classifier.labels[int(np.argmax(probabilities))],
            "explained": classifier.labels[target],
            "probabilities": {label: float(p) for label, p in zip(classifier.labels, probabilities)},
            "explanations_precision": "float32" if dtype is None else f"{dtype_name(dtype)} autocast (fast mode)"}


def file_stem(text: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9]+", "-", text.lower()).strip("-")[:40]
    return f"explanations-{stem or 'input'}"


def export_panel(bundle: ExportBundle, key: str = "export") -> None:
    st.markdown("#### Export")
    st.session_state[STATE_KEY] = bundle
    if not bundle.explanations:
        st.info("Nothing to export yet.")
        return
    stem = file_stem(bundle.context.get("text", ""))
    columns = st.columns(4)
    columns[0].download_button("Scores (CSV)", bundle.csv, file_name=f"{stem}.csv", mime="text/csv",
                               key=f"{key}-csv", on_click="ignore")
    columns[1].download_button("Scores + provenance (JSON)", bundle.json, file_name=f"{stem}.json",
                               mime="application/json", key=f"{key}-json", on_click="ignore")
    columns[2].download_button("Heatmaps (HTML)", bundle.html, file_name=f"{stem}.html", mime="text/html",
                               key=f"{key}-html", on_click="ignore")
    columns[3].download_button("Heatmaps (PNG)", bundle.png, file_name=f"{stem}.png", mime="image/png",
                               key=f"{key}-png", on_click="ignore")
    st.caption(f"Exports the {len(bundle.explanations)} computed method(s) as shown: {bundle.level} level for the "
               f"heatmaps, normalization '{bundle.normalization}'{', absolute values' if bundle.absolute else ''}; "
               f"CSV and JSON carry raw and displayed scores, JSON the full provenance.")
