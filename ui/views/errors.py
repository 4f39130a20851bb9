"""Error-analysis page blocks: the dataset, its predictions table with filters, the confusion matrix, "open this
example", explaining a slice and the shortcut words. Layout only: the numbers come from ``evaluation.errors``."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from corpora import DATASETS, DataError, Example
from evaluation.errors import (
    LABELS_NEEDED,
    FilterError,
    Filters,
    PredictionTable,
    apply_filters,
    cell_rows,
    confident_errors_first,
    confusion,
    correct_rows,
    estimated_cost,
    predict_dataset,
    shortcut_words,
    stored_run,
    summarize_slice,
)
from evaluation.errors.embedding_map import embed_dataset, project, projections, stored_map
from evaluation.errors.saved_slices import export_slices, load_slice, save_slice, saved_slices
from evaluation.errors.slices import ALPHA, MIN_COUNT, TOP_K
from evaluation.runs.store import ResultStore
from explainers import REGISTRY, label_for
from models import TextClassifier, UserFacingError, WorkStopped
from ui.figures.embedding_map import COLOURS, embedding_figure, selected_indices
from ui.figures.errors import confusion_figure
from ui.widgets import loaders, sidebar
from ui.widgets.dataset_field import session_file
from ui.widgets.state import kept
from ui.widgets.tables import show_table

YOUR_FILE = sidebar.YOUR_FILE
EVERY_CELL = "every cell"
TABLE_COLUMNS = ["index", "text", "pair", "gold_label", "predicted_label", "confidence", "correct", "length"]
SLICE_METHODS = ("leave_one_out", "lime", "integrated_gradients", "saliency", "occlusion", "kernel_shap")


# ----- the dataset and its predictions ------------------------------------------------------------------------
def dataset_picker() -> str | None:
    """A dataset id (``name:split`` or ``file:<path>``); a file upload is shared with the sidebar's."""
    left, right = st.columns(2)
    with left:
        name = kept(st.selectbox, "Dataset", "errors_dataset", "sst2", list(DATASETS) + [YOUR_FILE],
                    format_func=lambda n: DATASETS[n].title if n in DATASETS else "your file (CSV / JSONL)")
    with right:
        if name != YOUR_FILE:
            info = DATASETS[name]
            split = kept(st.selectbox, "Split", f"errors_split_{name}", info.default_split, info.splits)
            return f"{name}:{split}"
        dataset_id = session_file("errors_file_pick", "errors_upload", "A .csv / .tsv / .jsonl file: a 'text' "
                                  "column, optional 'label', 'pair', 'rationale'")
    if dataset_id is None:
        st.info("Upload a file to analyse its predictions.")
    return dataset_id


def examples_of(dataset_id: str, classifier: TextClassifier) -> list[Example]:
    try:
        return loaders.dataset(dataset_id, tuple(classifier.labels))
    except DataError as error:
        st.error(str(error))
        st.stop()


def predictions(classifier: TextClassifier, model: str, dataset_id: str,
                examples: list[Example]) -> PredictionTable | None:
    """The stored table, or computed here with a progress bar; work the cost model estimates above the autorun
    budget (EXWB_AUTORUN_SECONDS) waits for a click."""
    store = ResultStore()
    stored = stored_run(store, classifier, examples)
    kept_table = st.session_state.get("errors:table")
    if stored is not None and kept_table is not None and kept_table.run_id == stored:
        return kept_table  # every rerun (a filter changed) reuses the table read once
    seconds, at_once = estimated_cost(classifier, examples) if stored is None else (0.0, True)
    if not _confirmed(at_once, f"Predict all {len(examples):,} examples", "errors-predict", ":material/play_arrow:",
                      f"Predicting {len(examples):,} examples takes about {seconds:.0f} s on this machine. The "
                      f"predictions are stored as they finish and reopen instantly afterwards."):
        return None
    bar = st.empty()

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"Predicting: {done:,} / {total:,} examples (stored as they finish; "
                                                f"any click stops and keeps them)")

    try:
        table = predict_dataset(classifier, examples, dataset_id, store=store, progress=progress, model=model)
    except WorkStopped as stopped:
        st.warning(str(stopped))
        return None
    bar.empty()
    st.session_state["errors:table"] = table
    return table


