"""Sanity-check page blocks: live layer randomization, paper 000's head randomization, dataset-level curves.

The numbers come from ``evaluation/sanity/one_input.py`` and ``evaluation/sanity/dataset.py``; randomized models from
``models/randomize.py`` (copy-on-write: the model every session shares is never modified). This module only
lays out controls, heatmaps, grids and plotly figures.
"""
from __future__ import annotations

import hashlib
import html
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from evaluation import targets
from evaluation.runs.store import ResultStore
from evaluation.sanity import dataset as sanity_dataset
from evaluation.sanity import head_check, one_input, repeatability, smprt
from evaluation.sanity.one_input import SanityOptions
from evaluation.sanity.trained_methods import for_randomized_copies
from evaluation.seeds import parse_seeds
from explainers import Explainer, ParamError, create, format_spec, label_for
from explainers.choices import MethodChoice
from models import Encoding, TextClassifier, UserFacingError, estimate_seconds, randomize
from models.metering import autorun_units, work_units
from ui.figures.common import band_trace, probability_bars, rgba
from ui.views import sanity_measures
from ui.widgets.bands import band_picker
from ui.widgets.controls import schema_controls
from ui.widgets.dataset_field import dataset_picker
from ui.widgets.heatmap import CSS, colour, explanation_row_html, legend_html, text_colour
from ui.widgets.method_card import method_card
from ui.widgets.run_control import start_stop
from ui.widgets.run_picker import pick_run
from ui.widgets.tables import labelled, show_table

DEFAULT_METHODS = ("saliency", "input_x_gradient", "attention", "leave_one_out", "random")
MEASURE_LABELS = {"spearman": "Spearman ρ (signed)", "spearman_abs": "Spearman ρ (absolute values)",
                  "top_k": "top-k overlap"}
RUN_KEY = "sanity_run"
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf"]
# verdict badges in text and Material icons (shipped with Streamlit): emoji render as boxes without an emoji font
BADGES = {"fails": ":red[:material/cancel: fails the check]", "passes": ":green[:material/check_circle: passes]",
          "inconclusive": ":gray[:material/help: inconclusive]", "n/a": ":gray[n/a]"}
NO_VALUE = "the measure is undefined here (see 'why'), e.g. for a method that gives every word the same score"


def banner() -> None:
    st.markdown("Randomize the model from the top down (classifier head, then the last transformer block, ..., "
                "the embeddings) or one unit alone, and see whether each explanation changes. An explanation that "
                "stays the same on a destroyed model does not explain the model (Adebayo et al. 2018; paper 003 "
                "§3.3). The randomized models are private copies: the model other pages and users share is "
                "never modified.")


# ----- settings -----------------------------------------------------------------------------------------------
def settings_controls(key: str = "sanity") -> dict:
    """One widget per ``SanityOptions`` option (its param() schema); returns {option: value}."""
    method_card("sanity-checks", popover=True, label="About sanity checks")
    return schema_controls(SanityOptions, key, columns=3,
                           labels={"mode": randomize.MODES, "init": randomize.INITS, "measure": MEASURE_LABELS})


def method_name(choice: MethodChoice) -> str:
    name = format_spec(choice.method_id, choice.preset)
    if choice.overrides:
        name += " (" + ", ".join(f"{k}={v}" for k, v in sorted(choice.overrides.items())) + ")"
    return name


def explainers_from(choices: list[MethodChoice]) -> tuple[dict[str, Explainer], dict[str, str]]:
    """Explainers by display name, and messages for the choices that could not be created."""
    out, errors = {}, {}
    for choice in choices:
        try:
            out[method_name(choice)] = create(choice.method_id, preset=choice.preset, **choice.overrides)
        except (ParamError, UserFacingError) as error:
            errors[method_name(choice)] = str(error)
    return out, errors


