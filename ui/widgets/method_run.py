"""A method's row before its heatmap exists: waiting for a Run click, running in the background (progress from the
method's own batches and a Stop; MaRC also its steps and the mask being carved down), or stopped / failed (Run
again; a stopped MaRC keeps its last mask), or needing a model built first (AML: a Build button with progress).
Shared by every page that explains one input."""
from __future__ import annotations

import numpy as np
import streamlit as st

from corpora import DataError
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from evaluation.suite import aml_build
from evaluation.suite.aml_cross_build import DEFAULT_GENERATOR, offers_encoder_generator
from explainers import REGISTRY, ParamError, create, create_from_spec, split_spec
from explainers.choices import MethodChoice
from explainers.mask_learning.progress import MaskProgress
from explainers.mask_learning.selection import metric_named
from explainers.method_jobs import FAILED, METHOD_JOBS, STOPPED, MethodJob
from explainers.plan import NeedsTraining, Pending, missing_training
from models import ModelError, TextClassifier, UserFacingError
from ui.widgets.cross_build import build_status, cross_build_offer
from ui.widgets.heatmap import CSS, heatmap_html

POLL_SECONDS = 1.0
STOP_WAIT_SECONDS = 2.0  # a Stop waits this long for the method's current batch to end; then the row says "stopping"


def pending_row(pending: Pending | MethodJob | NeedsTraining, key: str = "run") -> None:
    """The estimate and a Run button; a click approves the method for this session and reruns the page."""
    if not isinstance(pending, Pending):  # views that poll no jobs still meet a method that needs training
        status_row(pending, key=key)
        return
    st.info(f"Not run yet: about {pending.forward} forward and {pending.backward} backward passes, estimated "
            f"{pending.seconds:.0f} s on this machine.")
    if st.button(f"Run {REGISTRY[pending.method_id].label} (~{pending.seconds:.0f} s)",
                 key=f"{key}-{pending.approval_key}"):
        st.session_state.setdefault("approved_runs", set()).add(pending.approval_key)
        st.rerun()


def progress_text(job: MethodJob) -> str:
    progress = job.progress()
    planned = job.planned
    text = f"{planned.label}: {progress.forward} of about {planned.forward} forward passes"
    if planned.backward:
        text += f", {progress.backward} of about {planned.backward} backward"
    text += f" · {progress.elapsed:.0f} s"
    if job.running:
        text += f" · about {progress.left:.0f} s left"
    return text


def job_row(job: MethodJob, key: str = "job") -> None:
    """Progress and Stop while the job runs (polled every second); 'stopped' or the error, and Run again, after."""
    if job.running:
        _running(job, key)
        return
    if job.partial is not None:
        st.info(f"Stopped: {progress_text(job)}. The row shows the last mask; it is not cached.")
    elif job.status == STOPPED:
        st.info(f"Stopped: {progress_text(job)}. Nothing of this method is kept; the methods that finished stay "
                f"shown.")
    elif job.status == FAILED:
        st.error(job.error or "failed")
    if st.button(f"Run {job.planned.label} again (~{job.planned.seconds:.0f} s)", key=f"{key}-again-{job.key}"):
        METHOD_JOBS.restart(job)
        st.rerun()


def _running(job: MethodJob, key: str) -> None:
    @st.fragment(run_every=POLL_SECONDS)
    def live() -> None:
        if not job.running:  # finished, stopped or failed since the last look: redraw the page with its result
            st.rerun(scope="app")
        st.progress(job.progress().fraction, text=progress_text(job))
        progress = job.live  # read once: the job's thread replaces it as it steps
        if progress is not None:
            live_mask(job, progress)
        if job.stopping:
            st.caption("Stopping after the current batch ...")
        else:
            st.button("Stop", key=f"{key}-stop-{job.key}", on_click=job.stop, kwargs={"wait": STOP_WAIT_SECONDS},
                      help="Stops this method at its next batch; the methods that finished stay shown.")

    live()


def live_text(progress: MaskProgress) -> str:
    text = (f"Step {progress.step} of {progress.max_steps} · loss {progress.loss:.4f} · mean mask "
            f"{progress.mean_mask:.3f}")
    return text + (f" · {progress.note}" if progress.note else "")


