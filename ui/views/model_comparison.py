"""Compare-models page blocks: the same input and methods on several models, rows aligned by word (paper 003).

The explanations and the agreement between models come from ``evaluation/suite/model_comparison.py``; this module lays out
the model picker, one row per model under each method, and the agreement table. Every word shown is escaped.
"""
from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from evaluation.suite.model_comparison import ModelComparison, compare_models
from explainers import format_spec, label_for
from models import BUILT_IN, UserFacingError
from models.prepare import RECIPES
from settings import shared_mode
from ui.figures.labelled_rows import titled_row_html
from ui.widgets import loaders
from ui.widgets.heatmap import CSS

DEFAULT_METHODS = ("saliency", "input_x_gradient", "leave_one_out", "attention_rollout")


def banner() -> None:
    st.markdown("The same input and the same methods on several models. Paper 003 found that model size changes "
                "little and architecture a lot, and that the best method for one model need not be the best for "
                "another: *validate several methods for each model*. Each model explains its own predicted class; "
                "rows align by word whatever the tokenizer. The offline zoo gives a size axis (`minilm-l2`, "
                "`minilm-l4`, `default`) and an architecture axis (`minilm-causal`): `python cli.py prepare "
                "--model minilm-l2`, ...")


def model_picker(current: str, key: str = "cmp") -> list[str]:
    """The sidebar's model first, then the others chosen here (prepared built-ins, or folders / hub ids)."""
    prepared = [name for name in BUILT_IN if name != current and loaders.is_prepared(name)]
    missing = [name for name in BUILT_IN if name != current and not loaders.is_prepared(name)]
    chosen = st.multiselect("Compare with", prepared, default=prepared[:1], key=f"{key}-models",
                            format_func=lambda n: f"{n}: {RECIPES[n].description}")
    extra = "" if shared_mode() else st.text_input("More models (folders or hub ids, comma-separated)",
                                                   key=f"{key}-extra").strip()  # no server folder in shared mode
    chosen += [spec.strip() for spec in extra.split(",") if spec.strip()]
    if missing:
        st.caption("Not built on this machine yet: " + ", ".join(missing) + " (`python cli.py prepare --model "
                   "NAME`).")
    return [current, *chosen]


def method_specs(choices) -> list[str]:
    """The "method:preset" of each method chosen on the page (the comparison runs presets, not overrides)."""
    return [format_spec(c.method_id, c.preset) for c in choices]


def compute(specs: list[str], text: str, pair: str | None, methods: list[str]) -> ModelComparison | None:
    classifiers = {}
    for spec in specs:
        try:
            classifiers[spec] = loaders.classifier(spec)
        except UserFacingError as error:
            st.error(f"{spec}: {error}")
    if len(classifiers) < 2:
        st.info("Choose at least one more model to compare with.")
        return None
    bar = st.progress(0.0, text="Explaining ...")
    try:
        comparison = compare_models(classifiers, text, pair, methods,
                                    progress=lambda done, total: bar.progress(done / total,
                                                                              text=f"{done} of {total} explanations"))
    except UserFacingError as error:  # an input no model can read (empty text, ...): a message, not a traceback
        st.error(str(error))
        return None
    finally:
        bar.empty()
    return comparison


def predictions(comparison: ModelComparison) -> None:
    st.dataframe(pd.DataFrame([{"model": run.name, "prediction": run.prediction} for run in comparison.runs]),
                 hide_index=True, key="cmp-predictions")


def rows(comparison: ModelComparison, level: str, key: str = "cmp") -> None:
    st.markdown(CSS, unsafe_allow_html=True)
    for method in comparison.methods:
        st.markdown(f"#### {html.escape(label_for(method))}")
        for run in comparison.runs:
            if method in run.errors:
                st.warning(run.errors[method])
                continue
            explanation = run.explanations[method]
            st.markdown(titled_row_html(run.name, f"explains {run.prediction}", explanation, level),
                        unsafe_allow_html=True)
            for warning in explanation.warnings:
                st.caption(f"⚠ {warning}")
        agreement = comparison.agreement(method)
        if agreement is not None:
            st.caption(f"Agreement between models (Spearman of |scores|) for {label_for(method)}")
            st.dataframe(pd.DataFrame(agreement.to_rows()).rename(columns={"method": "model"}).round(3),
                         hide_index=True, key=f"{key}-agreement-{method}")
    frame = comparison.scores_frame()
    st.download_button("Download every score (CSV)", frame.to_csv(index=False), file_name="model_comparison.csv",
                       mime="text/csv", key=f"{key}-csv")