def chosen_explainers(choices: list[MethodChoice], classifier: TextClassifier | None = None) -> dict[str, Explainer]:
    """The chosen methods' explainers; an error line for each that could not be created, a hint when none is left.
    With the ``classifier`` being randomized, AML is pointed at its G and a line says how (trained_methods.py)."""
    explainers, errors = explainers_from(choices)
    for name, message in errors.items():
        st.error(f"{label_for(name)}: {message}")
    if not explainers:
        st.info("Choose at least one method.")
    if classifier is not None:
        explainers, notes = for_randomized_copies(explainers, classifier)
        for note in notes.values():
            st.info(note)
    return explainers


def _run_gate(label: str, key: str, missing: int, seconds: float, runs_at_once: bool) -> bool:
    """Whether to compute now: cheap work (``runs_at_once``: its work units, not the measured speed) runs at once;
    costly or stopped work waits for a click."""
    approved = st.session_state.setdefault("sanity-approved", set())
    paused = st.session_state.setdefault("sanity-paused", set())
    if missing == 0:
        return True
    if key in paused:
        st.info(f"Stopped. {missing} explanations are still missing (about {seconds:.0f} s); finished ones are "
                f"kept in the cache.")
    elif not runs_at_once and key not in approved:
        st.info(f"{label}: {missing} explanations to compute, estimated {seconds:.0f} s on this machine.")
    else:
        return True
    if st.button(f"Run {label.lower()} (~{seconds:.0f} s)", key=f"go-{key}", type="primary"):
        approved.add(key)
        paused.discard(key)
        return True
    return False


def _pause(key: str) -> None:
    st.session_state.setdefault("sanity-paused", set()).add(key)
    st.session_state.setdefault("sanity-approved", set()).discard(key)


def _stop_button(key: str):
    """A Stop button shown only while the work below runs: a click interrupts the run (Streamlit reruns the page)
    and keeps it paused; finished explanations stay cached. Returns the slot to clear once the work is done."""
    slot = st.empty()
    slot.button("Stop", key=f"stop-{key}", on_click=_pause, args=(key,),
                help="stops after the current explanation; run again to resume")
    return slot


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


# ----- figures ----------------------------------------------------------------------------------------------------
def curve_figure(curves: pd.DataFrame, stage_names: list[str], measure: str, chance: dict | None = None,
                 title: str = "", bands: list[str] | None = None) -> go.Figure:
    """One line per method (by its label) over the stages; ``curves`` has stage_index, method, mean and optional
    low/high, shaded for the methods in ``bands`` (all when None). ``chance`` (mean/low/high) draws the random
    baseline as a dotted line with a band."""
    figure = go.Figure()
    x = list(range(len(stage_names)))
    if chance is not None and np.isfinite(chance.get("mean", np.nan)):
        figure.add_trace(band_trace(x, [chance["low"]] * len(x), [chance["high"]] * len(x), "rgba(120,120,120,0.15)",
                                    f"{one_input.CHANCE}, 95 % range", legend=True))
        figure.add_trace(go.Scatter(x=x, y=[chance["mean"]] * len(x), mode="lines", name=one_input.CHANCE,
                                    line={"dash": "dot", "color": "#555"}))
    for i, (method, group) in enumerate(curves.groupby("method", sort=False)):
        group = group.sort_values("stage_index")
        colour_ = COLOURS[i % len(COLOURS)]
        label = label_for(method)
        if {"low", "high"} <= set(group.columns) and group["low"].notna().any() and (bands is None or method in bands):
            figure.add_trace(band_trace(group["stage_index"], group["low"], group["high"], rgba(colour_, 0.15),
                                        f"{label} CI", method))
        figure.add_trace(go.Scatter(x=group["stage_index"], y=group["mean"], mode="lines+markers", name=label,
                                    line={"color": colour_}, legendgroup=method,
                                    hovertemplate=f"{html.escape(label)}<br>%{{text}}<br>{measure} "
                                                  f"%{{y:.3f}}<extra></extra>",
                                    text=[stage_names[int(i)] for i in group["stage_index"]]))
    low = -1.05 if measure.startswith("spearman") else -0.02
    figure.update_layout(height=380, margin=dict(l=10, r=10, t=40 if title else 10, b=10), title=title or None,
                         xaxis=dict(tickmode="array", tickvals=x, ticktext=stage_names, title="randomization stage"),
                         yaxis=dict(range=[low, 1.05], title=MEASURE_LABELS.get(measure, measure)),
                         legend_title="method")
    return figure


