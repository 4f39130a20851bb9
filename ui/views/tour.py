"""Guided tour for a class: prediction, one method, compare, a sanity check, faithfulness. Each step asks a question
before it reveals the answer; the teacher can start at any step (the step picker, or ``?step=`` in a shared link).

Layout only: the numbers come from the same computations as the research pages (``heatmaps.compute`` for
explanations, ``evaluation.sanity`` for the head randomization, ``evaluation.faithfulness`` for the removal metrics).
A text longer than the model's window is read whole, in windows: every step explains the whole document
and draws it as the Heatmaps page does (a strip over every word, sentences folded); a method over the auto-run
budget shows its cost and a Run button.
"""
from __future__ import annotations

import html

import numpy as np
import streamlit as st

from evaluation.faithfulness.one_input import evaluate_input
from evaluation.sanity.head_check import PAPER_000_SEEDS, run_head_check
from explainers import REGISTRY, Explanation
from explainers.choices import MethodChoice
from explainers.plan import Pending
from models import Encoding, TextClassifier, UserFacingError
from ui.figures.heatmap_matrix import export_config, heatmap_matrix
from ui.views import heatmaps
from ui.widgets import document_view, method_run
from ui.widgets.heatmap import CSS, explanation_row_html, legend_html
from ui.widgets.method_card import method_card
from ui.widgets.state import Selection

STEPS = {"prediction": "1. Prediction", "method": "2. One method", "compare": "3. Compare methods",
         "sanity": "4. Sanity check", "faithfulness": "5. Faithfulness"}
QUESTIONS = {
    "prediction": "Read the input. Which class will the model predict?",
    "method": "Which word will matter most for the prediction?",
    "compare": "Will the other methods put the same word first?",
    "sanity": "We re-initialize the model's last layer at random (three seeds): the model now knows nothing. What "
              "should a trustworthy explanation do?",
    "faithfulness": "Remove the 20 % of the words this method ranks highest. By how many points will the model's "
                    "confidence in its class drop?",
}
TOUR_METHODS = tuple(m for m in ("leave_one_out", "saliency", "input_x_gradient", "integrated_gradients", "attention",
                                 "occlusion", "lime") if m in REGISTRY)  # a few seconds at most on a CPU
COMPARED = tuple(m for m in ("leave_one_out", "saliency", "input_x_gradient", "attention") if m in REGISTRY)
FAITHFULNESS_METRICS = ["comprehensiveness-004", "comprehensiveness-eraser", "sufficiency-eraser"]
SANITY_ANSWERS = ("stay the same", "change")


def _valid(key: str, options) -> None:
    """Drop a value a link set that is no option (a mistyped ?step=), so the widget starts from its default."""
    if key in st.session_state and st.session_state[key] not in options:
        st.warning(f"The link asks for '{st.session_state[key]}', which the tour does not have; starting from the "
                   f"first choice.")
        del st.session_state[key]


def _go_to(step: str) -> None:
    st.session_state["tour-step"] = step


def header() -> tuple[str, str]:
    """The step picker, the method the tour follows and the teacher's switch; returns (step, method)."""
    st.caption("A walk through one prediction for a class. Each step asks a question first: answer it, then reveal. "
               "Pick any step to start there; the sidebar's link shares the step.")
    _valid("tour-step", STEPS)
    _valid("tour-method", TOUR_METHODS)
    step = st.radio("Step", list(STEPS), key="tour-step", horizontal=True, format_func=STEPS.get)
    left, right = st.columns([2, 1])
    method = left.selectbox("The method the tour follows", TOUR_METHODS, key="tour-method",
                            format_func=lambda m: REGISTRY[m].label)
    right.toggle("Show every answer (teacher)", key="tour-teacher")
    return step, method


def _revealed(step: str, encoding: Encoding, method: str) -> bool:
    """Whether this step's answer is shown: after a Reveal click (for this input and method) or in teacher mode."""
    shown = st.session_state.setdefault("tour-revealed", set())
    mark = (step, encoding.key, method)
    if st.session_state.get("tour-teacher") or mark in shown:
        return True
    if st.button("Reveal the answer", key=f"tour-reveal-{step}", type="primary", icon=":material/visibility:"):
        shown.add(mark)
        return True
    return False


def _next(step: str) -> None:
    order = list(STEPS)
    if order.index(step) + 1 < len(order):
        following = order[order.index(step) + 1]
        st.button(f"Next: {STEPS[following]}", key=f"tour-next-{step}", on_click=_go_to, args=(following,))


