"""Plausibility page blocks: agreement with people (human rationales), NOT faithfulness.

Per example: every method's heatmap with the human rationale underlined, its binarized versions (top-k
and threshold) and the per-example scores. Per dataset: a background run of the shared runner (progress,
stop, resume) and its method x metric table with bootstrap CIs and the random baseline, paper 000's
threshold sweep and best-tau table, and exports. The numbers come from ``evaluation/plausibility*.py``.
"""
from __future__ import annotations

import html
import json
import logging

import numpy as np
import pandas as pd
import streamlit as st

import settings
from corpora import DATASETS, split_words
from evaluation import targets
from evaluation.plausibility.dataset import EVALUATORS, per_example_frame, run_report, wide_table
from evaluation.plausibility.metrics import (
    LABEL,
    METRIC_RECORDS,
    PRESETS,
    TOP_P_RECORDS,
    PlausibilityConfig,
    make_config,
)
from evaluation.plausibility.one_input import score_example
from evaluation.runs.store import ResultStore
from evaluation.suite.plausibility_run import start_plausibility
from evaluation.summary import results_frame
from explainers import REGISTRY, Explanation, format_spec, label_for
from explainers.export import tuned_for
from models import UserFacingError
from ui.figures.binarized_rows import binarized_rows_html
from ui.figures.plausibility_sweep import sweep_figure
from ui.figures.row_header import row_header
from ui.views import heatmaps
from ui.widgets.controls import schema_controls
from ui.widgets.dataset_field import file_field
from ui.widgets.heatmap import CSS, heatmap_html, legend_html, provenance_line
from ui.widgets.method_card import method_card
from ui.widgets.method_run import pending_row
from ui.widgets.run_control import start_stop
from ui.widgets.run_picker import run_picker
from ui.widgets.run_progress import run_progress
from ui.widgets.tables import labelled, show_table

log = logging.getLogger(__name__)

DEFAULT_METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "random")
METRIC_LABELS = {m.id: f"{m.label} {m.arrow}" for m in METRIC_RECORDS + TOP_P_RECORDS}
RUN_KEY = "plausibility_run"
FILE_CHOICE = "file: a CSV/JSONL path"
SHARED_FILE_CHOICE = "your file: an upload or a shared file"  # shared mode: no path is typed


def banner() -> None:
    st.info("**Plausibility (agreement with people), not faithfulness.** These scores say how well an explanation "
            "matches the words people marked as the reason for the label. They say nothing about whether the "
            "model relies on those words: a faithful explanation of a model that uses other cues scores low here.")


# ----- settings -----------------------------------------------------------------------------------------------
def config_controls(key: str = "plaus") -> tuple:
    """Preset and every setting of the metrics (one widget per ``PlausibilityConfig`` option, from its schema);
    returns (config, preset, run options)."""
    left, right = st.columns([1, 3])
    preset = left.selectbox("Metric preset", list(PRESETS), key=f"{key}-preset",
                            help="default; paper000 (correct predictions only, negatives zeroed, tau 0.05); "
                                 "aml-top25 (F1 over the top 25 words); gt-length (k = number of human words); "
                                 "marc-abs (rank by |score|); paper002-top-p (paper 002's per-document top-p %).")
    with left:
        method_card("plausibility", popover=True, label="About plausibility metrics")
    base = make_config(preset)
    with right.expander("Metric settings (every value; the preset fills them in)"):
        values = schema_controls(PlausibilityConfig, f"{key}-{preset}", base=base)
    try:
        config = make_config(preset, **values)
    except ValueError as error:
        st.error(str(error))
        st.stop()
    overrides = {name: value for name, value in config.to_dict().items() if value != getattr(base, name)}
    options = {"plausibility": {"preset": preset, **overrides}}
    return config, preset, options


def config_caption(config, preset: str) -> str:
    return (f"preset **{preset}** · top-k {config.top_k} · tau {config.tau:g} · sign {config.sign} · ties "
            f"{config.ties} · IoU F1 spans from {config.iou_from} (match at IoU >= {config.iou_threshold:g}) · "
            f"truncated words: {config.truncation}" + (" · correct predictions only" if config.only_correct else "")
            + (" · dataset runs: paper 002's top-p % in place of top-k" if config.binarization == "top-p" else ""))


# ----- one example ----------------------------------------------------------------------------------------------
def human_mask(selection) -> tuple[tuple[int, ...] | None, str]:
    """The dataset's rationale, or one the user marks for typed text."""
    example = selection.example
    if example is not None and example.rationale is not None:
        return tuple(example.rationale), f"human rationale of `{example.id}`"
    words = split_words(selection.text) + (split_words(selection.pair) if selection.pair else [])
    if not words:
        return None, ""
    marker = abs(hash((selection.text, selection.pair))) % 10 ** 8
    chosen = st.multiselect("This input has no human rationale: mark the words a person would highlight",
                            list(range(len(words))), key=f"plaus-human-{marker}",
                            format_func=lambda i: f"{i}: {words[i]}",
                            help="Or pick a dataset with rationales in the sidebar (eraser-movies, "
                                 "esnli-highlights, sst-rationales).")
    if not chosen:
        return None, ""
    return tuple(int(i in set(chosen)) for i in range(len(words))), "rationale marked here"


