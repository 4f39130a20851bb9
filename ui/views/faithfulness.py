"""Faithfulness page building blocks: metric options, the input's curves and table with the random baseline, paper
000's bias matrix, dataset runs (job, progress, stop, reopen), paper 003's known-feature task; layout only."""
from __future__ import annotations

import hashlib
import json
import logging

import pandas as pd
import streamlit as st

from corpora import DataError
from evaluation import targets
from evaluation.agreement import dataset as agreement_dataset
from evaluation.baselines import DEFAULT_ORDERINGS, MIN_ORDERINGS, NOT_DISTINGUISHABLE
from evaluation.faithfulness import known_feature, other_measures
from evaluation.faithfulness.bias import SWEEP, bias_matrix, sweep_for_input, sweep_values
from evaluation.faithfulness.curves import RemovalOptions
from evaluation.faithfulness.mlm_filler import load_filler
from evaluation.faithfulness.one_input import evaluate_input, operator_label, operators_of
from evaluation.faithfulness.perturbation_shift import MAGNITUDE
from evaluation.faithfulness.perturbation_shift_run import PAPER_DATASETS, table_a1_reference
from evaluation.faithfulness.presets import BY_ID, EVALUATOR_METRICS, PRESETS, removal_metrics_of
from evaluation.faithfulness.selection_bias import selection_warnings, with_selection_columns
from evaluation.metric import EVALUATORS, RunOptions
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from evaluation.suite import paper_targets
from evaluation.suite.run_report import curve_metrics, dataset_curves, run_table, wide_table
from evaluation.suite.runner import KIND, evaluate_example, start_evaluation
from evaluation.summary import results_frame
from explainers import Explanation, ParamError, format_spec, label_for
from explainers.choices import MethodChoice
from explainers.params import options_from
from models import OPERATORS, Operator, UserFacingError
from ui.figures.faithfulness import bias_matrix_html, dataset_curve_figure, input_curve_figure
from ui.views import faithfulness_measures, heatmaps
from ui.widgets import method_run, state
from ui.widgets.bands import band_picker
from ui.widgets.controls import schema_controls
from ui.widgets.dataset_field import dataset_picker as pick_dataset
from ui.widgets.method_card import method_card
from ui.widgets.run_control import chosen_dataset, start_stop
from ui.widgets.run_picker import pick_run
from ui.widgets.tables import labelled, show_table

log = logging.getLogger(__name__)

DEFAULT_METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention")
DEFAULT_EVALUATORS = ("eraser", "paper-004", "paper-002", "paper-003", "deletion", "insertion", "decision-flip")
OWN_OPERATOR = "(each preset's own)"
RUN_KEY = "faithfulness:run"
CACHE_KEY = "faithfulness:cache"
PAPER_COLUMNS = {d: f"paper 000 {d}" for d in PAPER_DATASETS}  # paper 000's datasets, beside our numbers


def banner() -> None:
    st.caption("Faithfulness: does removing the words a method marks change the prediction? Every number is shown "
               "next to a **random baseline** (random word orderings scored the same way, mean and 95 % band); "
               "values inside the band are flagged **≈ random**. Removal operator, target class, special tokens and "
               "tie-breaking seed are options, and each number names the paper preset it follows.")


def filler_available() -> bool:
    try:
        load_filler()
    except UserFacingError:
        return False
    return True


# ----- options ------------------------------------------------------------------------------------------
def target_control(selection, classifier, key: str = "faith") -> targets.Choice:
    """The page's one target (evaluation/targets.py), explained and measured alike: the sidebar's class, or the
    gold label (paper 002)."""
    from_sidebar = targets.PREDICTED if selection.target is None else int(selection.target)
    picked = st.radio("Class explained and measured", ("sidebar", targets.GOLD), horizontal=True,
                      key=f"{key}-target",
                      format_func=lambda o: f"as in the sidebar: {targets.label(from_sidebar, classifier.labels)}"
                      if o == "sidebar" else targets.label(targets.GOLD),
                      help="Every explanation on this page explains this class and every metric reads it. Papers "
                           "000, 003, 004 and ERASER use the predicted class, paper 002 the gold label; the "
                           "sidebar can also pick any class.")
    choice = from_sidebar if picked == "sidebar" else targets.GOLD
    if choice == targets.GOLD and targets.how(choice, _gold(selection)) == targets.NO_GOLD:
        st.caption("This input has no gold label: the predicted class is explained and measured.")
    return choice


