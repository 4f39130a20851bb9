"""Conventions of every sub-command: --help works, flags are never abbreviated, --out FILE with the format from
its extension, --json on stdout, and option flags generated from the option schemas."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
from conftest import ROOT

import cli
from commands import COMMANDS


def _names() -> list[str]:
    subparsers = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(subparsers.choices)


SUB_COMMANDS = _names()


def test_every_command_module_is_a_sub_command():
    assert len(SUB_COMMANDS) == len(COMMANDS)
    assert {"prepare", "prepare-mlm", "prepare-aml", "explain", "methods", "evaluate", "known-feature", "sanity",
            "roar", "adversarial", "errors", "report-card"} <= set(SUB_COMMANDS)


@pytest.mark.parametrize("command", SUB_COMMANDS)
def test_help_of_every_sub_command(command, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: cli.py {command}") and "--out FILE" in out and "--json" in out


def test_top_level_help_lists_every_sub_command(capsys):
    # a sub-command's one-line help is formatted by argparse here: a bare "%" in it broke `cli.py --help`
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert all(command in out for command in SUB_COMMANDS) and "top-x %" in out


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_help_in_a_real_process_has_no_traceback():
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "roar", "--help"], capture_output=True, text=True,
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0 and "Traceback" not in result.stderr and "--variant" in result.stdout


@pytest.mark.parametrize("command", SUB_COMMANDS)
def test_flags_are_never_abbreviated(command, capsys):
    # argparse's default prefix matching read `--jso` as `--json` (and `roar --out` as `--output`)
    required = ["--text", "x"] if command == "explain" else []
    with pytest.raises(SystemExit) as stop:
        cli.main([command, *required, "--jso"])
    assert stop.value.code == 2
    assert "unrecognized arguments: --jso" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["methods", "--out", "methods.txt"], ["roar", "--export", "x", "--out", "s.csv"],
                                  ["evaluate", "--out", "results.xlsx"]])
def test_an_unknown_output_format_is_refused_before_any_work(argv, capsys, tmp_path):
    argv = [a if not a.endswith((".txt", ".csv", ".xlsx")) else str(tmp_path / a) for a in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out") and ".json" in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())


def test_methods_out_csv_and_json(tmp_path, capsys):
    from explainers import REGISTRY, schema

    assert cli.main(["methods", "--out", str(tmp_path / "m.json")]) == 0
    rows = json.loads((tmp_path / "m.json").read_text())
    assert [r["id"] for r in rows] == list(REGISTRY)
    assert cli.main(["methods", "--out", str(tmp_path / "m.csv")]) == 0
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0].startswith("method,family,name,default")
    assert len(lines) - 1 == sum(len(schema(cls.Params)) for cls in REGISTRY.values())
    assert "wrote" in capsys.readouterr().err


def test_evaluate_options_come_from_the_schemas():
    from commands.evaluate import run_options
    from evaluation.faithfulness.curves import RemovalOptions
    from evaluation.metric import RunOptions

    def options(*flags):
        return run_options(cli.build_parser().parse_args(["evaluate", *flags]))

    # no flag: the five keys the Faithfulness page stores too, with the schemas' defaults
    defaults = options()
    assert defaults == {"target": RemovalOptions().target, "operator": RemovalOptions().operator,
                        "exclude_special": RemovalOptions().exclude_special, "seed": RunOptions().seed,
                        "random_orderings": RunOptions().random_orderings}
    chosen = options("--target", "gold", "--seed", "4", "--operator", "pad", "--rank-by", "absolute",
                     "--count-special", "--plausibility-tau", "0.3", "--plausibility-preset", "paper000",
                     "--no-plausibility-only-correct")
    assert chosen == {"target": "gold", "operator": "pad", "exclude_special": False, "seed": 4,
                      "random_orderings": 10, "rank_by": "absolute",
                      "plausibility": {"preset": "paper000", "tau": 0.3, "only_correct": False}}
    from evaluation.plausibility.metrics import config_from_options

    config, preset = config_from_options(chosen)
    assert preset == "paper000" and config.tau == 0.3 and not config.only_correct and config.iou_from == "threshold"


def test_evaluate_takes_the_newer_measures_options_from_their_schemas():
    from commands.evaluate import run_options

    parsed = cli.build_parser().parse_args(["evaluate", "--naopc-exact-words", "8", "--naopc-beam", "3",
                                            "--soft-samples", "7"])
    options = run_options(parsed)
    assert (options["naopc_exact_words"], options["naopc_beam"], options["soft_samples"]) == (8, 3, 7)


def test_roar_flags_override_a_preset(monkeypatch):
    from commands import roar
    from evaluation.roar.training import Variant

    seen = {}
    monkeypatch.setattr(roar, "build_config", lambda **kwargs: seen.update(kwargs))
    roar.config_from_args(cli.build_parser().parse_args(
        ["roar", "--preset", "paper-001-quick", "--variant", "last-k", "--train-size", "40", "--no-anchors",
         "--operator", "delete", "--seeds", "2"]))
    assert seen["variant"] == Variant(trainable="last-k", train_size=40)
    assert seen["mode"] == "both" and seen["target"] == "gold" and seen["count_rule"] == "floor"  # from the preset
    assert seen["operator"] == "delete" and seen["anchors"] is False and seen["seeds"] == [0, 1]
    assert seen["settings"] == "paper" and seen["measures"] == ["gradient", "ixg", "ig"]  # Table 2, RoBERTa


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_a_reader_that_stops_early_gets_no_traceback():
    # `cli.py methods --json | head -3`: the reader is gone before the JSON is written
    process = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "methods", "--json"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(timeout=300) == 0 and "Traceback" not in err and "BrokenPipe" not in err
