"""Paper 002's Table 1 on whole ERASER movie reviews (``eraser-movies-docs:test``, read in the model's windows):
MaRC beside its baselines, each scored by comprehensiveness and sufficiency (Eq. 10-11: 19 fractions, words
replaced by [PAD], probability of the gold class) and by agreement with the human rationales (token F1 of the
per-document top-p % binarization, mAP = average precision, IoU F1), next to the paper's numbers.

One inner stored run of the project's dataset runner per (model, budget): a cell per document, so a stopped run
resumes with the documents it has. The metrics are the registered evaluators (``paper-002``, ``plausibility``);
the top-p token F1 is fitted over the run's documents (``evaluation/plausibility/dataset.py``), so it needs at
least two documents.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evaluation.metric import RunOptions
from evaluation.plausibility.dataset import binarized_frames
from evaluation.plausibility.metrics import make_config
from evaluation.reproduce.findings import interval
from evaluation.runs.store import ResultStore
from evaluation.suite import runner
from evaluation.suite.report_card import run_study
from explainers.params import options_from
from models import UserFacingError

DATASET = "eraser-movies-docs:test"
EVALUATORS = ["paper-002", "plausibility"]
TOP_P = "paper002-top-p"

# the columns of Table 1: (key, heading, metric id of the run)
COLUMNS = (("token_f1", "Token F1", "plaus_token_f1_topp"), ("map", "mAP", "plaus_auprc"),
           ("iou_f1", "IoU F1", "plaus_iou_f1"), ("suff", "Suff. (lower better)", "sufficiency-002"),
           ("comp", "Comp. (higher better)", "comprehensiveness-002"))

# Table 1 of paper 002 (shared/notes/seeds-002-004.md 002.6), BERT-base on the 199 ERASER test reviews
PAPER = {"MaRC": (.473, .469, .163, .028, .518), "Occlusion": (.432, .448, .125, .022, .415),
         "Saliency_n": (.435, .392, .04, .132, .287), "Int. Grads_n": (.428, .369, .036, .122, .274),
         "LIME": (.436, .380, .076, .047, .496), "Shapley": (.428, .439, .079, -.015, .728),
         "Leave-one-out (PAD)": None}  # not in the paper: this project's addition

PAPER_METHODS = {"MaRC": "marc:paper-002", "Occlusion": "occlusion:paper-002", "Saliency_n": "saliency:paper-002-n",
                 "Int. Grads_n": "integrated_gradients:l1-norm", "LIME": "lime:paper-002",
                 "Shapley": "shapley_sampling:paper-002", "Leave-one-out (PAD)": "leave_one_out:paper-000-zero"}


@dataclass(frozen=True)
class Setting:
    """Which documents (the first ``documents`` of the test split) and which settings a budget uses."""

    documents: int
    methods: dict[str, str]  # Table 1 row -> method spec
    options: dict = field(default_factory=dict)  # run options (document windows)
    note: str = ""


SETTINGS = {
    # a machinery test: 128-token windows (several per document), MaRC cut at 30 steps, Shapley 2 permutations
    "tiny": Setting(2, {**PAPER_METHODS, "MaRC": "marc:paper-002-30-steps",
                        "Shapley": "shapley_sampling:paper-002-2-permutations"}, {"window_size": 128},
                    "cheap settings (a machinery test, not a result): 128-token windows, MaRC at most 30 steps, "
                    "Shapley sampling 2 permutations"),
    # the quick budget (paper_002.py) keeps sentence windows; bench/bench_table1.py runs any number of documents
    "quick": Setting(2, PAPER_METHODS, {}, "the paper's settings on the first test documents"),
    "full": Setting(200, PAPER_METHODS, {}, "the paper's settings on all 200 test documents"),
}


def run_options(setting: Setting, seed: int) -> dict:
    return {"random_orderings": 0, "seed": int(seed), "target": "gold", "plausibility": TOP_P, **setting.options}


def table_run(store: ResultStore, model: str, setting: Setting, seed: int,
              documents: int | None = None) -> tuple[str, pd.DataFrame]:
    """The inner run (run or reopened) and its results frame with the top-p token scores."""
    options = run_options(setting, seed)
    limit = documents or setting.documents
    run_id, _ = run_study(lambda s: runner.start_evaluation(model, DATASET, list(setting.methods.values()),
                                                            EVALUATORS, limit, options, s),
                          runner.evaluate_example, store, runner.batched_gradient_passes)
    frame, _ = binarized_frames(store, run_id, make_config(TOP_P), options_from(RunOptions, options))
    return run_id, frame


def _mean(frame: pd.DataFrame, method: str, metric: str) -> float:
    part = frame[(frame["method"] == method) & (frame["metric"] == metric)]
    if "ill_conditioned" in part:
        part = part[~part["ill_conditioned"].fillna(False).astype(bool)]
    values = part["value"].astype(float)
    values = values[np.isfinite(values)]
    return float(values.mean()) if len(values) else float("nan")


def table(store: ResultStore, run_id: str, frame: pd.DataFrame, setting: Setting) -> dict:
    """Per Table 1 row: the mean over documents of each column, and the seconds per document of the method."""
    cells = store.cells(run_id)
    if frame.empty:
        raise UserFacingError(f"no Table 1 values in run {run_id} (see its errors)")
    rows, seconds = {}, {}
    for name, spec in setting.methods.items():
        rows[name] = {key: _mean(frame, spec, metric) for key, _, metric in COLUMNS}
        spent = [c["explanations"][spec]["seconds"] for c in cells.values() if spec in c.get("explanations", {})]
        seconds[name] = float(np.mean(spent)) if spent else float("nan")
    done = [key for key, cell in cells.items() if cell.get("n_words")]  # the documents explained, in run order
    return {"documents": done, "words": [cells[key]["n_words"] for key in done], "rows": rows, "seconds": seconds,
            "methods": dict(setting.methods), "options": dict(setting.options), "run": run_id}


def compute(store: ResultStore, model: str, budget: str, seed: int, documents: int | None = None) -> dict:
    setting = SETTINGS[budget]
    run_id, frame = table_run(store, model, setting, seed, documents)
    return table(store, run_id, frame, setting)


# ----- the page's section (from the stored cells' details only) ------------------------------------------------
DEFAULT_WINDOWS = "the defaults (windows of the model's maximum, 25 % overlap, the mean of the windows' logits)"


def _fmt(value) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.3f}"


def _documents(found: dict) -> str:
    words = found["words"]
    if len(words) <= 10:
        return (f"documents {', '.join(f'`{d}`' for d in found['documents'])} "
                f"({', '.join(map(str, words))} words)")
    return (f"the first {len(words)} test documents ({min(words)} to {max(words)} words, median "
            f"{int(np.median(words))})")


def seed_tables(report: dict) -> dict[int, dict]:
    """Per training seed, the Table 1 its cells stored (every finding of a seed stores the same one)."""
    found: dict[int, dict] = {}
    for row in report["rows"]:
        for seed, details in row["details"].items():
            if isinstance(details, dict) and "table1" in details:
                found.setdefault(int(seed), details["table1"])
    return found


def averaged(tables: dict[int, dict]) -> dict[str, dict[str, dict]]:
    """Per row and column, the mean over seeds and its Student-t 95 % interval (``findings.interval``)."""
    names = list(next(iter(tables.values()))["rows"]) if tables else []
    return {name: {key: interval([t["rows"][name][key] for t in tables.values() if name in t["rows"]])
                   for key, _, _ in COLUMNS} for name in names}


def page_section(report: dict) -> list[str]:
    tables = seed_tables(report)
    lines = ["## Table 1 on whole documents", ""]
    if not tables:
        return lines + ["No seed has finished its Table 1 yet.", ""]
    setting = SETTINGS[report["budget"]["name"]]
    first = tables[min(tables)]
    means = averaged(tables)
    options = first["options"] or DEFAULT_WINDOWS
    lines += [f"`{DATASET}`, {_documents(first)}, each read whole in the model's windows; "
              f"{setting.note}. Run options: {options}. "
              f"Target: the gold class. Ours: the mean over the documents, then over training seeds "
              f"{', '.join(map(str, sorted(tables)))} with a Student-t 95 % interval; the paper's number after the "
              "slash (BERT-base fine-tuned on the movie reviews, 199 documents). Token F1: the per-document top-p % "
              "(leave-one-out kernel regression over this run's documents, as the paper fits it on the test "
              "rationales); IoU F1: spans of the top 20 % words (the evaluator's default), the paper's from its "
              "top-p; mAP: average precision.", "",
              "| method | spec | " + " | ".join(heading for _, heading, _ in COLUMNS) + " | s / document (seed "
              f"{min(tables)}) |", "|" + "---|" * (len(COLUMNS) + 3)]
    for name, columns in means.items():
        paper = PAPER.get(name)
        cells = []
        for i, (key, _, _) in enumerate(COLUMNS):
            est = columns[key]
            ours = _fmt(est["mean"]) + (f" [{_fmt(est['low'])}, {_fmt(est['high'])}]" if est["n"] > 1 else "")
            cells.append(f"{ours} / {paper[i]:.3f}" if paper else f"{ours} / (not in the paper)")
        lines.append(f"| {name} | `{first['methods'][name]}` | " + " | ".join(cells)
                     + f" | {first['seconds'].get(name, float('nan')):.1f} |")
    lines += ["", "Seconds per document: the explanation's own time as the run recorded it, on the machine of "
              "'How it was run' (a shared machine's figure is not a speed claim).", ""]
    return lines


def stored(store: ResultStore, model: str, budget: str, seed: int, documents: int | None = None) -> dict:
    """The table from the documents the inner run has stored so far (nothing computed): a stopped run's report."""
    setting = SETTINGS[budget]
    options = run_options(setting, seed)
    _, run_id, _ = runner.start_evaluation(model, DATASET, list(setting.methods.values()), EVALUATORS,
                                           documents or setting.documents, options, store)
    frame, _ = binarized_frames(store, run_id, make_config(TOP_P), options_from(RunOptions, options))
    return table(store, run_id, frame, setting)


def markdown_rows(found: dict) -> list[str]:
    """One seed's table: ours (mean over the documents) / the paper's, and seconds per document."""
    lines = ["| method | spec | " + " | ".join(heading for _, heading, _ in COLUMNS) + " | s / document |",
             "|" + "---|" * (len(COLUMNS) + 3)]
    for name, values in found["rows"].items():
        paper = PAPER.get(name)
        cells = [f"{_fmt(values[key])} / " + (f"{paper[i]:.3f}" if paper else "(not in the paper)")
                 for i, (key, _, _) in enumerate(COLUMNS)]
        lines.append(f"| {name} | `{found['methods'][name]}` | " + " | ".join(cells)
                     + f" | {found['seconds'][name]:.1f} |")
    return lines
