"""Adversarial page blocks: attack one input's explanation live, or a dataset as a resumable run (paper 003).

The attack and its measures live in ``evaluation/adversarial``; this module lays out the controls, the live progress,
the clean and attacked heatmaps, the nearest vocabulary words and the dataset summary. Every word shown is escaped.
"""
from __future__ import annotations

import html
import json

import pandas as pd
import streamlit as st

from evaluation.adversarial import dataset as adversarial_dataset
from evaluation.adversarial.config import ATTACKED_METHODS, PRESETS, AttackConfig, config_for
from evaluation.adversarial.documents import attack_seconds
from evaluation.adversarial.live import LiveAttack
from evaluation.adversarial.long_inputs import long_input_refusal
from evaluation.adversarial.result import AttackResult
from evaluation.runs.store import ResultStore
from explainers import ParamError
from models import Encoding, TextClassifier, UserFacingError
from models.windows import DocumentEncoding
from ui.figures.adversarial_bars import measure_bars
from ui.widgets.controls import schema_controls
from ui.widgets.dataset_field import dataset_picker
from ui.widgets.heatmap import CSS, heatmap_html
from ui.widgets.run_control import start_stop
from ui.widgets.run_picker import pick_run

LIVE_KEY = "adversarial_live"
RUN_KEY = "adversarial_run"
MEASURE_LABELS = {"rank_change": "Rank Change", "top_k_sum_change": "Top-k Sum Change",
                  "probability_change": "Probability Change", "class_kept": "Class kept", "steps_taken": "Steps"}
MEASURE_HELP = {
    "rank_change": "share of the clean top-k positions whose token changed (position-wise); high = the attack worked",
    "top_k_sum_change": "importance share the clean top-k tokens lost; high = the attack worked",
    "probability_change": "predicted-class probability before minus after; near 0 = the input still means the same "
                          "to the model",
}


def banner() -> None:
    st.markdown("Can a change the model barely notices move an explanation? The attack adds a perturbation to the "
                "word embeddings, no larger than **epsilon** in any coordinate, that pushes importance away from the "
                "explanation's top-k words while the prediction stays (paper 003 sections 2.3 and 3.5, after "
                "Ghorbani et al. 2019). A robust method keeps a low **Rank Change** and **Top-k Sum Change**; a low "
                "**Probability Change** says the attacked input is still the same input to the model.")
    st.caption("Preset paper-003 differentiates through the explanation (double back-propagation). paper-003-code "
               "is the thesis code: its explanation gradients are detached, so for plain Gradients the explanation "
               "term never reaches the perturbation (notes 003, section 6.3).")


def controls(key: str = "adv") -> tuple[list[str], AttackConfig] | None:
    """Methods, preset and the attack's options (generated from ``AttackConfig``'s schema)."""
    left, right = st.columns([3, 1])
    methods = left.multiselect("Methods attacked", list(ATTACKED_METHODS), default=["input_x_gradient"],
                               format_func=lambda m: ATTACKED_METHODS[m], key=f"{key}-methods")
    preset = right.selectbox("Preset", list(PRESETS), key=f"{key}-preset")
    with st.expander("Attack options"):
        overrides = schema_controls(AttackConfig, f"{key}-{preset}", base=config_for(preset), columns=3)
    try:
        return methods, config_for(preset, **overrides)
    except ParamError as error:
        st.error(str(error))
        return None


# ----- one input -----------------------------------------------------------------------------------------------
def single_input(classifier: TextClassifier, encoding: Encoding, methods: list[str], config: AttackConfig,
                 key: str = "adv") -> None:
    if not methods:
        st.info("Choose at least one method to attack.")
        return
    refusal = long_input_refusal(classifier, encoding, methods[0], config)  # a cut text; a very long document
    allow_long = False
    if refusal:
        st.warning(refusal)
        if not isinstance(encoding, DocumentEncoding):
            return
        allow_long = st.checkbox("Attack this long document anyway (Stop keeps the best iterate so far)",
                                 key=f"{key}-allow-long")
        if not allow_long:
            return
    if isinstance(encoding, DocumentEncoding):
        st.caption(f"A document read in {len(encoding.windows)} overlapping windows: the attack keeps the "
                   f"document's prediction (the {encoding.aggregate} rule over the windows' logits) and moves the "
                   f"windowed explanation (each window's attribution, overlaps blended as on Heatmaps); every step "
                   f"back-propagates through every window.")
    jobs: dict[str, LiveAttack] = st.session_state.setdefault(LIVE_KEY, {})
    for method in methods:
        st.markdown(f"**{ATTACKED_METHODS[method]}**")
        job = LiveAttack(classifier, encoding, method, config, allow_long)
        job = jobs.get(job.key, job)
        if job.result is None and job.error is None and not job.running:
            seconds = attack_seconds(classifier, encoding, method, config)
            if st.button(f"Attack (up to {config.steps} steps, ~{seconds:.0f} s)", key=f"{key}-run-{job.key}"):
                jobs[job.key] = job.start()
                st.rerun()
            continue
        if job.running:
            _live(job, config, key)
        elif job.error:
            st.error(job.error)
            if st.button("Attack again", key=f"{key}-again-{job.key}"):
                jobs.pop(job.key, None)
                st.rerun()
        elif job.result is not None:
            result_view(job.result, encoding, classifier, key=f"{key}-{method}")


