"""ROAR page building blocks: study settings with the cost estimate, the job list, curves, scores, exports.

No research logic here: studies, scores and estimates come from ``evaluation.roar_*``.
"""
from __future__ import annotations

import html
import json
import logging

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from corpora import DATASETS, DataError, check_dataset_id
from evaluation.roar import scores as roar_scores
from evaluation.roar.config import FULL_RATIOS, MODES, TARGETS, StudyConfig
from evaluation.roar.cost import estimate
from evaluation.roar.masking import COUNT_RULES, RANKINGS, SEGMENTS
from evaluation.roar.measures import ALIASES, SETTINGS, Measure
from evaluation.roar.presets import PRESETS
from evaluation.roar.study import KIND, build_config, cells_of_run, roar_cell, start_study
from evaluation.roar.synthetic import STRATEGIES, synthetic_study
from evaluation.roar.training import INITS, TRAINABLE, Variant
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from explainers import REGISTRY, ParamError, label_for
from explainers.params import coerce
from models import BUILT_IN, UserFacingError
from settings import shared_mode
from ui.figures.common import band_trace, rgba
from ui.figures.roar_synthetic import synthetic_figure
from ui.widgets.bands import band_picker
from ui.widgets.controls import schema_controls
from ui.widgets.method_card import method_card
from ui.widgets.run_picker import describe, mixed, of_model
from ui.widgets.run_progress import run_progress, time_left
from ui.widgets.tables import show_table

log = logging.getLogger(__name__)

RUN_KEY = "roar:run"
DEFAULT_MEASURES = ("integrated_gradients", "lime", "leave_one_out", "attention")
RATIO_CHOICES = {"paper 000: 10 / 20 / 30 %": (10, 20, 30), "paper 001: 10 ... 90 %": FULL_RATIOS,
                 "paper 001 App. F: 1 ... 10 words (count rule 'tokens')": tuple(range(1, 11)), "custom": None}
OPERATOR_CHOICES = {"mask": "[MASK] (paper 001)", "delete": "delete (paper 000)", "mlm": "masked-LM fill (ROAR-BERT)",
                    "unk": "[UNK]", "pad": "[PAD]"}
STUDY_LABELS = {"mode": MODES, "target": TARGETS, "count_rule": COUNT_RULES, "rank_by": RANKINGS, "segments": SEGMENTS,
                "operator": OPERATOR_CHOICES}
VARIANT_LABELS = {"trainable": TRAINABLE, "init": INITS}
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
RANDOM_COLOUR = "#7f7f7f"
MODE_TITLES = {"roar": "ROAR (importance from the original model)",
               "recursive": "Recursive ROAR (importance recomputed each step)"}


def banner() -> None:
    st.caption("ROAR masks the words an importance measure calls most important in every training and test "
               "sentence, retrains a model and measures how much accuracy is lost; a faithful measure loses more "
               "than random masking (paper 001 section 3, paper 000 section 3.3). Studies run as background jobs: "
               "they survive a page reload, resume, and can be exported.")
    method_card("roar", popover=True, label="About ROAR")


def _dataset_pairs() -> list[str]:
    """Datasets with a training split and a dev/validation/test split."""
    return [name for name, info in DATASETS.items()
            if "train" in info.splits and any(s in info.splits for s in ("dev", "validation", "test"))]


