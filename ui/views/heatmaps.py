"""Heatmap-page building blocks: the input check, the prediction, method settings, rows with provenance."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explainers import FAMILIES, REGISTRY, Explanation, plan
from explainers.aggregate import NORMALIZATION_LABELS, NORMALIZATIONS
from explainers.choices import MethodChoice, Prepared, prepare
from explainers.method_jobs import MethodJob, Planned
from models import Encoding, InputError, TextClassifier
from models.documents import read_input
from models.metering import autorun_budget
from models.precision import dtype_name, fast_dtype, unavailable_note
from models.windows import AGGREGATE_HELP, document_of
from ui.figures import document_view
from ui.figures.common import probability_bars
from ui.figures.heatmap_matrix import EXPORT_FORMATS, export_config, heatmap_matrix
from ui.figures.row_header import row_header, row_title
from ui.widgets import loaders, method_run, state
from ui.widgets.controls import method_controls
from ui.widgets.heatmap import CSS, explanation_row_html, legend_html, provenance_line
from ui.widgets.method_card import method_card
from ui.widgets.state import Selection

FOUNDATION_METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention")


def page_methods() -> tuple[str, ...]:
    """The methods shown when the page opens: every registered method except those that need a masked LM, train
    something, or take tens of seconds per input (MaRC): those are opt-in in the picker, and then wait for a click."""
    return tuple(m for m, cls in REGISTRY.items() if not (cls.needs_mlm or cls.trains or cls.expensive))


def family_order(method_ids) -> list[str]:
    """Methods grouped by family (in FAMILIES order), registration order inside a family."""
    order = list(FAMILIES)
    ids = list(method_ids)
    return sorted(ids, key=lambda m: (order.index(REGISTRY[m].family) if REGISTRY[m].family in order else len(order),
                                      list(REGISTRY).index(m)))


def classifier_and_encoding(selection: Selection, documents: bool = True,
                            units: bool = False) -> tuple[TextClassifier, Encoding]:
    """The selected model and the tokenized input, or a clear message and a stopped page. ``documents``: a text
    longer than the model's window is read whole in overlapping windows (``models/documents.py``);
    False (pages whose checks need one pass over the whole input) keeps the model's own cut, reported. ``units``:
    a "Players" choice, words or sentences (removal methods and curves then remove whole sentences)."""
    classifier = loaders.classifier(selection.model)
    options = {"allow_long": st.session_state.get("allow-long-documents", False)}
    if units and selection.pair is None:
        options["granularity"] = st.radio(
            "Players", ("word", "sentence"), horizontal=True, key="granularity",
            help="What removal methods and faithfulness curves remove: single words, or whole sentences (rule in "
                 "docs/long-documents.md); gradient and attention scores are summed per sentence.")
    try:
        encoding = read_input(classifier, selection.text, selection.pair, options) if documents \
            else classifier.encode(selection.text, selection.pair)
    except InputError as error:
        st.warning(str(error))
        if "opt-in" in str(error):  # a very long text: the reader may accept the cost shown (Stop stays available)
            st.checkbox("Read this very long text whole anyway (Stop ends any method)", key="allow-long-documents")
        st.stop()
    if encoding.n_words == 0:
        st.warning("The text has no words this model can read (only invisible or unknown characters?). Type a "
                   "sentence to explain.")
        st.stop()
    if encoding.truncated_tokens:
        st.warning(f"The input is longer than this model's limit of {classifier.max_length} tokens: the last "
                   f"{encoding.truncated_tokens} tokens ({encoding.truncated_words} words) were cut and are not "
                   f"explained.")
    document = document_of(encoding)  # the input itself or the base of its sentence / span units
    if document is not None:
        st.caption(f"A long document: {document.n_words} words read whole in {len(document.windows)} overlapping "
                   f"windows of {document.window_size} tokens; the prediction is the {AGGREGATE_HELP['mean']}. "
                   f"Removal methods re-run only the windows a removal touches; gradient methods explain each "
                   f"window and blend the overlaps.")
    return classifier, encoding




FAST_MODE_LABEL = "Fast mode (reduced precision)"


def fast_mode(selection: Selection, classifier: TextClassifier, encoding: Encoding,
              key: str = "fast-mode") -> TextClassifier:
    """The classifier this page's explanations run on: ``classifier`` (full precision, the default) or, opt-in, its
    fast view (bfloat16 autocast on a CPU with native bf16 kernels, bf16 / fp16 on a GPU). The prediction
    shown above the rows and every metric page stay in full precision; each fast row's provenance records how far
    this input's class probabilities moved. Where the device has no fast precision the toggle is off and says why."""
    dtype = fast_dtype(classifier.device)
    if dtype is None:
        st.toggle(FAST_MODE_LABEL, value=False, disabled=True, key=key, help=unavailable_note(classifier.device))
        return classifier
    short = dtype_name(dtype)
    if not st.toggle(FAST_MODE_LABEL, key=key,
                     help=f"Explanations under {short} autocast, with small deviations. Where the hardware has native "
                          f"{short} kernels the sampling methods (LIME, the SHAP family) take about half the time and "
                          f"the whole page about three quarters (the gradient methods gain nothing on a CPU; "
                          f"docs/benchmarks.md). Cached separately from full precision. Off by default; metrics never "
                          f"use it."):
        return classifier
    st.caption(f"Fast mode: the explanations below run in {short} autocast; the prediction above is full precision. "
               f"Each row's provenance gives the measured max |dp| of this input's class probabilities.")
    fast = loaders.fast_classifier(selection.model)
    full_class, fast_class = (int(np.argmax(c.logits_of(encoding))) for c in (classifier, fast))
    if selection.target is None and fast_class != full_class:  # a near tie that reduced precision tips over
        st.warning(f"In fast mode the model predicts **{classifier.labels[fast_class]}** for this input (full "
                   f"precision: {classifier.labels[full_class]}): the rows below explain "
                   f"{classifier.labels[fast_class]}. Turn fast mode off to explain the full-precision prediction.")
    return fast


