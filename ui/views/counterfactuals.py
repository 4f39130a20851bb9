"""Counterfactuals page blocks: the masked LM, the candidate inspector (paper 000 figure 1), IM next to LOO.

The numbers come from ``models/mlm/filler.py`` (candidates, the inspector table) and the explainers; this module only
lays out controls, tables and heatmaps. Every word shown is escaped.
"""
from __future__ import annotations

import html
import json
import threading

import pandas as pd
import streamlit as st

from evaluation.errors import Flip, minimal_flip, mlm_candidates
from evaluation.errors.counterfactual import BUDGET, EXACT, REMOVE, REPLACE
from explainers import Explanation, create
from explainers.cache import explain_cached
from explainers.choices import MethodChoice
from models import Encoding, TextClassifier, UserFacingError
from models.documents import read_input
from models.mlm import (
    BUILT_IN_MLM,
    HIGH_CONFIDENCE,
    RECIPE,
    Candidate,
    MaskedLMFiller,
    WordCandidates,
    find_prepared_mlm,
    inspect_candidates,
    load_filler,
    prepare_mlm,
)
from settings import shared_mode
from ui.figures.candidate_cards import candidate_cards_html
from ui.figures.flip_diff import flip_diff_html
from ui.widgets.heatmap import CSS, explanation_row_html

OTHER = "other: a folder or hub id"
BERT_REFERENCE = ("bert-base-uncased recovers 48.9 % of SST words as its top-1 (mean likelihood 0.82 of those "
                  "matches; paper 000 Table A3)")
_BUILD_LOCK = threading.Lock()


def banner() -> None:
    st.markdown("A masked language model proposes what could stand in a word's place. **Input Marginalization** "
                "(IM) compares the prediction with its average over those counterfactuals; **LIME-BERT** fills "
                "LIME's removed words with them. Paper 000 shows the catch: a word the masked LM predicts as itself "
                "gets almost no IM attribution, whatever the classifier does. The inspector below shows, for every "
                "word, the top-3 replacements and their likelihoods (paper 000 figure 1).")


# ----- the masked LM --------------------------------------------------------------------------------------------
def _prepare_in_page() -> None:
    """Build the offline masked LM with a progress bar and a stop button (one build per process at a time)."""
    if not _BUILD_LOCK.acquire(blocking=False):
        st.info("The masked LM is being built in another session; reload the page in a few minutes.")
        return
    try:
        bar = st.progress(0.0, text="Preparing the masked LM ...")
        # Any click (this button included) reruns the script; the next progress update then ends the build, and
        # nothing is saved (prepare_mlm writes to a temporary folder first).
        st.button("Stop building", key="mlm-stop")

        def progress(step: int, total: int, info: dict) -> None:
            left = info["seconds"] / step * (total - step)
            bar.progress(step / total, text=f"Training the masked-LM head: step {step}/{total}, loss "
                                            f"{info['loss']:.2f}, about {left / 60:.1f} min left")

        prepare_mlm(progress=progress, log=lambda message: None)
        bar.progress(1.0, text="The masked LM is ready.")
    finally:
        _BUILD_LOCK.release()


def masked_lm_picker(key: str = "cf") -> tuple[MaskedLMFiller | None, str | None]:
    """Choose the masked LM; show what it is (the offline one is a small stand-in for BERT) and its accuracy."""
    left, right = st.columns([2, 3])
    others = [] if shared_mode() else [OTHER]  # no server folder from the browser in shared mode
    choice = left.selectbox("Masked LM", [BUILT_IN_MLM, "bert-base-uncased", *others], key=f"{key}-mlm",
                            format_func=lambda o: {BUILT_IN_MLM: "mlm: offline stand-in for BERT (built here)",
                                                   "bert-base-uncased": "bert-base-uncased (paper 000; needs the hub "
                                                                        "or a local copy)"}.get(o, o))
    name = choice or BUILT_IN_MLM
    if choice == OTHER:
        name = left.text_input("Folder or hub id of a masked LM", key=f"{key}-mlm-path",
                               placeholder="/path/to/a/ForMaskedLM/model").strip()
        if not name:
            right.info("Give a folder holding a *ForMaskedLM model, or a hub id (with EXWB_ALLOW_HUB=1).")
            return None, None
    if name == BUILT_IN_MLM and find_prepared_mlm() is None:
        with right:
            st.warning("The offline masked LM is not built on this machine yet. It is a small stand-in for BERT: "
                       f"the bundled MiniLM-L6 fine-tuned as a masked LM for {RECIPE.steps} steps on the local "
                       "corpora (minutes on a CPU; `python cli.py prepare-mlm` does the same).")
            if st.button("Build the masked LM now", key=f"{key}-mlm-build"):
                try:
                    _prepare_in_page()
                except UserFacingError as error:
                    st.error(str(error))
                else:
                    st.rerun()
        return None, None
    try:
        filler = load_filler(name)
    except UserFacingError as error:
        right.error(str(error))
        return None, None
    with right:
        describe_masked_lm(filler)
    return filler, name


