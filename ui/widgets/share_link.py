"""Shareable links: the page, the model, the input, the methods and options of the page in the URL's query
parameters, so a teacher can send a class to the same view. The page is also the URL's path (``/Faithfulness``);
``?page=Faithfulness`` opens it from the bare address (app.py).

``apply_link`` runs first in the sidebar: on a session's first run with a link (or a new link) it writes the link's
values where the sidebar and the page's widgets read their starting values (``keep:<key>`` and widget keys).
``render`` shows the link of the current view with a copy button, or says why it cannot be a link.

Every value of a link is checked before it is used (docs/guarantees.md): a model, dataset, split, example number,
class, method, preset, option or page this server does not have, or a malformed number, gets a warning that names
the value (as a code span: shown literally) and says what is shown instead. Nothing is dropped silently, and nothing
reaches a widget that would refuse it with a traceback (an example number past the end of the dataset).
"""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

import settings
from corpora import DATASETS, DataError
from explainers import NORMALIZATIONS, REGISTRY, split_spec
from models import BUILT_IN, UserFacingError
from ui.widgets import loaders, state
from ui.widgets.heatmap import PALETTES
from ui.widgets.state import Selection

MAX_LINK = 2000  # characters: longer links break in some browsers, chat apps and proxies
APPLIED = "share:applied"
INPUT_PARAMS = ("text", "pair", "example", "dataset", "index")
# the page's method picker (its kept key) and its options: query parameter -> (widget key, parser)
METHOD_KEYS = {"1_Heatmaps.py": "methods", "2_Faithfulness.py": "faith-methods", "3_Sanity_checks.py": "sanity-methods",
               "5_Plausibility.py": "plaus-methods"}


SHOWN_CHARACTERS = 60  # of a bad value in a message


def shown(value: str) -> str:
    """A link's value in a message: cut to SHOWN_CHARACTERS, as a markdown code span (shown literally, whatever it
    holds: no markdown, no HTML)."""
    text = " ".join(str(value).split())
    text = text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS] + "…"
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def _choice(options):
    """A parser that accepts one of ``options`` (ValueError otherwise)."""
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"one of {', '.join(options)}")
        return text
    return parse


def _flag(text: str) -> bool:
    try:
        return settings.parse_bool(text)
    except ValueError:
        raise ValueError("true or false") from None


# the tour checks its own step and method (ui/views/tour.py), with a message
PAGE_OPTIONS = {"1_Heatmaps.py": {"norm": ("display-norm", _choice(NORMALIZATIONS)), "abs": ("display-abs", _flag)},
                "9_Guided_tour.py": {"step": ("tour-step", str), "method": ("tour-method", str)}}
SOURCES = {"text": "Your text", "pair": "Sentence pair", "example": "Example", "dataset": "Dataset"}


def current_page() -> str:
    """The file name of the page being run ("1_Heatmaps.py"); "" outside a multipage run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return ""
    page = ctx.pages_manager.get_pages().get(ctx.pages_manager.current_page_script_hash)
    return "" if page is None else Path(str(page["script_path"])).name


def page_name(file_name: str) -> str:
    """The name a link gives the page ("2_Faithfulness.py" -> "Faithfulness"; app.py reads it back)."""
    return Path(file_name).stem.split("_", 1)[-1]


def _keep(key: str, value) -> None:
    st.session_state[f"keep:{key}"] = value


def _first_time(signature: tuple, scope: str) -> bool:
    """True once per (link, scope): a link is applied when it arrives, never again over the reader's own changes."""
    applied = st.session_state.setdefault(APPLIED, set())
    if (signature, scope) in applied:
        return False
    applied.add((signature, scope))
    return True


def apply_link(other_model: str) -> list[str]:
    """Write a new link's values into the session; returns messages about what it could not use. The model, input
    and display choices are applied once per link, the page's methods and options once per link and page (a link
    opened on one page and followed to another). ``other_model`` is the sidebar's "folder or hub id" choice."""
    params = {k: st.query_params.get(k) for k in st.query_params}
    signature = tuple(sorted(params.items()))
    problems = []
    if any(k in params for k in ("model", "level", "target", "contrast", "palette", *INPUT_PARAMS)) and \
            _first_time(signature, "sidebar"):
        problems += _apply_sidebar(params, other_model)
    page = current_page()
    if any(k in params for k in ("methods", *PAGE_OPTIONS.get(page, {}))) and _first_time(signature, page):
        problems += _apply_page(params, page)
    return problems


def _current_model(other_model: str) -> str:
    """The model the session shows now (before the sidebar is drawn)."""
    choice = st.session_state.get("keep:model_choice", settings.default_model_spec())
    return st.session_state.get("keep:model_path", "") if choice == other_model else choice


