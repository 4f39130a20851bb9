"""Counterfactuals: the masked LM's replacement words for every word, Input Marginalization next to LOO, and the
minimal-flip search (few words to remove or replace to change the prediction: the fewest where the exact search
fits the budget, greedy otherwise)."""
import streamlit as st

from ui.views import counterfactual_generators, counterfactuals, deletion_grid, heatmaps
from ui.widgets import sidebar

st.title("Masked-LM counterfactuals")
selection = sidebar.render()
counterfactuals.banner()
filler, mlm_name = counterfactuals.masked_lm_picker()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = heatmaps.classifier_and_encoding(selection)
target = heatmaps.prediction_panel(classifier, encoding, selection)

if filler is not None and mlm_name is not None:  # the picker gives both or neither
    st.subheader("Candidate inspector")
    rows, threshold = counterfactuals.inspector(filler, encoding)

    st.subheader("Input Marginalization next to leave-one-out")
    counterfactuals.model_note(classifier)
    choices = counterfactuals.comparison_choices(mlm_name)
    cost = heatmaps.cost_preview(choices, classifier, encoding, selection.target, key="cf-cost")
    results = heatmaps.compute(choices, classifier, encoding, selection.target, prepared=cost.prepared)
    heatmaps.cost_settled(cost, choices, results, classifier, encoding)
    heatmaps.render_rows(results, selection.level, "none", False, key="cf-rows")
    frame = counterfactuals.im_word_table(results, rows, threshold)
    if frame is not None:
        st.dataframe(frame, hide_index=True, key="cf-scores", width="stretch")
        st.download_button("Download the scores (CSV)", frame.to_csv(index=False), file_name="im_vs_loo.csv",
                           mime="text/csv", key="cf-scores-csv")

st.subheader("Edit in place")
counterfactuals.edit_in_place(classifier, encoding)

st.subheader("Deletion grid: each word removed in turn (paper 000 Figs. A17/A18)")
deletion_grid.section(classifier, encoding)

st.subheader("Counterfactual generators: word replacer, masked LM, HotFlip")
counterfactual_generators.generator_panel(classifier, encoding, filler)

st.subheader("Minimal flip: few words that change the prediction (the fewest where the search is exact)")
counterfactuals.minimal_flip_panel(classifier, encoding, filler)