def _live(job: LiveAttack, config: AttackConfig, key: str) -> None:
    @st.fragment(run_every=1.0)
    def live() -> None:
        if not job.running:
            st.rerun(scope="app")
        st.progress(min(1.0, job.step / config.steps),
                    text=f"step {job.step} of at most {config.steps} · objective {job.objective:.4f} · "
                         f"{job.elapsed:.0f} s")
        st.button("Stop (keeps the best iterate so far)", key=f"{key}-stop-{job.key}", on_click=job.stop)

    live()


def _measures_frame(result: AttackResult) -> pd.DataFrame:
    rows = [{"measure": MEASURE_LABELS[name], "value": round(value, 4), "meaning": MEASURE_HELP.get(name, "")}
            for name, value in result.measures().items()]
    return pd.DataFrame(rows)


def result_view(result: AttackResult, encoding: Encoding, classifier: TextClassifier, key: str) -> None:
    tokens = [result.tokens[p] for p in result.positions]
    st.markdown(CSS, unsafe_allow_html=True)
    st.markdown("Clean explanation (share of importance, |a| / sum |a|)")
    st.markdown(heatmap_html(tokens, result.original_shares, signed=False), unsafe_allow_html=True)
    kept = "kept" if result.class_kept else f"changed to {classifier.labels[result.attacked_class]}"
    st.markdown(f"Attacked explanation (||delta||_inf = {result.delta_linf:.3g}; class {kept}; "
                f"{result.steps_taken} steps, {result.stop_reason})")
    st.markdown(heatmap_html(tokens, result.attacked_shares, signed=False), unsafe_allow_html=True)
    st.dataframe(_measures_frame(result), hide_index=True, key=f"{key}-measures")
    if result.replaced_words:
        words = ", ".join(f"{html.escape(r['token'])} → {html.escape(r['nearest'])}" for r in result.replaced_words)
        st.caption(f"Nearest vocabulary token of the perturbed embeddings, where it is no longer the original: "
                   f"{words}")
    else:
        st.caption("Every perturbed embedding is still nearest to its own token.")
    st.download_button("Download this attack (JSON)", json.dumps(result.to_dict(), indent=2, default=str),
                       file_name=f"attack-{result.method}.json", mime="application/json", key=f"{key}-json")


# ----- a dataset -----------------------------------------------------------------------------------------------
def dataset_section(model: str, methods: list[str], config: AttackConfig, key: str = "adv-ds") -> None:
    c1, c2, c3 = st.columns([3, 1, 1])
    dataset = dataset_picker(key, columns=(c1, c2), name_key=f"{key}-name")  # built-in, shared file, upload
    limit = int(c3.number_input("Examples", 1, 100_000, 16, key=f"{key}-limit", help="paper 003 attacked 16"))
    store = ResultStore()

    def start():
        if not dataset:  # (the Start button is disabled without one)
            raise UserFacingError("Choose a dataset first.")
        return adversarial_dataset.start_attacks(model, dataset, methods, limit, config, store)

    run_id = start_stop(key, RUN_KEY, start, work=adversarial_dataset.attack_cell, disabled=not (methods and dataset))
    runs = store.list_runs(adversarial_dataset.KIND)
    chosen = pick_run(store, runs, run_id, f"{key}-show", model, "adversarial runs")
    if chosen is None:
        return
    summary_view(store, chosen, key)


def summary_view(store: ResultStore, run_id: str, key: str) -> None:
    frame = adversarial_dataset.results_frame(store, run_id)
    if frame.empty:
        st.caption("No results yet.")
        return
    table = adversarial_dataset.summarize(frame)
    skipped = adversarial_dataset.skipped_inputs(store, run_id)
    if skipped:
        st.caption("Inputs skipped (too short for k >= 1, as the thesis did, or refused with a message in the "
                   "run's cells): " +
                   ", ".join(f"{ATTACKED_METHODS[m]}: {n}" for m, n in skipped.items()))
    st.plotly_chart(measure_bars(table, MEASURE_LABELS, ATTACKED_METHODS), key=f"{key}-bars")
    shown = table.assign(measure=table["metric"].map(MEASURE_LABELS)).drop(columns=["metric"])
    st.dataframe(shown, hide_index=True, key=f"{key}-table")
    st.download_button("Download the summary (CSV)", shown.to_csv(index=False), file_name="adversarial.csv",
                       mime="text/csv", key=f"{key}-csv")
