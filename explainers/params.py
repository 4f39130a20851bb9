"""Options schemas: a dataclass whose fields are declared with ``param(...)`` describes its own controls.

The one schema for every option group: each explainer's ``Params``, the removal metrics' ``RemovalOptions``,
plausibility's ``PlausibilityConfig``, ROAR's ``StudyConfig`` and ``Variant``. ``param`` attaches a label,
help text and a range or choice list to a dataclass field; the UI builds its widgets from ``schema(cls)``,
the command line builds its flags from it (``commands.common.add_schema_flags``), and ``coerce`` /
``options_from`` turn loosely typed values (strings from a command line, numbers from JSON) into a
validated instance. Fields declared without ``param`` (lists, nested records) are not options.
"""
from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from settings import parse_bool

NUMBERS = (int, float)
Group = TypeVar("Group")


def param(default: Any, label: str, help: str = "", choices: tuple | None = None, min: float | None = None,
          max: float | None = None, step: float | None = None, type: type | None = None,
          parse: Callable[[Any], Any] | None = None, server_path: bool = False):
    """A dataclass field that is a user-facing option. ``type`` is needed only when the default is None
    (None then means "not set": e.g. "the preset's own operator"). ``parse`` reads an option with a syntax of
    its own (the target policy's "predicted" | "gold" | class index); it raises ValueError on a bad value.
    ``server_path``: the value may name a folder on the server (a checkpoint, a masked LM): a shared server's
    pages show it but let no one type it (a shared server takes no path from a browser)."""
    return dataclasses.field(default=default, metadata={"label": label, "help": help, "choices": choices,
                                                         "min": min, "max": max, "step": step, "type": type,
                                                         "parse": parse, "server_path": server_path})


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
    parse: Callable[[Any], Any] | None = None
    server_path: bool = False

    @property
    def optional(self) -> bool:
        """None is an allowed value (it stands for "not set")."""
        return self.default is None


def _value_type(params_class, field: dataclasses.Field) -> type:
    declared = field.metadata.get("type")
    if declared is not None:
        return declared
    if field.default is not None:
        return type(field.default)
    hint = typing.get_type_hints(params_class).get(field.name)  # "str | None" -> str
    members = [t for t in typing.get_args(hint) if t is not type(None)]
    return members[0] if members else str


@functools.cache
def schema(params_class: type) -> tuple[ParamSpec, ...]:
    """The fields declared with ``param`` (in declaration order)."""
    specs = []
    for f in dataclasses.fields(params_class):
        meta = f.metadata
        if "label" not in meta:
            continue
        specs.append(ParamSpec(name=f.name, default=f.default, type=_value_type(params_class, f), label=meta["label"],
                               help=meta.get("help", ""), choices=meta.get("choices"), min=meta.get("min"),
                               max=meta.get("max"), step=meta.get("step"), parse=meta.get("parse"),
                               server_path=meta.get("server_path", False)))
    return tuple(specs)


class ParamError(ValueError):
    """A parameter value outside its schema; the message names the parameter and the allowed values."""


def validate(params) -> None:
    params_class: type = type(params)  # as plain ``type``: mypy reads ``type[Any]`` as unhashable (python/mypy#11470)
    for spec in schema(params_class):
        value = getattr(params, spec.name)
        if value is None and spec.optional:
            continue
        if spec.choices is not None and value not in spec.choices:
            raise ParamError(f"{spec.label} ({spec.name}) must be one of {', '.join(map(str, spec.choices))}; "
                             f"got {value!r}.")
        if isinstance(value, NUMBERS) and not isinstance(value, bool):
            if spec.min is not None and value < spec.min or spec.max is not None and value > spec.max:
                bounds = (f"between {spec.min} and {spec.max}" if spec.min is not None and spec.max is not None
                          else f"at least {spec.min}" if spec.min is not None else f"at most {spec.max}")
                raise ParamError(f"{spec.label} ({spec.name}) must be {bounds}; got {value}.")


