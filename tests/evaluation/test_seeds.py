"""The one seed-list parser of the command line and the pages."""
from __future__ import annotations

import pytest

from evaluation.seeds import parse_seeds
from explainers import ParamError


def test_lists_and_counts():
    assert parse_seeds("0, 4;7") == [0, 4, 7]
    assert parse_seeds("3") == [3]  # a list of one (the pages' Seeds field)
    assert parse_seeds("3", count=True) == [0, 1, 2]  # a count (roar --seeds)
    assert parse_seeds("5,1", count=True) == [5, 1]


@pytest.mark.parametrize("text, kwargs, message", [
    ("one, two", {}, "must be whole numbers"),
    ("a,b", {"name": "--seeds"}, "--seeds must be whole numbers"),
    ("0", {"name": "--seeds", "count": True}, "--seeds needs at least one seed"),
    ("1,1", {}, "all distinct"),
    ("-1", {}, ">= 0"),
    ("", {}, "at least one seed"),
    (",".join(map(str, range(21))), {"most": 20}, "at most 20"),
])
def test_bad_seed_lists_say_what_to_type(text, kwargs, message):
    with pytest.raises(ParamError, match=message):
        parse_seeds(text, **kwargs)
