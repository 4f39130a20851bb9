"""The sidebar every page draws: model, input (example, typed text, sentence pair, dataset or your file), target,
view. Typed text is split into words as the datasets are (``corpora.typed_text``) and the sidebar says what it
split; a file's gold labels are read with the model's label names (``corpora.user_file``).

Each page calls ``render()`` first; the values survive page switches through ``state.kept``.
"""
from __future__ import annotations

import re

import streamlit as st

import settings
from corpora import DATASETS, DataError, normalize_typed_text, parse_dataset_id
from corpora.invisible import invisible_note, remove_invisible
from models import BUILT_IN, UserFacingError
from models.prepare import RECIPES
from ui.widgets import loaders, share_link, state
from ui.widgets.dataset_field import session_file
from ui.widgets.heatmap import palette_picker
from ui.widgets.state import kept

OTHER_MODEL = "other: a folder or hub id"
SOURCES = ("Example", "Your text", "Sentence pair", "Dataset")
YOUR_FILE = "your file"


def _model_picker() -> str | None:
    wanted = settings.default_model_spec()
    # shared mode: no folder from the browser; the admin's EXWB_MODEL is offered as it is
    options = list(BUILT_IN) + ([OTHER_MODEL] if not settings.shared_mode() else
                                [wanted] if wanted not in BUILT_IN else [])
    choice = kept(st.selectbox, "Model", "model_choice", wanted if wanted in options else OTHER_MODEL, options,
                  format_func=lambda o: f"{o}: {RECIPES[o].description}" if o in RECIPES else o)
    if choice == OTHER_MODEL:
        spec = kept(st.text_input, "Folder or hub id", "model_path", "" if wanted in BUILT_IN else wanted,
                    placeholder="/path/to/saved/model").strip()
        return spec or None
    if not loaders.is_prepared(choice):
        st.warning(f"'{choice}' is not prepared yet ({RECIPES[choice].description}). It is built once on this "
                   f"machine and cached.")
        if st.button(f"Prepare '{choice}' now", key="prepare_model"):
            try:
                loaders.prepare_with_progress(choice)
            except (UserFacingError, DataError) as error:
                st.error(str(error))
            else:
                st.rerun()
        return None
    return choice


def _user_file() -> str | None:
    """A dataset id for an uploaded file (or, in shared mode, a file the admin shared); kept across pages (the
    uploader itself is not)."""
    return session_file("dataset_file_pick", "dataset_upload",
                        "A .csv / .tsv / .jsonl file: a 'text' column; optional 'label' (the model's label names or "
                        "class indices), 'pair', 'rationale'")


def _dataset_picker(labels: list[str] | None):
    name = kept(st.selectbox, "Dataset", "dataset_name", "sst2", list(DATASETS) + [YOUR_FILE],
                format_func=lambda n: DATASETS[n].title if n in DATASETS else "your file (CSV / JSONL)")
    if name == YOUR_FILE:
        dataset_id = _user_file()
        if dataset_id is None:
            return None
    else:
        info = DATASETS[name]
        split = kept(st.selectbox, "Split", f"dataset_split_{name}", info.default_split, info.splits)
        dataset_id = f"{name}:{split}"
    try:
        examples = loaders.dataset(dataset_id, tuple(labels) if labels else None)
    except DataError as error:
        st.error(str(error))
        return None
    if examples[0].extra.get("file_note"):  # a file not in UTF-8, read in the encoding it was told to be in
        st.info(examples[0].extra["file_note"])
    index = int(kept(st.number_input, f"Example (0-{len(examples) - 1})", f"dataset_index_{dataset_id}", 0,
                     min_value=0, max_value=len(examples) - 1, step=1))
    example = examples[index]
    gold = f" · gold: {example.label_name}" if example.label is not None else ""
    st.caption(f"`{example.id}`{gold}")
    _say_invisible(example.text, example.pair)
    return example.text, example.pair, example.id, example


def open_dataset_example(dataset_id: str, index: int) -> None:
    """Make row ``index`` of ``dataset_id`` (``name:split`` or ``file:<path>``) the input of every page, with its
    gold label and rationale: the sidebar's dataset widgets are set to it (call it in a button's ``on_click``)."""
    name, split = parse_dataset_id(dataset_id)
    state.set_kept("input_source", "Dataset")
    if name == "file":
        state.set_kept("dataset_name", YOUR_FILE)
        st.session_state["keep:dataset_file"] = dataset_id
    else:
        state.set_kept("dataset_name", name)
        state.set_kept(f"dataset_split_{name}", split)
    state.set_kept(f"dataset_index_{dataset_id}", int(index))