def describe_masked_lm(filler: MaskedLMFiller) -> None:
    info = filler.describe()
    st.caption(f"`{info['name']}` · {info['model_type']} · {info['parameters'] / 1e6:.1f} M parameters "
               f"· fingerprint {info['fingerprint']} · {info['device']}")
    if info["stand_in"]:
        rows = [f"{name}: top-1 {r['top1_accuracy']:.1%}, top-10 {r['top10_accuracy']:.1%} ({r['words']} held-out "
                f"words)" for name, r in info["evaluation"].items()]
        st.info("This is a **small stand-in for BERT**, not the masked LM of paper 000: the bundled MiniLM-L6 "
                "fine-tuned as a masked LM for minutes on the local corpora. Held-out accuracy at recovering a "
                "masked word — "
                + "; ".join(rows) + f". For comparison, {BERT_REFERENCE}. Its candidates are less fluent than "
                "BERT's; choose bert-base-uncased (EXWB_ALLOW_HUB=1) to reproduce the paper.")


# ----- the candidate inspector ----------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=64)
def _inspect(_filler: MaskedLMFiller, filler_key: str, _encoding: Encoding, encoding_key: str,
             k: int) -> list[dict]:
    return [row.to_dict() for row in inspect_candidates(_filler, _encoding, k=k)]


def inspector_rows(filler: MaskedLMFiller, encoding: Encoding, k: int = 3) -> list[WordCandidates]:
    key = json.dumps(filler.identity(), sort_keys=True)
    rows = _inspect(filler, key, encoding, encoding.key, k)
    return [WordCandidates(r["index"], r["word"], r["segment"], tuple(Candidate(**c) for c in r["candidates"]),
                           r["original_probability"], r["original_rank"]) for r in rows]


def inspector_frame(rows: list[WordCandidates], k: int, threshold: float) -> pd.DataFrame:
    records = []
    for row in rows:
        record = {"#": row.index, "word": row.word, "segment": "hypothesis" if row.segment else "premise/text"}
        for rank in range(k):
            candidate = row.candidates[rank] if rank < len(row.candidates) else None
            record[f"top-{rank + 1}"] = candidate.word if candidate else ""
            record[f"p{rank + 1}"] = round(candidate.probability, 4) if candidate else None
        record["p(original)"] = round(row.original_probability, 4)
        record["rank of original"] = row.original_rank
        record["predictable"] = row.predictable(threshold)
        records.append(record)
    frame = pd.DataFrame(records)
    if not frame.empty:
        frame["rank of original"] = frame["rank of original"].astype("Int64")
    return frame


def inspector(filler: MaskedLMFiller, encoding: Encoding, key: str = "cf") -> tuple[list[WordCandidates], float]:
    """Top-3 replacements and likelihoods of every word, the predictable words flagged; CSV/JSON export."""
    c1, c2 = st.columns([1, 3])
    threshold = float(c1.slider("Flag a word when the masked LM predicts it as itself with p ≥", 0.05, 1.0,
                                HIGH_CONFIDENCE, 0.05, key=f"{key}-threshold"))
    with st.spinner(f"Masking each of the {encoding.n_words} words once ..."):
        rows = inspector_rows(filler, encoding, k=3)
    flagged = [r for r in rows if r.predictable(threshold)]
    c2.metric("Words predicted as themselves (top-1, p ≥ threshold)", f"{len(flagged)} / {len(rows)}")
    st.caption(f"One [MASK] per word, the rest of the input (both segments) visible; candidates from "
               f"'{filler.name}' ({filler.fingerprint}); sub-word pieces and special tokens are not proposed.")
    st.html(CSS + candidate_cards_html(rows, threshold))
    if flagged:
        words = ", ".join(f"'{r.word}' ({r.original_probability:.2f})" for r in flagged[:12])
        st.warning(f"The masked LM predicts {len(flagged)} word(s) as themselves with high confidence: {words}"
                   f"{' ...' if len(flagged) > 12 else ''}. Input Marginalization gives these words an attribution "
                   f"near zero by construction — a word predicted with likelihood p keeps at most about 1 − p of "
                   f"its effect — whatever the classifier does, even after its head is randomized (paper 000 §5.3, "
                   f"App. B).")
    frame = inspector_frame(rows, 3, threshold)
    st.dataframe(frame, hide_index=True, key=f"{key}-table", width="stretch")
    payload = {"masked_lm": filler.describe(), "threshold": threshold, "input": {"text": encoding.text,
                                                                                  "pair": encoding.pair},
               "words": [r.to_dict() for r in rows]}
    d1, d2 = st.columns(2)
    d1.download_button("Download the candidates (CSV)", frame.to_csv(index=False), file_name="mlm_candidates.csv",
                       mime="text/csv", key=f"{key}-csv")
    d2.download_button("Download the candidates (JSON)", json.dumps(payload, indent=2, default=str),
                       file_name="mlm_candidates.json", mime="application/json", key=f"{key}-json")
    return rows, threshold


