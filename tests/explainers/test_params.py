"""The one options schema (``param()``) and the one "method:preset" parser, on every option group that uses them."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

import settings
from explainers import REGISTRY, ParamError, create_from_spec, format_spec, is_known_spec, parse_spec, split_spec
from explainers.params import FrozenOptions, coerce, frozen_options, options_from, param, schema, with_values


@dataclass(frozen=True)
class Options:
    operator: str | None = param(None, "Operator", choices=("delete", "mask"), type=str)
    steps: int = param(10, "Steps", min=1, max=100)
    share: float = param(0.5, "Share", min=0.0, max=1.0)
    exact: bool = param(True, "Exact")
    nested: tuple = ()  # not an option: no param()


def test_schema_lists_only_the_declared_options_with_their_types():
    specs = {s.name: s for s in schema(Options)}
    assert list(specs) == ["operator", "steps", "share", "exact"]
    assert [specs[n].type for n in specs] == [str, int, float, bool]
    assert specs["operator"].optional and not specs["steps"].optional


@pytest.mark.parametrize("given, expected", [
    ({"steps": "20", "share": "0.25", "exact": "off", "operator": "mask"},
     Options(operator="mask", steps=20, share=0.25, exact=False)),
    ({"steps": 20.0, "exact": "YES"}, Options(steps=20, exact=True)),  # JSON numbers, any case
    ({}, Options()),
])
def test_coerce_converts_strings_and_numbers(given, expected):
    result = coerce(Options, given)
    assert result == expected and type(result.steps) is int


@pytest.mark.parametrize("given, message", [
    ({"steps": "2.5"}, "whole number"),
    ({"steps": "0"}, "between 1 and 100"),
    ({"share": "lots"}, "must be a number"),
    ({"exact": "maybe"}, "true or false"),  # used to be False without a word
    ({"operator": "shuffle"}, "one of delete, mask"),
    ({"speed": 1}, "Unknown parameter(s) speed"),
])
def test_bad_values_name_the_option_and_what_is_allowed(given, message):
    with pytest.raises(ParamError, match=message.replace("(", r"\(").replace(")", r"\)")):
        coerce(Options, given)


def test_options_from_a_run_dict_ignores_other_groups_and_none():
    assert options_from(Options, {"steps": "3", "operator": None, "random_orderings": 10}) == Options(steps=3)


def test_frozen_options_parse_each_group_once_to_the_plain_dicts_value():
    plain = {"operator": "mask", "steps": "7", "other_group": 1}
    frozen = frozen_options(plain)
    assert frozen == plain and frozen_options(frozen) is frozen
    first = options_from(Options, frozen)
    assert first == options_from(Options, plain) == Options(operator="mask", steps=7)
    assert options_from(Options, frozen) is first  # the second reader gets the parsed instance
    assert options_from(Options, plain) is not options_from(Options, plain)  # a plain dict: parsed at each call
    with pytest.raises(ParamError, match="Unknown parameter"):  # the strict reading is never served from the memo
        options_from(Options, frozen, ignore_unknown=False)


def test_frozen_options_are_read_only_and_derive_new_options_once():
    frozen = FrozenOptions({"operator": "mask", "steps": 7})
    with pytest.raises(TypeError, match="read-only"):
        frozen["steps"] = 8
    with pytest.raises(TypeError, match="read-only"):
        frozen.update(steps=8)
    assert frozen == {"operator": "mask", "steps": 7}
    pinned = with_values(frozen, steps=20)
    assert pinned == {"operator": "mask", "steps": 20} and with_values(frozen, steps=20) is pinned
    assert options_from(Options, pinned) is options_from(Options, with_values(frozen, steps=20))
    assert with_values({"steps": 7}, steps=20) == {"steps": 20}  # a plain dict: a new plain dict


def test_frozen_options_travel_to_worker_processes_as_their_values():
    import json
    import pickle

    frozen = frozen_options({"operator": "mask", "steps": 7})
    options_from(Options, frozen)
    copied = pickle.loads(pickle.dumps(frozen))
    assert type(copied) is FrozenOptions and copied == frozen
    assert options_from(Options, copied) == options_from(Options, frozen)
    assert json.loads(json.dumps(frozen)) == {"operator": "mask", "steps": 7}  # stored in a run's header as is


def test_one_string_to_bool():
    assert [settings.parse_bool(t) for t in ("1", "true", " Yes ", "on", "0", "false", "no", "OFF", "")] == \
        [True] * 4 + [False] * 5
    with pytest.raises(ValueError):
        settings.parse_bool("maybe")
    assert settings.parse_bool("maybe", default=False) is False  # environment flags keep their old leniency


def test_every_option_group_keeps_its_defaults():
    """The defaults as they were before the options moved to param() (literal values from the old code)."""
    from evaluation.faithfulness.curves import RemovalOptions
    from evaluation.metric import RunOptions
    from evaluation.plausibility.metrics import PlausibilityConfig
    from evaluation.roar.config import StudyConfig
    from evaluation.roar.training import Variant

    assert dataclasses.asdict(RemovalOptions()) == {"operator": None, "target": "predicted", "exclude_special": True,
                                                    "seed": 0, "rank_by": "signed", "aopc_divisor": None,
                                                    "contrast": None}  # no contrast by default
    assert dataclasses.asdict(RunOptions()) == {"target": "predicted", "seed": 0, "random_orderings": 10,
                                                "contrast": None}
    assert PlausibilityConfig().to_dict() == {"top_k": "20%", "tau": 0.5, "sign": "positive", "ties": "pessimistic",
                                              "iou_threshold": 0.5, "iou_from": "top-k", "truncation": "drop",
                                              "only_correct": False, "select_by": "f1",
                                              "binarization": "top-k"}  # added with paper 002's top-p
    assert Variant().to_dict() == {"trainable": "head", "last_k": 2, "train_size": 300, "test_size": 200,
                                   "epochs": 3.0, "lr": None, "batch_size": 16, "max_length": 128,
                                   "init": "classifier", "warmup": 0.1, "weight_decay": 0.01}  # both new
    study = StudyConfig()
    assert {s.name: getattr(study, s.name) for s in schema(StudyConfig)} == {
        "mode": "roar", "operator": "mask", "target": "predicted", "rank_by": "signed", "count_rule": "floor",
        "segments": "first", "anchors": True, "data_seed": 0, "filler": "mlm"}
    # stored run options (strings from a command line, JSON numbers) come back typed
    assert options_from(RemovalOptions, {"seed": "3", "exclude_special": "false", "operator": "unk"}) == \
        RemovalOptions(operator="unk", seed=3, exclude_special=False)
    assert Variant.from_dict({"epochs": "1", "train_size": 40.0, "unknown": 1}) == Variant(epochs=1.0, train_size=40)


def test_parse_spec_checks_the_method_and_its_preset():
    assert parse_spec(" Saliency : paper-003 ") == ("saliency", "paper-003")
    assert parse_spec("leave_one_out") == ("leave_one_out", None)
    assert split_spec("IG:paper-001") == ("ig", "paper-001")  # syntax only: ROAR resolves its aliases after
    with pytest.raises(ParamError, match="Unknown method 'nope'"):
        parse_spec("nope:paper-003")
    with pytest.raises(ParamError, match="Unknown preset 'nope' for saliency"):
        parse_spec("saliency:nope")
    assert is_known_spec("saliency:paper-003") and not is_known_spec("saliency:nope") and not is_known_spec("x")
    explainer = create_from_spec("integrated_gradients:paper-001")
    assert explainer.preset == "paper-001" and explainer.id in REGISTRY


def test_format_spec_is_the_inverse_of_parse_spec_for_every_method_and_preset():
    pairs = [(method, preset) for method, cls in REGISTRY.items() for preset in (None, *cls.presets)]
    assert len(pairs) > len(REGISTRY)  # some methods have presets
    for method, preset in pairs:
        assert parse_spec(format_spec(method, preset)) == (method, preset)
    assert format_spec("saliency", None) == format_spec("saliency", "") == "saliency"
    assert format_spec("saliency", "paper-003") == "saliency:paper-003"