def explained_class(explaining: TextClassifier, encoding: Encoding, selection: Selection, target: int) -> int:
    """The class the rows explain: the chosen one, else ``explaining``'s prediction (in fast mode a near tie can
    make it differ from the full-precision prediction shown above)."""
    return target if selection.target is not None else int(np.argmax(explaining.logits_of(encoding)))


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
        contrast = selection.contrast
        if contrast is not None and contrast < len(classifier.labels):
            st.caption(f"Rather than: **{classifier.labels[contrast]}**: each method explains its score of "
                       f"{classifier.labels[target]} minus that of {classifier.labels[contrast]}"
                       + (" (the same class: every contrastive method will refuse it)" if contrast == target else ""))
    with right:
        st.plotly_chart(prediction_chart(tuple(classifier.labels), tuple(map(float, probabilities)), predicted),
                        key="prediction_bars", width="stretch", config={"displayModeBar": False})
    return target


@st.cache_resource(max_entries=64, show_spinner=False)
def prediction_chart(labels: tuple[str, ...], probabilities: tuple[float, ...], predicted: int):
    """The probability bars, built once per prediction: a page rerun reuses the figure (plotly figures are slow to
    build; st.plotly_chart does not change them)."""
    return probability_bars(list(labels), np.asarray(probabilities), predicted)


SETTINGS_LABEL = "Method settings (presets from the papers, every parameter)"


