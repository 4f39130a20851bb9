"""The reproduce run's verdict rule and interval, against scipy's Student-t interval computed here, and
the budgets and findings every paper declares."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaluation.reproduce import BUDGETS, NOT, NOT_RUN, PAPERS, PARTLY, REPRODUCED, Claim, estimate, findings_for
from evaluation.reproduce.findings import interval, verdict
from evaluation.reproduce.run import paper_module, working_parameters
from models.metering import nominal_rate


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
    total = 0.0
    for paper in PAPERS:
        module = paper_module(paper)
        ids = [f.id for f in module.FINDINGS]
        assert len(ids) == len(set(ids)) and findings_for(paper, "tiny") and findings_for(paper, "quick")
        assert set(f.id for f in findings_for(paper, "quick")) <= set(module.COSTS)
        # at the cost model's nominal 2-core rate (never measured: the same figure under any load)
        cost = estimate(paper, "quick", rate=nominal_rate(working_parameters(BUDGETS["quick"]), "cpu"))
        assert cost["total"] == pytest.approx(sum(cost["per_finding"].values()))
        total += cost["total"]
    # within 3 hours with a 1.5x margin for overheads the passes do not count (2x before the added findings:
    # comp / suff, N(0, 1) randomization, plausibility, fAML; the ROAR findings stay out of quick for this bound)
    assert 0 < total < 3 * 3600 / 1.5