def _explanations(methods, classifier: TextClassifier, encoding: Encoding, target: int | None) -> dict[str, Explanation]:
    """The methods' explanations through the Heatmaps page's planner and cache; messages for any that failed."""
    results = heatmaps.compute([MethodChoice(m, None, {}) for m in methods], classifier, encoding, target)
    for method, result in results.items():
        if isinstance(result, str):
            st.error(f"{REGISTRY[method].label}: {result}")
        elif isinstance(result, Pending):  # above the auto-run budget (a long document): its cost and a Run button
            st.markdown(f"**{REGISTRY[method].label}**")
            method_run.pending_row(result, key="tour-run")
        elif not isinstance(result, Explanation):
            st.info(f"{REGISTRY[method].label} waits for a run on the Heatmaps page.")
    return {m: r for m, r in results.items() if isinstance(r, Explanation)}


def row_html(explanation: Explanation, level: str) -> str:
    """One explanation's heatmap: a row of words, or for a long document the whole document as the
    Heatmaps page draws it (a strip over every word, the sentences folded, the strongest ones open)."""
    if document_view.is_long(explanation.words):
        return document_view.document_html(explanation.words, explanation.word_scores, explanation.signed)
    return explanation_row_html(explanation, level)


def _words(encoding: Encoding) -> list[str]:
    return [f"{w} (word {i + 1})" if list(encoding.words).count(w) > 1 else w for i, w in enumerate(encoding.words)]


def step_prediction(classifier: TextClassifier, encoding: Encoding, selection: Selection, method: str) -> None:
    guess = st.radio("Your answer", classifier.labels, key="tour-guess-prediction", index=None, horizontal=True)
    if _revealed("prediction", encoding, method):
        probabilities = heatmaps.probabilities_of(classifier, encoding)
        predicted = int(np.argmax(probabilities))
        heatmaps.prediction_panel(classifier, encoding, selection)
        if guess is not None:
            verdict = "right" if guess == classifier.labels[predicted] else "not what the model says"
            st.markdown(f"You said **{guess}**: {verdict}.")
        st.caption("The explanations on the next steps explain this class (or the one chosen in the sidebar).")


def step_method(classifier: TextClassifier, encoding: Encoding, selection: Selection, method: str) -> None:
    words = _words(encoding)
    guess = st.selectbox("Your answer", range(len(words)), key="tour-guess-word", index=None,
                         format_func=lambda i: words[i], placeholder="Pick a word")
    if _revealed("method", encoding, method):
        explanation = _explanations([method], classifier, encoding, selection.target).get(method)
        if explanation is None:
            return
        top = int(explanation.ranking()[0])
        st.html(CSS + legend_html(signed=explanation.signed, unsigned=not explanation.signed)
                + row_html(explanation, selection.level))
        st.markdown(f"**{explanation.method_label}** ranks **{words[top]}** first.")
        if guess is not None:
            st.markdown("Your word was the top word." if guess == top else
                        f"You picked **{words[guess]}**: the method ranks it {list(explanation.ranking()).index(guess) + 1} "
                        f"of {len(words)}.")
        method_card(method)


def step_compare(classifier: TextClassifier, encoding: Encoding, selection: Selection, method: str) -> None:
    guess = st.radio("Your answer", ("yes", "no"), key="tour-guess-compare", index=None, horizontal=True)
    if _revealed("compare", encoding, method):
        methods = [method] + [m for m in COMPARED if m != method]
        explanations = _explanations(methods, classifier, encoding, selection.target)
        if not explanations:
            return
        rows = list(explanations.values())
        if document_view.is_long(encoding.words):  # a document: each method over the whole document, one below another
            for row in rows:
                st.html(f"<b>{html.escape(row.method_label)}</b>" + CSS + row_html(row, selection.level))
        else:
            st.plotly_chart(heatmap_matrix(rows, selection.level), key="tour-matrix", config=export_config("png"))
        words = _words(encoding)
        tops = {e.method_label: words[int(e.ranking()[0])] for e in rows}
        agree = sum(top == tops[rows[0].method_label] for top in tops.values())
        st.markdown(" · ".join(f"{label}: **{top}**" for label, top in tops.items()))
        st.markdown(f"{agree} of {len(tops)} methods put **{tops[rows[0].method_label]}** first."
                    + ("" if guess is None else f" You said {guess}."))
        st.caption("Methods disagree because they ask different questions (a gradient: where is the model sensitive? "
                   "leave-one-out: what happens without the word?). Agreement is not faithfulness (paper 001 "
                   "section 2.1): the next steps test the method against the model itself.")


