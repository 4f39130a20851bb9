"""Heatmap-page building blocks: the input check, the prediction, method settings, rows with provenance."""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import streamlit as st

from explainers import FAMILIES, REGISTRY, Explanation, ParamError, create
from explainers.aggregate import NORMALIZATION_LABELS, NORMALIZATIONS
from explainers.cache import cache_key, cached_only, explain_cached
from models import Encoding, InputError, TextClassifier, UserFacingError

from . import loaders
from .controls import method_controls
from .figures import probability_bars
from .heatmap import CSS, explanation_row_html, legend_html
from .state import Selection

log = logging.getLogger(__name__)

FOUNDATION_METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention")


def classifier_and_encoding(selection: Selection) -> tuple[TextClassifier, Encoding]:
    """The selected model and the tokenized input, or a clear message and a stopped page."""
    classifier = loaders.classifier(selection.model)
    try:
        encoding = classifier.encode(selection.text, selection.pair)
    except InputError as error:
        st.warning(str(error))
        st.stop()
    if encoding.truncated_tokens:
        st.warning(f"The input is longer than this model's limit of {classifier.max_length} tokens: the last "
                   f"{encoding.truncated_tokens} tokens ({encoding.truncated_words} words) were cut and are not "
                   f"explained.")
    return classifier, encoding


def prediction_panel(classifier: TextClassifier, encoding: Encoding, selection: Selection) -> int:
    """Show the class probabilities; return the target class index."""
    probabilities = classifier.predict_proba([encoding])[0]
    predicted = int(np.argmax(probabilities))
    target = predicted if selection.target is None else selection.target
    left, right = st.columns([2, 3])
    with left:
        st.markdown(f"**Prediction: {classifier.labels[predicted]}** ({probabilities[predicted]:.1%})")
        if selection.example is not None and selection.example.label is not None:
            gold = selection.example.label_name
            verdict = "correct" if selection.example.label == predicted else "wrong"
            st.caption(f"Gold label: {gold} ({verdict})")
        st.caption(f"Explaining: **{classifier.labels[target]}**" +
                   (" (the predicted class)" if selection.target is None else " (chosen)"))
    with right:
        st.plotly_chart(probability_bars(classifier.labels, probabilities, predicted), key="prediction_bars",
                        width="stretch", config={"displayModeBar": False})
    return target


@dataclass
class MethodChoice:
    method_id: str
    preset: str | None
    overrides: dict


def method_picker(default: tuple[str, ...] = FOUNDATION_METHODS, key: str = "methods") -> list[MethodChoice]:
    """Multiselect of methods (grouped by family) and, per method, its preset and parameters."""
    ids = sorted(REGISTRY, key=lambda m: (list(FAMILIES).index(REGISTRY[m].family), m))
    chosen = st.multiselect("Methods", ids, default=[m for m in default if m in REGISTRY], key=key,
                            format_func=lambda m: f"{REGISTRY[m].label} ({FAMILIES[REGISTRY[m].family].lower()})")
    choices = []
    with st.expander("Method settings (presets from the papers, every parameter)"):
        columns = st.columns(3)
        for index, method_id in enumerate(chosen):
            with columns[index % 3]:
                st.markdown(f"**{REGISTRY[method_id].label}**")
                preset, overrides = method_controls(method_id, f"{key}-{method_id}")
                choices.append(MethodChoice(method_id, preset, overrides))
    return choices


def display_options(key: str = "display") -> tuple[str, bool]:
    left, right = st.columns(2)
    normalization = left.selectbox("Normalization (display)", NORMALIZATIONS, key=f"{key}-norm",
                                   format_func=lambda n: f"{n}: {NORMALIZATION_LABELS[n]}")
    absolute = right.toggle("Absolute values (drop the sign)", key=f"{key}-abs")
    return normalization, absolute


@dataclass
class Pending:
    """A method not run yet because its estimated cost is above the auto-run budget."""

    method_id: str
    forward: int
    backward: int
    seconds: float
    approval_key: str


AUTO_RUN_SECONDS = 15.0