def method_picker(default: tuple[str, ...] = FOUNDATION_METHODS, key: str = "methods") -> list[MethodChoice]:
    """Multiselect of methods (grouped by family) and, per method, its preset and parameters.

    The settings panel draws its widgets only while it is open, and then those of one method at a time: a page
    rerun draws no settings widget (each one costs Streamlit a pass over the whole session state). Each method's
    settings are kept under ``keep:<key>:settings`` while its widgets are not drawn."""
    ids = family_order(REGISTRY)
    initial = st.session_state.get(f"keep:{key}", default)  # the selection survives switching pages
    chosen = st.multiselect("Methods", ids, default=[m for m in initial if m in REGISTRY], key=key,
                            format_func=lambda m: f"{REGISTRY[m].label} ({FAMILIES[REGISTRY[m].family].lower()})",
                            help="Switch methods on and off; each row below is one method.")
    st.session_state[f"keep:{key}"] = list(chosen)
    chosen = family_order(chosen)
    kept = st.session_state.setdefault(f"keep:{key}:settings", {})  # method id -> (preset, overrides)
    panel = st.expander(SETTINGS_LABEL, key=f"{key}-settings", on_change="rerun")
    if panel.open and chosen:
        with panel:
            # option labels stay fixed (a label that changed between runs would lose the selection)
            method_id = st.selectbox("Settings of", chosen, key=f"{key}-settings-of",
                                     format_func=lambda m: REGISTRY[m].label,
                                     help="One method's settings at a time; the others keep theirs (listed under "
                                          "the methods when changed).")
            start: tuple[str | None, dict] = kept.get(method_id) or (None, {})
            preset, overrides = method_controls(method_id, f"{key}-{method_id}", *start)
            kept[method_id] = (preset, overrides) if preset is not None or overrides else None
    changed = [settings_text(m, *kept[m]) for m in chosen if kept.get(m)]
    if changed:
        st.caption("Changed settings: " + "; ".join(changed))
    return with_contrast([MethodChoice(m, *(kept.get(m) or (None, {}))) for m in chosen])


def with_contrast(choices: list[MethodChoice]) -> list[MethodChoice]:
    """The choices with the sidebar's contrast class, where it has one; a method that refuses a contrast
    says so in its row."""
    selection = state.current()
    contrast = getattr(selection, "contrast", None)
    if contrast is None:
        return choices
    return [MethodChoice(c.method_id, c.preset, {**c.overrides, "contrast": contrast}) for c in choices]


def settings_text(method_id: str, preset: str | None, overrides: dict) -> str:
    """'LIME: preset `paper-000`, `n_samples=500`' (values as code spans: user text is not read as markdown)."""
    def code(text) -> str:
        return "`" + str(text).replace("`", "'") + "`"

    parts = ([f"preset {code(preset)}"] if preset else []) + [code(f"{n}={v}") for n, v in overrides.items()]
    return f"{REGISTRY[method_id].label}: {', '.join(parts)}"


def display_options(key: str = "display") -> tuple[str, bool]:
    left, right = st.columns(2)
    normalization = left.selectbox("Normalization (display)", NORMALIZATIONS, key=f"{key}-norm",
                                   format_func=lambda n: f"{n}: {NORMALIZATION_LABELS[n]}")
    absolute = right.toggle("Absolute values (drop the sign)", key=f"{key}-abs")
    return normalization, absolute


def compute(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding,
            target: int | None, auto_run_seconds: float | None = None,
            background: bool = False, rows: Rows | None = None,
            prepared: dict[str, Prepared] | None = None) -> dict[str, plan.Result]:
    """Every chosen method's result in the order chosen: cached, computed now (with a progress bar), waiting for a
    Run click, or (``background``: a page that polls, like Heatmaps) running in the background with progress and
    Stop. The decisions are ``explainers.plan``'s; errors become messages. With ``rows`` (laid out already), the
    cached heatmaps are drawn at once and each computed one as soon as its method finishes; the bar sits above them.
    ``prepared``: the cost preview's (``CostPreview.prepared``): each method created, keyed and probed once a run."""
    if not choices:
        return {}
    approved = st.session_state.setdefault("approved_runs", set())
    the_plan = plan.make_plan(choices, classifier, encoding, target, approved, auto_run_seconds, background,
                              prepared=prepared)
    plan.start_background(the_plan, classifier, encoding, target)
    if rows is not None:
        for method_id, result in the_plan.results.items():
            if isinstance(result, Explanation):
                rows.show(method_id, result)
    if the_plan.run_now:
        items = the_plan.run_now
        total = sum(item.seconds for item in items) or 1.0
        bar = (rows.progress if rows is not None else st).progress(
            0.0, text=f"Explaining with {len(items)} method(s), about {total:.0f} s ...")

        def show(index: int, item: Planned) -> None:
            if rows is not None and index > 0:  # the method before this one has finished
                done_id = items[index - 1].method_id
                rows.show(done_id, the_plan.results[done_id])
            done = sum(i.seconds for i in items[:index])
            bar.progress(min(1.0, done / total), text=f"{index + 1}/{len(items)} {item.label}: about {item.forward} "
                                                      f"forward and {item.backward} backward passes "
                                                      f"(~{item.seconds:.1f} s)")

        plan.run_now(the_plan, classifier, encoding, target, before_each=show)
        bar.empty()
        if rows is not None:
            rows.show(items[-1].method_id, the_plan.results[items[-1].method_id])
    return the_plan.ordered(choices)