# ----- IM next to LOO -------------------------------------------------------------------------------------------
IM_PRESETS = {"paper-000-top10": "top-10 candidates, renormalized (paper 000)",
              "kim-2020-sigma": "every candidate with p ≥ 1e-5, at most 1,000 (Kim et al. 2020; slow)"}


def comparison_choices(name: str, key: str = "cf") -> list[MethodChoice]:
    c1, c2 = st.columns(2)
    preset = c1.selectbox("IM candidates", list(IM_PRESETS), key=f"{key}-im-preset",
                          format_func=lambda p: IM_PRESETS[p])
    labels = {"leave_one_out": "Leave-one-out (LOOempty: the word deleted)",
              "leave_one_out_fill": "Leave-one-out with MLM fill (the top-1 word)",
              "lime_bert": "LIME-BERT (1,000 samples)"}
    extra = c2.multiselect("Also show", list(labels), default=["leave_one_out"], key=f"{key}-extra",
                           format_func=lambda m: labels[m])
    choices = [MethodChoice("input_marginalization", preset, {"masked_lm": name})]
    if "leave_one_out" in extra:
        choices.append(MethodChoice("leave_one_out", "paper-000-empty", {}))
    if "leave_one_out_fill" in extra:
        choices.append(MethodChoice("leave_one_out_fill", "paper-000", {"masked_lm": name}))
    if "lime_bert" in extra:
        choices.append(MethodChoice("lime_bert", "paper-000-joint", {"masked_lm": name}))
    return choices


def im_word_table(results: dict, rows: list[WordCandidates], threshold: float) -> pd.DataFrame | None:
    """Per word: each method's score next to the masked LM's verdict (predictable or not)."""

    done = {m: r for m, r in results.items() if isinstance(r, Explanation)}
    if "input_marginalization" not in done:
        return None
    frame = pd.DataFrame({"word": [r.word for r in rows],
                          "p(original)": [round(r.original_probability, 4) for r in rows],
                          "predictable": [r.predictable(threshold) for r in rows]})
    for explanation in done.values():
        if len(explanation.word_scores) == len(rows):
            frame[f"{explanation.method_label} ({explanation.provenance['preset'] or 'defaults'})"] = \
                [round(float(x), 4) for x in explanation.word_scores]
    return frame


def model_note(classifier: TextClassifier) -> None:
    st.caption(f"Classifier: {classifier.name} ({classifier.fingerprint}). Scores in log2-odds of the explained "
               f"class (paper 000 Eq. 4); IM and LOO are signed: > 0 supports the class.")


# ----- the minimal-flip search ----------------------------------------------------------------------------------
FLIP_MODES = {REMOVE: "remove words (deleted, the rest re-tokenized)",
              REPLACE: "replace words with the masked LM's top-3 candidates"}


@st.cache_data(show_spinner=False, max_entries=64)
def _flip(_classifier: TextClassifier, fingerprint: str, _encoding: Encoding, encoding_key: str, mode: str,
          budget: int, _filler: MaskedLMFiller | None, filler_key: str | None) -> Flip:
    candidates = mlm_candidates(_filler, _encoding) if mode == REPLACE and _filler is not None else None
    return minimal_flip(_classifier, _encoding, mode=mode, candidates=candidates, budget=budget)