def compute(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding,
            target: int | None) -> dict[str, Explanation | Pending | str]:
    """Run (or fetch from the cache) every chosen method with a progress bar.

    Methods estimated above AUTO_RUN_SECONDS wait for the user's go-ahead; errors become messages.
    """
    results: dict[str, Explanation | Pending | str] = {}
    if not choices:
        return results
    approved = st.session_state.setdefault("approved_runs", set())
    bar = st.progress(0.0, text="Explaining ...")
    for done, choice in enumerate(choices):
        label = REGISTRY[choice.method_id].label
        try:
            explainer = create(choice.method_id, preset=choice.preset, **choice.overrides)
            hit = cached_only(explainer, classifier, encoding, target)
            if hit is not None:
                results[choice.method_id] = hit
                continue
            forward, backward = explainer.estimate_passes(encoding)
            seconds = classifier.estimate_seconds(forward, backward, encoding.n_tokens)
            key = cache_key(classifier, encoding, explainer, target)
            if seconds > AUTO_RUN_SECONDS and key not in approved:
                results[choice.method_id] = Pending(choice.method_id, forward, backward, seconds, key)
                continue
            bar.progress(done / len(choices), text=f"{label}: about {forward} forward and {backward} backward "
                                                   f"passes (~{seconds:.0f} s)")
            results[choice.method_id] = explain_cached(explainer, classifier, encoding, target)
        except (UserFacingError, ParamError) as error:
            results[choice.method_id] = str(error)
        except Exception as error:  # a bug in one method must not take the page down
            log.exception("method %s failed", choice.method_id)
            results[choice.method_id] = f"{label} failed unexpectedly ({type(error).__name__}: {error})."
    bar.empty()
    return results


def _pending_row(pending: Pending) -> None:
    st.info(f"Not run yet: about {pending.forward} forward and {pending.backward} backward passes, estimated "
            f"{pending.seconds:.0f} s on this machine.")
    if st.button(f"Run {REGISTRY[pending.method_id].label} (~{pending.seconds:.0f} s)", key=f"run-{pending.approval_key}"):
        st.session_state.setdefault("approved_runs", set()).add(pending.approval_key)
        st.rerun()


def cost_caption(explanation: Explanation) -> str:
    p = explanation.provenance
    cached = f" · served from the {p['cache']} cache" if p.get("cache") else ""
    return (f"{p['seconds']:.2f} s · {p['forward_passes']} forward / {p['backward_passes']} backward passes"
            f"{cached}")


def provenance_caption(explanation: Explanation) -> str:
    p = explanation.provenance
    parts = [f"target: {p['target']['label']} ({p['target']['how']})", f"baseline: {p['baseline']}"]
    if p.get("removal_operator"):
        parts.append(f"operator: {p['removal_operator']}")
    parts.append(p["sign"].split(":")[0])
    if p.get("preset"):
        parts.append(f"preset: {p['preset']}")
    if p.get("seed") is not None:
        parts.append(f"seed: {p['seed']}")
    return " · ".join(parts)


def render_rows(results: dict[str, Explanation | Pending | str], level: str, normalization: str, absolute: bool,
                human: list[int] | None = None, key: str = "rows") -> None:
    """One heatmap row per method, grouped by family, each with its cost and provenance."""
    st.html(CSS)
    for family, family_label in FAMILIES.items():
        members = [m for m in results if REGISTRY[m].family == family]
        if not members:
            continue
        st.markdown(f"#### {family_label}")
        for method_id in members:
            result = results[method_id]
            if isinstance(result, (str, Pending)):
                st.markdown(f"**{REGISTRY[method_id].label}**")
                if isinstance(result, Pending):
                    _pending_row(result)
                else:
                    st.error(result)
                continue
            st.markdown(f"**{result.method_label}** <span style='color:#777;font-size:13px'>"
                        f"{cost_caption(result)}</span>", unsafe_allow_html=True)
            st.html(explanation_row_html(result, level, normalization, absolute,
                                         human=human if level == "word" else None))
            for warning in result.warnings:
                st.warning(warning)
            with st.expander(f"Provenance: {provenance_caption(result)}"):
                st.json(result.provenance, expanded=False)
    signed_any = any(isinstance(r, Explanation) and r.signed for r in results.values()) and not absolute
    st.html(legend_html(signed_any))
