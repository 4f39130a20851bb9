"""Widgets generated from an explainer's Params schema and presets (no per-method UI code)."""
from __future__ import annotations

import dataclasses

import streamlit as st

from explainers import explainer_class, schema


def method_controls(method_id: str, key_prefix: str) -> tuple[str | None, dict]:
    """Preset picker plus one widget per parameter; returns (preset, overrides)."""
    cls = explainer_class(method_id)
    presets = ["(defaults)"] + list(cls.presets)
    preset = st.selectbox("Preset", presets, key=f"{key_prefix}-preset",
                          help="Settings from the papers; individual values below override them.")
    preset = None if preset == "(defaults)" else preset
    base = dataclasses.asdict(cls(preset=preset).params)
    values = {}
    for spec in schema(cls.Params):
        key = f"{key_prefix}-{preset}-{spec.name}"
        current = base[spec.name]
        if spec.choices is not None:
            values[spec.name] = st.selectbox(spec.label, spec.choices, index=list(spec.choices).index(current),
                                             key=key, help=spec.help or None)
        elif isinstance(current, bool):
            values[spec.name] = st.checkbox(spec.label, value=current, key=key, help=spec.help or None)
        elif isinstance(current, int):
            values[spec.name] = int(st.number_input(spec.label, value=current, min_value=int(spec.min) if spec.min is not None else None,
                                                    max_value=int(spec.max) if spec.max is not None else None,
                                                    step=int(spec.step or 1), key=key, help=spec.help or None))
        elif isinstance(current, float):
            values[spec.name] = float(st.number_input(spec.label, value=current, min_value=spec.min, max_value=spec.max,
                                                      step=spec.step, key=key, help=spec.help or None, format="%g"))
        else:
            values[spec.name] = st.text_input(spec.label, value=str(current), key=key, help=spec.help or None)
    overrides = {k: v for k, v in values.items() if v != base[k]}
    return preset, overrides
