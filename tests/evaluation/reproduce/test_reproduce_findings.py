"""The reproduce run's verdict rule and interval, against scipy's Student-t interval computed here, and
the budgets and findings every paper declares."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaluation.reproduce import BUDGETS, NOT, NOT_RUN, PAPERS, PARTLY, REPRODUCED, Claim, estimate, findings_for
from evaluation.reproduce.findings import interval, verdict
from evaluation.reproduce.run import TOKENS, paper_module, working_parameters
from evaluation.reproduce.seed_models import sst_recipe
from evaluation.reproduce.studies import roar_config
from evaluation.roar.presets import PRESETS
from evaluation.roar.study import study_cells
from models.metering import nominal_rate, work_units


def test_the_interval_over_seeds_is_students_t():
    values = [0.12, 0.05, 0.2, 0.09]
    low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    got = interval(values + [float("nan")])  # a seed without a value is left out
    assert got["n"] == 4 and got["mean"] == pytest.approx(np.mean(values))
    assert (got["low"], got["high"]) == (pytest.approx(low), pytest.approx(high))


@pytest.mark.parametrize("values, claim, expected", [
    ([0.1, 0.12, 0.11], Claim(sign=+1), REPRODUCED),        # interval above 0, as the paper
    ([0.1, -0.05, 0.2], Claim(sign=+1), PARTLY),            # mean above 0, interval holds 0
    ([-0.1, -0.12, -0.11], Claim(sign=+1), NOT),            # the other side
    ([-0.1, -0.12, -0.11], Claim(sign=-1), REPRODUCED),
    ([0.1, 0.12], Claim(sign=+1), PARTLY),                  # two seeds never reproduce
    ([0.0, 0.0, 0.0], Claim(sign=-1), NOT),                 # every seed 0: nothing separates the two
    ([0.98, 1.0, 0.99], Claim(value=1.0, tolerance=0.05), REPRODUCED),
    ([0.8, 0.82, 0.81], Claim(value=1.0, tolerance=0.1), PARTLY),  # within 3 tolerances, interval misses
    ([0.2, 0.22, 0.21], Claim(value=1.0, tolerance=0.05), NOT),
    ([], Claim(sign=+1), NOT_RUN),
])
def test_verdicts_follow_the_written_rule(values, claim, expected):
    result, reason = verdict(claim, interval(values))
    assert result == expected and reason


def test_every_paper_declares_findings_costs_and_a_quick_budget_within_three_hours():
    assert set(BUDGETS) == {"tiny", "quick", "full"} and all(len(b.seeds) >= 3 for b in BUDGETS.values())
    quick = BUDGETS["quick"]
    rate = nominal_rate(working_parameters(quick), "cpu")  # never measured: the same figure under any load
    total = 0.0
    for paper in PAPERS:
        module = paper_module(paper)
        ids = [f.id for f in module.FINDINGS]
        assert len(ids) == len(set(ids)) and findings_for(paper, "tiny") and findings_for(paper, "quick")
        assert set(f.id for f in findings_for(paper, "quick")) <= set(module.COSTS)
        cost = estimate(paper, "quick", rate=rate)
        assert cost["total"] == pytest.approx(sum(cost["per_finding"].values()))
        total += cost["total"]
    # each paper's estimate counts training the seeded SST-2 classifiers (a paper run alone trains them); run one
    # after another, the five train them once: they are cached by recipe (paper 003's attack model is the same one)
    assert all(sst_recipe(quick, seed, blocks=quick.zoo_blocks[0]) == sst_recipe(quick, seed) for seed in quick.seeds)
    seeded = quick.train_limit * quick.epochs * len(quick.seeds)
    counting = [p for p in PAPERS if paper_module(p).training_sequences(quick) * len(quick.seeds) >= seeded]
    assert counting == list(PAPERS)
    total -= (len(counting) - 1) * work_units(seeded, seeded, TOKENS) / rate
    # within 3 hours with a 1.5x margin for overheads the passes do not count (2x before the added findings:
    # comp / suff, N(0, 1) randomization, plausibility, fAML, papers 000 and 001's ROAR on SST)
    assert 0 < total < 3 * 3600 / 1.5


def _quick_roar_study(paper: str):
    module = paper_module(paper)
    measures = {"measures": tuple(module.MEASURES)} if paper == "001" else {}
    return roar_config(0, "default", module.ROAR_PRESET["quick"], module.ROAR_SIZES["quick"], check_model=False,
                       **measures)


def test_the_quick_budget_has_both_papers_roar_cells_and_the_full_budget_the_papers_protocol():
    quick_000, quick_001 = ({f.id for f in findings_for(paper, "quick")} for paper in ("000", "001"))
    assert {f"roar-im-vs-loo-{ratio}" for ratio in (10, 20, 30)} <= quick_000
    assert {f"sst-{mode}-{measure}" for mode in ("roar", "recursive")
            for measure in ("gradient", "ixg", "ig", "attention")} <= quick_001
    # quick: paper 000's three ratios kept, paper 001's nine shrunk to three; one retrain per training seed
    assert _quick_roar_study("000").ratios == (10.0, 20.0, 30.0)
    study_001 = _quick_roar_study("001")
    assert len(study_001.ratios) == 3 and study_001.mode == "both" and study_001.seeds == (0,)
    for paper, preset in (("000", "paper-000"), ("001", "paper-001")):  # full: the paper's own protocol
        module = paper_module(paper)
        assert module.ROAR_PRESET["full"] == preset and "full" not in module.ROAR_SIZES
        assert PRESETS[preset]["train_size"] == 0 and PRESETS[preset]["trainable"] == "all"


@pytest.mark.parametrize("paper", ["000", "001"])
def test_the_roar_cost_counts_the_retrains_the_quick_study_has(paper):
    # the cost model's retrains per seed, against the study's own cells (Recursive ROAR's step 1 is ROAR's retrain)
    cells = study_cells(_quick_roar_study(paper))
    distinct = [c for c in cells if not (c.spec["kind"] == "recursive" and c.spec["step"] == 1)]
    assert paper_module(paper).roar_retrains(BUDGETS["quick"]) == len(distinct)
    cost = estimate(paper, "quick", rate=nominal_rate(working_parameters(BUDGETS["quick"]), "cpu"))
    assert cost["per_finding"]["roar-im-vs-loo-10" if paper == "000" else "sst-recursive-gradient"] > 0
