"""Shared command-line helpers: the parser class, clear errors instead of tracebacks, method lists and
parameters, flags generated from an options schema, and the output convention of every sub-command.

Output convention: ``--out FILE`` writes the result to FILE in the format of its extension (``.csv`` or
``.json``); ``--json`` prints it as JSON on stdout; without either, a human-readable summary is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

import settings
from corpora import DataError
from corpora.registry import with_columns
from evaluation.runs import ray_executor
from evaluation.runs.jobs import EXECUTORS, run_cells
from explainers import REGISTRY, ParamError, parse_spec
from explainers.params import schema
from models import UserFacingError

EXIT_USER_ERROR = 2
OUT_FORMATS = (".csv", ".json")


class Parser(argparse.ArgumentParser):
    """Every parser of the command line. No prefix matching: argparse would otherwise read ``--out`` as any
    longer flag that starts with it (``--output``) and silently do something else."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)


def help_text(text: str) -> str:
    """Help text with its % signs escaped (argparse formats help strings with %)."""
    return text.replace("%", "%%")


def add_column_options(parser: argparse.ArgumentParser) -> None:
    """--text-column / --label-column / --pair-column of every dataset command: the columns of a ``file:`` dataset
    (csv, tsv, jsonl, parquet) that hold the texts, gold labels and second segments, when not named text / label /
    pair. They become part of the dataset id (``corpora.registry.with_columns``)."""
    parser.add_argument("--text-column", default=None, help="the file's column of texts (default: text)")
    parser.add_argument("--label-column", default=None, help="the file's column of gold labels (default: label)")
    parser.add_argument("--pair-column", default=None, help="the file's column of second segments (default: pair)")


def apply_column_options(args) -> None:
    """Write the column options into every dataset id the command reads (``--dataset``, ``--train-data``, ...)."""
    columns = {"text": getattr(args, "text_column", None), "label": getattr(args, "label_column", None),
               "pair": getattr(args, "pair_column", None)}
    if not any(columns.values()):
        return
    for name in ("dataset", "train_data", "test_data"):
        value = getattr(args, name, None)
        if isinstance(value, str) and value.startswith("file:"):
            setattr(args, name, with_columns(value, **columns))
        elif name == "dataset" and value is not None:
            with_columns(value, **columns)  # raises: column options name a file's columns


