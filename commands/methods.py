"""`cli.py methods`: every explanation method with its family, parameters and presets."""
from __future__ import annotations

import dataclasses

from explainers import FAMILIES, REGISTRY, schema

from commands.common import print_json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("methods", help="list the explanation methods, parameters and presets")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    rows = []
    for method_id, cls in REGISTRY.items():
        rows.append({"id": method_id, "label": cls.label, "family": FAMILIES[cls.family], "reference": cls.reference,
                     "params": [dataclasses.asdict(s) | {"type": s.type.__name__} for s in schema(cls.Params)],
                     "presets": cls.presets})
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
