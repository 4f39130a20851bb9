"""Compare-models page, dataset section (layout only): pick models, methods, checks and a limit, start / stop the
comparison's background run, then paper 003's figures (metric vs size with 95 % bands, bars per model with
whiskers, randomization curves one panel per model), the table, and CSV / JSON downloads of what is shown. The run
and its numbers come from ``evaluation/suite/model_comparison_dataset.py``."""
from __future__ import annotations

import json

import streamlit as st

from evaluation.runs.store import ResultStore
from evaluation.suite import model_comparison_dataset as mcd
from evaluation.suite.report_card import default_methods
from evaluation.suite.report_card_rules import check_name
from explainers import REGISTRY, is_known_spec
from models import BUILT_IN
from models.prepare import ZOO
from settings import shared_mode
from ui.figures import model_comparison as figures
from ui.views.report_card import protocol_control
from ui.widgets import loaders
from ui.widgets.dataset_field import dataset_field
from ui.widgets.run_control import start_stop
from ui.widgets.run_progress import run_progress

RUN_KEY = "model_comparison_run"
CELLS_KEY = "model_comparison_cells"


def banner() -> None:
    st.markdown("**Dataset level.** The project's checks on every chosen model: the known feature (each built-in "
                "model has a twin of its shape trained on the known-feature task, trained here when missing), "
                "faithfulness against the random band, cascading layer randomization and plausibility. Paper 003 "
                "found that IG, LIME and KernelSHAP find the known feature at every size while the gradient "
                "methods do not. Each (model, check) is a stored cell: adding a model computes only its cells.")


def settings(current: str | None) -> tuple[list[str], str | None, list[str], mcd.ComparisonConfig, dict]:
    """The comparison's settings; the dataset is None (and nothing can start) while a dataset field is refused.
    In shared mode no field takes a server folder."""
    prepared = [name for name in BUILT_IN if loaders.is_prepared(name)]
    options = list(dict.fromkeys(prepared + ([current] if current else [])))
    default = [name for name in ZOO if name in prepared] or options[:1]
    models = st.multiselect("Models", options, default=default, key="cmpd-models")
    extra = "" if shared_mode() else st.text_input("More models (folders or hub ids, comma-separated)",
                                                   key="cmpd-extra").strip()
    models += [spec.strip() for spec in extra.split(",") if spec.strip()]
    missing = [name for name in ZOO if name not in prepared]
    if missing:
        st.caption("Zoo models not built on this machine yet: " + ", ".join(missing)
                   + " (`python cli.py prepare --model NAME`).")
    c1, c2 = st.columns([2, 3])
    dataset, usable = dataset_field("Dataset", "sst2:dev", "cmpd-dataset", container=c1,
                                    help="the faithfulness and sanity checks' data (name:split or file:PATH)")
    choices = default_methods() + [m for m in REGISTRY if m not in default_methods()]
    methods = c2.multiselect("Methods", choices, default=default_methods(), key="cmpd-methods")
    protocol = protocol_control("cmpd-protocol")
    c1, c2 = st.columns([3, 1])
    checks = c1.multiselect("Checks", list(mcd.CHECKS), default=list(mcd.CHECKS), key="cmpd-checks",
                            format_func=lambda c: check_name(c, protocol, dataset or "the dataset"))
    limit = int(c2.number_input("Examples per check", 1, 100_000, 16, key="cmpd-limit"))
    with st.expander("Known-feature data and twins of models that are not built in"):
        kf_data, kf_usable = dataset_field("Known-feature dataset (empty: known-feature:dev:0)", "", "cmpd-kf-data",
                                           optional=True)
        twins_text = "" if shared_mode() else st.text_input("Twins, MODEL=FOLDER (comma-separated)", key="cmpd-twins")
        plaus, plaus_usable = dataset_field("Dataset with human rationales (empty: the dataset above, when it has "
                                            "them)", "", "cmpd-plaus-data", optional=True)
    twins = {}
    for item in (i.strip() for i in twins_text.split(",") if i.strip()):
        model, sep, folder = item.partition("=")
        if sep and model.strip() and folder.strip():
            twins[model.strip()] = folder.strip()
        else:
            st.warning(f"'{item}': write MODEL=FOLDER (the model, then its twin trained on the known-feature task).")
    config = mcd.ComparisonConfig(checks=tuple(checks), limit=limit, known_feature_limit=limit, sanity_limit=limit,
                                  plausibility_limit=limit, known_feature_dataset=kf_data or None,
                                  plausibility_dataset=plaus or None, protocol=protocol)
    usable = usable and kf_usable and plaus_usable
    return models, dataset if usable else None, [m for m in methods if is_known_spec(m)], config, twins


def run(models: list[str], dataset: str | None, methods: list[str], config: mcd.ComparisonConfig,
        twins: dict) -> mcd.Comparison | None:
    """Start / resume / stop the background run; the comparison of the models last started (None before)."""
    def start():
        store, run_id, cells = mcd.start_comparison(models, dataset, methods, config, twins, ResultStore())
        st.session_state[CELLS_KEY] = cells
        return store, run_id, cells

    run_id = start_stop("cmpd", RUN_KEY, start,
                        disabled=not models or not methods or not config.checks or dataset is None,
                        work=mcd.comparison_cell)
    cells = st.session_state.get(CELLS_KEY)
    if run_id is None or cells is None:
        st.caption("Start a run to compare the models.")
        return None
    store = ResultStore()
    run_progress(store, run_id, unit="cells (model x check)")
    return mcd.results(store, run_id, cells)


def show(comparison: mcd.Comparison) -> None:
    st.caption(f"Protocol `{comparison.protocol}`. Checks: " + "; ".join(comparison.check_names.values()))
    for where, error in comparison.errors.items():
        st.warning(f"{where} failed: {error}")
    if comparison.pending:
        st.caption("Still to run: " + ", ".join(comparison.pending))
    rows = comparison.rows
    for reason in dict.fromkeys(rows["not_applicable"].dropna()):
        st.info(reason)
    metrics = figures.metrics_in(rows)
    if metrics:
        metric = st.selectbox("Metric", metrics, key="cmpd-metric", format_func=lambda m: mcd.METRIC_LABELS[m])
        encoders = rows[rows["architecture"] == mcd.ENCODER]["model"].nunique()
        if encoders >= 2:
            st.plotly_chart(figures.size_lines(rows, metric), key="cmpd-size")
        st.plotly_chart(figures.architecture_bars(rows, metric), key="cmpd-bars")
    if len(comparison.curves):
        st.plotly_chart(figures.randomization_panels(comparison.curves), key="cmpd-randomization")
    shown = figures.shown_table(rows)
    st.dataframe(shown, hide_index=True, key="cmpd-table")
    c1, c2 = st.columns(2)
    c1.download_button("Download the table (CSV)", shown.to_csv(index=False), file_name="model_comparison.csv",
                       mime="text/csv", key="cmpd-csv")
    c2.download_button("Download everything (JSON)", json.dumps(mcd.export(comparison), indent=2, default=str),
                       file_name="model_comparison.json", mime="application/json", key="cmpd-json")


def section(current: str | None) -> None:
    banner()
    comparison = run(*settings(current))
    if comparison is not None:
        show(comparison)