def _gold(selection) -> int | None:
    return None if selection.example is None else selection.example.label


def explained_class(selection, choice: targets.Choice) -> int | None:
    """The class the page's explanations explain (None: the predicted class, which the explainer reads itself)."""
    return targets.explain_target(choice, _gold(selection))


def options_controls(choice: targets.Choice, key: str = "faith") -> dict:
    """Metric groups and the options every metric takes (the target is ``choice``, from ``target_control``);
    returns {"evaluators", "options", "n_random"}."""
    evaluators = [e for e in EVALUATOR_METRICS]
    chosen = st.multiselect("Metrics (paper presets)", evaluators, default=list(DEFAULT_EVALUATORS),
                            key=f"{key}-metrics", format_func=lambda e: PRESETS[e])
    if paper_targets.differing(chosen, choice):  # one target per page; paper 002 reads the gold label
        st.caption(f"Paper 002's comprehensiveness and sufficiency read the gold label's probability (Eq. 10-11); "
                   f"here they read the {targets.label(choice)}. Pick 'gold label' above for paper 002's protocol.")
    if chosen:  # what each chosen metric computes, assumes and how it misleads (assets/cards)
        for column, evaluator in zip(st.columns(min(len(chosen), 4)), chosen[:4]):
            with column:
                method_card(evaluator, popover=True, label=f"About {PRESETS[evaluator]}")
    # every removal option and the random baseline's draws, from their param() schemas (the target: above)
    values = schema_controls(RemovalOptions, key, exclude=("target", "contrast"), labels={"operator": _operator_label})
    values |= schema_controls(RunOptions, key, exclude=("target", "seed", "contrast"))  # both shared with RemovalOptions
    contrast = getattr(state.current(), "contrast", None)  # the sidebar's, as the methods get it
    if contrast is not None:
        values["contrast"] = contrast
        st.caption(f"Contrast class {contrast} (sidebar): every removal metric reads p(target) - p(class {contrast}) "
                   f"after removal; NAOPC, soft sufficiency / comprehensiveness and F-Fidelity read it too "
                   f"(docs/peers.md).")
    operator, n_random = values["operator"], values["random_orderings"]
    if n_random < MIN_ORDERINGS:
        st.caption(f"The random band needs at least {MIN_ORDERINGS} orderings: {MIN_ORDERINGS} are drawn.")
        n_random = values["random_orderings"] = MIN_ORDERINGS
    with_mlm = [e for e in chosen if any(m.operator == Operator.MLM.value for m in removal_metrics_of(e) or ())]
    needs_mlm = bool(with_mlm) or operator == Operator.MLM.value
    if needs_mlm and not filler_available():
        st.warning("DeletionBERT, ROAD and the MLM-fill operator need the masked-LM filler, which is not prepared on "
                   "this machine: build it with `python cli.py prepare-mlm`. They are left out until then.")
        chosen = [e for e in chosen if e not in with_mlm]
        values["operator"] = None if operator == Operator.MLM.value else operator
    return {"evaluators": chosen, "options": {**values, "target": choice}, "n_random": n_random}


def _operator_label(operator: str | None) -> str:
    if operator is None:
        return OWN_OPERATOR
    return f"{OPERATORS[Operator(operator)].label}: {OPERATORS[Operator(operator)].description}"


def metric_ids_of(evaluators: list[str]) -> list[str]:
    ids: list[str] = []
    for evaluator in evaluators:
        ids += [m.id for m in removal_metrics_of(evaluator) or () if m.id not in ids]
    return ids


def method_name(choice: MethodChoice) -> str:
    return format_spec(choice.method_id, choice.preset)


def explanations_for(choices: list[MethodChoice], classifier, encoding, target) -> dict[str, Explanation]:
    """Explanations of the chosen methods (cached or computed); pending and failed methods are shown as such
    (once per page: both the input and the bias-matrix tabs use them)."""
    if not choices:
        return {}
    results = heatmaps.compute(choices, classifier, encoding, target)
    names = {c.method_id: method_name(c) for c in choices}
    ready = {}
    for method_id, result in results.items():
        if isinstance(result, Explanation):
            ready[names[method_id]] = result
        elif isinstance(result, str):
            st.error(f"{label_for(names[method_id])}: {result}")
        else:
            st.markdown(f"**{label_for(names[method_id])}**")
            method_run.status_row(result)
    return ready