def summary(table: PredictionTable) -> None:
    frame = table.frame
    c1, c2, c3 = st.columns(3)
    c1.metric("Examples", f"{len(frame):,}")
    if table.has_labels:
        errors = int(frame["correct"].eq(False).sum())
        c2.metric("Accuracy", f"{table.accuracy:.1%}")
        c3.metric("Errors", f"{errors:,}")
    how = "reopened from the store" if table.computed == 0 else f"{table.computed:,} predicted"
    st.caption(f"Predictions of {table.model} on {table.dataset}, kept in the result store (run {table.run_id}): "
               f"{how} in {table.seconds:.2f} s.")


# ----- filters, the confusion matrix, the table -----------------------------------------------------------------
def filters(table: PredictionTable) -> Filters:
    frame, labels = table.frame, table.labels
    with st.expander("Filters", expanded=True, icon=":material/filter_list:"):
        c1, c2, c3 = st.columns(3)
        misclassified = c1.toggle("Misclassified only", key="errors-misclassified")
        low = c1.toggle("Low confidence only", key="errors-low")
        threshold = c1.slider("Confidence at most", 0.0, 1.0, 0.7, 0.01, key="errors-threshold", disabled=not low)
        gold = c2.multiselect("Gold label", range(len(labels)), format_func=lambda i: labels[i], key="errors-gold",
                              placeholder="any")
        predicted = c2.multiselect("Prediction", range(len(labels)), format_func=lambda i: labels[i],
                                   key="errors-predicted", placeholder="any")
        longest = max(int(frame["length"].max()), 1)
        min_words, max_words = c2.slider("Length (words)", 1, max(longest, 2), (1, max(longest, 2)), key="errors-length")
        search = c3.text_input("Search the text", key="errors-search", placeholder="a word, or a regular expression")
        regex = c3.toggle("Regular expression", key="errors-regex")
    return Filters(misclassified=misclassified, max_confidence=threshold if low else None,
                   gold=tuple(gold) or None, predicted=tuple(predicted) or None, length=(min_words, max_words),
                   search=search.strip(), regex=regex)


def filtered(frame: pd.DataFrame, chosen: Filters) -> pd.DataFrame | None:
    """The rows passing the filters, confident errors first; None (with the message) for a bad search."""
    try:
        return confident_errors_first(apply_filters(frame, chosen))
    except FilterError as error:
        st.error(str(error))
        return None


def confusion_cell(table: PredictionTable, shown: pd.DataFrame) -> pd.DataFrame:
    """The confusion matrix of the rows shown, and a cell picker that narrows them to one cell.

    A select box picks the cell: a click on a heatmap cell is not something Streamlit's chart selection reports
    (it selects points of scatter and bar charts), nor something AppTest could drive.
    """
    labels = table.labels
    matrix = confusion(shown, len(labels))
    left, right = st.columns([3, 2])
    left.plotly_chart(confusion_figure(matrix, labels), key="errors-confusion", width="stretch",
                      config={"displayModeBar": False})
    cells = [EVERY_CELL] + [(g, p) for g in range(len(labels)) for p in range(len(labels)) if matrix[g, p]]
    cell = right.selectbox("Show the examples of", cells, key="errors-cell",
                           format_func=lambda c: c if c == EVERY_CELL else
                           f"gold {labels[c[0]]} → predicted {labels[c[1]]} ({matrix[c[0], c[1]]})")
    right.caption("Rows: gold label; columns: prediction; each cell: count and share of its gold row.")
    return shown if cell == EVERY_CELL else cell_rows(shown, *cell)


# ----- the embedding map (LIT's projector) -------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=8)
def _projection(run_id: str, method: str, _vectors) -> tuple:
    return project(_vectors, method)


