"""A tiny-budget reproduce run of every paper, each stopped half-way and resumed: the structure of the
stored run (a cell per finding and training seed, seeds 0, 1, 2), no finished cell recomputed on resume, and the
generated page's numbers equal to the stored cells' (the interval recomputed here with scipy).

The tiny budget trains one-block MiniLM models from the bundled weights (seconds each) into a cache folder of this
module; the prepared offline masked LM is linked in when there is one (`make test` prepares it), else paper 000's
masked-LM findings must say they were skipped and why.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

import cli
from evaluation.reproduce import BUDGETS, KIND, NOT_RUN, findings_for, results, run_reproduce, write_page
from evaluation.runs.store import ResultStore
from models.mlm import find_prepared_mlm

pytestmark = pytest.mark.slow
SEEDS = BUDGETS["tiny"].seeds


@pytest.fixture(scope="module")
def reproduce_cache(tmp_path_factory):
    mlm = find_prepared_mlm()  # the user's prepared masked LM, read before the cache folder moves
    folder = tmp_path_factory.mktemp("reproduce-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(folder))
        if mlm is not None:
            (folder / "models").mkdir(parents=True)
            (folder / "models" / mlm.name).symlink_to(mlm, target_is_directory=True)
        yield {"store": ResultStore(folder / "results.sqlite"), "mlm": mlm is not None, "folder": folder}


def finished_times(store: ResultStore, run_id: str) -> dict[str, float]:
    return {cell["key"]: cell["finished"] for cell in store.export_run(run_id)["cells"]}


def stop_half_way_then_resume(paper: str, store: ResultStore) -> str:
    total = len(findings_for(paper, "tiny")) * len(SEEDS)
    seen = {"done": 0}

    def progress(done, _total, _left=None):
        seen["done"] = done

    _, first = run_reproduce(paper, "tiny", store=store, progress=progress, machine="test machine",
                             should_stop=lambda: seen["done"] >= total // 2)
    assert first.status == "cancelled" and first.done == total // 2
    before = finished_times(store, first.run_id)
    assert len(before) == total // 2
    _, second = run_reproduce(paper, "tiny", store=store, machine="test machine")
    assert second.run_id == first.run_id and second.done == total and not second.errors, second.errors
    after = finished_times(store, second.run_id)
    assert len(after) == total and all(after[key] == when for key, when in before.items())  # none recomputed
    return second.run_id


def check_page_against_the_store(paper: str, store: ResultStore, run_id: str, folder) -> dict:
    report = results(store, run_id)
    page = write_page(store, run_id, folder, f"python cli.py reproduce --paper {paper} --budget tiny").read_text()
    assert page.startswith("<!-- generated") and "test machine" in page
    cells = store.cells(run_id)
    for row in report["rows"]:
        stored = [cells[f"{row['finding']}/seed-{seed}"] for seed in SEEDS]
        values = [c["value"] for c in stored if "value" in c]
        line = next(line for line in page.splitlines() if line.startswith(f"| {row['title']}"))
        if not values:
            assert row["verdict"] == NOT_RUN and "n/a" in line
            continue
        mean = np.mean(values)
        low, high = (stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
                     if len(values) > 1 and np.std(values) > 0 else (mean, mean))
        shown = re.search(r"([+-]\d+\.\d{3}) \[([+-]\d+\.\d{3}), ([+-]\d+\.\d{3})\]", line).groups()
        assert [float(v) for v in shown] == pytest.approx([mean, low, high], abs=5.1e-4)  # printed to 3 decimals
        assert f"| {row['verdict']} |" in line
        listed = re.findall(r"seed (\d): ([+-]\d\.\d{3})", next(l for l in page.splitlines()
                                                             if l.startswith(f"- **{row['title']}**")))
        assert {int(s): float(v) for s, v in listed} == pytest.approx(
            {seed: round(c["value"], 3) for seed, c in zip(SEEDS, stored) if "value" in c}, abs=1e-9)
    return report


@pytest.mark.parametrize("paper", ["000", "001", "002", "003", "004"])
def test_a_tiny_reproduce_run_resumes_and_its_page_is_the_stored_run(paper, reproduce_cache, tmp_path):
    store = reproduce_cache["store"]
    run_id = stop_half_way_then_resume(paper, store)
    run = store.get_run(run_id)
    assert run["kind"] == KIND and run["config"]["paper"] == paper and run["config"]["budget"]["seeds"] == [0, 1, 2]
    report = check_page_against_the_store(paper, store, run_id, tmp_path)
    assert [r["finding"] for r in report["rows"]] == [f.id for f in findings_for(paper, "tiny")]
    for row in report["rows"]:
        near_chance = [reason for reason in row["skipped"].values() if "near chance" in reason]
        if row["verdict"] == NOT_RUN and not near_chance:  # paper 000's masked-LM findings, and only without it
            assert paper == "000" and not reproduce_cache["mlm"] and "prepare-mlm" in row["reason"]
        elif near_chance:  # paper 001's SST areas: a one-block model whose retrained heads all predict one class
            assert paper == "001" and row["finding"].startswith("sst-") and row["n"] + len(near_chance) == 3
        else:
            assert row["n"] == 3 and row["paper"] and row["reason"]


def test_the_command_resumes_the_stored_run_and_writes_the_page(reproduce_cache, tmp_path, capsys):
    # paper 001's cells are stored by the test above (or computed now: under a second)
    code = cli.main(["reproduce", "--paper", "001", "--budget", "tiny", "--docs", str(tmp_path), "--json",
                     "--out", str(tmp_path / "findings.csv")])
    assert code == 0
    captured = capsys.readouterr()
    assert "estimate for paper 001" in captured.err
    printed = json.loads(captured.out)
    written = (tmp_path / "findings.csv").read_text().splitlines()
    assert written[0].startswith("finding,paper,") and len(written) == 1 + len(printed["rows"])
    page = (tmp_path / "paper-001.md").read_text()
    assert "python cli.py reproduce --paper 001 --budget tiny --executor local" in page
    with pytest.raises(SystemExit):  # argparse's usage error, before any work
        cli.main(["reproduce", "--paper", "042"])
    assert "invalid choice" in capsys.readouterr().err
