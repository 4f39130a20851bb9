"""Paper 000's Table 4 over a dataset as a stored run (one cell per input): the page starts it as a background job
with a cost estimate, progress and a Stop button, a stopped run resumes, and a finished one reopens from the
result store without recomputing. The numbers are ``perturbation_shift.accuracy_drop``'s: each cell stores one
input's ``example_accuracies`` and ``stored_table`` pools them with the same ``drop_table`` (same order, same seed).
Also paper 000's own figures for Tables 4 and A1, and a plain-language reading of Table 4."""
from __future__ import annotations

import numpy as np
import pandas as pd

from corpora import load_dataset
from corpora.records import DataError
from evaluation.faithfulness.perturbation_shift import SCHEMES, drop_table, example_accuracies
from evaluation.runs.header import dataset_run_config, dataset_run_title
from evaluation.runs.jobs import Cell
from evaluation.runs.store import ResultStore, run_id_for
from models import TextClassifier, cached_classifier, estimate_seconds
from models.mlm import load_filler

KIND = "perturbation-shift"

# Paper 000's own figures (shared/notes/seeds-000-001.md, "Headline tables"), shown beside this project's numbers
PAPER_DATASETS = ("SST", "e-SNLI", "MultiRC")
PAPER_BASE_ACCURACY = {"SST": 87.83, "e-SNLI": 90.92, "MultiRC": 69.10}
PAPER_TABLE_4 = {"loo": {"SST": 3.52, "e-SNLI": 4.92, "MultiRC": 1.10},
                 "im": {"SST": 2.20, "e-SNLI": 4.86, "MultiRC": 0.24},
                 "lime": {"SST": 16.38, "e-SNLI": 25.74, "MultiRC": 17.85}}
# Table A1 (mean +- std of |attribution| per token, scores in [-1, 1]): LOOempty and IM
PAPER_TABLE_A1 = {"leave_one_out": {"SST": (0.22, 0.27), "e-SNLI": (0.15, 0.24), "MultiRC": (0.09, 0.09)},
                  "input_marginalization": {"SST": (0.17, 0.27), "e-SNLI": (0.15, 0.27), "MultiRC": (0.02, 0.09)}}


def check_settings(schemes, limit: int | None, lime_samples: int) -> None:
    """A one-line message for each setting the run cannot use (``limit`` None: every example)."""
    if not schemes:
        raise DataError("Pick at least one perturbation scheme (LOO, IM or LIME).")
    unknown = [s for s in schemes if s not in SCHEMES]
    if unknown:
        raise DataError(f"Unknown perturbation scheme(s) {', '.join(unknown)}; use {', '.join(SCHEMES)}.")
    if limit is not None and limit < 1:
        raise DataError(f"The number of examples must be at least 1 (got {limit}).")
    if "lime" in schemes and lime_samples < 1:
        raise DataError(f"LIME samples per input must be at least 1 (got {lime_samples}).")


def labelled_examples(classifier: TextClassifier, dataset: str, limit: int | None) -> list:
    """The dataset's first ``limit`` examples; a message when none of them has a gold label."""
    examples = load_dataset(dataset, limit=limit, label_names=classifier.labels)
    if not any(e.label is not None for e in examples):
        raise DataError(f"The first {len(examples)} examples of '{dataset}' have no gold label: the accuracy drop "
                        f"compares predictions with gold labels, so pick a labelled dataset (e.g. sst2:dev) or add a "
                        f"'label' column to the file.")
    return examples


def run_config(classifier: TextClassifier, model: str, dataset: str, examples: list, schemes, lime_samples: int,
               seed: int, filler=None) -> dict:
    return dataset_run_config(model, classifier.fingerprint, dataset, examples, schemes=list(schemes),
                              lime_samples=int(lime_samples) if "lime" in schemes else None, seed=int(seed),
                              masked_lm=None if filler is None else filler.fingerprint)


def _filler_for(schemes):
    return load_filler() if "im" in schemes else None  # UserFacingError (says how to build it) when missing


def stored_run_id(store: ResultStore, classifier: TextClassifier, model: str, dataset: str, examples: list, schemes,
                  lime_samples: int, seed: int) -> str | None:
    """The id of this configuration's run when the store has one (to reopen it without a click), else None."""
    config = run_config(classifier, model, dataset, examples, schemes, lime_samples, seed, _filler_for(schemes))
    run = store.get_run(run_id_for(KIND, config))
    return None if run is None else run["id"]


def estimated_seconds(classifier: TextClassifier, examples: list, schemes, lime_samples: int) -> float:
    """The cost model's estimate of the run: per input, one forward for the original, one per word for LOO and
    for IM (plus the masked LM's fill, counted as one more pass per word), ``lime_samples`` for LIME."""
    if not examples:
        return 0.0
    encodings = [classifier.encode(e.text, e.pair) for e in examples]
    words = float(np.mean([e.n_words for e in encodings]))
    tokens = float(np.mean([e.n_tokens for e in encodings]))
    per_input = 1 + words * ("loo" in schemes) + 2 * words * ("im" in schemes) + lime_samples * ("lime" in schemes)
    return estimate_seconds(classifier, forward=per_input * len(examples), backward=0, n_tokens=tokens)