def step_sanity(classifier: TextClassifier, encoding: Encoding, selection: Selection, method: str) -> None:
    guess = st.radio("Your answer", SANITY_ANSWERS, key="tour-guess-sanity", index=None, horizontal=True)
    if _revealed("sanity", encoding, method):
        target = selection.target
        with st.spinner("Randomizing the head and explaining again ..."):
            try:
                result = run_head_check(classifier, encoding, [method], seeds=PAPER_000_SEEDS, target=target)
            except UserFacingError as error:
                st.error(str(error))
                return
        for where, message in result.errors.items():
            st.error(f"{where}: {message}")
        if method not in result.original:
            return
        summary = result.summary().iloc[0]
        signed = result.signed[method]
        body = (CSS + legend_html(signed=signed, unsigned=not signed)
                + "<div style='font-size:12px;color:#666'>trained model</div>"
                + row_html(result.original[method], selection.level))
        for seed in result.seeds:
            if method in result.randomized.get(seed, {}):
                body += (f"<div style='font-size:12px;color:#666'>randomized head, seed {seed}</div>"
                         + row_html(result.randomized[seed][method], selection.level))
        st.html(body)
        changed = summary["sign_change_mean"]
        st.markdown(f"Rank correlation with the trained model's explanation: **{summary['spearman_mean']:+.2f}** "
                    f"(0 = unrelated)" + ("" if not np.isfinite(changed) else
                                          f"; words changing sign: **{changed:.0%}**") + ".")
        st.markdown("The answer: it should **change**. An explanation that stays the same explains the input, not "
                    "the model." + ("" if guess is None else f" You said: {guess}."))
        method_card("sanity-checks")


def step_faithfulness(classifier: TextClassifier, encoding: Encoding, selection: Selection, method: str) -> None:
    guess = st.slider("Your answer (percentage points)", 0, 100, key="tour-guess-drop")
    if _revealed("faithfulness", encoding, method):
        explanation = _explanations([method], classifier, encoding, selection.target).get(method)
        if explanation is None:
            return
        options = {} if selection.target is None else {"target": selection.target}
        with st.spinner("Removing words and asking the model again ..."):
            report = evaluate_input(classifier, encoding, {explanation.method_label: explanation}, FAITHFULNESS_METRICS,
                                    options, example=selection.example)
        table = report.table()
        mine = table[table["method"] == explanation.method_label].set_index("metric")
        drop = mine.loc["comprehensiveness-004", "value"]
        random_drop = mine.loc["comprehensiveness-004", "random_mean"]
        st.markdown(f"Removing the top 20 % of the words moves the model's confidence by **{drop * 100:+.1f} points** "
                    f"(you guessed {guess}); removing random words moves it by {random_drop * 100:+.1f} points on "
                    f"average.")
        st.dataframe(report.wide(), key="tour-faithfulness-table", width="stretch")
        st.caption("Comprehensiveness ↑: the drop when the top words are removed; sufficiency ↓: the drop when only "
                   "they are kept. '≈ random' marks a value inside the random band.")
        method_card("comprehensiveness-eraser")


SHOW = {"prediction": step_prediction, "method": step_method, "compare": step_compare, "sanity": step_sanity,
        "faithfulness": step_faithfulness}


def input_html(selection: Selection) -> str:
    """The sentence the tour is about (and its second segment), escaped: each step starts by showing it."""
    pair = f' <span class="xw-sep">&#8214;</span> {html.escape(selection.pair)}' if selection.pair else ""
    return (f'<div class="xw-tour-input" style="font-size:1.15rem;padding:0.5rem 0.8rem;border-left:4px solid '
            f'#888;margin:0.2rem 0 0.6rem 0"><span style="opacity:0.7">The input: </span>'
            f'{html.escape(selection.text)}{pair}</div>')


def show_step(step: str, method: str, classifier: TextClassifier, encoding: Encoding, selection: Selection) -> None:
    st.subheader(STEPS[step])
    st.html(input_html(selection))
    st.markdown(f"**{QUESTIONS[step]}**")
    SHOW[step](classifier, encoding, selection, method)
    _next(step)
