"""Widgets generated from an options schema (``explainers.params.param``): no per-option UI code.

``schema_controls`` draws one widget per ``param()`` field of any option group (an explainer's ``Params``,
``RemovalOptions``, ``RunOptions``, ``PlausibilityConfig``, ROAR's ``StudyConfig`` and ``Variant``, the sanity
check's ``SanityOptions``), so an option declared with ``param()`` appears on its page without UI code:

| field                          | widget                                                            |
|--------------------------------|-------------------------------------------------------------------|
| ``choices``                    | selectbox (plus "(not set)" when the default is None)             |
| no choices, ``labels`` a dict  | selectbox of the dict's keys (a page naming the useful values)    |
| bool                           | checkbox                                                          |
| int / float                    | number_input with the schema's min, max and step                  |
| anything else, or None allowed | text_input (empty = not set); the schema's ``coerce`` converts it |

Values are returned as the widgets give them; the caller builds its option group with ``coerce`` /
``make_config`` and shows the schema's one-line ``ParamError`` message on a bad value.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import streamlit as st

import settings
from explainers import explainer_class, schema
from explainers.params import ParamSpec

NOT_SET = "(not set)"
T = TypeVar("T")


def schema_controls(params_cls, key_prefix: str, base: Any = None, only: Iterable[str] | None = None,
                    exclude: Iterable[str] = (), labels: dict[str, dict | Callable] | None = None,
                    columns: int = 4) -> dict[str, Any]:
    """One widget per ``param()`` field of ``params_cls`` (``only`` those, in that order; never ``exclude``d ones),
    starting from ``base`` (an instance or a dict of values; default: the class defaults). ``labels`` names the
    choices of a field (a dict or a function; None is the "not set" choice of an optional field). Keys are
    ``{key_prefix}-{field}``: put what resets the values (a preset) in the prefix. Returns {field: value} of the
    fields shown."""
    specs = {spec.name: spec for spec in schema(params_cls)}
    names = [n for n in (only if only is not None else specs) if n not in set(exclude)]
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise KeyError(f"{params_cls.__name__} has no option(s) {', '.join(unknown)}")
    current = _values_of(base)
    labels = labels or {}
    values = {}
    for i, name in enumerate(names):
        if columns > 1 and i % columns == 0:
            row = st.columns(columns)
        with row[i % columns] if columns > 1 else st.container():
            spec = specs[name]
            values[name] = _widget(spec, current.get(name, spec.default), f"{key_prefix}-{name}", labels.get(name))
    return values


def _values_of(base) -> dict:
    if base is None:
        return {}
    # an instance's fields (a dataclass class itself has no values: it reads as a mapping and fails there)
    return dataclasses.asdict(base) if dataclasses.is_dataclass(base) and not isinstance(base, type) else dict(base)


def _or_none(kind: Callable[[float], T], value: float | None) -> T | None:
    return None if value is None else kind(value)


def _widget(spec: ParamSpec, current, key: str, label_of: dict | Callable | None):
    help_text = spec.help or None
    if spec.server_path and settings.shared_mode():  # shown, never typed: no server path from a browser
        st.text_input(spec.label, value="" if current is None else str(current), key=key, disabled=True,
                      help=(help_text or "") + " (set by the server's administrator on this shared server)")
        return current
    choices = spec.choices if spec.choices is not None else tuple(label_of) if isinstance(label_of, dict) else None
    if choices is not None:
        options = ([None] if spec.optional else []) + list(choices)
        name = label_of.get if isinstance(label_of, dict) else label_of

        def format_choice(choice):
            named = name(choice) if name else None
            return named or (NOT_SET if choice is None else str(choice))

        index = options.index(current) if current in options else 0
        return st.selectbox(spec.label, options, index=index, key=key, help=help_text, format_func=format_choice)
    if spec.type is bool and not spec.optional:
        return st.checkbox(spec.label, value=bool(current), key=key, help=help_text)
    if spec.type is int and not spec.optional and spec.parse is None:  # int and float apart: each its own typed widget
        return int(st.number_input(spec.label, value=int(current), min_value=_or_none(int, spec.min),
                                   max_value=_or_none(int, spec.max), step=1 if spec.step is None else int(spec.step),
                                   key=key, help=help_text))
    if spec.type is float and not spec.optional and spec.parse is None:
        return float(st.number_input(spec.label, value=float(current), min_value=_or_none(float, spec.min),
                                     max_value=_or_none(float, spec.max), step=_or_none(float, spec.step), key=key,
                                     help=help_text, format="%g"))
    text = st.text_input(spec.label, value="" if current is None else str(current), key=key,
                         help=(help_text or "") + (" (empty: not set)" if spec.optional else "") or None)
    return None if spec.optional and not text.strip() else text.strip()


def method_controls(method_id: str, key_prefix: str, preset: str | None = None,
                    overrides: dict | None = None) -> tuple[str | None, dict]:
    """Preset picker plus one widget per parameter, starting from ``preset`` and ``overrides`` (the settings kept
    for the method while its widgets were not drawn); returns (preset, overrides). A preset other than the kept one
    starts from that preset's values."""
    cls = explainer_class(method_id)
    presets = ["(defaults)"] + list(cls.presets)
    kept_preset = preset if preset in cls.presets else None
    picked = st.selectbox("Preset", presets, index=presets.index(kept_preset or "(defaults)"),
                          key=f"{key_prefix}-preset", help="Settings from the papers; individual values below override "
                                                           "them.")
    chosen = None if picked == "(defaults)" else picked
    base = dataclasses.asdict(cls(preset=chosen).params)
    start = {**base, **(overrides or {})} if chosen == kept_preset else base
    values = schema_controls(cls.Params, f"{key_prefix}-{chosen}", base=start, columns=1)
    return chosen, {k: v for k, v in values.items() if v != base[k]}