@dataclass
class CostPreview:
    """The cost table shown before the methods run, and the slot it sits in (replaced once they have run)."""
    slot: DeltaGenerator
    rows: list[dict]
    key: str
    prepared: dict[str, Prepared]  # each method created, keyed and probed once: ``compute`` plans from it


def cost_preview(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding, target: int | None,
                 key: str = "cost") -> CostPreview:
    prepared = prepare(choices, classifier, encoding, target)
    rows = plan.cost_rows(choices, classifier, encoding, target, prepared)
    to_compute = [r for r in rows if r.get("status") == "to compute"]
    seconds = sum(r["estimated seconds"] for r in to_compute)
    title = (f"Estimated cost: {len(to_compute)} method(s) to compute, about {seconds:.1f} s"
             if to_compute else "Estimated cost: everything is cached")
    slot = st.empty()
    with slot.container():
        with st.expander(title):
            _cost_caption(classifier, encoding)
            st.dataframe(rows, hide_index=True, key=f"{key}-table", width="stretch")
    return CostPreview(slot, rows, key, prepared)


def cost_settled(preview: CostPreview, choices: list[MethodChoice], results: dict,
                 classifier: TextClassifier, encoding: Encoding) -> None:
    """Replace the estimate with what this run cost: measured seconds next to the estimate, per method."""
    settled = plan.settled_rows(preview.rows, choices, results)
    if not settled.computed:
        return  # nothing ran: the estimate stays as it was
    title = (f"Cost of this run: {settled.computed} method(s) computed in {settled.measured:.1f} s (estimated "
             f"{settled.estimated:.1f} s)")
    if settled.waiting:
        title += f"; {settled.waiting} waiting for a Run click"
    if settled.running:
        title += f"; {settled.running} running"
    with preview.slot.container():
        with st.expander(title):
            _cost_caption(classifier, encoding)
            st.dataframe(settled.rows, hide_index=True, key=f"{preview.key}-table-run", width="stretch")


def _cost_caption(classifier: TextClassifier, encoding: Encoding) -> None:
    speed = classifier.throughput.tokens_per_second(encoding.n_tokens)
    source = "this machine's measured speed" if classifier.throughput.measured else "a default speed (not measured yet)"
    st.caption(f"Estimates from {source} ({speed:,.0f} tokens/s at this input's length, models/metering.py); "
               f"methods above {autorun_budget():g} s at this model's nominal speed wait for a Run button (the same "
               f"methods on any load: the same link shows the same rows).")


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