def settings_controls(model: str) -> dict | None:
    """The study's settings as build_config keyword arguments (None when something is missing)."""
    with st.form("roar-settings", border=True):
        preset = st.selectbox("Start from", ["(choose below)"] + list(PRESETS), key="roar-preset",
                              format_func=lambda p: p if p not in PRESETS else f"{p}: {PRESETS[p]['description']}")
        chosen = PRESETS.get(preset, PRESETS["cpu-small"])
        c1, c2 = st.columns([3, 2])
        ids = [m for m in REGISTRY if m != "random" and REGISTRY[m].family != "ensemble"]
        preset_methods = [ALIASES.get(m, m) for m in chosen["measures"]]
        default = [m for m in (preset_methods if preset in PRESETS else DEFAULT_MEASURES) if m in ids]
        measures = c1.multiselect("Importance measures (random is always included)", ids, default=default,
                                  key=f"roar-measures-{preset}", format_func=lambda m: REGISTRY[m].label)
        settings = c2.radio("Measure settings", SETTINGS, key=f"roar-settings-kind-{preset}", horizontal=True,
                            index=SETTINGS.index(chosen.get("settings", "cheap")),
                            help="cheap: IG 10 steps, LIME 50 samples (CPU); paper: the papers' presets")
        c1, c2 = st.columns(2)
        ratio_names = list(RATIO_CHOICES)
        default_ratio = next((i for i, r in enumerate(RATIO_CHOICES.values()) if r == tuple(chosen["ratios"])), 1)
        ratio_choice = c1.selectbox("Masking ratios", ratio_names, index=default_ratio, key=f"roar-ratios-{preset}")
        custom = c1.text_input("Custom ratios (%)", "10, 20, 30", key="roar-ratios-custom",
                               help="used when 'custom' is chosen; 0 % and 100 % are added as shared anchors; with "
                                    "the count rule 'tokens' the values are numbers of words")
        seeds = int(c2.number_input("Seeds", 1, 20, len(chosen["seeds"]), key=f"roar-seeds-{preset}",
                                    help="the issue's default: 3 on a CPU, 5 on a GPU"))
        # the study's and the retraining's options, from their param() schemas (the preset fills them in)
        study = schema_controls(StudyConfig, f"roar-{preset}", base=chosen, labels=STUDY_LABELS)
        variant = schema_controls(Variant, f"roar-variant-{preset}", base=chosen, labels=VARIANT_LABELS)
        c1, c2, c3 = st.columns([2, 1, 2])
        pairs = _dataset_pairs()
        dataset = c1.selectbox("Dataset (train split -> dev split)", pairs, pairs.index("sst2") if "sst2" in pairs else 0,
                               key="roar-dataset", format_func=lambda n: DATASETS[n].title)
        # shared mode: a local Ray instance's workers would escape the job queue's CPU quota (scheduler.py)
        executor = c2.radio("Executor", ("local",) if shared_mode() else ("local", "ray"), key="roar-executor",
                            horizontal=True)
        address = "" if shared_mode() else c3.text_input("Ray address (empty: a local Ray instance)", "",
                                                         key="roar-ray-address")  # no server address from a browser
        st.form_submit_button("Apply settings and estimate the cost")
    ratios = RATIO_CHOICES[ratio_choice]
    if ratios is None:
        try:
            ratios = tuple(float(v) for v in custom.replace("%", "").split(",") if v.strip())
        except ValueError:
            st.error(f"Custom ratios must be numbers separated by commas, e.g. 10, 20, 30 (got '{custom}').")
            return None
    if not measures:
        st.info("Choose at least one importance measure.")
        return None
    try:
        variant = coerce(Variant, variant)
    except ValueError as error:
        st.error(str(error))
        return None
    return {"kwargs": dict(model=model, dataset=dataset, measures=measures, ratios=ratios, seeds=list(range(seeds)),
                           settings=settings, variant=variant, **study),
            "executor": executor, "address": address.strip() or None}


def config_for(kwargs: dict):
    try:
        return build_config(**kwargs), None
    except (UserFacingError, DataError, ParamError, ValueError) as error:
        return None, str(error)


@st.cache_data(show_spinner="Estimating the cost ...", max_entries=16)
def _estimate(config_json: str) -> dict:

    return estimate(StudyConfig.from_dict(json.loads(config_json)))


def cost_panel(config) -> None:
    cost = _estimate(json.dumps(config.to_dict(), sort_keys=True))
    counts = cost["retrains"]
    minutes = cost["total_seconds"] / 60
    st.markdown(f"**Cost before starting: {counts['total']} retrains**, about **{minutes:.0f} min** on "
                f"{cost['device']} ({cost['seconds_per_retrain']:.0f} s per retrain + "
                f"{sum(cost['importance_seconds'].values()) / 60:.1f} min of importance).")
    st.caption(f"retrains = {counts['formula']} · variant: {config.variant.label()} · measured speed "
               f"{cost['tokens_per_second']:,.0f} tokens/s · estimates are rough; the job list shows the measured ETA.")
    rows = [{"measure": label_for(k), "importance (s)": round(v, 1)} for k, v in cost["importance_seconds"].items()]
    with st.expander("Importance cost per measure"):
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="roar-cost-table")


