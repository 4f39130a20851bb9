"""The embedding map's scatter plot (coordinates computed in ``evaluation.errors.embedding_map``): one point per
example, coloured by a column of the predictions table; each point carries its example index for the selection."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

COLOURS = {"gold_label": "gold label", "predicted_label": "prediction", "correctness": "correct / wrong",
           "confidence": "confidence", "slice": "in the filtered slice"}


def embedding_figure(frame: pd.DataFrame, coords: np.ndarray, colour: str, axes: tuple[str, str],
                     in_slice: set[int] | None = None) -> go.Figure:
    """``frame``: the predictions table in dataset order; ``colour`` a key of ``COLOURS``."""
    data = pd.DataFrame({"x": coords[:, 0], "y": coords[:, 1], "index": frame["index"].to_numpy(),
                         "text": [t if len(t) <= 80 else t[:77] + "..." for t in frame["text"]],
                         "gold": frame["gold_label"].fillna("?"), "prediction": frame["predicted_label"],
                         "confidence": frame["confidence"].round(3)})
    if colour == "correctness":
        data["colour"] = ["?" if pd.isna(c) else ("correct" if c else "wrong") for c in frame["correct"]]
    elif colour == "slice":
        data["colour"] = ["in the slice" if i in (in_slice or set()) else "outside" for i in frame["index"]]
    elif colour == "confidence":
        data["colour"] = frame["confidence"].to_numpy()
    else:
        data["colour"] = frame[colour].fillna("?").astype(str)
    figure = px.scatter(data, x="x", y="y", color="colour", custom_data=["index"],
                        hover_data={"x": False, "y": False, "index": True, "text": True, "gold": True,
                                    "prediction": True, "confidence": True, "colour": False},
                        labels={"x": axes[0], "y": axes[1], "colour": COLOURS[colour]},
                        color_continuous_scale="Viridis" if colour == "confidence" else None)
    figure.update_traces(marker=dict(size=6, opacity=0.8))
    figure.update_layout(height=500, margin=dict(l=10, r=10, t=40, b=10), dragmode="lasso",
                         legend=dict(title_text=COLOURS[colour], orientation="h", yanchor="bottom", y=1.02, x=0))
    return figure


def selected_indices(event) -> list[int]:
    """The example indices of the points a plotly selection event reports (``st.plotly_chart(on_select=...)``)."""
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else \
        getattr(getattr(event, "selection", None), "points", []) or []
    found = []
    for point in points:
        data = point.get("customdata") if isinstance(point, dict) else None
        if data:
            found.append(int(data[0]))
    return sorted(set(found))
