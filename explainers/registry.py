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


def parse_spec(spec: str) -> tuple[str, str | None]:
    """The one parser of a "method[:preset]" string (CLI flags, ensembles, study configs): returns
    ``(method_id, preset or None)``, lower-cased and stripped; the method must be registered."""
    method, _, preset = spec.strip().partition(":")
    method = method.strip().lower()
    explainer_class(method)
    return method, (preset.strip() or None)


def create_from_spec(spec: str, **params) -> Explainer:
    """An explainer from "method[:preset]"."""
    method, preset = parse_spec(spec)
    return create(method, preset=preset, **params)