def accuracy_figure(accuracy: pd.DataFrame, stage_names: list[str], majority: float | None,
                    num_labels: int) -> go.Figure:
    figure = go.Figure()
    x = list(accuracy["stage_index"])
    figure.add_trace(band_trace(x, accuracy["low"], accuracy["high"], "rgba(33,102,172,0.15)", "accuracy 95 % CI"))
    figure.add_trace(go.Scatter(x=x, y=accuracy["mean"], mode="lines+markers", name="accuracy",
                                line={"color": "#2166ac"}, hovertemplate="%{y:.1%}<extra></extra>"))
    if majority is not None:
        figure.add_hline(y=majority, line_dash="dot", annotation_text=f"majority class {majority:.0%}")
    figure.add_hline(y=1 / max(1, num_labels), line_dash="dash", line_color="#999",
                     annotation_text=f"uniform chance {1 / max(1, num_labels):.0%}", annotation_position="bottom right")
    figure.update_layout(height=300, margin=dict(l=10, r=10, t=10, b=10), yaxis=dict(range=[0, 1.02],
                         title="accuracy", tickformat=".0%"),
                         xaxis=dict(tickmode="array", tickvals=list(range(len(stage_names))), ticktext=stage_names,
                                    title="randomization stage"))
    return figure


def grid_html(stage_names: list[str], words: list[str], matrix: np.ndarray, signed: bool,
              similarity: list[float] | None = None) -> str:
    """Degradation grid: one heatmap row per stage (each row on its own colour scale), words escaped."""
    head = "".join(f"<th style='font-weight:400;color:#666;padding:0 4px'>{html.escape(w)}</th>" for w in words)
    rows = []
    for r, stage in enumerate(stage_names):
        values = matrix[r]
        finite = np.abs(values[np.isfinite(values)])
        scale = float(finite.max()) if finite.size else 0.0
        cells = []
        for word, value in zip(words, values):
            if not np.isfinite(value):
                cells.append("<td style='color:#bbb;text-align:center'>·</td>")
                continue
            cells.append(f"<td title='{html.escape(word)}: {value:+.3g}' style='background:"
                         f"{colour(value, scale, signed)};color:{text_colour(value, scale)};padding:2px 4px;"
                         f"border-radius:3px;text-align:center'>{html.escape(word)}</td>")
        extra = "" if similarity is None or not np.isfinite(similarity[r]) else f" ({similarity[r]:+.2f})"
        rows.append(f"<tr><td style='white-space:nowrap;color:#444;padding-right:8px'>{html.escape(stage)}"
                    f"{extra}</td>{''.join(cells)}</tr>")
    return (f"<div style='overflow-x:auto'><table class='xw-grid' style='border-collapse:separate;border-spacing:2px;"
            f"font-size:13px'><tr><th></th>{head}</tr>{''.join(rows)}</table></div>")