class Rows:
    """The heatmap rows of a page's methods, laid out before any is computed (family headings, one slot per
    method), so each row is drawn as soon as its method finishes (``show``), not all at the end; ``finish`` draws
    the colour legend of the scales in use and the rows still empty (cached, waiting, running, failed). ``model``
    (the spec) and ``classifier`` let a method that needs training (AML) offer to build what it needs."""

    def __init__(self, method_ids, level: str, normalization: str, absolute: bool, human: list[int] | None = None,
                 model: str | None = None, classifier: TextClassifier | None = None):
        self.level, self.normalization, self.absolute, self.human = level, normalization, absolute, human
        self.model, self.classifier = model, classifier
        self.progress = st.empty()  # the bar of the methods computed in this run
        st.html(CSS)
        self.legend = st.empty()
        self.slots: dict[str, DeltaGenerator] = {}
        self.drawn: set[str] = set()
        ordered = family_order(method_ids)
        for family, family_label in FAMILIES.items():
            members = [m for m in ordered if REGISTRY[m].family == family]
            if members:
                st.markdown(f"#### {family_label}")
                self.slots.update((m, st.empty()) for m in members)

    def show(self, method_id: str, result) -> None:
        """Draw one method's row (once: a later call for a drawn row does nothing)."""
        if method_id in self.drawn or method_id not in self.slots:
            return
        self.drawn.add(method_id)
        with self.slots[method_id].container():
            partial = result.partial if isinstance(result, MethodJob) else None
            if isinstance(result, Explanation) or partial is not None:
                explanation_row(partial or result, self.level, self.normalization, self.absolute, self.human)
            else:
                st.markdown(f"**{REGISTRY[method_id].label}**")
            if isinstance(result, str):
                st.error(result)
            elif not isinstance(result, Explanation):
                method_run.status_row(result, model=self.model, classifier=self.classifier)

    def finish(self, results: dict) -> None:
        signs = [r.signed and not self.absolute and self.normalization != "abs-sum" for r in results.values()
                 if isinstance(r, Explanation)]
        self.legend.html(legend_html(signed=any(signs), unsigned=not all(signs)))
        for method_id, result in results.items():
            self.show(method_id, result)


def render_rows(results: dict[str, plan.Result], level: str, normalization: str,
                absolute: bool, human: list[int] | None = None, key: str = "rows", model: str | None = None,
                classifier: TextClassifier | None = None) -> None:
    """One heatmap row per method, grouped by family, each with its cost and provenance; the colour legend of
    the scales in use above the rows (``Rows`` at once, for results computed already)."""
    Rows(list(results), level, normalization, absolute, human, model, classifier).finish(results)


def explanation_row(explanation: Explanation, level: str, normalization: str, absolute: bool,
                    human: list[int] | None) -> None:
    st.markdown(row_header(row_title(explanation), cost_caption(explanation)), unsafe_allow_html=True)
    if document_view.is_long(explanation.words):  # a long document: strip, sentences folded
        st.html(document_view.document_html(explanation.words, explanation.scores("word", normalization, absolute),
                                            explanation.signed and not absolute and normalization != "abs-sum",
                                            human=human))
    else:
        st.html(explanation_row_html(explanation, level, normalization, absolute,
                                     human=human if level == "word" else None))
    for warning in explanation.warnings:
        st.warning(warning)
    provenance, about = st.columns([3, 1])
    with provenance.expander(f"Provenance: {provenance_caption(explanation, normalization)}"):
        st.json(explanation.provenance, expanded=False)
    with about:
        method_card(explanation.method_id, popover=True, label="How it works, how it fails")


@st.fragment  # opening the panel or changing the export format reruns this view alone, not the page
def matrix_view(explanations: list[Explanation], level: str, absolute: bool) -> None:
    """Every finished method as one slide-sized matrix (methods x words, one colour scale), PNG / SVG export."""
    if len(explanations) < 2:
        return
    panel = st.expander("Compact matrix view (for a slide)", key="matrix-open", on_change="rerun")
    if not panel.open:
        return  # the figure is built only when the panel is open (plotly figures are slow to build)
    with panel:
        image_format = st.radio("Export format", EXPORT_FORMATS, horizontal=True, key="matrix-format")
        try:
            figure = heatmap_matrix(explanations, level, absolute)
        except ValueError as error:
            st.info(str(error))
            return
        st.plotly_chart(figure, config=export_config(image_format), key="matrix-chart")
