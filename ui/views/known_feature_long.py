"""The Faithfulness page's known-feature task on documents (``known-feature-long``, read in windows): the document
twin's Build button (estimate, progress, Stop: nothing saved), then the check on documents (which methods find the
planted word, against the random ranking) with its export; layout only (evaluation/suite/known_feature_long.py)."""
from __future__ import annotations

import streamlit as st

from corpora import DataError
from evaluation.faithfulness.known_feature import KNOWN
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from evaluation.suite import known_feature_long as kfl
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import KIND, evaluate_example
from explainers import ParamError, format_spec
from explainers.choices import MethodChoice
from models import ModelError, UserFacingError
from models.document_twin import DocumentTwinRecipe, estimate, is_prepared, read_manifest, twin_dir
from ui.views.faithfulness import report_view
from ui.widgets.cross_build import build_status
from ui.widgets.run_picker import pick_run
from ui.widgets.tables import show_table

MODEL = "default"  # the built-in model whose twins the known-feature tab uses (as the sentence task)
TASKS = {"sentences": "Sentences (known-feature)", "documents": "Documents (known-feature-long, read in windows)"}
RUN_KEY = "faithfulness:kf-long-run"
TWIN = "the document twin"


def documents_chosen() -> bool:
    """The task picker of the known-feature tab: True for the documents task."""
    task = st.radio("Task", list(TASKS), format_func=TASKS.get, horizontal=True, key="faith-kf-task",
                    help="Documents: 10-40 SST-2 sentences joined, the label word planted at a random position "
                         "(~500 words), each read whole in overlapping windows of the model.")
    return task == "documents"


def section(choices: list[MethodChoice]) -> None:
    st.caption("known-feature-long: paper 003's task at document scale. 10-40 SST-2 sentences with a **random** label, "
               "its label word planted once at a random position: the only feature that predicts the label. Which "
               "methods find one word among ~500, each document read whole in windows? The model is the short "
               "known-feature twin fine-tuned on documents (docs/long-documents.md).")
    try:
        missing = kfl.short_twin_missing(MODEL)
        recipe = kfl.document_recipe(MODEL)
    except UserFacingError as error:
        st.error(str(error))
        return
    if missing:
        st.info(missing)
        return
    if not is_prepared(recipe):
        build_offer(recipe)
        return
    manifest = read_manifest(recipe)
    st.caption(f"Model: `{twin_dir(recipe)}` · held-out accuracy {manifest['accuracy']:.1%} on "
               f"{manifest['eval_examples']} documents read in {manifest['window_tokens']}-token windows "
               f"({manifest['aggregate']} of the windows' logits), from {manifest['source_accuracy']:.1%} for the "
               f"short twin.")
    check(choices, str(twin_dir(recipe)))


def build_offer(recipe: DocumentTwinRecipe) -> None:
    """The twin is missing: its cost, a Build button, and the build's progress and Stop once started."""
    cost = st.session_state.setdefault("faith-kfl-cost", {})
    try:
        if recipe.key not in cost:
            cost[recipe.key] = estimate(recipe)  # reads the training documents once per session
    except (UserFacingError, DataError) as error:
        st.error(str(error))
        return
    figures = cost[recipe.key]
    minutes = max(1, round(figures["seconds"] / 60))
    st.info(f"The document twin is not built yet: the short twin fine-tuned on {recipe.train_limit} documents "
            f"({figures['train_windows']} windows of {figures['window_tokens']} tokens) and evaluated on "
            f"{recipe.eval_limit}; about {minutes} min on this machine, once (cached afterwards). Stop saves nothing.")
    run_id = kfl.build_run_id(recipe)  # nothing written before a click
    store, started = ResultStore(), False
    if not JOBS.is_running(run_id) and st.button(f"Build the document twin (about {minutes} min)",
                                                 key=f"faith-kfl-build-{run_id}", type="primary",
                                                 help="Like `python cli.py known-feature --documents --prepare`."):
        try:
            store, run_id, cells = kfl.start_build(recipe, figures["seconds"], store)
            JOBS.start(store, run_id, cells, kfl.build_cell)  # a quota refusal (shared mode): UserFacingError
        except (UserFacingError, DataError, ModelError) as error:
            st.error(str(error))
            return
        started = True
    build_status(store, run_id, "faith-kfl-build", started, what=TWIN)


def check(choices: list[MethodChoice], model: str) -> None:
    """The check's estimate and Start, then the chosen run: what it finds, and the full run table with its export."""
    methods = [format_spec(c.method_id, c.preset) for c in choices]
    limit = int(st.number_input("Documents (known-feature-long dev)", 1, 200, 20, key="faith-kfl-limit"))
    if methods:
        try:
            seconds = check_seconds(model, methods, limit)
        except (UserFacingError, ParamError, DataError) as error:
            st.error(str(error))
            return
        st.caption(f"{len(methods)} method(s) on {limit} documents: about {seconds / 60:.1f} min on this machine "
                   f"(the cost model, over the first documents' windows). Removal methods pay a window row per word.")
    store = ResultStore()
    if st.button("Start (or resume) the check on documents", key="faith-kfl-start", type="primary",
                 disabled=not methods):
        try:
            store, run_id, cells = kfl.start_check(model, methods, limit, store=store)
            JOBS.start(store, run_id, cells, evaluate_example)  # a quota refusal (shared mode): UserFacingError
        except (DataError, UserFacingError, ParamError, KeyError, ValueError) as error:
            st.error(str(error))
        else:
            st.session_state[RUN_KEY] = run_id
    runs = [r for r in store.list_runs(KIND) if r["config"].get("dataset") == kfl.DATASET
            and KNOWN in r["config"].get("evaluators", [])]
    chosen = pick_run(store, runs, st.session_state.get(RUN_KEY), "faith-kfl-show-run", model, "checks on documents",
                      unit="documents")
    if chosen is None:
        return
    if JOBS.is_running(chosen) and st.button("Stop the check", key=f"faith-kfl-stop-{chosen}",
                                             help="The documents already checked are kept; Start resumes."):
        JOBS.stop(chosen)
    found = kfl.findings(run_table(store, chosen))
    if not found.empty:
        st.markdown("##### Which methods find the planted word")
        show_table(found, f"faith-kfl-findings-{chosen}")
        st.caption("Mean rank % = the planted word's rank / the document's words (lower is better; 95 % bootstrap "
                   "CI); precision@1 = share of documents where it ranks first; random = a random ranking's "
                   "expectation and the 95 % band of its mean over the same documents.")
        st.download_button("Download this table (CSV)", found.to_csv(index=False), f"{chosen}-findings.csv",
                           "text/csv", key=f"faith-kfl-findings-csv-{chosen}")
    report_view(store, chosen, "faith-kfl")


def check_seconds(model: str, methods: list[str], limit: int) -> float:
    """The check's estimate, kept in the session per (model, methods, limit): it encodes a few documents."""
    kept = st.session_state.setdefault("faith-kfl-check-cost", {})
    key = (model, tuple(methods), limit)
    if key not in kept:
        kept[key] = kfl.estimate_check_seconds(model, methods, limit)
    return kept[key]
