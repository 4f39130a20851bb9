"""Heatmap-page building blocks: the input check, the prediction, method settings, rows with provenance."""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st

from explainers import FAMILIES, REGISTRY, Explanation, ParamError, create
from explainers.aggregate import NORMALIZATION_LABELS, NORMALIZATIONS
from explainers.cache import cache_key, cached_only, explain_cached
from models import Encoding, InputError, TextClassifier, UserFacingError

from ui.widgets import loaders
from ui.widgets.controls import method_controls
from ui.figures.common import probability_bars
from ui.widgets.heatmap import CSS, explanation_row_html, legend_html, provenance_line
from ui.widgets.state import Selection

log = logging.getLogger(__name__)

FOUNDATION_METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention")


def page_methods() -> tuple[str, ...]:
    """Every registered method except those that need a masked LM or train something (opt-in)."""
    return tuple(m for m, cls in REGISTRY.items() if not cls.needs_mlm and not cls.trains)


def family_order(method_ids) -> list[str]:
    """Methods grouped by family (in FAMILIES order), registration order inside a family."""
    order = list(FAMILIES)
    ids = list(method_ids)
    return sorted(ids, key=lambda m: (order.index(REGISTRY[m].family) if REGISTRY[m].family in order else len(order),
                                      list(REGISTRY).index(m)))


def classifier_and_encoding(selection: Selection) -> tuple[TextClassifier, Encoding]:
    """The selected model and the tokenized input, or a clear message and a stopped page."""
    classifier = loaders.classifier(selection.model)
    try:
        encoding = classifier.encode(selection.text, selection.pair)
    except InputError as error:
        st.warning(str(error))
        st.stop()
    if encoding.n_words == 0:
        st.warning("The text has no words this model can read (only invisible or unknown characters?). Type a "
                   "sentence to explain.")
        st.stop()
    if encoding.truncated_tokens:
        st.warning(f"The input is longer than this model's limit of {classifier.max_length} tokens: the last "
                   f"{encoding.truncated_tokens} tokens ({encoding.truncated_words} words) were cut and are not "
                   f"explained.")
    return classifier, encoding




def probabilities_of(classifier: TextClassifier, encoding: Encoding) -> np.ndarray:
    """The model's class probabilities for the input (one forward pass per model and input, shared)."""
    return classifier.proba_of(encoding)


def prediction_panel(classifier: TextClassifier, encoding: Encoding, selection: Selection) -> int:
    """Show the class probabilities; return the target class index."""
    probabilities = probabilities_of(classifier, encoding)
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
    ids = family_order(REGISTRY)
    initial = st.session_state.get(f"keep:{key}", default)  # the selection survives switching pages
    chosen = st.multiselect("Methods", ids, default=[m for m in initial if m in REGISTRY], key=key,
                            format_func=lambda m: f"{REGISTRY[m].label} ({FAMILIES[REGISTRY[m].family].lower()})",
                            help="Switch methods on and off; each row below is one method.")
    st.session_state[f"keep:{key}"] = list(chosen)
    chosen = family_order(chosen)
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


def auto_run_budget() -> float:
    """Seconds a method may be estimated to take and still run without asking (EXWB_AUTORUN_SECONDS)."""
    try:
        return float(os.environ.get("EXWB_AUTORUN_SECONDS", AUTO_RUN_SECONDS))
    except ValueError:
        return AUTO_RUN_SECONDS


@dataclass
class Planned:
    choice: MethodChoice
    explainer: object
    forward: int
    backward: int
    seconds: float


_BATCH_THROUGHPUT: dict[tuple[str, str], float] = {}