def start_controls(store: ResultStore, config, executor: str, address: str | None) -> None:
    start, _ = st.columns([1, 3])
    if start.button("Start (or resume) the study", type="primary", key="roar-start"):
        try:
            run_id = start_study(config, store, executor=executor, ray_address=address,
                                 estimated_seconds=_estimate(json.dumps(config.to_dict(), sort_keys=True))["total_seconds"])
        except (UserFacingError, DataError, ParamError, ValueError) as error:
            st.error(str(error))
        else:
            st.session_state[RUN_KEY] = run_id
            st.toast("Study started: it runs in the background; this page shows its progress.")


# ----- jobs ----------------------------------------------------------------------------------------------------
def job_list(store: ResultStore, model: str | None = None) -> str | None:
    """The stored ROAR studies of ``model`` (or every model's, on request) with their progress; returns the one
    chosen for display."""
    every = store.list_runs(KIND)
    runs = of_model(every, model, "roar-show")
    if not runs:
        st.caption("No ROAR studies of this model yet. Start one above, or import an exported study below."
                   if every else "No ROAR studies yet. Start one above, or import an exported study below.")
        return None
    def status(run: dict) -> str:
        if JOBS.is_running(run["id"]):
            return JOBS.status_label(run)
        if run["status"] == "running":  # its recorded process is alive: another process (e.g. the CLI) runs it
            return "running in another process"
        if run["status"] == "interrupted":  # its process is gone (evaluation/runs/liveness.py)
            return "interrupted (Resume continues it)"
        return run["status"]

    table = pd.DataFrame([{"study": r["title"], "status": status(r),
                           "cells": f"{r['done']}/{r['total']}", "time left": time_left(store, r), "id": r["id"]}
                          for r in runs])
    st.dataframe(table, hide_index=True, key="roar-jobs", width="stretch")
    ids = [r["id"] for r in runs]
    wanted = st.session_state.get(RUN_KEY)
    chosen = st.selectbox("Show study", ids, index=ids.index(wanted) if wanted in ids else 0, key="roar-show",
                          format_func=lambda i: describe(next(r for r in runs if r["id"] == i), mixed(runs)))
    run = next(r for r in runs if r["id"] == chosen)
    running = JOBS.is_running(chosen)
    c1, c2, c3 = st.columns(3)
    if running and c1.button("Stop", key="roar-stop"):
        JOBS.stop(chosen)
        st.toast("Stopping after the running cell; start or resume again to continue.")
    if not running and run["done"] < run["total"] and c1.button("Resume", key="roar-resume"):
        try:
            config, cells = cells_of_run(store, chosen)
            JOBS.start(store, chosen, cells, roar_cell)
        except (UserFacingError, DataError, ParamError, ValueError) as error:
            st.error(str(error))
        else:
            st.rerun()
    if not running and c3.button("Delete this study", key="roar-delete"):
        store.delete_run(chosen)
        st.session_state.pop(RUN_KEY, None)
        st.rerun()
    run_progress(store, chosen, unit="cells (retrains)")
    return chosen




def check_imported(config: dict) -> None:
    """An imported study names its data and model: they are checked as typed ones are, so a study file
    cannot make the server read a path it would refuse; in shared mode only a built-in model is accepted."""
    for key in ("train_data", "test_data"):
        if config.get(key):
            check_dataset_id(str(config[key]))
    if shared_mode() and config.get("model") not in BUILT_IN:
        raise ValueError("its model is not one of the built-in models, the only ones this shared server loads")


