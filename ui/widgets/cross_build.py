"""The build offer of AML's attribution model G on another encoder (paper 004 s. 3.3's decoder setting;
``evaluation/suite/aml_cross_build.py``): asked for by an AML choice with a generator, and offered beside the own-backbone
build for a decoder or a model without [MASK]. Estimate, progress and Stop as the own-backbone build
(``method_run.build_row``), whose running / stopped / failed display this file also holds."""
from __future__ import annotations

import streamlit as st

from corpora import DataError
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from evaluation.suite import aml_cross_build
from evaluation.suite.aml_build import build_recipe
from explainers import REGISTRY
from explainers.mask_learning.aml_store import MANIFEST
from explainers.mask_learning.cross_backbone import cross_folder
from explainers.mask_learning.selection import metric_named
from models import ModelError, TextClassifier, UserFacingError, cached_classifier
from ui.widgets.run_progress import run_progress

ENCODER_PRESET = "pAML-encoder-G"  # AML's preset that explains with G on the default encoder


def build_status(store: ResultStore, run_id: str, key: str, started: bool = False,
                 what: str = "the attribution model") -> bool:
    """A build run's progress and Stop while it runs or was just ``started`` (True), else how the last one ended, if
    it failed or was stopped (False); ``what`` names the model being built."""
    if started or JOBS.is_running(run_id):
        run_progress(store, run_id, unit="builds")
        if st.button("Stop building", key=f"{key}-stop-{run_id}"):
            JOBS.stop(run_id)
            st.toast("Stopping at the next training step; nothing is saved.")
        return True
    run = store.get_run(run_id)
    errors = [c["error"] for c in store.cells(run_id).values() if "error" in c] if run is not None else []
    if errors:
        st.error(f"Building {what} failed: {errors[-1]}")
    elif run is not None and run["status"] == "cancelled":
        st.info("The last build was stopped before it finished; nothing was saved.")
    return False


def cross_build_offer(method_id: str, tune: str, generator: str, model: str, classifier: TextClassifier,
                      key: str = "cross-build", alternative: bool = False) -> None:
    """Say that G on ``generator`` is missing and offer to build it; ``alternative``: offered beside the
    own-backbone build (a decoder), so once built it says which preset explains with it."""
    metric = metric_named(tune)
    label = REGISTRY[method_id].label
    built = (cross_folder(classifier.fingerprint, metric, generator) / MANIFEST).is_file()
    if alternative:
        if built:
            st.caption(f"An attribution model on '{generator}' exists for this model: choose the preset "
                       f"{ENCODER_PRESET} to explain with it.")
            return
        st.caption(f"'{classifier.name}' is a decoder or has no [MASK] token: paper 004 (s. 3.3) trains its "
                   f"attribution model on an encoder instead (word-aligned; masking toward [UNK]). Build one on "
                   f"'{generator}' and explain with the preset {ENCODER_PRESET}.")
    else:
        st.info(f"{label} needs an attribution model on '{generator}' trained for this model ({classifier.name}), "
                f"selected on {metric.label}; none exists yet.")
    try:
        source = cached_classifier(generator)
        recipe = build_recipe(tune)
        minutes = max(1, round(aml_cross_build.estimate_cross_build_seconds(classifier, source, recipe) / 60))
        run_id = aml_cross_build.cross_build_run_id(model, classifier, tune, generator, source)  # nothing written
    except (UserFacingError, ModelError) as error:
        st.error(str(error))
        return
    store, started = ResultStore(), False
    if not JOBS.is_running(run_id) and st.button(
            f"Build the attribution model on '{generator}' (about {minutes} min)", key=f"{key}-{run_id}",
            help=f"Trains G on {generator}'s encoder on {recipe.train_size} inputs for {recipe.epochs:g} epochs, "
                 f"once for this model (like `python cli.py prepare-aml --generator {generator}`)."):
        try:
            store, run_id, cells = aml_cross_build.start_cross_build(model, classifier, tune, generator, source,
                                                                     store)
            JOBS.start(store, run_id, cells, aml_cross_build.cross_build_cell)  # a quota refusal: UserFacingError
        except (UserFacingError, DataError) as error:
            st.error(str(error))
            return
        started = True
    build_status(store, run_id, key, started)