def start_accuracy_drop(model: str, dataset: str, limit: int | None, schemes, lime_samples: int = 50, seed: int = 0,
                        store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run and its cells without running them; bad settings fail here. The page
    and ``cli.py evaluate --perturbation-shift`` share runs: one reopens what the other computed."""
    check_settings(schemes, limit, lime_samples)
    store = store or ResultStore()
    classifier = cached_classifier(model)
    examples = labelled_examples(classifier, dataset, limit)
    filler = _filler_for(schemes)
    config = run_config(classifier, model, dataset, examples, schemes, lime_samples, seed, filler)
    meta = {"estimated_cell_seconds": estimated_seconds(classifier, examples, schemes, lime_samples) / len(examples)}
    run_id = store.create_run(KIND, config, total=len(examples), meta=meta,
                              title=dataset_run_title(f"Table 4 ({', '.join(schemes)})", dataset, examples, model))
    cells = [Cell(key=example.id, spec={**config, "index": index}) for index, example in enumerate(examples)]
    return store, run_id, cells


def accuracy_cell(spec: dict) -> dict:
    """The work of one cell: one input's accuracies under every scheme (depends only on ``spec``)."""
    classifier = cached_classifier(spec["model"])
    example = load_dataset(spec["dataset"], limit=spec["index"] + 1, label_names=classifier.labels)[spec["index"]]
    if example.label is None:
        return {"index": spec["index"], "skipped": "no gold label"}
    encoding = classifier.encode(example.text, example.pair)
    if encoding.n_words == 0:
        return {"index": spec["index"], "skipped": "no words"}
    accuracies = example_accuracies(classifier, encoding, int(example.label), spec["schemes"],
                                    spec["lime_samples"] or 0, spec["seed"], _filler_for(spec["schemes"]))
    return {"index": spec["index"], "example_id": example.id, "accuracies": accuracies}


def stored_table(store: ResultStore, run_id: str, resamples: int = 2000) -> pd.DataFrame | None:
    """Table 4 of the run's finished inputs (None before the first one), in the dataset's order."""
    run = store.get_run(run_id)
    cells = sorted((c for c in store.cells(run_id).values() if "accuracies" in c), key=lambda c: c["index"])
    if run is None or not cells:
        return None
    config = run["config"]
    return drop_table([c["accuracies"] for c in cells], config["schemes"], config["seed"], resamples,
                      config["lime_samples"] or 0)


def with_paper_figures(table: pd.DataFrame) -> pd.DataFrame:
    """Table 4 with paper 000's drop (points) on each of its datasets beside each scheme."""
    out = table.copy()
    for dataset in PAPER_DATASETS:
        out[f"paper_000_drop_{dataset}"] = [PAPER_TABLE_4[s][dataset] for s in out["scheme"]]
    return out


def reading(table: pd.DataFrame) -> str:
    """Table 4 in plain words: how far each operator goes out of distribution, next to the paper's finding."""
    drops = dict(zip(table["scheme"], table["drop_points"]))
    intervals = {s: (low, high) for s, low, high in zip(table["scheme"], table["drop_low"], table["drop_high"])}
    parts = []
    for scheme, what in (("loo", "Deleting one word"), ("im", "Replacing one word by the masked LM's top word")):
        if scheme in drops:
            parts.append(f"{what} costs {drops[scheme]:.1f} accuracy points (paper 000 on SST: "
                         f"{PAPER_TABLE_4[scheme]['SST']:.2f}).")
    singles = [s for s in ("loo", "im") if s in drops]
    if "lime" in drops:
        parts.append(f"LIME's samples, which delete half of the words on average, cost {drops['lime']:.1f} points "
                     f"(paper 000: {PAPER_TABLE_4['lime']['SST']:.2f}).")
        if singles and all(intervals["lime"][0] > intervals[s][1] for s in singles):
            parts.append("The intervals do not overlap: LIME's inputs lie much further from the text the model was "
                         "trained on, so scores computed on them partly measure that shift rather than the words.")
        elif singles:
            parts.append("The intervals overlap: on these inputs the operators cannot be told apart; more examples "
                         "narrow the intervals.")
    if len(singles) == 2:
        parts.append("Of the one-word changes, IM's replacements stay closer to the data than deletion, as in paper "
                     "000." if drops["im"] < drops["loo"] else "Of the one-word changes, deletion stays as close to "
                     "the data as IM's replacements here (paper 000 found IM closer).")
    return " ".join(parts)


def table_a1_reference(table: pd.DataFrame) -> pd.DataFrame:
    """The per-method mean |attribution| of a dataset run (``run_table`` rows of metric ``mean-abs-attribution``:
    mean, 95 % CI, n) with paper 000's Table A1 figure beside the methods it reports (LOOempty, IM)."""
    rows = table[table["metric"] == "mean-abs-attribution"]
    out = []
    for _, row in rows.iterrows():
        paper = PAPER_TABLE_A1.get(str(row["method"]).split(":")[0])
        out.append({"method": row["method"], "mean": row["mean"], "low": row["low"], "high": row["high"],
                    "n": row["n"], **{f"paper_000_{d}": None if paper is None else f"{paper[d][0]:.2f} ± {paper[d][1]:.2f}"
                                      for d in PAPER_DATASETS}})
    return pd.DataFrame(out)