def _confirmed(at_once: bool, label: str, key: str, icon: str, cost_note: str) -> bool:
    """Work within the autorun budget runs at once; longer work waits for its button, with the cost said."""
    if at_once or st.button(label, key=key, icon=icon):
        return True
    st.info(cost_note)
    return False


def embedding_map(classifier: TextClassifier, examples: list[Example], table: PredictionTable,
                  shown: pd.DataFrame) -> pd.DataFrame:
    """The dataset's sentence representations in 2-D; a lasso or box selection narrows the rows shown (the table,
    "Open this example", explaining and saving a slice all follow it)."""
    store = ResultStore()
    if not stored_map(store, classifier, examples):
        seconds, at_once = estimated_cost(classifier, examples)
        if not _confirmed(at_once, f"Map all {len(examples):,} examples", "errors-map-run", ":material/scatter_plot:",
                          f"Mapping {len(examples):,} examples takes about {seconds:.0f} s (one forward pass each); "
                          f"the vectors are stored and the map reopens instantly afterwards."):
            return shown
    bar = st.empty()
    try:
        kept_map = st.session_state.get("errors:map")  # reruns (a filter, a colour) reuse the vectors read once
        if kept_map is not None and kept_map[0] == table.run_id:
            mapped = kept_map[1]
        else:
            def progress(done: int, total: int) -> None:
                bar.progress(done / max(total, 1), text=f"Embedding: {done:,} / {total:,} examples")

            mapped = embed_dataset(classifier, examples, store=store, progress=progress)
            st.session_state["errors:map"] = (table.run_id, mapped)
        c1, c2 = st.columns(2)
        method = c1.selectbox("Projection", projections(), key="errors-map-projection", format_func=str.upper,
                              help="UMAP is offered only where the optional package umap-learn is installed.")
        colour = c2.selectbox("Colour by", list(COLOURS), key="errors-map-colour", format_func=COLOURS.__getitem__)
        coords, info = _projection(mapped.run_id, method, mapped.vectors)
    except (UserFacingError, WorkStopped) as error:
        st.warning(str(error))
        return shown
    bar.empty()
    shares = info.get("explained_variance_ratio")
    axes = (f"PC1 ({shares[0]:.0%})", f"PC2 ({shares[1]:.0%})") if shares else ("UMAP 1", "UMAP 2")
    event = st.plotly_chart(embedding_figure(table.frame, coords, colour, axes, set(shown["index"])),
                            key="errors-map", on_select="rerun", selection_mode=("points", "box", "lasso"),
                            width="stretch")
    st.caption(f"Each point is one example: the {classifier.summary_token} token's last hidden state, the vector the "
               f"head reads, projected by {method.upper()} (LIT's embedding projector). Select points (box or "
               f"lasso) to narrow the table below to them, open one, explain or save them as a slice.")
    chosen = selected_indices(event)
    if not chosen:
        return shown
    narrowed = shown[shown["index"].isin(chosen)]
    st.caption(f"{len(chosen)} point(s) selected, {len(narrowed)} of them in the filtered rows: the sections below "
               f"show those.")
    return narrowed


def table_view(frame: pd.DataFrame, total: int) -> None:
    st.caption(f"{len(frame):,} of {total:,} examples, confident errors first.")
    show = frame[TABLE_COLUMNS].rename(columns={"gold_label": "gold", "predicted_label": "prediction"})
    if show["pair"].isna().all():
        show = show.drop(columns="pair")
    show_table(show, key="errors-table", why_missing="no gold label in the dataset",
               column_config={"confidence": st.column_config.ProgressColumn("confidence", format="%.3f",
                                                                           min_value=0.0, max_value=1.0)})