# ----- one input: layer randomization -----------------------------------------------------------------------------
def layer_section(classifier: TextClassifier, encoding: Encoding, choices: list[MethodChoice], target: int,
                  config: dict, level: str) -> one_input.SanityResult | None:
    explainers = chosen_explainers(choices, classifier)
    if not explainers:
        return None
    try:
        missing, seconds, units = one_input.missing_work(classifier, encoding, explainers, config["mode"],
                                                         config["init"], config["seed"], target)
    except UserFacingError as error:
        st.error(str(error))
        return None
    key = _digest("layers", classifier.fingerprint, encoding.key, list(explainers),
                  [e.cache_identity() for e in explainers.values()], config["mode"], config["init"], config["seed"],
                  target)
    if not _run_gate("Layer randomization", key, missing, seconds, units <= autorun_units(classifier.throughput)):
        return None
    stop = _stop_button(key) if missing else None  # a click reruns the page; the gate then says "Stopped"
    bar = st.progress(0.0, text="Randomizing and explaining ...") if missing else None

    def progress(done: int, total: int, label: str) -> None:
        if bar is not None:
            bar.progress(min(1.0, done / max(1, total)), text=f"{done}/{total} · {label}")

    try:
        result = one_input.run_sanity(classifier, encoding, explainers, mode=config["mode"], init=config["init"],
                                   seed=config["seed"], target=target, top_fraction=config["top_fraction"],
                                   progress=progress)
    except UserFacingError as error:
        st.error(str(error))
        return None
    finally:
        if stop is not None:
            stop.empty()
    if bar is not None:
        bar.empty()
    st.session_state.get("sanity-paused", set()).discard(key)
    _show_layers(result, config, level)
    sanity_measures.emprt_block(result)
    sanity_measures.smprt_block(classifier, encoding, explainers, target, config, curve_figure)
    return result


def _show_layers(result: one_input.SanityResult, config: dict, level: str) -> None:
    frame = result.frame()
    names = result.stage_names
    randomized_names = names[1:]
    st.caption(f"Explaining **{result.target_label}** (the original model's class) at every stage · mode "
               f"{result.mode} · init: {randomize.INITS[result.init]} · seed {result.seed} · similarities on word "
               f"scores; top-k = {result.top_fraction:.0%} of the words.")
    chosen = st.select_slider("Randomize up to" if result.mode == "cascading" else "Randomized unit",
                              options=randomized_names, key="sanity-stage",
                              help="cascading: every unit from the head down to this one is re-initialized")
    stage = result.stage(chosen)
    original = result.stages[0]
    left, right = st.columns([2, 3])
    predicted = int(np.argmax(stage.probabilities))
    with left:
        st.markdown(f"**Randomized model ({chosen}) predicts: {result.labels[predicted]}** "
                    f"({stage.probabilities[predicted]:.1%}); original: "
                    f"{result.labels[int(np.argmax(original.probabilities))]} "
                    f"({original.probabilities.max():.1%})")
        st.caption(f"fingerprint {stage.fingerprint} (original {original.fingerprint})")
    with right:
        st.plotly_chart(probability_bars(result.labels, stage.probabilities, predicted), key="sanity-stage-bars",
                        width="stretch", config={"displayModeBar": False})
    verdicts = result.verdicts(config["measure"], config["threshold"])
    st.html(CSS)
    st.html(legend_html(signed=any(result.signed.values()), unsigned=not all(result.signed.values())))
    for method in result.methods:
        if method in stage.errors or method in original.errors:
            st.error(f"{label_for(method)}: {stage.errors.get(method) or original.errors.get(method)}")
            continue
        if method not in stage.explanations:
            continue
        row = frame[(frame["stage"] == chosen) & (frame["method"] == method)].iloc[0]
        verdict = verdicts.get(method, {})
        badge = BADGES.get(verdict.get("status"), "")
        st.markdown(f"**{html.escape(label_for(method))}** · ρ {_fmt(row['spearman'])} · "
                    f"ρ(|·|) {_fmt(row['spearman_abs'])} "
                    f"· top-k {_fmt(row['top_k'])} · {badge}")
        st.html("<div style='font-size:12px;color:#666'>original</div>"
                + explanation_row_html(original.explanations[method], level)
                + f"<div style='font-size:12px;color:#666'>randomized: {html.escape(chosen)}</div>"
                + explanation_row_html(stage.explanations[method], level))
        with st.expander(f"Provenance: {label_for(method)} at {chosen}"):
            st.json({"randomization": result.provenance(), "stage": chosen, "stage_fingerprint": stage.fingerprint,
                     "explanation": stage.explanations[method].provenance}, expanded=False)

    st.markdown("##### Similarity to the original, stage by stage")
    measure = config["measure"]
    curves = frame[["stage_index", "method", measure]].rename(columns={measure: "mean"})
    st.plotly_chart(curve_figure(curves, names, measure, result.chance.get(measure)), key="sanity-curve",
                    width="stretch")
    st.caption("Dotted: random rankings compared with each original explanation (the random baseline; its band is "
               "the 95 % range). A faithful method falls toward it; a method that stays near 1 ignores the model.")
    verdict_rows = [{"method": label_for(m), "verdict": v["status"], measure: v["value"], "why": v["reason"]}
                    for m, v in verdicts.items()]
    show_table(pd.DataFrame(verdict_rows), "sanity-verdicts", why_missing=NO_VALUE)

    st.markdown("##### Degradation grid (rows = stages, columns = words; each row on its own colour scale)")
    for i, method in enumerate(result.methods):
        if method not in original.explanations:
            continue
        stage_names, words, matrix = result.grid(method)
        values = frame[frame["method"] == method].set_index("stage")[measure].reindex(stage_names).to_numpy()
        with st.expander(label_for(method), expanded=i == 0):
            st.html(grid_html(stage_names, words, matrix, result.signed[method], list(values)))
    _downloads(frame, result.provenance(), "layers")


