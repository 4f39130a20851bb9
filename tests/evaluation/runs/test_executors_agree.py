"""the same study gives bit-identical statistics on the local, processes and Ray executors.

The same study run locally and on Ray gave equal means and different 95 % bounds (the store returned cells in the
order they finished and the seeded bootstrap indexes that order). Here `cli.py evaluate` runs one small study
(8 SST-2 dev sentences, saliency and leave-one-out, ERASER comprehensiveness / sufficiency, 10 random orderings)
on each executor into its own store; every number of the summary (means, 95 % bootstrap bounds, the random band,
the paired difference with random) must be the same float on the three, and equal to a recomputation from the
stored cells with numpy (the same seeded draws) and scipy.stats.bootstrap (the same draws, its own percentile).
The sanity family (its bootstrap over examples per stage) is checked the same way on local and processes.

The model is a tiny random BERT whose word-level vocabulary holds the sentences' words (no [UNK] ties), saved to a
folder so worker processes load it by path.
"""
from __future__ import annotations

import io
import json
import math
import sqlite3
from contextlib import redirect_stdout
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats
from tokenizers.pre_tokenizers import BertPreTokenizer
from tolerances import torch_threads
from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

import cli
from corpora import load_dataset
from evaluation.metric import RANDOM_METHOD
from evaluation.runs import process_executor, ray_executor
from evaluation.runs.store import ResultStore
from evaluation.sanity import dataset as sanity_dataset
from evaluation.suite.runner import batched_gradient_passes, evaluate_example, start_evaluation

DATASET, LIMIT, ORDERINGS = "sst2:dev", 8, 10
METHODS = "saliency,leave_one_out"
# the house's quantile levels: (1 - 0.95) / 2 is 0.025000000000000022 in floats (scipy's 2.5 % agrees to 1e-12)
ALPHA = (1 - 0.95) / 2
WORKERS = 2
NUMBERS = ["mean", "low", "high", "n", "random_mean", "random_low", "random_high", "diff_mean", "diff_low",
           "diff_high"]


def worker_threads() -> int:
    """The torch threads each of the processes executor's WORKERS gets on this machine."""
    return int(process_executor.worker_environment(WORKERS)["EXWB_THREADS"])


@pytest.fixture(scope="module")
def sst2_model(tmp_path_factory):
    """A random 2-layer BERT with a vocabulary of exactly the sentences' words, saved as a folder."""
    folder = tmp_path_factory.mktemp("executors") / "model"
    split = BertPreTokenizer()  # BERT's basic split: whitespace and punctuation
    words = sorted({w for e in load_dataset(DATASET, limit=LIMIT) for w, _ in split.pre_tokenize_str(e.text.lower())})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, num_labels=2, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, attn_implementation="eager",
                        initializer_range=0.5)  # wide weights: confident predictions, removals that move them
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True).save_pretrained(folder)
    return str(folder)


def evaluate_on(executor: str, model: str, root, threads: int | None = None) -> SimpleNamespace:
    """`cli.py evaluate --json` on one executor, into a store of its own (EXWB_CACHE_DIR holds the store);
    ``threads``: this process's torch threads for a local run."""
    if threads is not None:
        with torch_threads(threads):
            return evaluate_on(executor, model, root)
    from explainers.cache import DEFAULT_CACHE

    cache = root / executor
    argv = ["evaluate", "--model", model, "--dataset", DATASET, "--limit", str(LIMIT), "--methods", METHODS,
            "--metrics", "eraser", "--random-orderings", str(ORDERINGS), "--executor", executor, "--json"]
    if executor == "processes":
        argv += ["--workers", str(WORKERS)]
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, redirect_stdout(out):
        patch.setenv("EXWB_CACHE_DIR", str(cache))
        DEFAULT_CACHE.clear()  # nothing computed by an earlier run in this process is served to this one
        assert cli.main(argv) == 0
    report = json.loads(out.getvalue())
    summary = pd.DataFrame(report["summary"]).sort_values(["method", "metric"]).reset_index(drop=True)
    return SimpleNamespace(summary=summary, store=cache / "results.sqlite", run_id=report["run_id"])


@pytest.fixture(scope="module")
def local_run(sst2_model, tmp_path_factory) -> SimpleNamespace:
    """The local run, with the processes executor's per-worker thread count."""
    return evaluate_on("local", sst2_model, tmp_path_factory.mktemp("local"), threads=worker_threads())