def use_text(text: str, pair: str | None = None) -> None:
    """Make a text (a generated counterfactual) the input of every page, typed as "Your text" or "Sentence pair"
    (call it in a button's ``on_click``)."""
    if pair is None:
        state.set_kept("input_source", "Your text")
        state.set_kept("text", text)
    else:
        state.set_kept("input_source", "Sentence pair")
        state.set_kept("pair_text", text)
        state.set_kept("pair_second", pair)


def _code(text: str) -> str:
    """``text`` as a markdown code span (shown literally, whatever it holds)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def _say_invisible(*texts: str | None) -> None:
    """A caption when the input holds invisible characters, which every model's encoding removes (corpora.invisible)."""
    note = invisible_note([c for text in texts if text for c in remove_invisible(text)[1]])
    if note:
        st.caption(note)


def _typed(text: str) -> str:
    """Typed text split as the datasets are (``corpora.typed_text``); says so where that changed a word."""
    _say_invisible(text)
    split = normalize_typed_text(text)
    changed = [(word, normalize_typed_text(word)) for word in text.split() if normalize_typed_text(word) != word]
    if changed:
        shown = ", ".join(f"{_code(word)} → {_code(words)}" for word, words in changed[:5])
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        st.caption(f"Split as the datasets are (punctuation and n't / 's are words of their own): {shown}{more}.")
    return split


def _input_picker(labels: list[str] | None):
    source = kept(st.radio, "Input", "input_source", SOURCES[0], SOURCES, horizontal=True)
    written = state.examples()
    if source == "Example":
        items = written["sentences"] + written["pairs"]
        labels = [item["text"] + (f"  ‖  {item['pair']}" if "pair" in item else "") for item in items]
        index = kept(st.selectbox, "Example", "example_index", 0, range(len(items)), format_func=lambda i: labels[i])
        st.caption(items[index]["note"])
        return items[index]["text"], items[index].get("pair"), f"example {index}", None
    if source == "Your text":
        text = kept(st.text_area, "Text", "text", written["sentences"][0]["text"], height=100)
        return _typed(text), None, "typed text", None
    if source == "Sentence pair":
        first = written["pairs"][0]
        text = kept(st.text_area, "Premise (first segment)", "pair_text", first["text"], height=80)
        pair = kept(st.text_area, "Hypothesis (second segment)", "pair_second", first["pair"], height=80)
        return _typed(text), _typed(pair), "typed pair", None
    return _dataset_picker(labels)


def render() -> state.Selection | None:
    """Draw the sidebar and store the selection; None when no usable model or input is chosen."""
    with st.sidebar:
        st.markdown(f"### {settings.PRODUCT}")
        for problem in share_link.apply_link(OTHER_MODEL):  # a shared link's values, before any widget reads them
            st.warning(problem)
        spec = _model_picker()
        classifier = None
        if spec:
            try:
                classifier = loaders.classifier(spec)
            except UserFacingError as error:
                st.error(str(error))
        if classifier is not None:
            info = classifier.describe()
            st.caption(f"{info['model_type']} · {info['parameters'] / 1e6:.1f} M parameters · {info['device']} · "
                       f"labels: {', '.join(classifier.labels)}")
            if classifier.manifest.get("accuracy") is not None:
                st.caption(f"{classifier.manifest['eval_data']} accuracy: {classifier.manifest['accuracy']:.1%}")
            for warning in classifier.warnings:  # about the model itself (e.g. an untrained head), on every page
                st.warning(warning, icon=":material/warning:")
        picked = _input_picker(classifier.labels if classifier is not None else None)
        labels = classifier.labels if classifier is not None else []
        target = kept(st.selectbox, "Explain the class", f"target-{spec}", None, [None] + list(range(len(labels))),
                      format_func=lambda t: "predicted class" if t is None else f"{t}: {labels[t]}")
        contrast = kept(st.selectbox, "Rather than (contrast class)", f"contrast-{spec}", None,
                        [None] + list(range(len(labels))),
                        format_func=lambda t: "no contrast" if t is None else f"{t}: {labels[t]}",
                        help="Explain 'why this class rather than that one': each method explains its score of the "
                             "class minus that of the contrast class (logit difference, or probability "
                             "difference where a method scores probabilities); removal metrics read p(A) - p(B).")
        level = kept(st.radio, "View", "level", "word", ("word", "token"), horizontal=True,
                     format_func=lambda v: "words" if v == "word" else "sub-word tokens")
        palette_picker()  # kept in the session: every heatmap of every page draws with it
    if spec is None or classifier is None or picked is None:  # (a classifier is loaded from a spec only)
        state.store(None)
        return None
    text, pair, source, example = picked
    selection = state.Selection(model=spec, text=text, pair=pair, target=target, level=level, source=source,
                                example=example, contrast=contrast)
    state.store(selection)
    with st.sidebar:
        share_link.render(selection)
    return selection