def _fmt(value: float) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:+.2f}"


def _downloads(frame: pd.DataFrame, provenance: dict, key: str) -> None:
    c1, c2 = st.columns(2)
    c1.download_button("Download the table (CSV)", frame.to_csv(index=False), f"sanity-{key}.csv", "text/csv",
                       key=f"sanity-csv-{key}")
    c2.download_button("Download with provenance (JSON)",
                       json.dumps({"provenance": provenance, "rows": json.loads(frame.to_json(orient="records"))},
                                  indent=2), f"sanity-{key}.json", "application/json", key=f"sanity-json-{key}")


def seeds_or_message(text: str) -> tuple[list[int], str | None]:
    """'0, 1, 2' -> [0, 1, 2] (sorted), or a message saying what is wrong."""
    try:
        return sorted(parse_seeds(text, name="Seeds", most=20)), None
    except ParamError as error:
        return [], str(error)


# ----- one input: paper 000's head check ---------------------------------------------------------------------------
def head_section(classifier: TextClassifier, encoding: Encoding, choices: list[MethodChoice], target: int,
                 level: str) -> head_check.HeadCheckResult | None:
    st.caption("Paper 000 (§3.3, App. E): re-initialize only the classifier's last layer (Xavier uniform, bias "
               "unchanged) under several seeds. Higher = the explanation reacts to the model (better).")
    text = st.text_input("Seeds", "0, 1, 2", key="sanity-head-seeds", help="paper 000 used three; also used by "
                         "the dataset run of the head check")
    seeds, message = seeds_or_message(text)
    if message:
        st.error(message)
        return None
    explainers = chosen_explainers(choices, classifier)
    if not explainers:
        return None
    seconds = sum(estimate_seconds(classifier, *e.estimate_passes(encoding), encoding.n_tokens, method=e.id)
                  for e in explainers.values()) * (len(seeds) + 1)
    units = sum(work_units(*e.estimate_passes(encoding), encoding.n_tokens) for e in explainers.values()) * \
        (len(seeds) + 1)
    key = _digest("head", classifier.fingerprint, encoding.key, list(explainers), seeds, target)
    if not _run_gate("Head randomization", key, len(explainers) * (len(seeds) + 1), seconds,
                     units <= autorun_units(classifier.throughput)):
        return None
    with st.spinner("Randomizing the head and explaining ..."):
        try:
            result = head_check.run_head_check(classifier, encoding, explainers, seeds=seeds, target=target)
        except UserFacingError as error:
            st.error(str(error))
            return None
    for where, message in result.errors.items():
        st.error(f"{where}: {message}")
    summary = result.summary()
    st.markdown(f"##### Share of words changing sign and mean |change| (randomized layer `{result.layer}`)")
    show_table(labelled(summary), "sanity-head-summary",
               why_missing="sign changes are not defined for unsigned methods (they have no sign)",
               column_config={"sign_change_mean": st.column_config.NumberColumn("words changing sign (mean)",
                                                                                  format="percent"),
                              "sign_change_std": st.column_config.NumberColumn("± std", format="percent")})
    st.caption("Sign changes are n/a for unsigned methods. Paper 000 Table A5 (SST-2): LOOempty 71.4 % ± 17.1 "
               "sign changes, mean |change| 0.46 ± 0.18; IM 62.3 % and 0.31.")
    predictions = " · ".join(f"seed {s}: {result.labels[int(np.argmax(result.probabilities[s]))]} "
                             f"({result.probabilities[s].max():.0%})" for s in result.seeds)
    st.caption(f"Explaining **{result.target_label}** every time. Randomized heads predict: {predictions}.")
    st.html(CSS)
    for method in result.methods:
        if method not in result.original:
            continue
        st.markdown(f"**{html.escape(label_for(method))}**")
        body = "<div style='font-size:12px;color:#666'>original</div>" + \
            explanation_row_html(result.original[method], level)
        for seed in result.seeds:
            if method in result.randomized.get(seed, {}):
                body += (f"<div style='font-size:12px;color:#666'>head seed {seed}</div>"
                         + explanation_row_html(result.randomized[seed][method], level))
        st.html(body)
    _downloads(result.frame(), result.provenance(), "head")
    return result