def open_example(frame: pd.DataFrame, dataset_id: str) -> None:
    """Pick a row and make it the input of every page (the sidebar shows it, with its gold label and rationale)."""
    rows = frame.head(500)
    left, right = st.columns([4, 1])
    index = left.selectbox("Example", list(rows["index"]), key="errors-example",
                           format_func=lambda i: _row_title(frame, i))
    right.button("Open this example", key="errors-open", icon=":material/open_in_new:", width="stretch",
                 on_click=sidebar.open_dataset_example, args=(dataset_id, int(index)),
                 help="It becomes the input of every page (heatmaps, faithfulness, sanity checks, ...).")
    if len(frame) > len(rows):
        st.caption(f"The first {len(rows)} rows of the table are listed; filter to reach the others.")


def _row_title(frame: pd.DataFrame, index: int) -> str:
    row = frame[frame["index"] == index].iloc[0]
    verdict = "" if pd.isna(row["correct"]) else (" ✓" if row["correct"] else " ✗")
    gold = row["gold_label"] if row["gold_label"] is not None else "?"
    text = row["text"] if len(row["text"]) <= 90 else row["text"][:87] + "..."
    return f"#{index} · {gold} → {row['predicted_label']} ({row['confidence']:.2f}){verdict} · {text}"


def labels_needed(table: PredictionTable) -> None:
    st.info(LABELS_NEEDED)
    table_view(table.frame, len(table.frame))


# ----- explain a slice, shortcut words ---------------------------------------------------------------------------
def slice_panel(classifier: TextClassifier, examples: list[Example], table: PredictionTable,
                shown: pd.DataFrame) -> None:
    """A method over the first N rows shown, next to as many correctly classified examples."""
    if shown.empty:
        st.info("The slice is empty: loosen the filters to explain some examples.")
        return
    c1, c2, c3 = st.columns([2, 2, 1])
    methods = [m for m in SLICE_METHODS if m in REGISTRY]
    method = c1.selectbox("Method", methods, key="errors-method", format_func=label_for)
    most = min(len(shown), 200)
    n = int(c2.number_input(f"Examples of the slice (1-{most})", 1, most, min(20, most), key="errors-slice-n"))
    k = int(c3.number_input("Top words", 1, 10, TOP_K, key="errors-top-k"))
    in_slice = shown.head(n)
    reference = correct_rows(table.frame, list(in_slice["index"]), n)
    key = json.dumps([table.run_id, method, k, list(map(int, in_slice["index"])),
                      list(map(int, reference["index"]))])
    st.caption(f"{len(in_slice)} example(s) of the slice (in the table's order) and {len(reference)} correctly "
               f"classified one(s), each explaining its predicted class; explanations are cached.")
    done = st.session_state.get("errors:slice")
    if done is None or done[0] != key:
        if not st.button("Explain this slice", key="errors-explain", icon=":material/play_arrow:"):
            return
        bar = st.progress(0.0, text="Explaining ...")

        def progress(count: int, total: int) -> None:
            bar.progress(count / total, text=f"Explaining: {count} / {total} examples (any click stops)")

        try:
            result = summarize_slice(classifier, [examples[i] for i in in_slice["index"]],
                                     [examples[i] for i in reference["index"]], method, k=k, progress=progress)
        except (UserFacingError, WorkStopped) as error:
            st.warning(str(error))
            return
        bar.empty()
        st.session_state["errors:slice"] = done = (key, result)
    result = done[1]
    for note in result.notes:
        st.caption(note)
    if result.words.empty:
        st.info("No word pushes these predictions (every score is zero or negative).")
    for label, group in result.words.groupby("class", sort=False):
        st.markdown(f"**Words pushing toward {label}** — in the slice vs the correctly classified examples")
        show_table(group.drop(columns="class"), key=f"errors-words-{label}",
                   why_missing="no correctly classified example was predicted as this class")
    per_example = pd.DataFrame({"id": list(result.top_words), "top words": [", ".join(w) for w in
                                                                           result.top_words.values()]})
    d1, d2 = st.columns(2)
    d1.download_button("Download the slice summary (JSON)", json.dumps(result.to_dict(), indent=2),
                       file_name="slice.json", mime="application/json", key="errors-slice-json")
    d2.download_button("Download the top words per example (CSV)", per_example.to_csv(index=False),
                       file_name="slice_top_words.csv", mime="text/csv", key="errors-slice-csv")


