"""Sanity page blocks for the newer measures: eMPRT and sMPRT beside the layer curves, repeatability across seeds,
the data-randomization test (build the permuted-label model as a background job, then compare maps), and their
rows in dataset runs. Every value is shown with the random band it is read against.

The numbers come from ``evaluation/sanity/{emprt,smprt,repeatability,data_randomization}.py``; this module only lays
out controls, tables and the figures ``ui/figures/`` draws.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import streamlit as st

from corpora import DataError
from evaluation.metric import METRICS
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from evaluation.sanity import data_randomization, emprt, one_input, repeatability, smprt
from evaluation.sanity import dataset as sanity_dataset
from explainers import Explainer, ParamError, label_for
from models import Encoding, TextClassifier, UserFacingError, estimate_seconds, load_classifier, randomize
from ui.figures.interval import interval_figure
from ui.figures.sanity_curves import curve_figure
from ui.widgets.background_task import start_task, task_id, task_panel
from ui.widgets.controls import schema_controls
from ui.widgets.dataset_field import dataset_field
from ui.widgets.run_progress import run_progress
from ui.widgets.tables import show_table

SMPRT_TASK = "sanity-smprt-task"  # the session's sMPRT job (ui/widgets/background_task.py)
REPEAT_TASK = "sanity-repeat-task"  # the session's repeatability job
BAND_NOTE = "random band: what a map with no information about the model scores (mean and 95 % range)"


def _band_text(band: dict | None) -> str:
    if band is None or not np.isfinite(band.get("mean", np.nan)):
        return "random band: n/a"
    return f"random band {band['mean']:+.2f} [{band['low']:+.2f}, {band['high']:+.2f}]"


def value_table(values: dict[str, float], band: dict | None, metric_id: str) -> pd.DataFrame:
    """One row per method and one for the random band (its mean, with the 95 % range)."""
    metric = METRICS[metric_id]
    column = f"{metric.label} {metric.arrow}"
    rows = [{"method": label_for(m), column: v} for m, v in values.items()]
    if band is not None:
        rows.append({"method": one_input.CHANCE, column: band["mean"], "band low": band["low"],
                     "band high": band["high"]})
    return pd.DataFrame(rows)


def _download(frame: pd.DataFrame, extra: dict, key: str) -> None:
    c1, c2 = st.columns(2)
    c1.download_button("Download (CSV)", frame.to_csv(index=False), f"sanity-{key}.csv", "text/csv",
                       key=f"sanity-csv-{key}")
    c2.download_button("Download with provenance (JSON)",
                       json.dumps({**extra, "rows": json.loads(frame.to_json(orient="records"))}, indent=2,
                                  default=str), f"sanity-{key}.json", "application/json", key=f"sanity-json-{key}")


# ----- one input ------------------------------------------------------------------------------------------------
def emprt_block(result: one_input.SanityResult) -> None:
    """eMPRT of a finished cascading randomization (no extra work: it reads the first and the last stage)."""
    st.markdown("##### eMPRT: rise in complexity after full randomization (Hedström et al. 2023)")
    if result.mode != "cascading" or not result.complete:
        st.caption("eMPRT reads the fully randomized model: choose the cascading mode and let it run to the end.")
        return
    values, band = emprt.emprt(result), emprt.emprt_chance(result)
    table = value_table(values, band, emprt.METRIC.id)
    show_table(table, "sanity-emprt", why_missing="undefined when the original map puts all importance on one word")
    st.caption(f"Higher: the map loses its structure with the model. {_band_text(band)} ({BAND_NOTE}: here, the "
               f"original maps against uniform random scores).")
    _download(table, {"metric": emprt.METRIC.to_dict(), "provenance": result.provenance(), "band": band}, "emprt")


def smprt_block(classifier: TextClassifier, encoding: Encoding, explainers: dict[str, Explainer], target: int,
                config: dict) -> None:
    """sMPRT for the current input: its own controls and a button (N times MPRT's work)."""
    st.markdown("##### sMPRT: the same curves on denoised maps (Hedström et al. 2023, sec. 3.1)")
    if config["mode"] != "cascading":
        st.caption("sMPRT compares with the fully randomized model: choose the cascading mode.")
        return
    preset = st.selectbox("sMPRT preset", list(smprt.PRESETS), key="sanity-smprt-preset",
                          help="quantus-2023: Quantus's defaults (N = 50, noise 0.1); quick: N = 10") or "quantus-2023"
    values = schema_controls(smprt.SmoothingOptions, f"sanity-smprt-{preset}", base=smprt.PRESETS[preset], columns=3)
    options = smprt.SmoothingOptions(**values)
    stages = len(randomize.stages(classifier)) + 1
    seconds = options.samples * stages * sum(
        estimate_seconds(classifier, *e.estimate_passes(encoding), encoding.n_tokens, method=e.id)
        for e in explainers.values())
    job_id = task_id("smprt", {"model": classifier.name, "text": encoding.text, "pair": encoding.pair,
                               "methods": sorted(explainers), "options": dataclasses.asdict(options), "target": target,
                               "config": config})
    if st.button(f"Run sMPRT (~{seconds:.0f} s)", key="sanity-smprt-run"):
        def work(should_stop, progress):
            return smprt.run_smprt(classifier, encoding, explainers, options, mode="cascading", init=config["init"],
                                   seed=config["seed"], target=target, top_fraction=config["top_fraction"],
                                   progress=progress, should_stop=should_stop)

        if start_task(SMPRT_TASK, job_id, f"sMPRT of {classifier.name} on one input", work) is None:  # refused, the page says why
            return
    task = task_panel(SMPRT_TASK, "Stopping after the current method and stage; the stages done so far are kept.")
    if task is None or task.job_id != job_id:  # running, never started, or a run of another input or settings
        return
    if task.error:
        st.error(task.error)
        return
    result = task.result
    if task.stopped:
        st.info("sMPRT was stopped" + (": the curves show the stages finished before the Stop; the sMPRT value needs "
                                       "the fully randomized model (the last stage). Run it again for the value."
                                       if result is not None else " before it started."))
    if result is None:
        return
    frame = result.frame()
    curves = frame[["stage_index", "method", smprt.MEASURE]].rename(columns={smprt.MEASURE: "mean"})
    st.plotly_chart(curve_figure(curves, result.stage_names, smprt.MEASURE, result.chance.get(smprt.MEASURE)),
                    key="sanity-smprt-curve", width="stretch")
    values = smprt.smprt(result) if result.complete else {}
    show_table(value_table(values, result.chance.get(smprt.MEASURE), smprt.METRIC.id), "sanity-smprt",
               why_missing="undefined for a map that gives every word the same score")
    st.caption(f"Lower: the denoised map depends on the model. {_band_text(result.chance.get(smprt.MEASURE))}.")
    _download(frame, {"metric": smprt.METRIC.to_dict(), "provenance": result.provenance(),
                      "smoothing": dataclasses.asdict(options)}, "smprt")


def repeatability_section(classifier: TextClassifier, encoding: Encoding, explainers: dict[str, Explainer],
                          target: int, seeds_of) -> None:
    st.caption("Each method runs with K seeds on this input; the value is the mean over the pairs of runs. 1: the "
               "seed does not matter. Methods without a seed run K times too (any value below 1 is hidden "
               "nondeterminism).")
    text = st.text_input("Seeds", "0, 1, 2, 3, 4", key="sanity-repeat-seeds")
    seeds, message = seeds_of(text)
    if message or len(seeds) < 2:
        st.error(message or "Give at least two different seeds.")
        return
    if not explainers:
        return
    seconds = len(seeds) * sum(estimate_seconds(classifier, *e.estimate_passes(encoding), encoding.n_tokens,
                                                method=e.id) for e in explainers.values())
    job_id = task_id("repeatability", {"model": classifier.name, "text": encoding.text, "pair": encoding.pair,
                                        "methods": sorted(explainers), "seeds": seeds, "target": target})
    if st.button(f"Run with {len(seeds)} seeds (~{seconds:.0f} s)", key="sanity-repeat-run"):
        def work(should_stop, progress):
            return repeatability.run_repeatability(classifier, encoding, explainers, seeds=seeds, target=target,
                                                   progress=progress, should_stop=should_stop)

        if start_task(REPEAT_TASK, job_id, f"repeatability of {classifier.name} on one input", work) is None:  # refused, the page says why
            return
    task = task_panel(REPEAT_TASK, "Stopping after the current seed; the seeds done so far are kept.")
    if task is None or task.job_id != job_id or task.result is None:
        if task is not None and task.job_id == job_id and task.error:
            st.error(task.error)
        return
    result = task.result
    if task.stopped:
        st.info("Stopped: the values use the seeds finished before the Stop.")
    for where, message in result.errors.items():
        st.error(f"{where}: {message}")
    frame = result.frame()
    for measure, metric_id in repeatability.MEASURES.items():
        show_table(value_table(dict(zip(frame["method"], frame[measure])), result.chance[measure], metric_id),
                   f"sanity-repeat-{measure}")
        st.caption(_band_text(result.chance[measure]))
    _download(frame, {"provenance": result.provenance(), "band": result.chance}, "repeatability")


def data_randomization_section(model: str, classifier: TextClassifier, encoding: Encoding,
                               explainers: dict[str, Explainer], target: int) -> None:
    st.caption(f"{data_randomization.REFERENCE}: a copy of the model fine-tuned on its training data with permuted "
               f"labels can only memorize. A method whose maps stay the same does not depend on what the model "
               f"learned from the labels.")
    c1, c2 = st.columns(2)
    data, usable = dataset_field("Training data", classifier.manifest.get("train_data", "sst2:train"),
                                 "sanity-dr-data", container=c1)
    steps = int(c2.number_input("Steps", 1, 100_000, data_randomization.DEFAULT_STEPS, key="sanity-dr-steps",
                                help=f"optimizer steps of {data_randomization.DEFAULT_BATCH} examples (the paper "
                                     f"trained to convergence: fewer steps change the model less)"))
    options = data_randomization.BuildOptions(steps=steps)
    store = ResultStore()
    if not usable or not data:  # refused with its message, or empty: nothing to build from
        return
    try:
        folder = data_randomization.find_built(model, data, options)
    except (UserFacingError, DataError) as error:
        st.error(str(error))
        return
    run_id: str | None = st.session_state.get("sanity-dr-run")
    running = run_id is not None and JOBS.is_running(run_id)
    if folder is None and not running:
        if st.button(f"Build the permuted-label model ({steps} steps)", key="sanity-dr-build", type="primary"):
            try:
                store, run_id, cells = data_randomization.start_build(model, data, options, store)
                JOBS.start(store, run_id, cells, data_randomization.build_cell)  # a quota refusal: UserFacingError
            except (UserFacingError, DataError, ParamError) as error:
                st.error(str(error))
                return
            st.session_state["sanity-dr-run"] = run_id
            running = True
    if running and run_id is not None:
        run_progress(store, run_id, unit="builds")
        if st.button("Stop building", key="sanity-dr-stop"):
            JOBS.stop(run_id)
            st.toast("Stopping at the next training step; nothing is saved.")
        return
    if folder is None:
        failures = [c["error"] for c in store.cells(run_id).values() if "error" in c] if run_id else []
        if failures:
            st.error(f"Building the permuted-label model failed: {failures[-1]}")
        return
    manifest = json.loads((folder / "manifest.json").read_text())
    training = manifest["training"]
    st.caption(f"Permuted-label model `{folder.name}`: {training['steps']} steps on {manifest['train_data']}; its "
               f"predictions agree with the true labels on {training['agreement_true']:.0%} of its training inputs "
               f"(chance: about the majority share; mean probability of the true class "
               f"{training.get('probability_true', float('nan')):.2f}) and with the permuted labels on "
               f"{training['agreement_permuted']:.0%}.")
    if not explainers:
        return
    try:
        permuted_model = load_classifier(str(folder))
        frame, band, errors = data_randomization.compare_maps(classifier, permuted_model, encoding, explainers, target)
    except UserFacingError as error:
        st.error(str(error))
        return
    for where, message in errors.items():
        st.error(f"{where}: {message}")
    for measure in ("spearman", "top_k"):
        metric_id = data_randomization.MEASURES[measure]
        show_table(value_table(dict(zip(frame["method"], frame[measure])), band[measure], metric_id),
                   f"sanity-dr-{measure}")
    st.caption(f"Lower: the map depends on what the model learned. {_band_text(band['spearman'])} (Spearman). "
               f"Command line: `python cli.py sanity --data-randomization --steps {steps}`.")
    _download(frame, {"reference": data_randomization.REFERENCE, "permuted_model": manifest, "band": band},
              "data-randomization")
    _data_randomization_run(model, str(folder), list(explainers), store)


def _data_randomization_run(model: str, folder: str, methods: list[str], store: ResultStore) -> None:
    """The comparison over a dataset as a background run: mean and 95 % CI per method, with the random band."""
    st.markdown("##### Over a dataset")
    c1, c2 = st.columns([3, 1])
    dataset, usable = dataset_field("Dataset", "sst2:dev", "sanity-dr-dataset", container=c1)
    limit = int(c2.number_input("Examples", 1, 100_000, 20, key="sanity-dr-limit"))
    run_id: str | None = None
    if st.button("Start (or resume) the dataset run", key="sanity-dr-start", disabled=not usable) and dataset:
        try:
            store, run_id, cells = data_randomization.start_study(model, folder, dataset, methods, limit, store=store)
            JOBS.start(store, run_id, cells, data_randomization.comparison_cell)  # a quota refusal: UserFacingError
        except (DataError, UserFacingError, ParamError) as error:
            st.error(str(error))
            return
        st.session_state["sanity-dr-study"] = run_id
    run_id = st.session_state.get("sanity-dr-study")
    if not run_id or store.get_run(run_id) is None:
        return
    run_progress(store, run_id)
    frame = data_randomization.results_frame(store, run_id)
    if frame.empty:
        return
    summary = sanity_dataset.summarize(frame)
    for metric_id in data_randomization.METRICS:
        band, rows = sanity_dataset.measure_table(summary, metric_id)
        if rows.empty:
            continue
        st.plotly_chart(interval_figure(rows, band, metric_id), key=f"sanity-dr-{metric_id}-{run_id}",
                        width="stretch")
        st.caption(f"{METRICS[metric_id].label}: mean with percentile-bootstrap 95 % CI over "
                   f"{frame['example_id'].nunique()} examples; {_band_text(band)}.")
    st.download_button("Download the summary (CSV)", summary.to_csv(index=False), f"{run_id}.csv", "text/csv",
                       key=f"sanity-dr-csv-{run_id}")


# ----- dataset runs ---------------------------------------------------------------------------------------------
def dataset_measures(summary: pd.DataFrame, names: list[str], run_config: dict, run_id: str) -> None:
    """The extra measures a layers run stored: sMPRT's curves, eMPRT's and repeatability's intervals."""
    measures = run_config.get("measures", [])
    if "smprt" in measures:
        st.markdown("##### sMPRT: Spearman of |denoised maps| per stage (mean, 95 % CI)")
        band, rows = sanity_dataset.chance_band(sanity_dataset.curves(summary, names, smprt.METRIC.id))
        st.plotly_chart(curve_figure(rows, names, smprt.MEASURE, band), key=f"sanity-run-smprt-{run_id}",
                        width="stretch")
        st.caption(f"N = {run_config.get('smoothing', {}).get('samples')} noisy samples, noise "
                   f"{run_config.get('smoothing', {}).get('noise')}; {_band_text(band)}.")
    for measure, metric_ids in (("emprt", [emprt.METRIC.id]),
                                ("repeatability", list(repeatability.MEASURES.values()))):
        if measure not in measures:
            continue
        for metric_id in metric_ids:
            band, rows = sanity_dataset.measure_table(summary, metric_id)
            if rows.empty:
                continue
            st.markdown(f"##### {METRICS[metric_id].label} {METRICS[metric_id].arrow} (mean, 95 % CI)")
            st.plotly_chart(interval_figure(rows, band, metric_id), key=f"sanity-run-{metric_id}-{run_id}",
                            width="stretch")
            st.caption(_band_text(band))