# ----- over a dataset ---------------------------------------------------------------------------------------------
def dataset_section(selection, choices: list[MethodChoice], config: dict, num_labels: int) -> None:
    c1, c2, c3, c4 = st.columns([3, 1, 1, 2])
    dataset = dataset_picker("sanity-ds", columns=(c1, c2))  # built-in, shared file, upload
    limit = int(c3.number_input("Examples", 1, 100_000, 20, key="sanity-limit",
                                help="paper 003 averaged 50 examples"))
    check = c4.radio("Check", list(sanity_dataset.CHECKS), key="sanity-check", format_func=lambda c: sanity_dataset.CHECKS[c],
                     horizontal=True)
    target = st.radio("Explain", targets.NAMES, horizontal=True, key="sanity-target", format_func=targets.label,
                      help="the original model's prediction, or the gold label (the prediction for an example "
                           "without one), at every stage")
    methods = [format_spec(c.method_id, c.preset) for c in choices]
    measures = []
    if check == "layers":
        measures = st.multiselect("Also measure", list(sanity_dataset.EXTRA_MEASURES), key="sanity-measures",
                                  format_func=sanity_dataset.EXTRA_MEASURES.get,
                                  help="eMPRT and sMPRT need the cascading mode; sMPRT uses the preset chosen in the "
                                       "layer tab (N noisy samples per stage and method); repeatability the seeds "
                                       "of the repeatability tab")
    smoothing = smprt.PRESETS[st.session_state.get("sanity-smprt-preset", "quantus-2023")]
    repeat_seeds, _ = seeds_or_message(st.session_state.get("sanity-repeat-seeds", "0, 1, 2, 3, 4"))
    seeds, _ = seeds_or_message(st.session_state.get("sanity-head-seeds", "0, 1, 2"))
    seeds = seeds or list(head_check.PAPER_000_SEEDS)
    what = (f"{config['mode']} · {randomize.INITS[config['init']]} · seed {config['seed']}" if check == "layers"
            else f"head seeds {', '.join(map(str, seeds))} (Xavier uniform)")
    st.caption(f"Methods: {', '.join(map(label_for, methods)) or 'none'} (presets kept; individual parameter changes apply to the "
               f"single-input view only) · {what}.")
    store = ResultStore()

    def start():
        return sanity_dataset.start_sanity(selection.model, dataset, methods, limit, check, config["mode"],
                                           config["init"], config["seed"], seeds=seeds, target=target,
                                           top_fraction=config["top_fraction"], store=store, measures=measures,
                                           smoothing=smoothing,
                                           repeat_seeds=repeat_seeds or repeatability.DEFAULT_SEEDS)

    run_id = start_stop("sanity", RUN_KEY, start, disabled=not (methods and dataset), work=sanity_dataset.sanity_cell)
    runs = store.list_runs(sanity_dataset.KIND)
    chosen = pick_run(store, runs, run_id, "sanity-show-run", selection.model, "sanity runs")
    if chosen is None:
        return
    report_view(store, chosen, config, num_labels)