def run_command(handler, args) -> int:
    try:
        apply_column_options(args)
        if getattr(args, "executor", None) == "ray" and hasattr(args, "ray_gpus"):
            ray_executor.use_resources(ray_resources(args))  # every run of this command asks for these
        return handler(args) or 0
    except (UserFacingError, DataError, ParamError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("stopped.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout stopped early (`cli.py methods --json | head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush does not fail again
        return 0


def parse_method_specs(value: str) -> list[str]:
    """'all' or comma-separated ``method`` / ``method:preset``; an unknown method or preset raises ParamError."""
    if value.strip() == "all":
        return list(REGISTRY)
    specs = [m.strip() for m in value.split(",") if m.strip()]
    if not specs:
        raise ParamError("No methods given; pass --methods with method ids (see `cli.py methods`).")
    for spec in specs:
        parse_spec(spec)
    return specs


def parse_method_options(presets: list[str] | None, params: list[str] | None) -> tuple[dict, dict]:
    """--preset METHOD=PRESET and --param METHOD.NAME=VALUE options -> per-method dicts."""
    chosen_presets: dict[str, str] = {}
    overrides: dict[str, dict] = {}
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
    parser.add_argument("--methods", default="all", help="'all' or comma-separated method ids, optionally "
                                                          "method:preset (see `cli.py methods`)")
    parser.add_argument("--preset", action="append", metavar="METHOD=PRESET", help="use a paper's preset for a method")
    parser.add_argument("--param", action="append", metavar="METHOD.NAME=VALUE", help="set one parameter of a method")


# ----- flags from an options schema --------------------------------------------------------------------
def add_schema_flags(parser, params_class, prefix: str = "", rename: dict | None = None, skip=()) -> None:
    """One flag per option of a ``param()`` schema (``--<prefix><name>``) with its help, choices and type.

    An unset flag stays None, so the schema's (or a preset's) default applies. Option groups share some keys
    of a run's options (``target``, ``seed``): a flag that another group already added is kept, once.
    """
    rename = rename or {}
    for spec in schema(params_class):
        if spec.name in skip:
            continue
        flag = "--" + prefix + rename.get(spec.name, spec.name).replace("_", "-")
        default = "not set" if spec.default is None else spec.default
        help_line = help_text(f"{spec.label}" + (f": {spec.help}" if spec.help else "") + f" (default: {default})")
        dest = prefix.replace("-", "_") + spec.name
        try:
            if spec.type is bool:
                parser.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction, default=None,
                                    help=help_line)
            else:
                parser.add_argument(flag, dest=dest, type=_argument_type(spec), choices=spec.choices, default=None,
                                    help=help_line)
        except argparse.ArgumentError:
            continue  # the same key of another option group already has this flag


def _argument_type(spec):
    """argparse's ``type``: the option's own parser (a bad value gets its one-line message) or its type."""
    if spec.parse is None:
        return spec.type

    def read(text):
        try:
            return spec.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    read.__name__ = spec.name  # argparse names the type in its messages
    return read


def schema_values(args, params_class, prefix: str = "") -> dict:
    """The options of ``params_class`` that were given on the command line (flags of ``add_schema_flags``)."""
    values = {}
    for spec in schema(params_class):
        value = getattr(args, prefix.replace("-", "_") + spec.name, None)
        if value is not None:
            values[spec.name] = value
    return values


# ----- output ----------------------------------------------------------------------------------------------
def add_executor_flag(parser) -> None:
    """``--executor`` of every dataset command: the same three executors everywhere (evaluation/runs/jobs.py)."""
    parser.add_argument("--executor", choices=EXECUTORS, default="local",
                        help="local: one process (a GPU when there is one); processes: worker processes with one "
                             "torch thread each, faster on a multi-core CPU (EXWB_RUN_WORKERS workers, default the "
                             "cores); ray: a Ray cluster (EXWB_RAY_ADDRESS)")
    parser.add_argument("--ray-cpus", type=float, default=1.0, help="CPUs per cell on Ray")
    parser.add_argument("--ray-gpus", type=float, default=None,
                        help="GPUs per cell on Ray (e.g. 1, or 0.5 for two cells per GPU, each with half its memory "
                             "budget); default 1 when EXWB_DEVICE names a CUDA device, else 0 (cells on the CPU)")


def ray_resources(args) -> dict:
    """The Ray resources of one cell from --ray-cpus / --ray-gpus (GPUs derived from EXWB_DEVICE when not given)."""
    gpus = args.ray_gpus
    if gpus is None:
        gpus = 1.0 if settings.device_setting().startswith("cuda") else 0.0
    if gpus < 0 or args.ray_cpus <= 0:
        raise UserFacingError("--ray-cpus must be above 0 and --ray-gpus at least 0 (e.g. --ray-gpus 1).")
    return {"num_cpus": args.ray_cpus, **({"num_gpus": gpus} if gpus else {})}


def add_output_options(parser, what: str, csv: str | None = None, json: str | None = None) -> None:
    """The output convention: ``--out FILE`` (.csv or .json, by extension) and ``--json`` (JSON on stdout);
    ``csv`` / ``json`` say what each file format holds."""
    formats = "; ".join(f"{suffix}: {text}" for suffix, text in ((".csv", csv), (".json", json)) if text)
    parser.add_argument("--out", metavar="FILE", default=None,
                        help=help_text(f"write {what} to FILE, in the format of its extension" +
                                       (f" ({formats})" if formats else " (.csv or .json)")))
    parser.add_argument("--json", action="store_true", help=help_text(f"print {what} as JSON on stdout"))


def check_out(path: str | None, formats: tuple[str, ...] = OUT_FORMATS) -> Path | None:
    """The --out path, checked before any work: its extension must name a format this command writes."""
    if path is None:
        return None
    out = Path(path)
    if out.suffix.lower() not in formats:
        raise ParamError(f"--out {path}: the file name must end in {' or '.join(formats)} (the format follows the "
                         f"extension).")
    return out


def write_out(path: Path, data, table: pd.DataFrame | None = None) -> None:
    """``data`` as JSON (.json) or ``table`` as CSV (.csv); says where it wrote on stderr."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        (table if table is not None else pd.DataFrame(data)).to_csv(path, index=False)
    print(f"wrote {path}", file=sys.stderr)


def add_input_options(parser: argparse.ArgumentParser, limit: int, limit_help: str, one_input: str) -> None:
    """The model and what it runs on: a dataset (with a limit) or one typed input (``--text``, ``--pair``)."""
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--dataset", default="sst2:dev", help="dataset id, e.g. sst2:dev, snli:dev, file:/x.csv")
    parser.add_argument("--limit", type=int, default=limit, help=limit_help)
    parser.add_argument("--text", default=None, help=f"{one_input} one input instead of a dataset")
    parser.add_argument("--pair", default=None, help="second segment for --text")
    add_column_options(parser)


def job_progress(desc: str, unit: str, total: int | None = None):
    """A progress bar on stderr and the ``(done, total[, seconds left])`` callback that job runs call."""
    bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)

    def progress(done: int, total: int, left: float | None = None) -> None:
        bar.total = total
        bar.update(done - bar.n)
        if left is not None:
            bar.set_postfix_str(f"about {left / 60:.1f} min left")

    return bar, progress


def training_progress(desc: str, total: int | None = None):
    """A progress bar on stderr and the ``(step, total, info)`` callback of training loops (loss, validation)."""
    bar = tqdm(total=total, desc=desc, unit="step", file=sys.stderr)

    def progress(step: int, total: int, info: dict) -> None:
        bar.total = total
        bar.update(step - bar.n)
        postfix = {"loss": f"{info['loss']:.3f}"}
        if "validation" in info:
            postfix["val"] = f"{info['validation']:.4f}"
        bar.set_postfix(postfix)

    return bar, progress


def emit(data, table: pd.DataFrame | None, args, out: Path | None) -> bool:
    """``--out FILE`` and ``--json`` by the output convention; True when the JSON went to stdout (the caller prints
    no text summary then)."""
    if out:
        write_out(out, data, table)
    if args.json:
        print_json(data)
        return True
    return False


def stored_run(store, run_id: str) -> dict:
    """The record of a run this command just wrote; a clear message where the store no longer holds it."""
    run = store.get_run(run_id)
    if run is None:
        raise UserFacingError(f"Run {run_id} is no longer in the result store ({store.path}); run the command again.")
    return run


def print_run_status(run: dict, summary) -> None:
    """A dataset run's first lines: its title, status and progress, and the first failure if any failed."""
    print(f"{run['title']} · run {summary.run_id} · {summary.status} ({summary.done}/{summary.total})")
    if summary.errors:
        print(f"{len(summary.errors)} examples failed, e.g. {next(iter(summary.errors.values()))}")


def warn_failed(summary, left_out_of: str) -> None:
    """One warning on stderr for the examples of a dataset run that failed: how many, the first, and that they are
    left out of ``left_out_of`` and rerun next time (their cells are not stored)."""
    if summary.errors:
        first_key, first_error = next(iter(summary.errors.items()))
        print(f"warning: {len(summary.errors)} of {summary.total} examples failed (first, {first_key}: {first_error}); "
              f"they are left out of {left_out_of} and rerun next time.", file=sys.stderr)


def run_resumable(store, run_id: str, cells: list, work, bar_desc: str, unit: str, stopped: str, **run_options):
    """Run a job's cells with a progress bar; Ctrl-C marks the run cancelled and says how to resume (``stopped``).
    Returns the run summary, or None when stopped (the caller exits with 130)."""
    bar, progress = job_progress(bar_desc, unit, len(cells))
    try:
        return run_cells(store, run_id, cells, work, progress=progress, **run_options)
    except KeyboardInterrupt:
        store.set_status(run_id, "cancelled")
        print(f"\nstopped; {stopped} ({run_id}).", file=sys.stderr)
        return None
    finally:
        bar.close()


def report_manifest(folder, manifest: dict, args, out: Path | None) -> None:
    """A prepared artefact's manifest by the output convention (nothing extra without --out / --json)."""
    data = {"folder": str(folder), **manifest}
    if out:
        write_out(out, data, pd.json_normalize(data))
    if args.json:
        print_json(data)


def print_json(data) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