def example_section(selection, classifier, encoding, choices, config, preset: str) -> None:
    mask, source = human_mask(selection)
    if mask is None:
        st.info("No human rationale to compare with yet.")
        return
    results = heatmaps.compute(choices, classifier, encoding, selection.target)
    st.html(CSS)
    st.caption(f"Underlined green: {source}. Rows: the method's heatmap, then its binarized versions "
               f"(purple = highlighted). {config_caption(config, preset)}.")
    st.html(legend_html(signed=any(isinstance(r, Explanation) and r.signed for r in results.values())))
    if config.binarization == "top-p":
        st.caption("Top-p % is fitted over a dataset's documents (leave-one-out), so one input shows top-k; a dataset "
                   "run below reports the top-p scores.")
    rows, exported = [], []
    for method_id, result in results.items():
        label = REGISTRY[method_id].label
        if not isinstance(result, Explanation):
            st.markdown(f"**{label}**")
            if isinstance(result, str):
                st.error(result)
            else:
                pending_row(result, key="plaus-run")
            continue
        try:
            scored = score_example(encoding, result.word_scores, mask, config)
        except ValueError as error:
            st.error(f"{label}: {error}")
            continue
        words, segments, human = list(scored.words), list(scored.segments), list(scored.human)
        st.markdown(row_header(html.escape(label), provenance_line(result)), unsafe_allow_html=True)
        st.html(heatmap_html(words, np.nan_to_num(scored.scores, nan=0.0), result.signed, segments=segments,
                             human=human))
        st.html(binarized_rows_html(words, scored.top_k, scored.threshold, scored.k, config.tau, segments, human))
        if scored.human_cut:
            st.warning(f"{scored.human_cut} human word(s) lie beyond the model's length limit and were "
                       f"{'left out' if config.truncation == 'drop' else 'counted as missed'}.")
        p = result.provenance
        rows.append({"method": label, "preset": p.get("preset") or "", "tuned_for": tuned_for(result),
                     "target": p["target"]["label"],
                     "seed": p.get("seed"), **{METRIC_LABELS[m]: v for m, v in scored.metrics.items()}})
        exported.append({"method": method_id, "tuned_for": tuned_for(result), **scored.to_dict(),
                         "provenance": {key: p.get(key) for key in
                                        ("method", "preset", "params", "target", "seed", "sign")}})
    if not rows:
        return
    st.markdown("##### Per-example scores (plausibility, not faithfulness)")
    table = pd.DataFrame(rows)
    show_table(table, "plaus-example-table", why_missing="no seed: the method is deterministic")
    left, right = st.columns(2)
    left.download_button("Scores (CSV)", table.to_csv(index=False), "plausibility_example.csv", "text/csv",
                         key="plaus-example-csv")
    right.download_button("Scores, words, masks and provenance (JSON)",
                          json.dumps({"family": LABEL, "text": encoding.text, "pair": encoding.pair,
                                      "rationale_source": source, "config": config.to_dict(), "preset": preset,
                                      "methods": exported}, default=str, indent=1),
                          "plausibility_example.json", "application/json", key="plaus-example-json")


# ----- a dataset ---------------------------------------------------------------------------------------------------
def _method_specs(choices) -> list[str]:
    return [format_spec(c.method_id, c.preset) for c in choices]


def dataset_section(selection, choices, options: dict, config, preset: str) -> None:
    file_choice = SHARED_FILE_CHOICE if settings.shared_mode() else FILE_CHOICE
    names = [n for n, info in DATASETS.items() if info.has_rationales] + [file_choice]
    c1, c2, c3, c4 = st.columns([3, 1, 1, 1])
    name = c1.selectbox("Dataset with human rationales", names, key="plaus-ds",
                        format_func=lambda n: n if n == file_choice else f"{n}: {DATASETS[n].title}") or names[0]
    if name == file_choice:
        # checked before the run can start; shared mode's choice and uploader take the page's width
        dataset_id = file_field("plaus-file", st if settings.shared_mode() else c2)
    else:
        split = c2.selectbox("Split", DATASETS[name].splits, DATASETS[name].splits.index(DATASETS[name].default_split),
                             key=f"plaus-split-{name}")
        dataset_id = f"{name}:{split}"
    limit = int(c3.number_input("Examples", 1, 100_000, 20, key="plaus-limit"))
    draws = int(c4.number_input("Random draws", 1, 1000, 10, key="plaus-draws",
                                help="random baseline: this many seeded uniform-score explanations per example"))
    target = st.radio("Explain", targets.NAMES, horizontal=True, key="plaus-target", format_func=targets.label,
                      help="paper 000: the prediction; paper 002: the gold label (the prediction for an example "
                           "without one)")
    methods = _method_specs(choices)
    st.caption(f"Methods: {', '.join(map(label_for, methods)) or 'none'} (each with its chosen preset; individual parameter "
               f"changes apply to the example view only). {config_caption(config, preset)}.")
    # "predicted" is the runner's default: left out, so the run is the one `cli.py evaluate` makes by default
    run_options = {**options, "random_orderings": draws, **({"target": target} if target != targets.PREDICTED else {})}
    store = ResultStore()

    def start():
        if dataset_id is None:  # (the Start button is disabled without one)
            raise UserFacingError("Choose a dataset first.")
        return start_plausibility(selection.model, dataset_id, methods, limit, run_options, store)

    run_id = start_stop("plaus", RUN_KEY, start, disabled=not methods or dataset_id is None)
    runs = [r for r in store.list_runs("evaluation") if set(EVALUATORS) <= set(r["config"].get("evaluators", []))]
    chosen = run_picker(runs, run_id, key="plaus-show-run", model=selection.model)
    if chosen is not None:
        _run_view(store, chosen)
    else:
        st.caption("No plausibility runs of this model yet." if runs else "No plausibility runs yet.")