def convert(spec: ParamSpec, value: Any) -> Any:
    """One value to the field's type: "3" -> 3, "false" -> False, 3.0 -> 3 for an int field, numpy numbers to
    Python numbers; None stays None. A value that cannot be converted raises ParamError."""
    if value is None:
        return None
    if spec.parse is not None:
        try:
            return spec.parse(value)
        except ValueError as error:
            raise ParamError(f"{spec.label} ({spec.name}): {error}") from None
    kind = spec.type
    try:
        if kind is bool:
            return parse_bool(value) if isinstance(value, str) else bool(value)
        if kind is int and not isinstance(value, int):
            number = float(value)
            if not number.is_integer():
                raise ValueError(f"{value!r} is not a whole number")
            return int(number)
        if kind is float and not isinstance(value, (int, float)):
            return float(value)
    except (TypeError, ValueError) as error:
        what = {bool: "true or false", int: "a whole number", float: "a number"}[kind]
        raise ParamError(f"{spec.label} ({spec.name}) must be {what}; got {value!r}.") from error
    return value


def coerce(params_class, values: dict) -> Any:
    """Build a validated instance from loosely typed values (e.g. strings from the command line)."""
    specs = {spec.name: spec for spec in schema(params_class)}
    known = {f.name for f in dataclasses.fields(params_class)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ParamError(f"Unknown parameter(s) {', '.join(unknown)}; known: {', '.join(specs)}.")
    converted = {name: convert(specs[name], value) if name in specs else value for name, value in values.items()}
    params = params_class(**converted)
    validate(params)
    return params


class FrozenOptions(dict):
    """A run's options, read-only, that parse each option group once: ``options_from(Group, options)`` parses the
    group the first time and returns that same instance after (a run asks per example, evaluator and cell). A dict,
    so JSON, ``{**options}`` and ``.get`` work as on the plain dict it was made from; changing it raises. Two threads
    asking for a new group at once may both parse it: the first instance stored is kept."""

    __slots__ = ("_groups", "_derived")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._groups: dict[type, Any] = {}
        self._derived: dict[tuple, FrozenOptions] = {}

    def group(self, params_class: type) -> Any:
        found = self._groups.get(params_class)
        if found is None:
            found = self._groups.setdefault(params_class, _parse(params_class, self, ignore_unknown=True))
        return found

    def with_values(self, **changes) -> FrozenOptions:
        """These options with ``changes`` (a preset's pinned value), made once: its groups are parsed once too."""
        key = tuple(sorted(changes.items(), key=lambda item: item[0]))
        try:
            found = self._derived.get(key)
        except TypeError:  # an unhashable value: not remembered
            return FrozenOptions({**self, **changes})
        if found is None:
            found = self._derived.setdefault(key, FrozenOptions({**self, **changes}))
        return found

    def __reduce__(self):  # pickled (worker processes, Ray) as its values; the copy parses again where it runs
        return type(self), (dict(self),)

    def _read_only(self, *args, **kwargs):
        raise TypeError("A run's options are read-only: build a new dict ({**options, key: value}) or use "
                        "with_values(options, key=value).")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]


def frozen_options(options: dict | None) -> FrozenOptions:
    """``options`` as ``FrozenOptions`` (the same object when it already is one)."""
    return options if isinstance(options, FrozenOptions) else FrozenOptions(options or {})


def with_values(options: dict | None, **changes) -> dict:
    """``options`` with ``changes``: remembered by frozen options (so its groups are parsed once), a new dict else."""
    if isinstance(options, FrozenOptions):
        return options.with_values(**changes)
    return {**(options or {}), **changes}


def options_from(params_class: type[Group], options: dict | None, ignore_unknown: bool = True) -> Group:
    """An option group from a run's options dict: keys of other groups are ignored, None means "the default".
    Frozen options (``FrozenOptions``) parse each group once and return that instance after."""
    if ignore_unknown and isinstance(options, FrozenOptions):
        return options.group(params_class)
    return _parse(params_class, options, ignore_unknown)


def _parse(params_class, options: dict | None, ignore_unknown: bool) -> Any:
    options = options or {}
    names = {spec.name for spec in schema(params_class)}
    values = {k: v for k, v in options.items() if (k in names or not ignore_unknown) and v is not None}
    return coerce(params_class, values)