def import_panel(store: ResultStore) -> None:
    upload = st.file_uploader("Import an exported study (JSON)", type=["json"], key="roar-import")
    if upload is None or st.session_state.get("roar:imported") == upload.file_id:
        return
    try:
        data = json.loads(upload.getvalue().decode("utf-8", errors="replace"))
        if not isinstance(data, dict) or data.get("run", {}).get("kind") != KIND:
            raise ValueError("this file is not an exported ROAR study")
        check_imported(data["run"].get("config") or {})
        run_id = store.import_run(data)
    except (ValueError, KeyError, TypeError, AttributeError, DataError) as error:
        st.error(f"Cannot import this file: {error}.")
        return
    st.session_state[RUN_KEY] = run_id
    st.session_state["roar:imported"] = upload.file_id
    st.rerun()


# ----- results -------------------------------------------------------------------------------------------------
def curve_figure(curves: pd.DataFrame, metric: str, floor: float | None, labels: dict[str, str] | None = None,
                 bands: list[str] | None = None, in_words: bool = False) -> go.Figure:
    """Mean curves (named by ``labels``) with the 95 % CI ribbons of the measures in ``bands`` (all when None),
    ROAR and Recursive ROAR side by side, the 100 %-masked floor dashed; ``in_words``: the x values are numbers of
    words (the 'tokens' count rule), not percentages."""
    unit = " words" if in_words else " %"
    labels = labels or {}
    modes = [m for m in ("roar", "recursive") if (curves["mode"] == m).any()]
    figure = make_subplots(rows=1, cols=len(modes), shared_yaxes=True, subplot_titles=[MODE_TITLES[m] for m in modes],
                           horizontal_spacing=0.06)
    measures = list(dict.fromkeys(curves["measure"]))
    colours = {m: (RANDOM_COLOUR if m == "random" else COLOURS[i % len(COLOURS)]) for i, m in enumerate(measures)}
    for col, mode in enumerate(modes, start=1):
        for measure in measures:
            data = curves[(curves["mode"] == mode) & (curves["measure"] == measure)].sort_values("ratio")
            if data.empty:
                continue
            colour = colours[measure]
            name = labels.get(measure) or label_for(measure)
            if bands is None or measure in bands:
                figure.add_trace(band_trace(data["ratio"], data["low"], data["high"], rgba(colour, 0.15),
                                            f"{name} 95 % CI", measure), row=1, col=col)
            figure.add_trace(go.Scatter(
                x=list(data["ratio"]), y=list(data["mean"]), mode="lines+markers", name=name, legendgroup=measure,
                showlegend=col == 1, line=dict(color=colour, dash="dash" if measure == "random" else "solid"),
                customdata=list(zip(data["low"], data["high"], data["n"])),
                hovertemplate=f"{html.escape(name)}<br>%{{x:g}}{unit} masked<br>{metric} %{{y:.3f}} "
                              f"[%{{customdata[0]:.3f}}, %{{customdata[1]:.3f}}], %{{customdata[2]}} seeds<extra></extra>"),
                row=1, col=col)
        if floor is not None:
            figure.add_hline(y=floor, line=dict(color="black", dash="dot", width=1), row=1, col=col,
                             annotation_text="100 % masked" if col == 1 else None)
        figure.update_xaxes(title_text="words masked" if in_words else "% of words masked", row=1, col=col)
    figure.update_yaxes(title_text=roar_scores.METRICS[metric], row=1, col=1)
    figure.update_layout(height=420, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.2))
    return figure


def _masked_html(example: dict) -> str:
    parts = []
    for word, removed in zip(example["words"], example["removed"]):
        text = html.escape(word)
        parts.append(f"<span style='background:#333;color:#fff;padding:0 3px;border-radius:3px'>{text}</span>"
                     if removed else text)
    return " ".join(parts)