def _memo(key_parts: list, compute):
    """Per-session memo of the page's computations (reruns redraw without recomputing)."""
    key = hashlib.sha256(json.dumps(key_parts, sort_keys=True, default=str).encode()).hexdigest()
    memo = st.session_state.setdefault(CACHE_KEY, {})
    if key not in memo:
        if len(memo) > 32:
            memo.pop(next(iter(memo)))
        memo[key] = compute()
    return memo[key]


def _identity(classifier, encoding, explanations: dict[str, Explanation]) -> list:
    return [classifier.fingerprint, encoding.key,
            {name: [e.provenance.get("params"), e.target, e.method_id] for name, e in explanations.items()}]


# ----- the current input --------------------------------------------------------------------------------
def input_section(classifier, encoding, explanations: dict[str, Explanation], config: dict, selection) -> None:
    if not explanations:
        st.info("Pick at least one method (methods waiting for a Run button are listed above).")
        return
    metric_ids = metric_ids_of(config["evaluators"])
    if not metric_ids:
        st.info("Pick at least one metric.")
        return
    for message in selection_warnings(explanations.values(), metric_ids):  # AML scored on its own metric
        st.warning(message)
    example = selection.example
    try:
        report = _memo(["input", *_identity(classifier, encoding, explanations), metric_ids, config["options"],
                        config["n_random"], None if example is None else example.label],
                       lambda: evaluate_input(classifier, encoding, explanations, metric_ids, config["options"],
                                              example, config["n_random"]))
    except UserFacingError as error:
        st.error(str(error))
        return
    curves = [m for m in metric_ids if m != "decision-flip"] or metric_ids
    c1, c2 = st.columns([3, 2])
    shown = c1.selectbox("Curve", curves, key="faith-curve",
                         format_func=lambda m: f"{BY_ID[m].label} · {BY_ID[m].preset_label}")
    value = c2.radio("y axis", ("score", "change"), horizontal=True, key="faith-value",
                     format_func=lambda v: "p(target) after removal" if v == "score" else "change from the input")
    title = f"{BY_ID[shown].label} — {BY_ID[shown].preset_label}"
    st.plotly_chart(input_curve_figure(report.curve(shown, value), title, value), key="faith-input-curve",
                    width="stretch")
    options = report.options
    st.caption(f"Operator: {operator_label(options.operator or BY_ID[shown].operator)} · special tokens "
               f"{'excluded' if options.exclude_special else 'counted'} · ties broken with seed {options.seed} · random baseline: {config['n_random']} orderings "
               f"(dashed line, 95 % band shaded). Download the chart as PNG from its toolbar.")
    st.markdown("##### Every metric (↑ higher is better, ↓ lower is better)")
    show_table(labelled(report.wide(), header=True), "faith-input-table", hide_index=False,
               why_missing="the metric is not defined for this method on this input")
    long = with_selection_columns(report.table(), sources=explanations)  # AML's badge and warning in the exports
    _random_marker_caption(int((long["vs_random"] == NOT_DISTINGUISHABLE).sum()), "inside the random orderings' "
                           "95 % band")
    context = {"model": classifier.name, "fingerprint": classifier.fingerprint, "text": encoding.text,
               "pair": encoding.pair, "options": config["options"], "random_orderings": config["n_random"],
               "explanations": {n: e.provenance for n, e in explanations.items()}}
    d1, d2 = st.columns(2)
    d1.download_button("Download the table (CSV)", long.to_csv(index=False), "faithfulness.csv", "text/csv",
                       key="faith-input-csv")
    d2.download_button("Download table, curves and provenance (JSON)",
                       json.dumps({"context": context, "table": long.to_dict(orient="records"),
                                   "curves": {m: report.curve(m) for m in metric_ids}}, default=str),
                       "faithfulness.json", "application/json", key="faith-input-json")


def _random_marker_caption(flagged: int, meaning: str) -> None:
    """What the per-cell "≈ random" marker means (the cells carry it; no list of them as a wall of text)."""
    if flagged:
        st.caption(f"**≈ random** marks {flagged} value(s) not distinguishable from random ({meaning}).")


