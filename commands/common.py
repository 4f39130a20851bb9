"""Shared command-line helpers: clear errors instead of tracebacks, method lists and parameters."""
from __future__ import annotations

import json
import sys

from corpora import DataError
from explainers import REGISTRY, ParamError
from models import UserFacingError

EXIT_USER_ERROR = 2


def run_command(handler, args) -> int:
    try:
        return handler(args) or 0
    except (UserFacingError, DataError, ParamError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("stopped.", file=sys.stderr)
        return 130


def parse_methods(value: str) -> list[str]:
    """'all' or a comma-separated list of method ids."""
    if value.strip() == "all":
        return list(REGISTRY)
    methods = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in methods if m not in REGISTRY]
    if unknown:
        raise ParamError(f"Unknown method(s) {', '.join(unknown)}. Known: {', '.join(REGISTRY)} (or 'all').")
    return methods


def parse_method_options(presets: list[str] | None, params: list[str] | None) -> tuple[dict, dict]:
    """--preset METHOD=PRESET and --param METHOD.NAME=VALUE options -> per-method dicts."""
    chosen_presets, overrides = {}, {}
    for item in presets or []:
        method, _, preset = item.partition("=")
        if not preset:
            raise ParamError(f"--preset expects METHOD=PRESET, got {item!r}.")
        chosen_presets[method.strip()] = preset.strip()
    for item in params or []:
        name, _, value = item.partition("=")
        method, _, parameter = name.partition(".")
        if not value or not parameter:
            raise ParamError(f"--param expects METHOD.NAME=VALUE, got {item!r}.")
        overrides.setdefault(method.strip(), {})[parameter.strip()] = value.strip()
    return chosen_presets, overrides


def add_method_options(parser) -> None:
    parser.add_argument("--methods", default="all", help="'all' or comma-separated method ids (see `cli.py methods`)")
    parser.add_argument("--preset", action="append", metavar="METHOD=PRESET", help="use a paper's preset for a method")
    parser.add_argument("--param", action="append", metavar="METHOD.NAME=VALUE", help="set one parameter of a method")


def print_json(data) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