def _model_opens(model: str) -> bool:
    """Whether ``model`` is a built-in model, or a folder / hub id this server opens (the loader's reason is not
    quoted: it could tell which paths exist)."""
    if model in BUILT_IN:
        return True
    try:
        loaders.classifier(model)
    except (UserFacingError, OSError, ValueError):
        return False
    return True


def _labels(model: str) -> list[str] | None:
    """The model's class names when it is loaded or prepared (None: it cannot be checked yet)."""
    if not model or not loaders.is_prepared(model):
        return None
    try:
        return list(loaders.classifier(model).labels)
    except (UserFacingError, OSError, ValueError):
        return None


def _apply_sidebar(params: dict, other_model: str) -> list[str]:
    problems = []
    model = params.get("model")
    if model and not _model_opens(model):
        problems.append(f"The link's model {shown(model)} is not one of this server's models and could not be opened; "
                        f"showing {shown(_current_model(other_model))} instead.")
        model = None
    if model:
        _keep("model_choice", model if model in BUILT_IN else other_model)
        if model not in BUILT_IN:
            _keep("model_path", model)
    problems += _apply_input(params)
    if params.get("level"):
        if params["level"] in ("word", "token"):
            _keep("level", params["level"])
        else:
            problems.append(f"The link's view {shown(params['level'])} is neither `word` nor `token`; showing "
                            f"{st.session_state.get('keep:level', 'word')}s.")
    if params.get("palette"):
        if params["palette"] in PALETTES:
            _keep("palette", params["palette"])
        else:
            problems.append(f"The link's colours {shown(params['palette'])} are not one of this server's palettes "
                            f"({', '.join(PALETTES)}); keeping the current colours.")
    if params.get("target"):
        problems += _apply_target(params["target"], model or _current_model(other_model))
    if params.get("contrast"):  # a contrastive target: "rather than" this class
        problems += _apply_target(params["contrast"], model or _current_model(other_model), "contrast")
    return problems


def _apply_target(target: str, model: str, key: str = "target") -> list[str]:
    fallback = "explaining the predicted class" if key == "target" else "no contrast class"
    if not target.isdigit():
        return [f"The link's class {shown(target)} is not a class number; {fallback}."]
    labels = _labels(model)
    if labels is not None and int(target) >= len(labels):
        return [f"The link's class {shown(target)} is not a class of {shown(model)} (classes 0-{len(labels) - 1}: "
                f"{', '.join(labels)}); {fallback}."]
    _keep(f"{key}-{model}", int(target))
    return []


def _apply_page(params: dict, page: str) -> list[str]:
    problems = []
    method_key = METHOD_KEYS.get(page)
    if params.get("methods") and method_key:
        problems += _apply_methods(params["methods"], method_key)
    for name, (widget_key, parse) in PAGE_OPTIONS.get(page, {}).items():
        if params.get(name):
            try:
                st.session_state[widget_key] = parse(params[name])
            except ValueError as error:
                problems.append(f"The link's {name} {shown(params[name])} is not an option here (expected {error}); "
                                f"keeping the page's own choice.")
    return problems


def _apply_methods(text: str, method_key: str) -> list[str]:
    """The link's methods ("saliency,lime:paper-000"): each known method is chosen, a known preset applied to it."""
    problems, known = [], []
    settings_kept = st.session_state.setdefault(f"keep:{method_key}:settings", {})
    unknown = []
    for spec in (m.strip() for m in text.split(",")):
        if not spec:
            continue
        method, preset = split_spec(spec)
        if method not in REGISTRY:
            unknown.append(spec)
            continue
        if method not in known:
            known.append(method)
        if preset is not None and preset not in REGISTRY[method].presets:
            presets = ", ".join(REGISTRY[method].presets) or "none"
            problems.append(f"The link asks {REGISTRY[method].label} for the preset {shown(preset)}, which it does not "
                            f"have (presets: {presets}); using its default settings.")
            settings_kept[method] = None
        elif preset is not None:
            settings_kept[method] = (preset, {})
    if unknown:
        problems.insert(0, f"The link names methods this installation does not have: "
                           f"{', '.join(shown(m) for m in unknown)}; they are left out.")
    _keep(method_key, known)
    return problems


def _apply_input(params: dict) -> list[str]:
    if "dataset" in params:
        return _apply_dataset(params["dataset"], params.get("index", "0"))
    if "example" in params:
        items = state.examples()["sentences"] + state.examples()["pairs"]
        example = params["example"]
        if not example.isdigit() or int(example) >= len(items):
            return [f"The link's example {shown(example)} is not one of the {len(items)} examples (0-{len(items) - 1});"
                    f" keeping the current input."]
        _keep("input_source", SOURCES["example"])
        _keep("example_index", int(example))
    elif "pair" in params:
        _keep("input_source", SOURCES["pair"])
        _keep("pair_text", params.get("text", ""))
        _keep("pair_second", params["pair"])
    elif "text" in params:
        _keep("input_source", SOURCES["text"])
        _keep("text", params["text"])
    return []