def stored_rows(path, run_id: str) -> list[dict]:
    """Every row of every stored cell, read from the SQLite file itself (not through ResultStore)."""
    with sqlite3.connect(path) as db:
        cells = db.execute("SELECT key, result FROM cells WHERE run_id = ?", (run_id,)).fetchall()
    return [{"example_id": key, **row} for key, result in cells for row in json.loads(result).get("rows", [])]


def percentile_bootstrap(values) -> tuple[float, float]:
    """The house's interval written out: sorted values, 2000 resamples drawn with seed 0, 2.5 / 97.5 % quantiles."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    means = values[np.random.default_rng(0).integers(0, values.size, size=(2000, values.size))].mean(axis=1)
    return float(np.quantile(means, ALPHA)), float(np.quantile(means, 1 - ALPHA))


def scipy_bootstrap(values) -> tuple[float, float]:
    """scipy's percentile bootstrap with the same generator (it draws the same indices) and its own percentiles."""
    result = stats.bootstrap((np.sort(np.asarray(values, dtype=np.float64)),), np.mean, n_resamples=2000,
                             method="percentile", rng=np.random.default_rng(0), vectorized=True)
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def recomputed(rows: list[dict]) -> pd.DataFrame:
    """The summary's numbers from the stored rows: per (method, metric) mean and bounds; for a method the random
    baseline's mean, its band (2.5 / 97.5 % quantiles of the per-ordering dataset means) and the paired difference."""
    frame = pd.DataFrame(rows)
    random = frame[frame["method"] == RANDOM_METHOD].set_index(["metric", "example_id"])
    out = []
    for (method, metric), group in frame.groupby(["method", "metric"]):
        values = np.sort(group["value"].to_numpy(dtype=np.float64))
        low, high = percentile_bootstrap(values)
        row = {"method": method, "metric": metric, "mean": float(values.mean()), "low": low, "high": high,
               "n": len(values), "scipy": scipy_bootstrap(values)}
        baseline = random.loc[metric]
        orderings = np.array([baseline.loc[key, "orderings"] for key in sorted(baseline.index)])
        per_ordering = orderings.mean(axis=0)  # each ordering's mean over the examples
        band = (float(np.quantile(per_ordering, ALPHA)), float(np.quantile(per_ordering, 1 - ALPHA)))
        if method == RANDOM_METHOD:
            row.update(random_mean=float(values.mean()), random_low=band[0], random_high=band[1])
        else:
            paired = group.set_index("example_id")["value"].sort_index()
            differences = np.sort(paired.to_numpy() - baseline.loc[paired.index, "value"].to_numpy())
            random_means = np.sort(baseline.loc[paired.index, "value"].to_numpy(dtype=np.float64))
            diff_low, diff_high = percentile_bootstrap(differences)
            row.update(random_mean=float(random_means.mean()), random_low=band[0], random_high=band[1],
                       diff_mean=float(differences.mean()), diff_low=diff_low, diff_high=diff_high,
                       scipy_diff=scipy_bootstrap(differences))
        out.append(row)
    return pd.DataFrame(out).sort_values(["method", "metric"]).reset_index(drop=True)