def report_view(store: ResultStore, run_id: str, config: dict, num_labels: int) -> None:
    run = store.get_run(run_id)
    if run is None:
        st.error("This run is no longer in the store.")
        return
    frame = sanity_dataset.results_frame(store, run_id)
    errors = {k: c["error"] for k, c in store.cells(run_id).items() if "error" in c}
    if errors:
        st.warning(f"{len(errors)} example(s) failed: " + "; ".join(f"{k}: {v}" for k, v in list(errors.items())[:3]))
    if frame.empty:
        st.caption("No results yet.")
        return
    rc = run["config"]
    try:
        names = sanity_dataset.stage_names_for(run)
    except UserFacingError as error:
        st.error(f"This run's model cannot be loaded: {error}")
        return
    summary = sanity_dataset.summarize(frame)
    what = (f"{rc['mode']} · init {rc['init']} · seed {rc['seed']}" if rc["check"] == "layers"
            else f"head seeds {rc['seeds']} (Xavier uniform)")
    st.caption(f"Model `{rc['model']}` ({rc['model_fingerprint']}) · dataset `{rc['dataset']}` · {what} · target: "
               f"{targets.label(rc['target'])} · {frame['example_id'].nunique()} examples · mean with "
               f"percentile-bootstrap 95 % CI.")
    if rc["check"] == "layers":
        measure = config["measure"]
        chance, methods_only = sanity_dataset.chance_band(sanity_dataset.curves(summary, names,
                                                                                sanity_dataset.MEASURES[measure]))
        bands = band_picker(list(dict.fromkeys(methods_only["method"])), f"sanity-run-bands-{run_id}")
        st.plotly_chart(curve_figure(methods_only, names, measure, chance,
                                     title=f"{MEASURE_LABELS[measure]} per stage (mean, 95 % CI)", bands=bands),
                        key=f"sanity-run-curve-{run_id}-{measure}", width="stretch")
        st.caption("Dotted: the random baseline (the mean similarity of random rankings, with its CI).")
        flags = one_input.verdicts(methods_only.rename(columns={"mean": measure}), rc["mode"], measure,
                                config["threshold"], None if chance is None else chance["high"])
        show_table(pd.DataFrame([{"method": label_for(m), "verdict": v["status"], measure: v["value"],
                                  "why": v["reason"]} for m, v in flags.items()]), f"sanity-run-flags-{run_id}",
                   why_missing=NO_VALUE)
        sanity_measures.dataset_measures(summary, names, rc, run_id, curve_figure)
    else:
        st.markdown("##### Paper 000 Table A5 layout (pooled over examples and head seeds)")
        show_table(labelled(sanity_dataset.head_table(frame)), f"sanity-run-head-{run_id}",
                   why_missing="sign changes are not defined for unsigned methods (they have no sign)")
    accuracy = sanity_dataset.accuracy_by_stage(summary, names)
    if not accuracy.empty:
        st.markdown("##### Accuracy of the randomized model, stage by stage")
        st.plotly_chart(accuracy_figure(accuracy, names, sanity_dataset.chance_level(store, run_id), num_labels),
                        key=f"sanity-run-accuracy-{run_id}", width="stretch")
    with st.expander("Every number (stage x method x metric)"):
        show_table(labelled(summary), f"sanity-run-table-{run_id}")
    c1, c2 = st.columns(2)
    c1.download_button("Download the summary (CSV)", summary.to_csv(index=False), f"{run_id}.csv", "text/csv",
                       key=f"sanity-run-csv-{run_id}")
    c2.download_button("Download the run (JSON, re-importable)", json.dumps(store.export_run(run_id), default=str),
                       f"{run_id}.json", "application/json", key=f"sanity-run-json-{run_id}")