def results(store: ResultStore, run_id: str) -> None:
    run = store.get_run(run_id)
    if run is None:
        st.error("This study is no longer in the store.")
        return
    cells = store.cells(run_id)
    errors = {k: c["error"] for k, c in cells.items() if "error" in c}
    if errors:
        st.warning(f"{len(errors)} cell(s) failed (resume to retry them): " +
                   "; ".join(f"{k}: {v}" for k, v in list(errors.items())[:3]))
    frame = roar_scores.cells_frame(cells)
    if frame.empty:
        st.caption("No finished cells yet.")
        return
    config = run["config"]
    prov = run["meta"].get("provenance", {})
    st.caption(f"Model `{config['model']}` ({config.get('model_fingerprint', '?')}) · train `{config['train_data']}` · "
               f"test `{config['test_data']}` · operator **{config['operator']}** · explains the **{config['target']}** "
               f"label · ranking {config['rank_by']} · count rule {config['count_rule']} · seeds "
               f"{', '.join(map(str, config['seeds']))} · variant: **{prov.get('variant', '?')}**")
    labels = {m["id"]: Measure.from_dict(m).label() for m in config.get("measures", [])}
    labels.setdefault("random", "Random (ROAR baseline)")
    st.caption("Measures: " + "; ".join(f"**{k}** = {v}" for k, v in labels.items()) +
               "; **random** = uniform random word scores from (seed, sentence) (the ROAR baseline).")
    metric = st.radio("Performance", list(roar_scores.METRICS), key=f"roar-metric-{run_id}", horizontal=True,
                      format_func=lambda m: roar_scores.METRICS[m])
    curves = roar_scores.curves(frame, metric)
    anchors = frame[(frame["kind"] == "anchor") & (frame["ratio"] == 100.0)][metric]
    floor = float(anchors.mean()) if len(anchors) else None
    if curves.empty:
        st.caption("The curves appear once a measure's first cells and the anchors have finished.")
    else:
        bands = band_picker(list(dict.fromkeys(curves["measure"])), f"roar-bands-{run_id}", labels)
        in_words = config["count_rule"] == "tokens"
        st.plotly_chart(curve_figure(curves, metric, floor, labels, bands, in_words),
                        key=f"roar-curves-{run_id}-{metric}", width="stretch")
        if in_words:
            st.caption("Count rule 'tokens' (paper 001 App. F): step k removes exactly k words, one more per step, "
                       "importance recomputed by the previous step's model. There are no 0 % / 100 % anchors on "
                       "this axis, so there is no Eq. 3 score (it is relative to the 100 %-masked floor): compare "
                       "the curves and the Welch tests.")
        st.caption("Mean over seeds with a 95 % confidence ribbon (t-interval in logit space, paper 001). Lower than "
                   "random = the measure found words the task needs. Dotted: the 100 %-masked floor (dataset bias: "
                   "class prior, length).")
    summary = roar_scores.summary(frame, metric)
    if not summary.empty:
        st.markdown("##### Faithfulness (paper 001 Eq. 3: area between the curve and random, relative to the best "
                    "possible; higher = more faithful)")
        shown = summary.assign(**{"score (%)": (summary["score"] * 100).round(1), "95 % CI (%)": [
            f"[{lo * 100:.1f}, {hi * 100:.1f}]" if np.isfinite(lo) else "—"  # no score: the verdict says why
            for lo, hi in zip(summary["low"], summary["high"])],
            "measure": [labels.get(m) or label_for(m) for m in summary["measure"]]})
        show_table(shown[["mode", "measure", "score (%)", "95 % CI (%)", "seeds", "verdict", "leakage", "floor_100"]],
                   f"roar-scores-{run_id}-{metric}",
                   why_missing="not enough finished cells (seeds) for this number yet")
        for row in summary.itertuples():
            if row.leakage_significant:
                name = labels.get(row.measure) or row.measure
                st.warning(f"Possible class leakage ({row.mode}, {name}): {metric} rises as more is masked "
                           f"({row.leakage}). The masking pattern itself carries label information (paper 001 App. "
                           f"A); the score can only understate faithfulness here.")
        st.caption("Plain ROAR cannot prove a measure unfaithful: redundant words can keep accuracy up, so a low ROAR "
                   "score is 'inconclusive'; under Recursive ROAR it means 'not faithful' (paper 001 section 5.2.1). "
                   "Rankings hold for this model and dataset only.")
    welch = roar_scores.welch_table(frame, metric)
    welch = welch[(welch["n_a"] >= 2) & (welch["n_b"] >= 2)]
    with st.expander("Welch t-test p-values between measures at each ratio (paper 000 Table 2d)"):
        if welch.empty:
            st.caption("Needs at least 2 seeds per measure.")
        else:
            named = welch.assign(**{c: [labels.get(m) or label_for(m) for m in welch[c]]
                                    for c in ("measure_a", "measure_b")})
            show_table(named, f"roar-welch-{run_id}-{metric}", why_missing="a measure with identical values in "
                       "every seed has no t-test p-value")
    examples = [c for c in cells.values() if c.get("kind") in ("roar", "recursive") and c.get("examples")]
    if examples:
        with st.expander("Masked test sentences (what the retrained model saw)"):
            for cell in examples[:6]:
                name = labels.get(cell["measure"]) or cell["measure"]
                unit = " words" if config["count_rule"] == "tokens" else " %"
                st.markdown(f"**{name}** · {cell['ratio']:g}{unit} · {cell['kind']} step {cell['step']} · "
                            f"seed {cell['seed']}")
                for example in cell["examples"][:2]:
                    st.markdown(_masked_html(example), unsafe_allow_html=True)
    with st.expander("Every cell"):
        st.dataframe(frame, hide_index=True, key=f"roar-cells-{run_id}")
    c1, c2 = st.columns(2)
    provenance = {"model": config["model"], "fingerprint": config.get("model_fingerprint", ""),
                  "variant": prov.get("variant", ""), "operator": config["operator"], "target": config["target"],
                  "metric": metric, "seeds": " ".join(map(str, config["seeds"]))}
    c1.download_button("Download the curves (CSV)", curves.drop(columns=["values"]).assign(
        measure_label=[labels.get(m, m) for m in curves["measure"]], **provenance).to_csv(index=False),
                       f"{run_id}-curves.csv", "text/csv", key=f"roar-csv-{run_id}")
    c2.download_button("Download the study (JSON, re-importable)", json.dumps(store.export_run(run_id), default=str),
                       f"{run_id}.json", "application/json", key=f"roar-json-{run_id}")