def live_mask(job: MethodJob, progress: MaskProgress) -> None:
    """The mask being carved down: step, loss and mean mask, and the current mask as a heatmap row."""
    st.caption(live_text(progress))
    encoding = job.encoding
    st.html(CSS + heatmap_html(list(encoding.words), np.asarray(progress.mask, dtype=float), signed=False,
                               segments=list(encoding.word_segment)))


def build_row(needs: NeedsTraining, model: str, classifier: TextClassifier, key: str = "build") -> None:
    """AML without an attribution model for this classifier: say so, offer to build it (a background run with
    progress and Stop, evaluation/suite/aml_build.py); the method runs once it exists. G on another encoder where the
    choice names one, and offered beside the own build for a decoder (ui/widgets/cross_build.py)."""
    if needs.generator:
        cross_build_offer(needs.method_id, needs.tune, needs.generator, model, classifier, key=f"{key}-cross")
        return
    st.info(f"{REGISTRY[needs.method_id].label} needs an attribution model trained for this model "
            f"({classifier.name}), selected on {metric_named(needs.tune).label}; none exists yet.")
    try:
        recipe = aml_build.build_recipe(needs.tune)
        minutes = max(1, round(aml_build.estimate_build_seconds(classifier, recipe) / 60))
        run_id = aml_build.build_run_id(model, classifier, needs.tune)  # nothing is written before the click
    except UserFacingError as error:
        st.error(str(error))
        return
    store, started = ResultStore(), False
    if not JOBS.is_running(run_id) and st.button(
            f"Build the attribution model (about {minutes} min)", key=f"{key}-{run_id}",
            help=f"Trains it on {recipe.train_size} inputs for {recipe.epochs:g} epochs, once for this model (like "
                 f"`python cli.py prepare-aml`)."):
        try:
            store, run_id, cells = aml_build.start_build(model, classifier, needs.tune, store)
            JOBS.start(store, run_id, cells, aml_build.build_cell)  # a quota refusal is a UserFacingError
        except (UserFacingError, DataError) as error:
            st.error(str(error))
            return
        started = True
    if not build_status(store, run_id, key, started) and offers_encoder_generator(classifier):
        cross_build_offer(needs.method_id, needs.tune, DEFAULT_GENERATOR, model, classifier, key=f"{key}-cross",
                          alternative=True)


def status_row(result, key: str = "run", model: str | None = None, classifier: TextClassifier | None = None) -> None:
    """The row of a method that has no heatmap yet: a Pending, a background job, or one that needs training (its
    build button needs the page's ``model`` spec and ``classifier``)."""
    if isinstance(result, MethodJob):
        job_row(result, key=f"{key}-job")
    elif isinstance(result, NeedsTraining):
        if model is None or classifier is None:
            st.info(result.message)
        else:
            build_row(result, model, classifier, key=f"{key}-build")
    else:
        pending_row(result, key=key)


def needs_training(methods: list, classifier: TextClassifier) -> dict[str, NeedsTraining]:
    """Of ``methods`` (``MethodChoice``s or "method[:preset]" specs), those that need a model trained for
    ``classifier`` first (AML without its attribution model), by method id."""
    found = {}
    for method in methods:
        try:
            explainer = (create(method.method_id, preset=method.preset, **method.overrides)
                         if isinstance(method, MethodChoice) else create_from_spec(method))
            missing = missing_training(explainer, classifier)
        except (ParamError, ModelError, UserFacingError):
            continue  # a bad choice, or another model's checkpoint: reported where the method runs
        if missing is not None:
            found[explainer.id] = missing
    return found


def offer_builds(methods: list, model: str, classifier: TextClassifier, key: str) -> list:
    """The build offer (``build_row``: progress and Stop) for each chosen method that needs a model trained first,
    as the Heatmaps page shows it; returns the methods that can run now, so pages that work over several methods
    (faithfulness, plausibility, sanity, ROAR) run those and never fail on the missing one."""
    missing = needs_training(methods, classifier)
    for method_id, needs in missing.items():
        st.markdown(f"**{REGISTRY[method_id].label}**")
        build_row(needs, model, classifier, key=f"{key}-build")
    return [m for m in methods if (m.method_id if isinstance(m, MethodChoice) else split_spec(m)[0]) not in missing]