@st.cache_data(show_spinner=False, max_entries=8, ttl=loaders.DATASET_TTL)  # released as the datasets are
def _shortcuts(run_id: str, texts: tuple[str, ...], errors: tuple[bool, ...], min_count: int) -> pd.DataFrame:
    return shortcut_words(list(texts), list(errors), min_count=min_count)


def shortcut_panel(table: PredictionTable) -> None:
    """Words whose presence raises the error rate over every labelled example, with Fisher's test and BH."""
    labelled = table.labelled
    c1, c2 = st.columns([1, 3])
    min_count = int(c1.number_input("Words in at least (examples)", 2, 1000, MIN_COUNT, key="errors-min-count"))
    texts = tuple(t if p is None else f"{t} {p}" for t, p in zip(labelled["text"], labelled["pair"]))
    frame = _shortcuts(table.run_id, texts, tuple(labelled["correct"].eq(False).astype(bool)), min_count)
    c2.caption(f"For each word in at least {min_count} of the {len(labelled):,} labelled examples: the error rate "
               f"with and without it, Fisher's exact test (one-sided: the word raises the error rate) and "
               f"Benjamini-Hochberg q-values over the {len(frame):,} words tested; significant: q ≤ {ALPHA}.")
    if frame.empty:
        st.info("No word is frequent enough to test; lower the minimum count.")
        return
    significant = int(frame["significant"].sum())
    st.markdown(f"**{significant} word(s)** raise the error rate significantly." if significant else
                "No word raises the error rate significantly; the most suspicious ones are listed.")
    show_table(frame.head(30), key="errors-shortcuts")
    st.download_button("Download every tested word (CSV)", frame.to_csv(index=False), file_name="shortcut_words.csv",
                       mime="text/csv", key="errors-shortcuts-csv")


# ----- saved slices -----------------------------------------------------------------------------------------------
def saved_slices_panel(table: PredictionTable, shown: pd.DataFrame, chosen: Filters) -> None:
    """Save the rows shown (with their filters, metrics and, if explained, the word summary), list and reopen."""
    store = ResultStore()
    left, right = st.columns([3, 1])
    name = left.text_input("Name of this slice", key="errors-slice-name", placeholder="e.g. confident negatives")
    if right.button("Save this slice", key="errors-slice-save", icon=":material/bookmark_add:", width="stretch"):
        done = st.session_state.get("errors:slice")
        explained = done[1] if done is not None else None
        shown_ids = set(shown["id"])
        summary = explained if explained is not None and set(explained.slice_ids) <= shown_ids else None
        try:
            save_slice(store, name, table.run_id, chosen, shown, summary)
        except UserFacingError as error:
            st.error(str(error))
        else:
            st.toast(f"Saved '{name.strip()}' ({len(shown)} examples" + (", with its word summary)" if summary
                                                                         else ")"))
    listed = saved_slices(store, table.run_id)
    if listed.empty:
        st.caption("No saved slice of these predictions yet.")
        return
    show_table(listed.drop(columns="run"), key="errors-saved-slices")
    pick = st.selectbox("Reopen", list(listed["run"]), key="errors-slice-open",
                        format_func=lambda run: listed.set_index("run").loc[run, "name"])
    opened = load_slice(store, pick)
    st.caption("Filters: " + ", ".join(f"{k} = {v}" for k, v in opened["filters"].items() if v not in (None, False,
                                                                                                        "")) or "none")
    examples = table.frame[table.frame["index"].isin(opened["indices"])]
    show_table(examples[["text", "gold_label", "predicted_label", "confidence"]], key="errors-slice-rows")
    if opened.get("summary"):
        show_table(pd.DataFrame(opened["summary"]["class_words"]), key="errors-slice-words")
    st.download_button("Download every saved slice (JSON)", json.dumps(export_slices(store, table.run_id), indent=2),
                       file_name="slices.json", mime="application/json", key="errors-slices-json")