def _run_view(store: ResultStore, run_id: str) -> None:
    run_progress(store, run_id)
    report_view(store, run_id)


def report_view(store: ResultStore, run_id: str) -> None:
    try:
        report = run_report(store, run_id)
    except (KeyError, ValueError) as error:
        st.error(f"This run cannot be shown: {error}")
        return
    run = report["run"]
    config = run["config"]
    if report["errors"]:
        st.warning(f"{len(report['errors'])} example(s) failed: " + "; ".join(
            f"{k}: {v}" for k, v in list(report["errors"].items())[:3]))
    if not report["metrics"]:
        st.caption("No results yet.")
        return
    st.caption(f"Model `{config['model']}` ({config['model_fingerprint']}) · dataset `{config['dataset']}` · "
               f"methods {', '.join(map(label_for, config['methods']))} · target: "
               f"{targets.label(config['options'].get('target'))} · "
               f"{report['random_baseline']} · preset {report['preset']}.")
    frame = results_frame(store, run_id)
    table = pd.DataFrame(report["metrics"])
    st.markdown("##### Method x metric (mean [95 % bootstrap CI]); plausibility, not faithfulness")
    show_table(labelled(wide_table(table), index=True), f"plaus-wide-{run_id}", hide_index=False,
               why_missing="no example of the run gave this method a value for this metric")
    with st.expander("Long table (n, CI method, difference from random, verdict)"):
        show_table(labelled(table), f"plaus-long-{run_id}")
    st.markdown("##### Paper 000 protocol: each method at its best tau (F1 of the averaged precision and recall)")
    p000 = pd.DataFrame(report["paper000"])
    show_table(labelled(p000), f"plaus-p000-{run_id}")
    st.caption("tau is chosen per method on all examples (optimistic for every method, as in the paper); the CIs "
               "resample examples at that tau.")
    if report.get("eraser_official"):
        st.markdown("##### ERASER's official script (rationale_benchmark/metrics.py)")
        show_table(labelled(pd.DataFrame(report["eraser_official"])), f"plaus-eraser-{run_id}")
        st.caption(" · ".join(report["eraser_official_conventions"].values()) + " (the method x metric table above "
                   "averages the per-example IoU F1 and reports average precision).")
    if report.get("micro_macro"):
        st.markdown("##### Macro and micro token F1 at top-k (paper 004 Table 3)")
        show_table(pd.DataFrame(report["micro_macro"]), f"plaus-micro-{run_id}")
        st.caption("Macro: the mean of each document's F1; micro: the F1 of every token decision pooled over the "
                   "documents (long documents weigh more). Paper 004 reports both at the top 25 tokens: the "
                   "aml-top25 preset.")
    quantity = st.radio("Sweep curve", ("f1", "iou", "precision", "recall", "coverage"), horizontal=True,
                        key=f"plaus-quantity-{run_id}") or "f1"
    curves = pd.DataFrame(report["sweep"])
    st.plotly_chart(sweep_figure(curves, quantity), key=f"plaus-sweep-{run_id}-{quantity}", width="stretch")
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("Per-example values (CSV)", per_example_frame(frame).to_csv(index=False),
                       f"{run_id}_per_example.csv", "text/csv", key=f"plaus-dl-examples-{run_id}")
    c2.download_button("Method x metric (CSV)", table.to_csv(index=False), f"{run_id}_metrics.csv", "text/csv",
                       key=f"plaus-dl-metrics-{run_id}")
    c3.download_button("Sweep and best tau (CSV)", pd.concat([curves.assign(table="sweep"),
                                                             p000.assign(table="best tau")]).to_csv(index=False),
                       f"{run_id}_sweep.csv", "text/csv", key=f"plaus-dl-sweep-{run_id}")
    c4.download_button("Everything (JSON)", json.dumps({"report": report, "run": store.export_run(run_id)},
                                                       default=str),
                       f"{run_id}.json", "application/json", key=f"plaus-dl-json-{run_id}")
