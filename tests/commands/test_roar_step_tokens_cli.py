"""`cli.py roar --step-tokens K` and `--preset paper-001-one-token`: paper 001 App. F's one-word steps from the
command line (the flags reach the study's configuration; the study itself is tested in
tests/evaluation/roar/test_one_token.py)."""
from __future__ import annotations

import pytest

import cli
from explainers import ParamError


@pytest.fixture()
def seen(monkeypatch):
    from commands import roar

    captured = {}
    monkeypatch.setattr(roar, "build_config", lambda **kwargs: captured.update(kwargs))
    return captured


def _config(*flags):
    from commands import roar

    roar.config_from_args(cli.build_parser().parse_args(["roar", *flags]))


def test_step_tokens_sets_the_count_strategy_and_recursive_roar(seen):
    _config("--step-tokens", "2", "--measures", "loo")
    assert seen["count_rule"] == "tokens" and seen["ratios"] == [2 * i for i in range(1, 11)]
    assert seen["mode"] == "recursive" and seen["anchors"] is False
    _config("--step-tokens", "1", "--mode", "both", "--ratios", "1,2,3")  # flags still override
    assert seen["mode"] == "both" and seen["ratios"] == [1.0, 2.0, 3.0] and seen["count_rule"] == "tokens"
    with pytest.raises(ParamError, match="--step-tokens"):
        _config("--step-tokens", "0")


def test_the_one_token_preset(seen):
    _config("--preset", "paper-001-one-token")
    assert seen["count_rule"] == "tokens" and seen["ratios"] == tuple(range(1, 11)) and seen["mode"] == "recursive"
    assert seen["target"] == "gold" and seen["anchors"] is False
