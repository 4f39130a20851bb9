"""``reproduce --paper N``: a paper's headline findings as one stored, resumable run.

The run (kind ``reproduce``) has one cell per (finding, seed); a cell trains or reopens the seed's models
(``seed_models.py``) and runs or reopens the project's own study for that finding (bias table, Table 4, ROAR, sanity,
known feature, the attack, AML), each an inner stored run, and keeps one number. A stopped run resumes with the
cells it has; the page (``page.py``) is written from the stored cells only.
"""
from __future__ import annotations

import importlib
from dataclasses import asdict

from evaluation.reproduce.findings import BUDGETS, Budget, Finding, interval, verdict
from evaluation.reproduce.seed_models import trained_models
from evaluation.runs.jobs import Cell, Progress, RunSummary, run_cells
from evaluation.runs.store import ResultStore
from models import ModelError
from models.metering import cold_cpu_rate, cpu_flops, work_units

KIND = "reproduce"
PAPERS = {"000": "Input Marginalization and the removal-operator bias (Kim / Harbecke-style occlusion, paper 000)",
          "001": "ROAR vs Recursive ROAR (paper 001)",
          "002": "MaRC, masked rationale learning (paper 002)",
          "003": "Assessing the interpretability of LLMs across size and architecture (paper 003)",
          "004": "AML, attributive masking learning (paper 004)"}
TOKENS = 25  # mean tokens of an SST-2 sentence under MiniLM's tokenizer (the estimate's n)
BLOCK_PARAMETERS, HEAD_PARAMETERS = 1_774_000, 150_000  # MiniLM-L6: working parameters per block, pooler and head


def paper_module(paper: str):
    if paper not in PAPERS:
        raise ModelError(f"Unknown paper '{paper}'. Choose from: {', '.join(PAPERS)}.")
    return importlib.import_module(f"evaluation.reproduce.paper_{paper}")


def get_budget(name: str) -> Budget:
    if name not in BUDGETS:
        raise ModelError(f"Unknown budget '{name}'. Choose from: {', '.join(BUDGETS)}.")
    return BUDGETS[name]


def findings_for(paper: str, budget: str) -> list[Finding]:
    return [f for f in paper_module(paper).FINDINGS if budget in f.budgets]


def start_reproduce(paper: str, budget: str = "quick", store: ResultStore | None = None,
                    machine: str = "") -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run: one cell per (finding, seed), seeds outermost so each seed's models are
    trained once, by its first cell. ``machine``: the machine line each cell records (models/machine.py)."""
    chosen = get_budget(budget)
    findings = findings_for(paper, budget)
    store = store or ResultStore()
    config = {"paper": paper, "budget": asdict(chosen), "findings": [f.id for f in findings]}
    run_id = store.create_run(KIND, config, total=len(findings) * len(chosen.seeds),
                              title=f"reproduce paper {paper} ({budget} budget)")
    cells = [Cell(key=f"{finding.id}/seed-{seed}",
                  spec={"paper": paper, "finding": finding.id, "seed": int(seed), "budget": budget,
                        "store": str(store.path), "machine": machine})
             for seed in chosen.seeds for finding in findings]
    return store, run_id, cells


def reproduce_cell(spec: dict) -> dict:
    """One finding on one seed: ``{"value", "details", "machine"}``, or ``{"skipped": reason}``."""
    finding = next(f for f in paper_module(spec["paper"]).FINDINGS if f.id == spec["finding"])
    result = finding.work({**spec, "budget": get_budget(spec["budget"])})
    return {**result, "machine": spec.get("machine", "")}


def run_reproduce(paper: str, budget: str = "quick", executor: str = "local", store: ResultStore | None = None,
                  progress: Progress | None = None, should_stop=None, machine: str = "",
                  workers: int | None = None) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = start_reproduce(paper, budget, store, machine)
    summary = run_cells(store, run_id, cells, reproduce_cell, executor=executor, progress=progress,
                        should_stop=should_stop, workers=workers)
    return store, summary


def results(store: ResultStore, run_id: str) -> dict:
    """Per finding: the paper's number, ours per seed, the interval over seeds, the verdict and its reason."""
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"No run '{run_id}'.")
    paper, budget = run["config"]["paper"], run["config"]["budget"]
    cells = store.cells(run_id)
    rows = []
    for finding in findings_for(paper, budget["name"]):
        per_seed, skipped, errors, details = {}, {}, {}, {}
        for seed in budget["seeds"]:
            cell = cells.get(f"{finding.id}/seed-{seed}")
            if cell is None:
                continue
            if "error" in cell:
                errors[seed] = cell["error"]
            elif "skipped" in cell:
                skipped[seed] = cell["skipped"]
            else:
                per_seed[seed], details[seed] = cell["value"], cell.get("details", {})
        estimate = interval(per_seed.values())
        result, reason = verdict(finding.claim, estimate)
        if skipped and not per_seed:
            reason = next(iter(skipped.values()))
        rows.append({"finding": finding.id, "title": finding.title, "paper": finding.paper, "measure": finding.measure,
                     "claim": finding.claim.text(), "addition": finding.addition, "differs": finding.differs,
                     "per_seed": per_seed, "details": details, **estimate, "verdict": result, "reason": reason,
                     "skipped": skipped, "errors": errors})
    machines = sorted({cell.get("machine", "") for cell in cells.values() if cell.get("machine")})
    return {"paper": paper, "title": PAPERS[paper], "budget": budget, "run_id": run_id, "status": run["status"],
            "done": run["done"], "total": run["total"], "rows": rows, "machines": machines,
            "not_covered": paper_module(paper).NOT_COVERED, "models": trained_models(get_budget(budget["name"]))}


# ----- the estimate (models/metering.py's cost model, before anything is loaded) --------------------------------
def working_parameters(budget: Budget) -> int:
    return BLOCK_PARAMETERS * (budget.blocks or 6) + HEAD_PARAMETERS


def estimate(paper: str, budget: str, rate: float | None = None) -> dict:
    """Seconds per finding and in total, from each finding's passes per seed (training included) at the cold CPU
    rate of the budget's model size (or ``rate``, units per second): the estimate printed before a run starts."""
    chosen = get_budget(budget)
    rate = rate or cold_cpu_rate(working_parameters(chosen), cpu_flops())
    per_finding = {}
    for finding in findings_for(paper, budget):
        forward, backward = paper_module(paper).COSTS[finding.id](chosen)
        per_finding[finding.id] = work_units(forward, backward, TOKENS) / rate * len(chosen.seeds)
    training = paper_module(paper).training_sequences(chosen) * len(chosen.seeds)
    per_finding["(training the seeded models)"] = work_units(training, training, TOKENS) / rate
    return {"per_finding": per_finding, "total": sum(per_finding.values()), "rate_units_per_second": rate}