def _apply_dataset(dataset: str, index: str) -> list[str]:
    """A built-in dataset (``name:split``) and an example number inside it; a file never travels in a link."""
    name, _, split = dataset.partition(":")
    if name not in DATASETS:
        return [f"The link's dataset {shown(dataset)} is not one of this server's datasets ({', '.join(DATASETS)}); "
                f"keeping the current input."]
    info = DATASETS[name]
    problems = []
    if split not in info.splits:
        problems.append(f"The dataset {info.title} has no split {shown(split)} (splits: {', '.join(info.splits)}); "
                        f"showing {info.default_split}.")
        split = info.default_split
    try:
        size = len(loaders.dataset(f"{name}:{split}"))
    except DataError as error:
        return problems + [f"The link's dataset {shown(dataset)} cannot be opened here ({error}); keeping the current "
                           f"input."]
    if not index.isdigit():
        problems.append(f"The link's example number {shown(index)} is not a number; showing the first example.")
        index = "0"
    elif int(index) >= size:
        problems.append(f"The link's example number {shown(index)} is past the end of {info.title} {split} "
                        f"({size:,} examples: 0-{size - 1:,}); showing the first example.")
        index = "0"
    _keep("input_source", SOURCES["dataset"])
    _keep("dataset_name", name)
    _keep(f"dataset_split_{name}", split)
    _keep(f"dataset_index_{name}:{split}", int(index))
    return problems


def link_params(selection: Selection) -> tuple[dict[str, str], str | None]:
    """The query parameters of the current view, and a message when the input cannot travel in a link."""
    state = st.session_state
    params = {"page": page_name(current_page()), "model": selection.model} if current_page() else \
        {"model": selection.model}
    source = state.get("keep:input_source")
    message = None
    if source == SOURCES["example"]:
        params["example"] = str(state.get("keep:example_index", 0))
    elif source == SOURCES["dataset"]:
        name = state.get("keep:dataset_name", "")
        split = state.get(f"keep:dataset_split_{name}")
        if split is None:  # the user's own file: it lives on this server only
            message = ("A link cannot carry your uploaded file; the link opens the same model and methods with the "
                       "first example.")
        else:
            params.update(dataset=f"{name}:{split}", index=str(state.get(f"keep:dataset_index_{name}:{split}", 0)))
    elif source == SOURCES["pair"]:
        params.update(text=state.get("keep:pair_text", ""), pair=state.get("keep:pair_second", ""))
    else:
        params["text"] = state.get("keep:text", selection.text)
    method_key = METHOD_KEYS.get(current_page())
    if method_key:
        methods = state.get(method_key, state.get(f"keep:{method_key}"))  # the widget's value is current
        if methods:
            params["methods"] = ",".join(methods)
    params["level"] = selection.level
    if selection.target is not None:
        params["target"] = str(selection.target)
    if selection.contrast is not None:
        params["contrast"] = str(selection.contrast)
    if state.get("keep:palette"):
        params["palette"] = state["keep:palette"]
    for name, (widget_key, _) in PAGE_OPTIONS.get(current_page(), {}).items():
        if state.get(widget_key) is not None:
            params[name] = str(state[widget_key]).lower() if isinstance(state[widget_key], bool) else str(state[widget_key])
    return params, message


def link_for(params: dict[str, str]) -> str:
    """The full link (the page's own address when the browser told it; else a link relative to the server)."""
    base = st.context.url or ""
    if base and not urlsplit(base).path:
        base += "/"  # Streamlit gives the first page's address without its slash
    return f"{base}?{urlencode(params, quote_via=quote)}"


def render(selection: Selection | None) -> None:
    """"Share this view": the link with a copy button, or why it cannot be one."""
    if selection is None:
        return
    with st.expander("Share this view", icon=":material/link:"):
        params, message = link_params(selection)
        link = link_for(params)
        if message:
            st.info(message)
        if len(link) > MAX_LINK:
            st.warning(f"This input is too long for a link ({len(link):,} characters; links over {MAX_LINK:,} break "
                       f"in some browsers and chat apps). Shorten the text, or share a dataset example: its link "
                       f"holds only its number.")
            return
        st.caption("Copy link (the button at the right of the box): it opens this page with this model, input, "
                   "methods and options.")
        st.code(link, language=None, wrap_lines=True)