# ----- bias matrix ----------------------------------------------------------------------------------------
OPERATOR_LABELS = {op.value: OPERATORS[op].label for op in Operator}


def bias_section(classifier, encoding, explanations: dict[str, Explanation], config: dict, selection) -> None:
    st.caption("Paper 000 (s. 4, Table 1): a metric that removes words the same way a method does favours that "
               "method (Deletion favours leave-one-out with deletion; DeletionBERT favours Input Marginalization). "
               "Rows: methods and the operator each removes words with; columns: removal operators and the shown "
               "metrics that use them. Highlighted (&#9888;) cells: method and metric share the operator; hover for "
               "why. Numbers: paper 000's Deletion AUC (↓) of each method under each operator, with its rank.")
    if not explanations:
        st.info("Pick at least one method.")
        return
    options = {k: v for k, v in config["options"].items() if k != "operator"}
    try:
        values = _memo(["sweep", *_identity(classifier, encoding, explanations), options],
                       lambda: sweep_for_input(classifier, encoding, explanations, options, selection.example))
    except UserFacingError as error:
        st.error(str(error))
        return
    matrix = bias_matrix(list(explanations), operators_of(metric_ids_of(config["evaluators"]), config["options"]),
                         values=values, higher_is_better=False)
    st.html(bias_matrix_html(matrix, OPERATOR_LABELS))
    if "mlm" not in values.columns:
        st.caption("No MLM-fill column: the masked-LM filler is not prepared (`python cli.py prepare-mlm`).")
    for reason in matrix.reasons.values():
        st.caption(f"⚠ {reason}")
    st.download_button("Download the bias matrix (CSV)", matrix.to_frame().to_csv(index=False), "bias_matrix.csv",
                       "text/csv", key="faith-bias-csv")


# ----- dataset runs ---------------------------------------------------------------------------------------
def dataset_picker(key: str = "faith-ds") -> str | None:
    """The dataset of a run: ``ui.widgets.dataset_field.dataset_picker`` (built-in, upload, admin's files)."""
    return pick_dataset(key)


def dataset_section(selection, choices: list[MethodChoice], config: dict) -> None:
    dataset = dataset_picker()
    c1, c2 = st.columns([1, 3])
    limit = int(c1.number_input("Examples", 1, 100_000, 50, key="faith-limit"))
    extra = [e for e in EVALUATORS if e not in EVALUATOR_METRICS and e != "faithfulness"]
    more = c2.multiselect("Also compute", extra, default=[], key="faith-extra",
                          format_func=lambda e: EVALUATORS[e].label,
                          help="operator-sweep fills the bias matrix with numbers; known-feature needs the "
                               "known-feature dataset; plausibility needs human rationales; agreement compares the "
                               "methods with each other (a pair table below the results), not with the model.")
    methods = [method_name(c) for c in choices]
    evaluators = list(config["evaluators"]) + list(more)
    st.caption(f"Model `{selection.model}` · methods: {', '.join(map(label_for, methods)) or 'none'} (presets "
               f"kept; individual parameter changes apply to this input only) · metrics: {', '.join(evaluators) or 'none'} · options: "
               f"{config['options']}. Each example is stored as it finishes: a stopped run resumes, a finished "
               f"one reopens instantly.")
    store = ResultStore()
    run_id = start_stop("faith", RUN_KEY, lambda: start_evaluation(selection.model, chosen_dataset(dataset), methods,
                                                                   evaluators, limit, config["options"], store),
                        disabled=not (methods and evaluators and dataset))
    runs_section(store, run_id, model=selection.model)


def runs_section(store: ResultStore, run_id: str | None, key: str = "faith", only: str | None = None,
                 model: str | None = None) -> None:
    runs = [r for r in store.list_runs(KIND) if _is_faithfulness(r)
            and (only is None or only in r["config"].get("evaluators", []))]
    chosen = pick_run(store, runs, run_id, f"{key}-show-run", model, "faithfulness runs")
    if chosen is None:
        return
    report_view(store, chosen, key)


def _is_faithfulness(run: dict) -> bool:
    ours = set(EVALUATOR_METRICS) | {"faithfulness", SWEEP, known_feature.KNOWN, MAGNITUDE.id,
                                     agreement_dataset.GROUP} | \
        set(other_measures.MEASURES)
    return bool(ours & set(run["config"].get("evaluators", [])))


