"""Shareable links: the page, the model, the input, the methods and options of the page in the URL's query
parameters, so a teacher can send a class to the same view. The page is also the URL's path (``/Faithfulness``);
``?page=Faithfulness`` opens it from the bare address (app.py).

``apply_link`` runs first in the sidebar: on a session's first run with a link (or a new link) it writes the link's
values where the sidebar and the page's widgets read their starting values (``keep:<key>`` and widget keys).
``render`` shows the link of the current view with a copy button, or says why it cannot be a link.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explainers import REGISTRY, split_spec
from models import BUILT_IN

from ui.widgets.state import Selection

MAX_LINK = 2000  # characters: longer links break in some browsers, chat apps and proxies
APPLIED = "share:applied"
INPUT_PARAMS = ("text", "pair", "example", "dataset", "index")
# the page's method picker (its kept key) and its options: query parameter -> (widget key, parser)
METHOD_KEYS = {"1_Heatmaps.py": "methods", "2_Faithfulness.py": "faith-methods", "3_Sanity_checks.py": "sanity-methods",
               "5_Plausibility.py": "plaus-methods"}


def _flag(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


PAGE_OPTIONS = {"1_Heatmaps.py": {"norm": ("display-norm", str), "abs": ("display-abs", _flag)},
                "9_Guided_tour.py": {"step": ("tour-step", str), "method": ("tour-method", str)}}
SOURCES = {"text": "Your text", "pair": "Sentence pair", "example": "Example", "dataset": "Dataset"}


def current_page() -> str:
    """The file name of the page being run ("1_Heatmaps.py"); "" outside a multipage run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return ""
    page = ctx.pages_manager.get_pages().get(ctx.pages_manager.current_page_script_hash, {})
    return Path(str(page.get("script_path", ""))).name


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
    if any(k in params for k in ("model", "level", "target", "palette", *INPUT_PARAMS)) and \
            _first_time(signature, "sidebar"):
        problems += _apply_sidebar(params, other_model)
    page = current_page()
    if any(k in params for k in ("methods", *PAGE_OPTIONS.get(page, {}))) and _first_time(signature, page):
        problems += _apply_page(params, page)
    return problems


def _apply_sidebar(params: dict, other_model: str) -> list[str]:
    model = params.get("model")
    if model:
        _keep("model_choice", model if model in BUILT_IN else other_model)
        if model not in BUILT_IN:
            _keep("model_path", model)
    problems = _apply_input(params)
    if params.get("level") in ("word", "token"):
        _keep("level", params["level"])
    if params.get("palette"):
        _keep("palette", params["palette"])
    if model and params.get("target", "").isdigit():
        _keep(f"target-{model}", int(params["target"]))
    return problems


def _apply_page(params: dict, page: str) -> list[str]:
    problems = []
    method_key = METHOD_KEYS.get(page)
    if params.get("methods") and method_key:
        wanted = [m.strip() for m in params["methods"].split(",") if m.strip()]
        known = [m for m in wanted if split_spec(m)[0] in REGISTRY]
        if len(known) < len(wanted):
            problems.append(f"The link names methods this installation does not have: "
                            f"{', '.join(m for m in wanted if m not in known)}; they are left out.")
        _keep(method_key, known)
    for name, (widget_key, parse) in PAGE_OPTIONS.get(page, {}).items():
        if params.get(name):
            st.session_state[widget_key] = parse(params[name])
    return problems


def _apply_input(params: dict) -> list[str]:
    if "dataset" in params:
        name, _, split = params["dataset"].partition(":")
        index = params.get("index", "0")
        if not index.isdigit():
            return [f"The link's example number '{index}' is not a number; showing the first example."]
        _keep("input_source", SOURCES["dataset"])
        _keep("dataset_name", name)
        if split:
            _keep(f"dataset_split_{name}", split)
            _keep(f"dataset_index_{name}:{split}", int(index))
    elif "example" in params and params["example"].isdigit():
        _keep("input_source", SOURCES["example"])
        _keep("example_index", int(params["example"]))
    elif "pair" in params:
        _keep("input_source", SOURCES["pair"])
        _keep("pair_text", params.get("text", ""))
        _keep("pair_second", params["pair"])
    elif "text" in params:
        _keep("input_source", SOURCES["text"])
        _keep("text", params["text"])
    return []


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