def same_float(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def assert_identical(ours: pd.DataFrame, theirs: pd.DataFrame, columns: list[str], what: str) -> None:
    assert ours[["method", "metric"]].equals(theirs[["method", "metric"]]), what
    for column in columns:
        for index, (a, b) in enumerate(zip(ours[column].astype(float), theirs[column].astype(float))):
            assert same_float(a, b), (what, ours.loc[index, "method"], ours.loc[index, "metric"], column, a, b)


def assert_equal_to_the_stored_cells(run: SimpleNamespace) -> None:
    expected = recomputed(stored_rows(run.store, run.run_id))
    assert len(expected) == len(run.summary) == 6  # 2 methods + random x 2 metrics
    assert set(expected["metric"]) == {"comprehensiveness-eraser", "sufficiency-eraser"}
    assert (expected["n"] == LIMIT).all()
    assert_identical(run.summary, expected, NUMBERS, "recomputed")
    for row in expected.itertuples():  # scipy's percentiles differ from np.quantile's only in the last bits
        assert (row.low, row.high) == pytest.approx(row.scipy, rel=1e-12, abs=1e-15)
        if row.method != RANDOM_METHOD:
            assert (row.diff_low, row.diff_high) == pytest.approx(row.scipy_diff, rel=1e-12, abs=1e-15)
    assert (run.summary["low"] < run.summary["high"]).all()  # real intervals, not a single repeated value


def test_local_statistics_are_those_of_the_stored_cells(local_run):
    assert_equal_to_the_stored_cells(local_run)


def test_a_cell_gives_the_same_values_inside_and_outside_its_windows_batch_hook(sst2_model, tmp_path):
    """The cause of Ray's different means: the local and processes executors run cells inside the batch hook's
    sharing() block, where the removal curves reuse leave-one-out's rows; a Ray task ran outside any block and
    computed those rows in other batches (float32 rounding apart). Each cell now opens its own block."""
    from explainers.cache import DEFAULT_CACHE

    _, _, cells = start_evaluation(sst2_model, DATASET, METHODS.split(","), ["eraser"], limit=3,
                                   options={"random_orderings": ORDERINGS}, store=ResultStore(tmp_path / "r.sqlite"))
    specs = [cell.spec for cell in cells]
    DEFAULT_CACHE.clear()
    alone = [evaluate_example(spec)["rows"] for spec in specs]  # as a Ray task runs it
    DEFAULT_CACHE.clear()
    with batched_gradient_passes(specs):  # as the local executor runs a window
        windowed = [evaluate_example(spec)["rows"] for spec in specs]
    DEFAULT_CACHE.clear()
    assert alone == windowed and len(alone[0]) == 6


def test_the_random_rows_band_is_the_band_on_every_method_row(local_run):
    for metric, rows in local_run.summary.groupby("metric"):
        assert rows["random_low"].nunique() == rows["random_high"].nunique() == 1, metric  # to the last bit


@pytest.mark.slow  # worker processes start, each importing torch
def test_processes_give_the_local_statistics(sst2_model, local_run, tmp_path):
    processes = evaluate_on("processes", sst2_model, tmp_path)
    assert_equal_to_the_stored_cells(processes)
    assert_identical(processes.summary, local_run.summary, NUMBERS, "processes vs local")
    assert processes.summary["vs_random"].fillna("").tolist() == local_run.summary["vs_random"].fillna("").tolist()


@pytest.mark.slow
@pytest.mark.ray
def test_ray_gives_the_local_statistics(sst2_model, local_run, tmp_path):
    ray = pytest.importorskip("ray")
    threads = int(ray_executor.worker_env_vars(1.0)["EXWB_THREADS"])  # a task's torch threads (num_cpus 1)
    local = local_run if threads == worker_threads() else evaluate_on("local", sst2_model, tmp_path / "local",
                                                                      threads=threads)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = evaluate_on("ray", sst2_model, tmp_path)
    finally:
        ray_executor.shutdown()
    assert_equal_to_the_stored_cells(on_ray)
    assert_identical(on_ray.summary, local.summary, NUMBERS, "ray vs local")
    assert on_ray.summary["vs_random"].fillna("").tolist() == local.summary["vs_random"].fillna("").tolist()


@pytest.mark.slow  # two worker processes start (~20 s of the shared 2-core machine)
def test_a_sanity_study_gives_the_same_bootstrap_bounds_on_local_and_processes(sst2_model, tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_RUN_WORKERS", str(WORKERS))
    arguments = dict(model=sst2_model, dataset=DATASET, methods=["saliency", "leave_one_out"], limit=LIMIT, seed=2)
    tables = []
    for executor in ("local", "processes"):
        with torch_threads(worker_threads()):  # the local run computes as each worker does
            store, summary = sanity_dataset.run_sanity_study(store=ResultStore(tmp_path / f"{executor}.sqlite"),
                                                             executor=executor, **arguments)
        assert summary.status == "finished" and summary.done == LIMIT
        frame = sanity_dataset.results_frame(store, summary.run_id)
        table = sanity_dataset.summarize(frame).sort_values(["stage", "method", "metric"]).reset_index(drop=True)
        tables.append(table)
        for row in table.itertuples():  # each row recomputed from its stored values
            values = frame[(frame["stage"] == row.stage) & (frame["method"] == row.method) &
                           (frame["metric"] == row.metric)]["value"].to_numpy(dtype=np.float64)
            values = values[np.isfinite(values)]
            assert row.n == values.size
            if values.size > 1 and not np.all(values == values[0]):
                assert (row.mean, row.low, row.high) == (float(np.sort(values).mean()), *percentile_bootstrap(values))
    local, processes = tables
    assert len(local) > 10 and (local["low"] < local["high"]).any()
    pd.testing.assert_frame_equal(processes, local, check_exact=True)