def report_view(store: ResultStore, run_id: str, key: str = "faith") -> None:
    run = store.get_run(run_id)
    if run is None:
        st.error("This run is no longer in the store.")
        return
    errors = {k: c["error"] for k, c in store.cells(run_id).items() if "error" in c}
    if errors:
        st.warning(f"{len(errors)} example(s) failed (they are rerun on the next start): " +
                   "; ".join(f"{k}: {v}" for k, v in list(errors.items())[:3]))
    table = run_table(store, run_id)
    if table.empty:
        st.caption("No results yet.")
        return
    rc, options = run["config"], run["config"].get("options", {})
    removal = options_from(RemovalOptions, options)
    st.caption(f"Model `{rc['model']}` ({rc['model_fingerprint']}) · dataset `{rc['dataset']}` · "
               f"{table['n'].max()} examples · class explained and measured: {targets.label(removal.target)} · "
               f"operator: {removal.operator or 'each preset’s own'} · special tokens "
               f"{'excluded' if removal.exclude_special else 'counted'} · seed {removal.seed} · random baseline: "
               f"{options.get('random_orderings', 0)} orderings per example · mean with percentile-bootstrap 95 % CI; "
               f"≈ random: the paired CI of (method - random) contains 0.")
    for message in selection_warnings(rc.get("methods", []), metric_ids_of(rc.get("evaluators", []))):
        st.warning(message)  # AML scored on the metric it was selected on
    # agreement's pair rows ("A vs B") go to its own section below; each method keeps its mean over partners
    show_table(labelled(wide_table(agreement_dataset.without_pairs(table)), index=True), f"{key}-run-table-{run_id}",
               hide_index=False,
               why_missing="no example of the run gave this method a value for this metric")
    flagged = int((table["vs_random"] == NOT_DISTINGUISHABLE).sum()) if "vs_random" in table else 0
    _random_marker_caption(flagged, "the paired CI of method - random contains 0")
    table_a1_panel(table, f"{key}-run-a1-{run_id}")
    metrics = curve_metrics(store, run_id)
    if metrics:
        c1, c2 = st.columns([3, 2])
        shown = c1.selectbox("Curve", metrics, key=f"{key}-run-curve-{run_id}",
                             format_func=lambda m: f"{BY_ID[m.split('[')[0]].label}"
                                                   f"{' ' + m[m.index('['):] if '[' in m else ''} · "
                                                   f"{BY_ID[m.split('[')[0]].preset_label}")
        value = c2.radio("y axis", ("score", "change"), horizontal=True, key=f"{key}-run-value-{run_id}",
                         format_func=lambda v: "p(target) after removal" if v == "score" else "change from the input")
        curves = dataset_curves(store, run_id, shown, value)
        bands = band_picker(list(curves["methods"]), f"{key}-run-bands-{run_id}")
        st.plotly_chart(dataset_curve_figure(curves, f"{shown} over {rc['dataset']}", value, bands=bands),
                        key=f"{key}-run-chart-{run_id}-{shown}-{value}", width="stretch")
    _run_bias(store, run_id, rc, table)
    faithfulness_measures.agreement_run_section(table, run, key)
    c1, c2 = st.columns(2)
    c1.download_button("Download the summary (CSV)", table.to_csv(index=False), f"{run_id}.csv", "text/csv",
                       key=f"{key}-run-csv-{run_id}")
    c2.download_button("Download the run (JSON, every example, re-importable)",
                       json.dumps(store.export_run(run_id), default=str), f"{run_id}.json", "application/json",
                       key=f"{key}-run-json-{run_id}")