# ----- paper 001 s. 3.3: the synthetic problem ---------------------------------------------------------------------
@st.cache_data(show_spinner="Fitting the synthetic problem ...", max_entries=8)
def _synthetic(seeds: int) -> dict:
    return synthetic_study(tuple(range(seeds)))


def synthetic_section() -> None:
    """ROAR vs Recursive ROAR vs ground truth on paper 001's redundant-feature problem (numbers from
    evaluation/roar/synthetic.py), the figure, the paper's statements checked, exports."""
    st.markdown("##### Does Recursive ROAR find redundant features? (paper 001 s. 3.3, Fig. 3)")
    method_card("roar-synthetic", popover=True, label="About this experiment")
    seeds = int(st.number_input("Drawn problems (seeds)", 1, 50, 5, key="roar-synthetic-seeds",
                                help="each seed draws a new a, d and data set (5,000 train / 2,000 test)"))
    study = _synthetic(seeds)
    st.plotly_chart(synthetic_figure(study, STRATEGIES), key="roar-synthetic-figure", width="stretch")
    checks = pd.DataFrame([{"paper 001 says": c["claim"], "ours": f"holds on {c['holds_on']} of {c['seeds']} seeds",
                            "measured": c["measured"], "per seed": ", ".join(f"{v:+.4f}" for v in c["per_seed"])}
                           for c in study["checks"]])
    show_table(checks, "roar-synthetic-checks", why_missing="")
    st.caption("The paper prints no numbers for Fig. 3, only these two statements; the table checks them on every "
               "drawn problem. Importance = |weights| of a least-squares linear model; one feature removed per step.")
    c1, c2 = st.columns(2)
    c1.download_button("Download the curves (CSV)", pd.DataFrame(study["rows"]).to_csv(index=False),
                       "roar-synthetic.csv", "text/csv", key="roar-synthetic-csv")
    c2.download_button("Download the experiment (JSON)", json.dumps(study, default=str), "roar-synthetic.json",
                       "application/json", key="roar-synthetic-json")
