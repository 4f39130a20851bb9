"""Counterfactuals: the masked LM's replacement words for every word, and Input Marginalization next to LOO."""
import streamlit as st

from ui import counterfactual_view, explain_view, sidebar

st.title("Masked-LM counterfactuals")
selection = sidebar.render()
counterfactual_view.banner()
filler, mlm_name = counterfactual_view.masked_lm_picker()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()
if filler is None:
    st.stop()

classifier, encoding = explain_view.classifier_and_encoding(selection)
target = explain_view.prediction_panel(classifier, encoding, selection)

st.subheader("Candidate inspector")
rows, threshold = counterfactual_view.inspector(filler, encoding)

st.subheader("Input Marginalization next to leave-one-out")
counterfactual_view.model_note(classifier)
choices = counterfactual_view.comparison_choices(mlm_name)
cost = explain_view.cost_preview(choices, classifier, encoding, selection.target, key="cf-cost")
results = explain_view.compute(choices, classifier, encoding, selection.target)
explain_view.cost_settled(cost, choices, results, classifier, encoding)
explain_view.render_rows(results, selection.level, "none", False, key="cf-rows")
frame = counterfactual_view.im_word_table(results, rows, threshold)
if frame is not None:
    st.dataframe(frame, hide_index=True, key="cf-scores", width="stretch")
    st.download_button("Download the scores (CSV)", frame.to_csv(index=False), file_name="im_vs_loo.csv",
                       mime="text/csv", key="cf-scores-csv")
