"""Counterfactual generators (LIT's Datapoint Generator) on the Counterfactuals page (one input) and the
Error analysis page (a slice). Layout only: candidates and re-predictions come from ``evaluation.errors.generators``."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from evaluation.errors import Flip
from evaluation.errors.generators import (
    GENERATORS,
    HOTFLIP,
    MASKED_LM,
    PER_WORD,
    RULES_HELP,
    WORD_REPLACER,
    WORDS,
    dataset_counterfactuals,
    flips_frame,
    generate,
)
from explainers import create
from explainers.cache import explain_cached
from models import Encoding, TextClassifier, UserFacingError, WorkStopped
from models.mlm import BUILT_IN_MLM, MaskedLMFiller, find_prepared_mlm, load_filler
from ui.figures.flip_diff import flip_diff_html
from ui.widgets import sidebar
from ui.widgets.tables import show_table

DEFAULT_RULES = "good -> bad | dull\ngreat -> terrible\nbad -> good\nboring -> fun"
SHOWN = 8  # flips drawn as diffs with a "use as input" button
SOURCE = ("Generators after LIT 1.3's Datapoint Generator (word replacer, HotFlip: Ebrahimi et al. 2018, ACL, s. 3) "
          "and paper 000's masked LM; every candidate is re-predicted.")


def options(filler: MaskedLMFiller | None, key: str) -> tuple[str, dict] | None:
    """The generator and its options; None (with a message) when it cannot run here."""
    generator = st.radio("Generator", list(GENERATORS), key=f"{key}-generator", format_func=GENERATORS.get,
                         horizontal=True) or WORD_REPLACER
    if generator == WORD_REPLACER:
        return generator, {"rules": st.text_area("Rules", DEFAULT_RULES, key=f"{key}-rules", help=RULES_HELP)}
    c1, c2 = st.columns(2)
    words = int(c1.number_input("Words changed (the most important first)" if generator == MASKED_LM else
                                "Positions flipped (the largest first-order gain first)", 1, 20, WORDS,
                                key=f"{key}-words"))
    if generator == HOTFLIP:
        return generator, {"words": words}
    if filler is None:
        st.info("Masked-LM substitution needs a masked LM: build the offline one on the Counterfactuals page (or "
                "`python cli.py prepare-mlm`), or pick another there.")
        return None
    per_word = int(c2.number_input("Candidates per word", 1, 10, PER_WORD, key=f"{key}-per-word"))
    return generator, {"words": words, "per_word": per_word, "filler": filler}


def generator_panel(classifier: TextClassifier, encoding: Encoding, filler: MaskedLMFiller | None,
                    key: str = "cf-gen") -> list[Flip]:
    """Candidates of one generator for the page's input, the flips as diffs, each usable as every page's input."""
    chosen = options(filler, key)
    if chosen is None:
        return []
    generator, extra = chosen
    if generator == MASKED_LM:  # the words ranked by leave-one-out, through the explanation cache
        extra["word_scores"] = explain_cached(create("leave_one_out"), classifier, encoding).word_scores
    try:
        with st.spinner("Generating and re-predicting ..."):
            flips = generate(classifier, encoding, generator, **extra)
    except UserFacingError as error:
        st.warning(str(error))
        return []
    found = [f for f in flips if f.found]
    labels = classifier.labels
    st.markdown(f"**{len(found)} of {len(flips)} candidate(s) flip the prediction** "
                f"({labels[flips[0].original_class]})." if flips else "No candidate: no rule matches a word here.")
    for number, flip in enumerate(found[:SHOWN]):
        left, right = st.columns([5, 1])
        left.html(flip_diff_html(flip))
        left.caption(f"→ {labels[flip.new_class]} (p({labels[flip.original_class]}) {flip.original_probability:.1%} "
                     f"→ {flip.new_probability:.1%})")
        text, pair = flip.texts()
        right.button("Use as input", key=f"{key}-use-{number}", on_click=sidebar.use_text, args=(text, pair),
                     help="Every page then explains this counterfactual (the sidebar shows it as your text).")
    if flips:
        frame = flips_frame(flips, list(labels))
        show_table(frame, key=f"{key}-table")
        st.download_button("Download the candidates (CSV: a dataset file every page reads)",
                           frame.to_csv(index=False), file_name="counterfactuals.csv", mime="text/csv",
                           key=f"{key}-csv")
    st.caption(SOURCE)
    return flips


def _built_in_filler() -> MaskedLMFiller | None:
    """The offline masked LM where it is built (the Counterfactuals page builds it or picks another)."""
    if find_prepared_mlm() is None:
        return None
    try:
        return load_filler(BUILT_IN_MLM)
    except UserFacingError:
        return None


def slice_panel(classifier: TextClassifier, examples: list, shown: pd.DataFrame,
                key: str = "errors-gen") -> pd.DataFrame:
    """Error analysis: a generator over the first N rows shown; the rows with a flip can become the slice."""
    if shown.empty:
        return shown
    chosen = options(_built_in_filler(), key)
    if chosen is None:
        return shown
    generator, extra = chosen
    most = min(len(shown), 200)
    n = int(st.number_input(f"Examples of the slice (1-{most})", 1, most, min(20, most), key=f"{key}-n"))
    indices = [int(i) for i in shown["index"].head(n)]
    identity = {k: (v.identity() if isinstance(v, MaskedLMFiller) else v) for k, v in extra.items()}
    run_key = json.dumps([classifier.fingerprint, generator, identity, indices], sort_keys=True, default=str)
    done = st.session_state.get(f"{key}:result")
    if done is None or done[0] != run_key:
        if not st.button("Generate counterfactuals of these examples", key=f"{key}-run", icon=":material/play_arrow:"):
            return shown
        bar = st.progress(0.0, text="Generating ...")
        try:
            frame = dataset_counterfactuals(classifier, examples, indices, generator,
                                            progress=lambda d, t: bar.progress(d / t, text=f"{d} / {t} examples"),
                                            **extra)
        except (UserFacingError, WorkStopped) as error:
            st.warning(str(error))
            return shown
        bar.empty()
        st.session_state[f"{key}:result"] = done = (run_key, frame)
    frame = done[1]
    flipped = frame[frame["flipped"]] if len(frame) else frame
    flipping = flipped["index"].nunique() if len(flipped) else 0
    st.caption(f"{len(frame)} candidate(s) for {len(indices)} example(s); {flipping} example(s) flip under this "
               f"generator.")
    show_table(flipped if len(flipped) else frame, key=f"{key}-table")
    st.download_button("Download the counterfactuals (CSV: a dataset file every page reads)",
                       frame.to_csv(index=False), file_name="counterfactuals.csv", mime="text/csv", key=f"{key}-csv")
    if len(flipped) and st.toggle("Narrow the rows to the examples that flip", key=f"{key}-narrow"):
        return shown[shown["index"].isin(set(flipped["index"]))]
    return shown
