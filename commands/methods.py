"""`cli.py methods`: every explanation method with its family, parameters and presets."""
from __future__ import annotations

import dataclasses

import pandas as pd

from commands.common import add_output_options, check_out, print_json, write_out
from explainers import FAMILIES, REGISTRY, schema


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("methods", help="list the explanation methods, parameters and presets")
    add_output_options(parser, "the methods", csv="one row per method and parameter",
                       json="every method with its parameters and presets")
    parser.set_defaults(handler=handle)


def param_row(spec) -> dict:
    """A parameter's schema as plain data (its type by name; ``parse`` is code, not data)."""
    return {k: v for k, v in dataclasses.asdict(spec).items() if k != "parse"} | {"type": spec.type.__name__}


def params_table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"method": row["id"], "family": row["family"], **spec}
                         for row in rows for spec in row["params"]])


def handle(args) -> int:
    out = check_out(args.out)
    rows: list[dict] = []
    for method_id, cls in REGISTRY.items():
        rows.append({"id": method_id, "label": cls.label, "family": FAMILIES[cls.family], "reference": cls.reference,
                     "params": [param_row(spec) for spec in schema(cls.Params)],
                     "presets": cls.presets})
    if out:
        write_out(out, rows, params_table(rows))
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        print(f"{row['id']}  ({row['family']}): {row['label']}")
        for spec in row["params"]:
            allowed = f" one of {spec['choices']}" if spec["choices"] else ""
            print(f"    {spec['name']} = {spec['default']!r}{allowed}")
        for name, values in row["presets"].items():
            print(f"    preset {name}: {values}")
    return 0
