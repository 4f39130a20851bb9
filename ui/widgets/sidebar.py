"""The sidebar every page draws: model, input (example, typed text, sentence pair, dataset), target, view.

Each page calls ``render()`` first; the values survive page switches through ``state.kept``.
"""
from __future__ import annotations

import streamlit as st

import settings
from corpora import DATASETS, DataError
from models import BUILT_IN, UserFacingError
from models.prepare import RECIPES

from ui.widgets import loaders

from ui.widgets import state
from ui.widgets.state import kept

OTHER_MODEL = "other: a folder or hub id"
SOURCES = ("Example", "Your text", "Sentence pair", "Dataset")


def _model_picker() -> str | None:
    options = list(BUILT_IN) + [OTHER_MODEL]
    wanted = settings.default_model_spec()
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


def _dataset_picker():
    name = kept(st.selectbox, "Dataset", "dataset_name", "sst2", list(DATASETS),
                format_func=lambda n: DATASETS[n].title)
    info = DATASETS[name]
    split = kept(st.selectbox, "Split", f"dataset_split_{name}", info.default_split, info.splits)
    try:
        examples = loaders.dataset(f"{name}:{split}")
    except DataError as error:
        st.error(str(error))
        return None
    index = int(kept(st.number_input, f"Example (0-{len(examples) - 1})", f"dataset_index_{name}_{split}", 0,
                     min_value=0, max_value=len(examples) - 1, step=1))
    example = examples[index]
    gold = f" · gold: {example.label_name}" if example.label is not None else ""
    st.caption(f"`{example.id}`{gold}")
    return example.text, example.pair, example.id, example


def _input_picker():
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
        return text, None, "typed text", None
    if source == "Sentence pair":
        first = written["pairs"][0]
        text = kept(st.text_area, "Premise (first segment)", "pair_text", first["text"], height=80)
        pair = kept(st.text_area, "Hypothesis (second segment)", "pair_second", first["pair"], height=80)
        return text, pair, "typed pair", None
    return _dataset_picker()


def render() -> state.Selection | None:
    """Draw the sidebar and store the selection; None when no usable model or input is chosen."""
    with st.sidebar:
        st.markdown(f"### {settings.PRODUCT}")
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
        picked = _input_picker()
        labels = classifier.labels if classifier is not None else []
        target = kept(st.selectbox, "Explain the class", f"target-{spec}", None, [None] + list(range(len(labels))),
                      format_func=lambda t: "predicted class" if t is None else f"{t}: {labels[t]}")
        level = kept(st.radio, "View", "level", "word", ("word", "token"), horizontal=True,
                     format_func=lambda v: "words" if v == "word" else "sub-word tokens")
    if classifier is None or picked is None:
        state.store(None)
        return None
    text, pair, source, example = picked
    selection = state.Selection(model=spec, text=text, pair=pair, target=target, level=level, source=source,
                                example=example)
    state.store(selection)
    return selection
