"""The report card's verdict rules as data (``RULES``: one per check, its text shown next to its verdict; a
protocol may swap a check's rule, ``PROTOCOL_RULES``), the verdict of one interval under a rule, and the ordering
of the methods by their verdicts. Computed from the stored intervals, so a changed rule needs no recomputation."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evaluation.suite.protocols import check_runs, get_protocol

PASS, FAIL, INCONCLUSIVE, NOT_APPLICABLE = "pass", "fail", "inconclusive", "not applicable"

@dataclass(frozen=True)
class Rule:
    """How one check's interval becomes a verdict. ``kind``:
    - ``above_band``: pass when the CI lies above the reference band, fail below it, inconclusive on overlap;
    - ``below_band``: the mirror of ``above_band``, for measures where lower is better;
    - ``below``: pass when the CI lies below the reference value, fail above it, inconclusive when it contains it;
    - ``above``: the mirror of ``below``."""

    check: str
    label: str
    metric: str
    kind: str
    reference: str          # what the value is compared with
    text: str               # the rule as shown next to every verdict
    counts: bool = True     # counted in the ordering
    threshold: float | None = None  # the fixed reference value of ``below`` / ``above`` rules (None: from the data)


# ``label``: the question a check answers; the displayed name adds what it runs (``check_name``)
RULES = {rule.check: rule for rule in (
    # Rank % rather than overlap (precision@k): on a short sample the random overlap band starts at 0, so a method
    # that never finds the feature could not fail; the rank uses the whole ordering and can fail at any size.
    Rule("known_feature", "Known feature found", "known-feature.rank-fraction", "below_band",
         "random word scores (band of the random draws)",
         "pass: the 95 % CI of the known feature's mean rank % lies below the random scores' band (found earlier "
         "than chance); fail: above its upper bound (later than chance); inconclusive: they overlap"),
    Rule("faithfulness", "Faithful", "comprehensiveness-eraser", "above_band",
         "random word orderings (band of the per-ordering dataset means)",
         "pass: the 95 % CI of comprehensiveness lies above the random band's upper bound; fail: below its lower "
         "bound; inconclusive: they overlap"),
    Rule("sanity", "Changes when the model is randomized", "sanity_spearman", "below",
         "upper bound of a random permutation's rank correlation (chance band)",
         "pass: the 95 % CI of Spearman rho with the original explanation after randomizing every layer lies below "
         "the chance band's upper bound; fail: its lower bound is above it; inconclusive: it contains it"),
    Rule("adversarial", "Robust to the attack", "rank_change", "below", "half of the top-k words moved",
         "pass: the 95 % CI of Rank Change under the class-keeping attack lies below 0.5; fail: above 0.5; "
         "inconclusive: it contains 0.5", threshold=0.5),
    Rule("plausibility", "Agrees with people", "plaus_auprc", "above_band", "random word scores (band)",
         "pass: the 95 % CI of AUPRC against the human rationales lies above the random scores' band; fail: below "
         "its lower bound; inconclusive: they overlap"),
    Rule("agreement", "Agrees with the other methods", "agreement_spearman", "above",
         "no agreement (rho = 0)",
         "pass: the 95 % CI of the mean Spearman rho (|scores|) with the other methods lies above 0; fail: below 0; "
         "inconclusive: it contains 0. Not counted in the ordering: agreement is not faithfulness (paper 001).",
         counts=False, threshold=0.0),
)}

# paper 003's protocol: the same rules on its checks' values. Its comprehensiveness is a mean |delta p|, which a
# random ordering also raises, so "faithful" stays "above the random orderings' band" (a band of the same |delta p|);
# its randomization draws N(0, 1) weights, and "changed" stays "below the chance band's upper bound".
PROTOCOL_RULES = {
    ("paper-003", "faithfulness"): replace(
        RULES["faithfulness"], metric="comprehensiveness-003-code",
        reference="random word orderings scored the same way (band of the per-ordering dataset means)",
        text="pass: the 95 % CI of comprehensiveness (mean |p(x) - p(x')| over the top 5/10/20/50 % of the words "
             "replaced by [MASK], paper 003 Def. 2.2 as plotted) lies above the random orderings' band; fail: below "
             "its lower bound; inconclusive: they overlap"),
    ("paper-003", "sanity"): replace(
        RULES["sanity"],
        text="pass: the 95 % CI of Spearman rho with the original explanation after re-drawing every layer from "
             "N(0, 1) lies below the chance band's upper bound; fail: its lower bound is above it; inconclusive: it "
             "contains it"),
}


def rule_for(check: str, protocol: str | None = None) -> Rule:
    """The rule of ``check`` under ``protocol`` (the same kind of rule, on that protocol's value)."""
    return PROTOCOL_RULES.get((get_protocol(protocol).id, check), RULES[check])


def check_name(check: str, protocol: str | None, dataset: str) -> str:
    """The displayed name of a check: the question it answers, then what it runs (protocols differ)."""
    return f"{RULES[check].label}: {check_runs(check, protocol, dataset)}"


ORDERING_RULE = ("Methods are ordered by the number of passes on the counted checks, then by fewer fails; methods "
                 "equal on both share a rank (ties stay ties). Inconclusive and not-applicable checks count neither "
                 "way.")


# ----- verdicts --------------------------------------------------------------------------------------------------
def verdict(rule: Rule, low: float | None, high: float | None, reference_low: float | None = None,
            reference_high: float | None = None) -> str:
    """pass / fail / inconclusive of one interval under ``rule`` (see ``Rule``); a missing value is inconclusive."""
    if rule.kind in ("above_band", "below_band"):
        if low is None or high is None or reference_low is None or reference_high is None \
                or not np.isfinite([low, high, reference_low, reference_high]).all():
            return INCONCLUSIVE
        if rule.kind == "above_band":
            return PASS if low > reference_high else FAIL if high < reference_low else INCONCLUSIVE
        return PASS if high < reference_low else FAIL if low > reference_high else INCONCLUSIVE
    reference = rule.threshold if rule.threshold is not None else reference_high
    if low is None or high is None or reference is None or not np.isfinite([low, high, reference]).all():
        return INCONCLUSIVE
    if rule.kind == "below":
        return PASS if high < reference else FAIL if low > reference else INCONCLUSIVE
    if rule.kind == "above":
        return PASS if low > reference else FAIL if high < reference else INCONCLUSIVE
    raise ValueError(f"Unknown rule kind '{rule.kind}'.")


def ordering(rows: list[dict], methods: list[str]) -> list[dict]:
    """Rank methods by passes, then fewer fails, on the counted checks; equal methods share a rank."""
    tallies: list[dict[str, Any]] = []
    for method in methods:
        mine = [r for r in rows if r["method"] == method and RULES[r["check"]].counts]
        count = {v: [r.get("label") or RULES[r["check"]].label for r in mine if r["verdict"] == v]
                 for v in (PASS, FAIL, INCONCLUSIVE, NOT_APPLICABLE)}
        tallies.append({"method": method, "passes": len(count[PASS]), "fails": len(count[FAIL]),
                        "inconclusive": len(count[INCONCLUSIVE]), "not_applicable": len(count[NOT_APPLICABLE]),
                        "passed": count[PASS], "failed": count[FAIL]})
    tallies.sort(key=lambda t: (-t["passes"], t["fails"]))
    out, rank = [], 0
    for position, tally in enumerate(tallies):
        key = (tally["passes"], tally["fails"])
        if position == 0 or key != (tallies[position - 1]["passes"], tallies[position - 1]["fails"]):
            rank = position + 1
        tied = [t["method"] for t in tallies if (t["passes"], t["fails"]) == key and t is not tally]
        reasoning = (f"{tally['passes']} pass{'es' if tally['passes'] != 1 else ''}"
                     + (f" ({', '.join(tally['passed'])})" if tally["passed"] else "")
                     + f", {tally['fails']} fail{'s' if tally['fails'] != 1 else ''}"
                     + (f" ({', '.join(tally['failed'])})" if tally["failed"] else "")
                     + f", {tally['inconclusive']} inconclusive, {tally['not_applicable']} not applicable"
                     + (f"; tied with {', '.join(tied)}" if tied else ""))
        out.append({"rank": rank, **tally, "tied_with": tied, "reasoning": reasoning})
    return out
