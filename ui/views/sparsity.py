"""The Faithfulness page's sparsity curves of this input's explanations (paper 001 App. E). Layout only."""
from __future__ import annotations

import streamlit as st

from evaluation.faithfulness.sparsity import SOURCE, sparsity_frame
from explainers import Explanation
from ui.figures.sparsity import sparsity_figure


def input_section(explanations: dict[str, Explanation], key: str = "faith-sparsity") -> None:
    if not explanations:
        return
    with st.expander("Sparsity curves (paper 001 App. E): how much of the importance the top words hold",
                     icon=":material/stacked_line_chart:"):
        frame = sparsity_frame({name: [e.word_scores] for name, e in explanations.items()})
        st.plotly_chart(sparsity_figure(frame), key=key, width="stretch")
        st.caption(f"S(k) = sum of the k largest |a| / sum |a|, for this input's explanations; {SOURCE}. Over a "
                   f"dataset with 95 % intervals: `cli.py sparsity --dataset sst2:dev --methods ...`. A curve "
                   f"describes the map (is the importance on a few words?), not its faithfulness.")
        st.download_button("Download the curves (CSV)", frame.drop(columns=["low", "high", "n"]).to_csv(index=False),
                           file_name="sparsity.csv", mime="text/csv", key=f"{key}-csv")
