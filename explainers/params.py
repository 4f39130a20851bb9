"""Parameter schemas: each explainer's ``Params`` dataclass describes its own controls.

``param(...)`` attaches a label, help text and a range or choice list to a dataclass field; the UI
builds its widgets from ``schema(Params)`` and the command line validates with ``validate``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


def param(default: Any, label: str, help: str = "", choices: tuple | None = None, min: float | None = None,
          max: float | None = None, step: float | None = None):
    return dataclasses.field(default=default, metadata={"label": label, "help": help, "choices": choices,
                                                         "min": min, "max": max, "step": step})


@dataclass(frozen=True)
class ParamSpec:
    name: str
    default: Any
    type: type
    label: str
    help: str
    choices: tuple | None
    min: float | None
    max: float | None
    step: float | None


def schema(params_class) -> list[ParamSpec]:
    specs = []
    for f in dataclasses.fields(params_class):
        meta = f.metadata
        specs.append(ParamSpec(name=f.name, default=f.default, type=type(f.default), label=meta.get("label", f.name),
                               help=meta.get("help", ""), choices=meta.get("choices"), min=meta.get("min"),
                               max=meta.get("max"), step=meta.get("step")))
    return specs


class ParamError(ValueError):
    """A parameter value outside its schema; the message names the parameter and the allowed values."""


def validate(params) -> None:
    for spec in schema(type(params)):
        value = getattr(params, spec.name)
        if spec.choices is not None and value not in spec.choices:
            raise ParamError(f"{spec.label} ({spec.name}) must be one of {', '.join(map(str, spec.choices))}; "
                             f"got {value!r}.")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if spec.min is not None and value < spec.min or spec.max is not None and value > spec.max:
                raise ParamError(f"{spec.label} ({spec.name}) must be between {spec.min} and {spec.max}; got {value}.")


def coerce(params_class, values: dict) -> Any:
    """Build a Params instance from loosely typed values (e.g. strings from the command line)."""
    known = {f.name: f for f in dataclasses.fields(params_class)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ParamError(f"Unknown parameter(s) {', '.join(unknown)}; known: {', '.join(known)}.")
    converted = {}
    for name, value in values.items():
        kind = type(known[name].default)
        if isinstance(value, str) and kind is bool:
            value = value.strip().lower() in {"1", "true", "yes", "on"}
        elif isinstance(value, str) and kind in (int, float):
            try:
                value = kind(value)
            except ValueError as error:
                raise ParamError(f"{name} must be a number; got {value!r}.") from error
        converted[name] = value
    params = params_class(**converted)
    validate(params)
    return params
