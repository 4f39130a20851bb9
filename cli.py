#!/usr/bin/env python
"""Explanation Workbench from the command line: the same code as the app, for scripts and dataset studies.

    python cli.py prepare [--model default|default-quick|default-nli]
    python cli.py explain --model default --text "..." [--pair "..."] --methods all --json
    python cli.py methods            # every method with its parameters and presets

Each sub-command lives in commands/<name>.py.
"""
from __future__ import annotations

import argparse
import sys

import settings

settings.prepare_runtime()

from commands import COMMANDS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cli.py", description=__doc__.split("\n\n")[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers)
    args = parser.parse_args(argv)
    from commands.common import run_command

    return run_command(args.handler, args)


if __name__ == "__main__":
    sys.exit(main())