def table_a1_panel(table: pd.DataFrame, key: str) -> None:
    """Beside a dataset run's table: its mean |attribution| per method with CIs, and paper 000's Table A1."""
    if "metric" not in table or not (table["metric"] == "mean-abs-attribution").any():
        return
    st.markdown("##### Mean |attribution| per word (paper 000, Table A1)")
    reference = table_a1_reference(table)
    shown = pd.DataFrame({"method": reference["method"],
                          "mean [95 % CI]": [f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                                             zip(reference["mean"], reference["low"], reference["high"])],
                          "n": reference["n"],
                          **{PAPER_COLUMNS[d]: reference[f"paper_000_{d}"] for d in PAPER_DATASETS}})
    show_table(labelled(shown), key, why_missing="paper 000 reports only LOOempty and IM")
    st.caption("Each explanation is scaled by its largest |score| into [-1, 1]; the mean over its words is averaged "
               "over the run's examples (paper 000's ± is the spread over all tokens, not a CI). Small values: most "
               "words get almost no attribution. A description of the explanations, not a quality score; the random "
               "baseline's value is in the table above.")


def _run_bias(store: ResultStore, run_id: str, rc: dict, table: pd.DataFrame) -> None:
    metric_ids = [m for m in metric_ids_of([e for e in rc.get("evaluators", []) if e in EVALUATOR_METRICS])]
    if not metric_ids and SWEEP not in rc.get("evaluators", []):
        return
    values = sweep_values(results_frame(store, run_id), rc["methods"]) if SWEEP in rc.get("evaluators", []) else None
    with st.expander("Bias matrix (paper 000): methods x removal operators", expanded=False):
        matrix = bias_matrix(rc["methods"], operators_of(metric_ids, rc.get("options")),
                             values=None if values is None or values.empty else values, higher_is_better=False)
        st.html(bias_matrix_html(matrix, OPERATOR_LABELS))
        if values is None:
            st.caption("Add 'operator-sweep' to a run to fill the cells with each method's Deletion AUC per operator.")
        for reason in matrix.reasons.values():
            st.caption(f"⚠ {reason}")


# ----- the known-feature task (paper 003) -----------------------------------------------------------------
def known_feature_section(choices: list[MethodChoice]) -> None:
    st.caption("Paper 003 (s. 3.1): SST-2 sentences with **random** labels and the label word ('positive' / "
               "'negative') appended, so the appended word is the model's only feature. A faithful method ranks it "
               "first. Reference (paper 003, Fig. 4.1): IG, LIME and KernelSHAP ≈ 1.0 overlap; gradient and gradient "
               "x input only slightly above random.")
    recipe = known_feature.RECIPE
    if not known_feature.is_prepared(recipe):
        st.info(f"The known-feature model is not trained yet: MiniLM fine-tuned on {recipe.train_limit} sentences "
                f"(a few minutes on a CPU; cached afterwards).")
        if st.button("Train the known-feature model", key="faith-kf-train"):
            bar = st.progress(0.0, text="Training ...")

            def progress(step: int, total: int, info: dict) -> None:
                left = info["seconds"] / step * (total - step)
                bar.progress(step / total, text=f"step {step}/{total}, loss {info['loss']:.3f}, about "
                                                f"{left / 60:.1f} min left (any click stops it)")

            try:
                known_feature.prepare_known_feature_model(recipe, progress=progress, log=lambda message: None)
            except UserFacingError as error:
                st.error(str(error))
            else:
                st.rerun()
        return
    manifest = known_feature.read_manifest(recipe)
    st.caption(f"Model: `{known_feature.model_dir(recipe)}` · held-out task accuracy {manifest['accuracy']:.1%} · trained on "
               f"{manifest['train_examples']} sentences, label seed {recipe.label_seed}.")
    limit = int(st.number_input("Sentences (known-feature dev)", 1, 872, 100, key="faith-kf-limit"))
    methods = [method_name(c) for c in choices]
    store = ResultStore()
    if st.button("Start (or resume) the known-feature run", key="faith-kf-start", type="primary", disabled=not methods):
        try:
            store, run_id, cells = start_evaluation(str(known_feature.model_dir(recipe)),
                                                    f"known-feature:dev:{recipe.label_seed}", methods,
                                                    [known_feature.KNOWN], limit, {"random_orderings": DEFAULT_ORDERINGS},
                                                    store)
            JOBS.start(store, run_id, cells, evaluate_example)  # a quota refusal (shared mode): UserFacingError
        except (DataError, UserFacingError, ParamError, KeyError, ValueError) as error:
            st.error(str(error))
        else:
            st.session_state[RUN_KEY] = run_id
    runs_section(store, st.session_state.get(RUN_KEY), key="faith-kf", only=known_feature.KNOWN,
                 model=str(known_feature.model_dir(recipe)))