def batch_throughput(classifier: TextClassifier, encoding: Encoding) -> float:
    """Padded tokens per second of a batched forward pass, measured once per model and device.

    ``classifier.tokens_per_second`` averages every forward call, and single-input calls (latency-bound) pull it
    far below what the batched perturbation methods get; the cost estimates use the larger of the two.
    """
    key = (classifier.fingerprint, str(classifier.device))
    if key not in _BATCH_THROUGHPUT:
        batch = [encoding] * max(2, min(32, 1024 // max(1, encoding.n_tokens)))
        classifier.predict_logits(batch[:2])  # warm-up
        started = time.perf_counter()
        classifier.predict_logits(batch)
        elapsed = max(time.perf_counter() - started, 1e-6)
        _BATCH_THROUGHPUT[key] = len(batch) * encoding.n_tokens / elapsed
    return max(_BATCH_THROUGHPUT[key], classifier.tokens_per_second)


def estimate(explainer, classifier: TextClassifier, encoding: Encoding) -> tuple[int, int, float]:
    """Expected (forward, backward, seconds) of one method on this input."""
    forward, backward = explainer.estimate_passes(encoding)
    return forward, backward, (forward + 2 * backward) * encoding.n_tokens / batch_throughput(classifier, encoding)


def compute(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding,
            target: int | None, auto_run_seconds: float | None = None) -> dict[str, Explanation | Pending | str]:
    """Run (or fetch from the cache) every chosen method with a progress bar; results in the order chosen.

    Methods estimated above ``auto_run_seconds`` (or flagged ``expensive``) wait for the user's go-ahead (their
    row shows the estimate and a Run button); ensembles run last so their members come from the cache; errors
    become messages.
    """
    results: dict[str, Explanation | Pending | str] = {}
    if not choices:
        return results
    auto_run_seconds = auto_run_budget() if auto_run_seconds is None else auto_run_seconds
    approved = st.session_state.setdefault("approved_runs", set())
    plan: list[Planned] = []
    for choice in choices:
        try:
            explainer = create(choice.method_id, preset=choice.preset, **choice.overrides)
            hit = cached_only(explainer, classifier, encoding, target)
            if hit is not None:
                results[choice.method_id] = hit
                continue
            forward, backward, seconds = estimate(explainer, classifier, encoding)
            key = cache_key(classifier, encoding, explainer, target)
            if (seconds > auto_run_seconds or explainer.expensive) and key not in approved:
                results[choice.method_id] = Pending(choice.method_id, forward, backward, seconds, key)
                continue
            plan.append(Planned(choice, explainer, forward, backward, seconds))
        except (UserFacingError, ParamError) as error:
            results[choice.method_id] = str(error)
        except Exception as error:  # never a traceback on the page
            log.exception("method %s could not be prepared", choice.method_id)
            results[choice.method_id] = f"{REGISTRY[choice.method_id].label} could not start " \
                                        f"({type(error).__name__}: {error})."
    plan.sort(key=lambda item: REGISTRY[item.choice.method_id].family == "ensemble")
    if plan:
        total = sum(item.seconds for item in plan) or 1.0
        done = 0.0
        bar = st.progress(0.0, text=f"Explaining with {len(plan)} method(s), about {total:.0f} s ...")
        for index, item in enumerate(plan):
            label = REGISTRY[item.choice.method_id].label
            bar.progress(min(1.0, done / total), text=f"{index + 1}/{len(plan)} {label}: about {item.forward} forward "
                                                      f"and {item.backward} backward passes (~{item.seconds:.1f} s)")
            try:
                results[item.choice.method_id] = explain_cached(item.explainer, classifier, encoding, target)
            except (UserFacingError, ParamError) as error:
                results[item.choice.method_id] = str(error)
            except Exception as error:  # a bug in one method must not take the page down
                log.exception("method %s failed", item.choice.method_id)
                results[item.choice.method_id] = f"{label} failed unexpectedly ({type(error).__name__}: {error})."
            done += item.seconds
        bar.empty()
    return {c.method_id: results[c.method_id] for c in choices if c.method_id in results}


def cost_table(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding,
               target: int | None) -> list[dict]:
    """Estimated cost of every chosen method before it runs (and whether it is cached already)."""
    rows = []
    for choice in choices:
        try:
            explainer = create(choice.method_id, preset=choice.preset, **choice.overrides)
        except ParamError as error:
            rows.append({"method": REGISTRY[choice.method_id].label, "status": str(error)})
            continue
        try:
            forward, backward, seconds = estimate(explainer, classifier, encoding)
        except Exception as error:  # the method will report it in its row
            rows.append({"method": REGISTRY[choice.method_id].label, "status": f"cannot estimate: {error}"})
            continue
        cached = cached_only(explainer, classifier, encoding, target) is not None
        rows.append({"method": REGISTRY[choice.method_id].label, "family": FAMILIES[REGISTRY[choice.method_id].family],
                     "forward passes": forward, "backward passes": backward, "estimated seconds": round(seconds, 2),
                     "status": "cached" if cached else "to compute"})
    return rows


@dataclass
class CostPreview:
    """The cost table shown before the methods run, and the slot it sits in (replaced once they have run)."""
    slot: object
    rows: list[dict]
    key: str


def cost_preview(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding, target: int | None,
                 key: str = "cost") -> CostPreview:
    rows = cost_table(choices, classifier, encoding, target)
    to_compute = [r for r in rows if r.get("status") == "to compute"]
    seconds = sum(r["estimated seconds"] for r in to_compute)
    title = (f"Estimated cost: {len(to_compute)} method(s) to compute, about {seconds:.1f} s"
             if to_compute else "Estimated cost: everything is cached")
    slot = st.empty()
    with slot.container():
        with st.expander(title):
            _cost_caption(classifier, encoding)
            st.dataframe(rows, hide_index=True, key=f"{key}-table", width="stretch")
    return CostPreview(slot, rows, key)


def cost_settled(preview: CostPreview, choices: list[MethodChoice], results: dict,
                 classifier: TextClassifier, encoding: Encoding) -> None:
    """Replace the estimate with what this run cost: measured seconds next to the estimate, per method."""
    rows, computed, measured, estimated, waiting = [], 0, 0.0, 0.0, 0
    for choice, row in zip(choices, preview.rows):
        result = results.get(choice.method_id)
        row = dict(row)
        if isinstance(result, Explanation):
            if row.get("status") == "to compute" and not result.provenance.get("cache"):
                row["status"] = "computed"
                row["measured seconds"] = round(result.provenance["seconds"], 2)
                computed += 1
                measured += result.provenance["seconds"]
                estimated += row["estimated seconds"]
        elif isinstance(result, Pending):
            row["status"] = "waiting for a Run click"
            waiting += 1
        elif isinstance(result, str):
            row["status"] = result
        rows.append(row)
    if not computed:
        return  # nothing ran: the estimate stays as it was
    title = f"Cost of this run: {computed} method(s) computed in {measured:.1f} s (estimated {estimated:.1f} s)"
    if waiting:
        title += f"; {waiting} waiting for a Run click"
    with preview.slot.container():
        with st.expander(title):
            _cost_caption(classifier, encoding)
            st.dataframe(rows, hide_index=True, key=f"{preview.key}-table-run", width="stretch")


def _cost_caption(classifier: TextClassifier, encoding: Encoding) -> None:
    st.caption(f"Estimates from this machine's measured speed ({batch_throughput(classifier, encoding):,.0f} "
               f"tokens/s in batches); methods above {auto_run_budget():g} s wait for a Run button.")


def _pending_row(pending: Pending) -> None:
    st.info(f"Not run yet: about {pending.forward} forward and {pending.backward} backward passes, estimated "
            f"{pending.seconds:.0f} s on this machine.")
    if st.button(f"Run {REGISTRY[pending.method_id].label} (~{pending.seconds:.0f} s)",
                 key=f"run-{pending.approval_key}"):
        st.session_state.setdefault("approved_runs", set()).add(pending.approval_key)
        st.rerun()


def cost_caption(explanation: Explanation) -> str:
    p = explanation.provenance
    cached = f" · served from the {p['cache']} cache" if p.get("cache") else ""
    return (f"{p['seconds']:.2f} s · {p['forward_passes']} forward / {p['backward_passes']} backward passes"
            f"{cached}")


def provenance_caption(explanation: Explanation, normalization: str | None = None) -> str:
    if normalization is not None:
        return provenance_line(explanation, normalization)
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
        members = [m for m in family_order(results) if REGISTRY[m].family == family]
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
            with st.expander(f"Provenance: {provenance_caption(result, normalization)}"):
                st.json(result.provenance, expanded=False)
    signed_any = any(isinstance(r, Explanation) and r.signed for r in results.values()) and not absolute
    st.html(legend_html(signed_any))
