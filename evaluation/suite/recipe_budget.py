"""A build recipe shrunk by a budget setting ("name=value,...": ``EXWB_AML_BUDGET``, ``EXWB_KF_LONG_BUDGET``), so a
test or a demo can build the app's models in seconds with the same code path as the real build."""
from __future__ import annotations

from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, TypeVar

from models import UserFacingError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Recipe = TypeVar("Recipe", bound="DataclassInstance")


def with_budget(recipe: Recipe, text: str, setting: str) -> Recipe:
    """``recipe`` with the numbers ``text`` names replaced; only its int and float fields can be set, and a bad
    item gets a message naming ``setting`` and what to write."""
    if not text:
        return recipe
    numeric = {f.name: type(getattr(recipe, f.name)) for f in fields(recipe)
               if type(getattr(recipe, f.name)) in (int, float)}  # not bool, not None (a default left to the model)
    changes: dict[str, Any] = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in numeric:
            raise UserFacingError(f"{setting}: unknown setting '{name}'; use name=value pairs of "
                                  f"{', '.join(numeric)}.")
        try:
            changes[name] = numeric[name](value.strip())
        except ValueError:
            kind = "whole number" if numeric[name] is int else "number"
            raise UserFacingError(f"{setting}: '{item.strip()}' is not a {kind}.") from None
    return replace(recipe, **changes)