def minimal_flip_panel(classifier: TextClassifier, encoding: Encoding, filler: MaskedLMFiller | None) -> Flip | None:
    """Search for the fewest words to remove (or replace) so that the prediction changes; show it as a diff."""
    c1, c2 = st.columns([3, 1])
    modes = [REMOVE, REPLACE] if filler is not None else [REMOVE]
    mode = c1.radio("Change words by", modes, key="cf-flip-mode", format_func=FLIP_MODES.get, horizontal=True) or REMOVE
    budget = int(c2.number_input("Budget (inputs classified)", 10, 5000, BUDGET, step=50, key="cf-flip-budget"))
    if filler is None:
        c1.caption("Replacing words needs a masked LM (above).")
    filler_key = json.dumps(filler.identity(), sort_keys=True) if filler is not None and mode == REPLACE else None
    with st.spinner("Searching ..."):
        flip = _flip(classifier, classifier.fingerprint, encoding, encoding.key, mode, budget,
                     filler if mode == REPLACE else None, filler_key)
    labels = classifier.labels
    was = f"{labels[flip.original_class]} ({flip.original_probability:.1%})"
    proven = flip.search == EXACT
    if flip.found:
        verb = "removing" if mode == REMOVE else "replacing"
        which = ("the fewest: no change of fewer words flips it (exact search)" if proven else
                 "greedy search: a change of fewer words may exist; raise the budget to check")
        st.markdown(f"**{verb.capitalize()} {flip.size} word(s)** changes the prediction from {was} to "
                    f"**{labels[flip.new_class]}** (p({labels[flip.original_class]}) = {flip.new_probability:.1%}); "
                    f"{which}.")
    elif proven:
        st.warning(f"No change of at most {flip.size or 'any'} word(s) flips {was}: every such change was classified "
                   f"(exact search). Try replacing words.")
    else:
        st.warning(f"No change of at most {flip.size or 'any'} word(s) found that flips {was} within the budget of "
                   f"{budget} classified inputs (greedy search); raise the budget, or try replacing words.")
    st.html(flip_diff_html(flip))
    st.caption(f"Greedy search seeded by leave-one-out, then every smaller change classified, size by size, where "
               f"the budget allows it (then the result is the smallest); {flip.evaluated} perturbed inputs "
               f"classified, search: **{flip.search}**.")
    st.download_button("Download the flip (JSON)", json.dumps(flip.to_dict(), indent=2), file_name="minimal_flip.json",
                       mime="application/json", key="cf-flip-download")
    return flip


# ----- edit in place ------------------------------------------------------------------------------------------------
EDIT_METHODS = ("leave_one_out", "saliency")  # cheap enough to follow every edit


def edit_in_place(classifier: TextClassifier, encoding: Encoding, key: str = "cf-edit") -> None:
    """Edit the input here and see the prediction and two cheap heatmaps of the edit next to the original's (the
    sidebar's input is never changed, so nothing is lost)."""
    edited = st.text_area("Edit the text", value=encoding.text, key=f"{key}-{encoding.key}", height=80,
                          help="Ctrl+Enter applies the edit; the original stays the page's input.")
    if not edited.strip():
        st.warning("The edited text is empty: type something to compare (the original input is kept).")
        return
    if edited == encoding.text:
        st.caption("Change a word above to see how the prediction and the explanations move.")
        return
    try:
        changed = read_input(classifier, edited, encoding.pair)  # a long text whole, as the page's input
    except UserFacingError as error:
        st.warning(str(error))
        return
    before, after = classifier.proba_of(encoding), classifier.proba_of(changed)  # windows for a long text
    st.dataframe(pd.DataFrame([{"input": "original", **dict(zip(classifier.labels, before.round(4)))},
                               {"input": "edited", **dict(zip(classifier.labels, after.round(4)))}]),
                 hide_index=True, key=f"{key}-prediction")
    if before.argmax() != after.argmax():
        st.success(f"The edit flips the prediction: {classifier.labels[before.argmax()]} -> "
                   f"{classifier.labels[after.argmax()]}.")
    st.html(CSS)
    for method in EDIT_METHODS:
        explainer = create(method)
        for name, current in (("original", encoding), ("edited", changed)):
            explanation = explain_cached(explainer, classifier, current)
            st.markdown(f"**{html.escape(explanation.method_label)}** · {name}")
            st.html(explanation_row_html(explanation))
