"""Faithfulness page, "This input": F-Fidelity (FFid+ / FFid-) with the random band, and the "build it" button that
starts the fine-tuned copy's job when it is missing. Numbers from evaluation/faithfulness/f_fidelity.py; the job from
evaluation/faithfulness/f_fidelity_finetune.py."""
from __future__ import annotations

import streamlit as st

from evaluation.faithfulness import other_measures
from evaluation.faithfulness.curves import RemovalOptions
from evaluation.faithfulness.f_fidelity import MODELS, PRESETS, SCORES, FFidOptions, operator_of
from evaluation.faithfulness.f_fidelity_finetune import (
    FinetuneConfig,
    budget,
    find_finetuned,
    prepare_run,
    start_finetune,
)
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from explainers import Explanation
from explainers.params import options_from
from models import UserFacingError
from ui.widgets.method_card import method_card
from ui.widgets.run_progress import run_progress
from ui.widgets.tables import labelled, show_table

KEY = "faith-ffid"


def _controls() -> dict:
    c1, c0, c2, c3, c4 = st.columns(5)
    preset = c1.selectbox("Preset", list(PRESETS), list(PRESETS).index(FFidOptions().ffid_preset),
                          key=f"{KEY}-preset", format_func=lambda p: str(PRESETS[p]["description"]))
    samples = c0.number_input("Draws N (0 = the preset's)", 0, 1000, 0, key=f"{KEY}-samples")
    alpha = c2.number_input("alpha (removal probability)", 0.05, 1.0, 0.5, 0.05, key=f"{KEY}-alpha")
    beta = c3.number_input("beta (fine-tune ratio, cap)", 0.05, 0.9, 0.1, 0.05, key=f"{KEY}-beta")
    score = c4.selectbox("Score", list(SCORES), key=f"{KEY}-score", format_func=lambda s: SCORES[s])
    return {"ffid_preset": preset, "ffid_samples": int(samples), "ffid_alpha": float(alpha), "ffid_beta": float(beta),
            "ffid_score": score}


def build_panel(classifier, model_spec: str, beta: float, operator: str) -> None:
    """The fine-tuned copy is missing: its budget and a button that starts (or resumes) the job, with progress."""
    store = ResultStore()
    config = FinetuneConfig(model=model_spec, beta=beta, operator=operator,
                            model_fingerprint=classifier.fingerprint)
    _, run_id, _ = prepare_run(config, store)
    cost = budget(config, classifier)
    st.info(f"F-Fidelity measures a copy of this model fine-tuned with random word removal (beta {beta:g}, "
            f"{operator}); it is not built yet. Budget: {cost['steps']} steps x {config.batch_size} sentences of "
            f"{config.train_data}, about {cost['seconds'] / 60:.1f} min on {classifier.device} (cost model). Or: "
            f"`python cli.py prepare-ffid --model {model_spec} --beta {beta:g} --operator {operator}`.")
    running = JOBS.is_running(run_id)
    c1, c2 = st.columns(2)
    if not running and c1.button("Build the fine-tuned copy", key=f"{KEY}-build", icon=":material/build:"):
        try:
            start_finetune(config, store)
        except UserFacingError as error:  # a quota refusal (shared mode)
            st.error(str(error))
        else:
            st.rerun()
    if running and c2.button("Stop (resume later from the last saved chunk)", key=f"{KEY}-stop"):
        JOBS.stop(run_id)
    run = store.get_run(run_id)
    if running or (run is not None and run["done"]):  # a run deleted meanwhile has no progress to show
        run_progress(store, run_id, unit="chunks")


CONTRAST_READ = ("With the sidebar's contrast class, F-Fidelity reads p(target) - p(contrast) on the fine-tuned copy "
                 "(the label score: 1 where p(target) > p(contrast)); docs/peers.md.")


def ffid_section(classifier, encoding, explanations: dict[str, Explanation], config: dict, selection) -> None:
    st.markdown("##### F-Fidelity: removal on a copy fine-tuned with random removal (Zheng et al. 2025)")
    method_card("ffid", popover=True, label="About F-Fidelity")
    if not st.toggle("Measure F-Fidelity", key=f"{KEY}-on",
                     help="FFid+ (higher is better) / FFid- (lower is better) with the random band"):
        return
    if config["options"].get("contrast") is not None:  # with a contrast they read p(target) - p(contrast)
        st.caption(CONTRAST_READ)
    options = {**config["options"], **_controls()}
    operator = operator_of(options_from(RemovalOptions, options))
    if find_finetuned(classifier.fingerprint, options["ffid_beta"], operator) is None:
        build_panel(classifier, selection.model, options["ffid_beta"], operator)
        if not st.checkbox(f"Measure on the explained model meanwhile ({MODELS['original']})", key=f"{KEY}-orig"):
            return
        options["ffid_model"] = "original"
    if not explanations:
        return
    try:
        table = other_measures.measures_table(classifier, encoding, explanations, ["ffid"], options,
                                              selection.example, config["n_random"])
    except UserFacingError as error:
        st.error(str(error))
        return
    show_table(labelled(other_measures.wide(table), header=True), f"{KEY}-table", hide_index=False,
               why_missing="no value")
    st.caption(f"Random baseline: {config['n_random']} random explanations, mean [95 % band]; ≈ random marks a value "
               f"inside it. FFid+ higher is better, FFid- lower (near 0) is better.")
    st.download_button("Download F-Fidelity (CSV)", table.to_csv(index=False), "f_fidelity.csv", "text/csv",
                       key=f"{KEY}-csv")

