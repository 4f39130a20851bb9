"""Explainers by string id: the id is also the widget option, the CLI name and part of the cache key."""
from __future__ import annotations

from explainers.base import Explainer
from explainers.params import ParamError

REGISTRY: dict[str, type[Explainer]] = {}


def register(cls: type[Explainer]) -> type[Explainer]:
    if not cls.id or cls.id in REGISTRY:
        raise ValueError(f"explainer id {cls.id!r} is empty or registered twice")
    REGISTRY[cls.id] = cls
    return cls


def explainer_class(method_id: str) -> type[Explainer]:
    try:
        return REGISTRY[method_id]
    except KeyError:
        raise ParamError(f"Unknown method '{method_id}'. Known methods: {', '.join(REGISTRY)}.") from None


def create(method_id: str, preset: str | None = None, **params) -> Explainer:
    return explainer_class(method_id)(preset=preset, **params)


def available(family: str | None = None) -> list[type[Explainer]]:
    return [cls for cls in REGISTRY.values() if family is None or cls.family == family]


def split_spec(spec: str) -> tuple[str, str | None]:
    """The syntax of a "name[:preset]" string, nothing checked: ``(name lower-cased, preset or None)``.
    ROAR's measures use it before resolving their aliases; everything else calls ``parse_spec``."""
    name, _, preset = spec.strip().partition(":")
    return name.strip().lower(), (preset.strip() or None)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """The one parser of a "method[:preset]" string (CLI flags, ensembles, study configs): returns
    ``(method_id, preset or None)``; the method must be registered and the preset one of its presets
    (ParamError otherwise)."""
    method, preset = split_spec(spec)
    cls = explainer_class(method)
    if preset is not None and preset not in cls.presets:
        raise ParamError(f"Unknown preset '{preset}' for {method}; presets: {', '.join(cls.presets) or 'none'}.")
    return method, preset


def format_spec(method_id: str, preset: str | None = None) -> str:
    """The inverse of ``parse_spec``: "method:preset", or the method id alone when no preset is chosen."""
    return f"{method_id}:{preset}" if preset else method_id


def is_known_spec(spec: str) -> bool:
    """Whether ``parse_spec`` accepts the spec (lists that keep only what this installation registers)."""
    try:
        parse_spec(spec)
    except ParamError:
        return False
    return True


def create_from_spec(spec: str, **params) -> Explainer:
    """An explainer from "method[:preset]"."""
    method, preset = parse_spec(spec)
    return create(method, preset=preset, **params)


def label_for(spec: str, params: dict | None = None) -> str:
    """The display label of a method id or "method[:preset]" spec, from the explainer class's ``label``:
    ``input_x_gradient`` -> "Input x Gradient", ``lime:paper-000`` -> "LIME (paper-000)"; parameter overrides
    (``params``, or written after the spec as "lime (n_samples=50)") follow the preset, inside a label's own
    brackets when it has them ("Saliency (gradient; output=l2)"). A name that is no registered method (the
    random baseline row of a metric, a ROAR alias) comes back unchanged, so tables can pass every row through it."""
    head, bracket, overrides = spec.strip().partition(" (")
    method, preset = split_spec(head)
    cls = REGISTRY.get(method)
    if cls is None:
        return spec
    extra = [preset] if preset else []
    extra += [overrides.removesuffix(")").strip()] if bracket else []
    extra += [f"{k}={v}" for k, v in sorted((params or {}).items())]
    if not extra:
        return cls.label
    if cls.label.endswith(")"):
        return f"{cls.label[:-1]}; {', '.join(extra)})"
    return f"{cls.label} ({', '.join(extra)})"
