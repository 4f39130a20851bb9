"""Faithfulness page: paper 000's diagnostics of how far the removal operators take inputs out of distribution
(Table 4: accuracy drop per perturbation scheme, a stored background run; Table A1 sits beside a dataset run's
table, ``faithfulness.table_a1_panel``). Numbers from evaluation/faithfulness/perturbation_shift*.py; this module
only lays them out."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from corpora import DataError
from evaluation.faithfulness.perturbation_shift import SCHEMES
from evaluation.faithfulness.perturbation_shift_run import (
    PAPER_BASE_ACCURACY,
    PAPER_DATASETS,
    PAPER_TABLE_4,
    accuracy_cell,
    check_settings,
    estimated_seconds,
    labelled_examples,
    reading,
    start_accuracy_drop,
    stored_run_id,
    stored_table,
    with_paper_figures,
)
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from models import UserFacingError
from ui.views.faithfulness import PAPER_COLUMNS, dataset_picker, filler_available
from ui.widgets.run_control import start_stop
from ui.widgets.run_progress import run_progress
from ui.widgets.tables import show_table

KEY = "faith-shift"
RUN_KEY = "faithfulness:shift-run"


def section(model: str, classifier, seed: int) -> None:
    st.markdown("##### How far do the removal operators go out of distribution? (paper 000, Table 4)")
    st.caption("Every removal-based method and metric scores the model on changed inputs. If the model cannot "
               "classify those inputs (they look unlike its training text), a score partly measures that shift. "
               "Paper 000 measures it as the drop in accuracy against the gold labels when one word is deleted "
               "(LOO's inputs), replaced by the masked LM's top word (IM's inputs), or when many words are deleted "
               "(LIME's samples). The drop's 95 % CI is a bootstrap over inputs; each input weighs the same.")
    dataset = dataset_picker(key=f"{KEY}-ds")
    c1, c2, c3 = st.columns([1, 3, 1])
    limit = int(c1.number_input("Examples", 0, 100_000, 50, key=f"{KEY}-limit"))
    schemes = c2.multiselect("Perturbations", list(SCHEMES), default=list(SCHEMES), key=f"{KEY}-schemes",
                             format_func=lambda s: SCHEMES[s][1])
    lime_samples = int(c3.number_input("LIME samples per input", 1, 5000, 50, key=f"{KEY}-lime",
                                       help="paper 000 used LIME's 1,000; 50 is a quick look"))
    if dataset is None:
        st.info("Pick a dataset (or upload a file with a 'label' column).")
        return
    run_section(model, classifier, dataset, limit, schemes, lime_samples, seed)


def run_section(model: str, classifier, dataset: str, limit: int, schemes: list[str], lime_samples: int,
                seed: int) -> None:
    """Cost, Start / Stop, progress and the table of this configuration's run (reopened from the store)."""
    if "im" in schemes and not filler_available():
        st.warning("The IM row needs the masked-LM filler, which is not prepared on this machine: build it with "
                   "`python cli.py prepare-mlm`. It is left out until then.")
        schemes = [s for s in schemes if s != "im"]
    try:
        check_settings(schemes, limit, lime_samples)
        examples = labelled_examples(classifier, dataset, limit)
        store = ResultStore()
        stored_run_id(store, classifier, model, dataset, examples, schemes, lime_samples, seed)  # IM's filler loads
    except (DataError, UserFacingError) as error:
        st.error(str(error))
        return
    seconds = estimated_seconds(classifier, examples, schemes, lime_samples)
    st.caption(f"Model `{model}` · `{dataset}`, first {len(examples)} examples · seed {seed} · about "
               f"{seconds / 60:.1f} min on {classifier.device} (cost model). Each input is stored as it finishes: a "
               f"stopped run resumes, a finished one reopens without recomputing. Command line: `python cli.py "
               f"evaluate --perturbation-shift --model {model} --dataset {dataset} --limit {len(examples)} "
               f"--lime-samples {lime_samples} --seed {seed}`.")
    start_stop(KEY, RUN_KEY, lambda: start_accuracy_drop(model, dataset, limit, schemes, lime_samples, seed, store),
               work=accuracy_cell, label="Measure the accuracy drop (start or resume)")
    shown = stored_run_id(store, classifier, model, dataset, examples, schemes, lime_samples, seed)
    run = store.get_run(shown) if shown is not None else None
    if shown is None or run is None:  # no run of this configuration yet (or it was just deleted)
        return
    if JOBS.is_running(shown) or run["done"] < run["total"]:
        run_progress(store, shown)
    table = stored_table(store, shown)
    if table is None:
        st.caption("No input finished yet.")
        return
    show_table(display_table(table), f"{KEY}-table", why_missing="")
    st.caption("Paper 000's base accuracies: " + ", ".join(f"{d} {a:.2f}" for d, a in PAPER_BASE_ACCURACY.items())
               + ". Its drops are for BERT-base on the full dev sets; the columns beside them are this model's.")
    st.markdown(f"**Reading.** {reading(table)}")
    export = with_paper_figures(table).assign(model=model, model_fingerprint=classifier.fingerprint, dataset=dataset,
                                              seed=seed, run_id=shown)
    st.download_button("Download Table 4 (CSV)", export.to_csv(index=False), "accuracy_drop.csv", "text/csv",
                       key=f"{KEY}-csv")


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """Table 4 as shown: accuracies in %, the drop with its CI, n, and the paper's drops beside it."""
    rows = []
    for _, row in table.iterrows():
        rows.append({"perturbation": row["label"], "accuracy (%)": f"{100 * row['accuracy']:.2f}",
                     "perturbed accuracy (%)": f"{100 * row['perturbed_accuracy']:.2f}",
                     "drop (points) [95 % CI]": f"{row['drop_points']:.2f} [{row['drop_low']:.2f}, "
                                                f"{row['drop_high']:.2f}]",
                     "n inputs": int(row["n_inputs"]), "copies per input": str(row["copies_per_input"]),
                     **{PAPER_COLUMNS[d]: f"{PAPER_TABLE_4[row['scheme']][d]:.2f}" for d in PAPER_DATASETS}})
    return pd.DataFrame(rows)

