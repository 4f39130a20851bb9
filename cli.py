#!/usr/bin/env python
"""Explanation Workbench from the command line: the same code as the app, for scripts and dataset studies.

    python cli.py prepare [--model default|default-quick|default-nli]
    python cli.py explain --model default --text "..." [--pair "..."] --methods all --json
    python cli.py methods            # every method with its parameters and presets
    python cli.py errors --model default --dataset sst2:dev --method lime   # error analysis

Each sub-command lives in commands/<name>.py. Every one writes its result with --out FILE (.csv or .json, by the
extension) and prints it as JSON with --json; flags are never abbreviated.
"""
from __future__ import annotations

import sys

import settings

settings.prepare_runtime()

from commands import COMMANDS  # noqa: E402
from commands.common import Parser, run_command  # noqa: E402


def build_parser() -> Parser:
    parser = Parser(prog="cli.py", description=__doc__.split("\n\n")[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(args.handler, args)


if __name__ == "__main__":
    sys.exit(main())
