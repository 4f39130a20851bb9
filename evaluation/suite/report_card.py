""""Which method should I trust for this model?": a report card of every method on every check.

The card composes the dataset-level studies the project already has, each stored as job cells in the result store
(a second build recomputes nothing):

- ``known_feature``: the known feature's mean rank % on the known-feature task (paper 003 s. 3.1) vs random word scores;
- ``faithfulness``: comprehensiveness vs the random orderings' band (``evaluation/suite/runner.py``): ERASER AOPC with
  deleted words on the card's dataset (protocol ``default``), or paper 003's Def. 2.2 on the known-feature task
  (protocol ``paper-003``, ``evaluation/suite/protocols.py``);
- ``sanity``: rank correlation with the original explanation after cascading randomization of every layer,
  vs a random permutation's (``evaluation/sanity/dataset.py``, paper 003 s. 3.3); the layers re-initialized with
  the model's initializer (``default``) or N(0, 1) (``paper-003``);
- ``adversarial``: Rank Change of the top-k words under the class-keeping attack (``evaluation/adversarial``);
- ``plausibility``: AUPRC against human rationales vs random word scores (datasets with rationales only);
- ``agreement``: mean Spearman rho with the other methods' word scores (``evaluation/agreement/measures.py``); shown,
  never counted in the ordering: agreement is not faithfulness.

Each check is displayed by what it runs under the card's protocol (``check_name``). The card itself is a run
(kind ``report-card``) with one cell per check; a cell runs (or reopens) its study and
stores the per-method intervals. Verdicts and the ordering are computed from those intervals with the rules in
``RULES`` (one table, each rule's text shown next to its verdict), so a changed rule needs no recomputation.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import partial

import numpy as np

from corpora import check_dataset_id, load_dataset
from evaluation import summary
from evaluation.adversarial import dataset as adversarial
from evaluation.adversarial.config import ATTACKED_METHODS, config_for
from evaluation.agreement.measures import cosine_matrix, spearman_features
from evaluation.faithfulness import known_feature
from evaluation.runs.jobs import Cell, CellStopped, Progress, RunSummary, current_stop_check, run_cells
from evaluation.runs.store import ResultStore
from evaluation.sanity import dataset as sanity
from evaluation.statistics import bootstrap_ci
from evaluation.suite import runner
from evaluation.suite.protocols import DEFAULT as DEFAULT_PROTOCOL
from evaluation.suite.protocols import get_protocol
from evaluation.suite.report_card_rules import (
    NOT_APPLICABLE,
    ORDERING_RULE,
    RULES,
    check_name,
    ordering,
    rule_for,
    verdict,
)
from explainers import split_spec
from models import ModelError, cached_classifier, randomize

KIND = "report-card"
@dataclass(frozen=True)
class CardConfig:
    """Which checks, on what data, at what sizes. ``quick()`` gives the tiny sizes the tests use."""

    checks: tuple[str, ...] = tuple(RULES)
    limit: int = 100                      # examples of the faithfulness (and agreement) study
    sanity_limit: int = 50                # paper 003 s. 3.3, 4.1.4: 50 examples
    # paper 003 s. 4.1 attacked 16 datapoints; the card attacks 8 to fit "--limit 100 within 30 minutes" on the
    # 2-core CPU: the attack is the card's dearest check (IG through its 8-point path: 8 rows per sentence per step,
    # ~80 % of it). Batching the sentences (attack_many) makes a step ~1.8x cheaper, yet 16 sentences at 200 steps
    # project to 11-17 idle minutes, the card to 22-28: no margin under 30 (docs/benchmarks.md). The cost: the
    # bootstrap interval of Rank Change widens by sqrt(2) (half-width ~0.22 -> ~0.31 at the per-sentence SD of
    # ~0.45 seen here), so more methods end "inconclusive" against the 0.5 rule. --attack-limit 16: the paper's size.
    # Measured idle (docs/benchmarks.md): the card ~20.5 min at 8, 29 min 50 s at 16.
    attack_limit: int = 8
    attack_steps: int = 200               # the thesis's 500 at most; 200 keeps the card within its budget
    attack_loop_ig_steps: int = 8         # IG attacked through an 8-point path (50 in the thesis), the result
                                          # re-explained with the full 50-point IG: ~6x cheaper (the card's budget)
    attack_methods: tuple[str, ...] | None = None  # None: every differentiable method of the card is attacked
    known_feature_limit: int = 100
    plausibility_limit: int = 100
    known_feature_model: str | None = None    # None: the project's known-feature model, when it is trained
    known_feature_dataset: str | None = None  # None: the known-feature task's dev split
    plausibility_dataset: str | None = None   # None: the card's dataset, when it has human rationales
    random_orderings: int = 10
    seed: int = 0
    protocol: str = DEFAULT_PROTOCOL          # evaluation/suite/protocols.py: "default" or "paper-003"

    @classmethod
    def quick(cls, **overrides) -> CardConfig:
        return replace(cls(limit=4, sanity_limit=3, attack_limit=2, attack_steps=3, known_feature_limit=4,
                           plausibility_limit=4), **overrides)

    def to_dict(self) -> dict:
        out = {**asdict(self), "checks": list(self.checks)}
        if self.attack_methods is None:  # absent unless chosen: the cards stored before it keep their run ids
            del out["attack_methods"]
        else:
            out["attack_methods"] = list(self.attack_methods)
        if self.protocol == DEFAULT_PROTOCOL:  # absent unless chosen: the cards stored before it keep their run ids
            del out["protocol"]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> CardConfig:
        chosen = data.get("attack_methods")
        return cls(**{**data, "checks": tuple(data["checks"]),
                      "attack_methods": None if chosen is None else tuple(chosen)})


# paper 003's methods with its settings, where this installation registers them (the bare method otherwise)
def default_methods() -> list[str]:
    """The card's methods: paper 003's, with its presets."""
    return known_feature.paper_003_methods()


# ----- one cell per check ----------------------------------------------------------------------------------------
def _row(method: str, check: str, estimate: dict | None = None, reference: tuple = (None, None),
         reason: str | None = None, note: str | None = None) -> dict:
    estimate = estimate or {}
    return {"method": method, "check": check, "mean": _num(estimate.get("mean")), "low": _num(estimate.get("low")),
            "high": _num(estimate.get("high")), "n": int(estimate.get("n") or 0),
            "reference_low": _num(reference[0]), "reference_high": _num(reference[1]),
            "not_applicable": reason, "note": note}


def _num(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def run_study(start, work, store: ResultStore, batch_hook=None, executor: str = "local") -> tuple[str, int]:
    """Run (or reopen) an inner study; returns its run id and how many cells it computed now. ``batch_hook``: the
    study's (``run_cells``), e.g. the attacks' batches; ``executor``: where its cells run (Ray GPUs)."""
    inner_store, run_id, cells = start(store)
    finished = {k for k, cell in inner_store.cells(run_id).items() if "error" not in cell}
    # the card run's stop check, captured now: the inner run installs its own for its cells
    summary: RunSummary = run_cells(inner_store, run_id, cells, work, should_stop=current_stop_check(),
                                    batch_hook=batch_hook, executor=executor)
    if summary.status == "cancelled":
        raise CellStopped()
    if summary.errors and len(summary.errors) == summary.total:
        raise ModelError(f"every example failed: {next(iter(summary.errors.values()))}")
    return run_id, len([c for c in cells if c.key not in finished])


def _evaluation_rows(store, run_id, methods, check, metric) -> list[dict]:
    table = summary.summarize(summary.results_frame(store, run_id), summary.random_orderings_frame(store, run_id))
    rows = []
    for method in methods:
        found = table[(table["method"] == method) & (table["metric"] == metric)] if len(table) else table
        if not len(found):
            rows.append(_row(method, check, reason=f"no value of {metric} on any example"))
            continue
        record = found.iloc[0].to_dict()
        rows.append(_row(method, check, record, (record.get("random_low"), record.get("random_high"))))
    return rows


def _agreement_rows(store, run_id, methods) -> list[dict]:
    """Per method: per example the mean Spearman rho (|scores|) with the other methods, bootstrap CI over examples."""
    per_method: dict[str, list[float]] = {m: [] for m in methods}
    for cell in store.cells(run_id).values():
        explained = cell.get("explanations") or {}
        present = [m for m in methods if m in explained]
        if len(present) < 2 or len(explained[present[0]]["scores"]) < 2:
            continue
        vectors = np.abs(np.array([explained[m]["scores"] for m in present], dtype=np.float64))
        matrix = cosine_matrix(spearman_features(vectors))
        np.fill_diagonal(matrix, np.nan)
        for method, row in zip(present, matrix):
            if np.isfinite(row).any():
                per_method[method].append(float(np.nanmean(row)))
    return [_row(m, "agreement", asdict(bootstrap_ci(per_method[m])), (0.0, 0.0)) for m in methods]


def sanity_rows(store: ResultStore, run_id: str, methods: list[str], stage: str, seed: int) -> list[dict]:
    """The sanity check's rows from a stored sanity study: Spearman rho after ``stage`` with the chance band
    (a full cascade's study gives the same values at its last stage as the card's last-stage-only one)."""
    summary = sanity.summarize(sanity.results_frame(store, run_id), seed=seed)
    chance, curves = sanity.chance_band(sanity.curves(summary, [stage], RULES["sanity"].metric))
    band = (chance["low"], chance["high"]) if chance else (None, None)
    rows = []
    for method in methods:
        found = curves[curves["method"] == method]
        rows.append(_row(method, "sanity", found.iloc[0].to_dict(), band, note=f"after stage '{stage}'")
                    if len(found) else _row(method, "sanity", reason="no sanity value (see the sanity run's errors)"))
    return rows


def check_cell(spec: dict) -> dict:
    """The work of one check (depends only on ``spec``): run or reopen its study, keep each method's interval."""
    store = ResultStore(spec.get("store"))
    check, model, methods, config = spec["check"], spec["model"], spec["methods"], CardConfig.from_dict(spec["config"])
    protocol = get_protocol(config.protocol)
    run_inner = partial(run_study, executor=spec.get("executor", "local"))  # not in the run's key: same numbers anywhere
    options = {"random_orderings": config.random_orderings, "seed": config.seed}
    kf_model = config.known_feature_model or (str(known_feature.model_dir()) if known_feature.is_prepared() else None)
    kf_data = config.known_feature_dataset or f"known-feature:dev:{known_feature.RECIPE.label_seed}"
    kf_note = None if kf_model == model else f"on {kf_model}: the known-feature task needs a model trained on it"
    on_known_feature = check == "known_feature" or (check == "faithfulness" and protocol.faithfulness_on_known_feature)
    if on_known_feature and kf_model is None:
        return {"rows": [_row(m, check, reason="the known-feature model is not trained; train it with `python "
                              "cli.py known-feature --prepare`") for m in methods], "run_id": None, "computed": 0}
    if check == "agreement" and len(methods) < 2:
        return {"rows": [_row(m, check, reason="agreement needs at least two methods") for m in methods],
                "run_id": None, "computed": 0}
    # kf_model is set in both known-feature branches (returned above otherwise); they test it for the type checker
    if check == "faithfulness" and protocol.faithfulness_on_known_feature and kf_model is not None:
        # paper 003 s. 2.2.3.2 on its s. 3.1 task: Def. 2.1 / 2.2 at 5/10/20/50 %, ceil, [MASK], |delta| as plotted
        settings = {**options, **dict(protocol.faithfulness_options)}
        run_id, computed = run_inner(lambda s: runner.start_evaluation(kf_model, kf_data, methods,
                                                                       [protocol.faithfulness_evaluator],
                                                                       config.limit, settings, s),
                                     runner.evaluate_example, store)
        rows = [{**r, "note": kf_note} for r in _evaluation_rows(store, run_id, methods, check,
                                                                   rule_for(check, protocol.id).metric)]
    elif check in ("faithfulness", "agreement"):
        run_id, computed = run_inner(lambda s: runner.start_evaluation(model, spec["dataset"], methods, ["eraser"],
                                                                       config.limit, options, s),
                                     runner.evaluate_example, store)
        rows = (_evaluation_rows(store, run_id, methods, check, RULES[check].metric) if check == "faithfulness"
                else _agreement_rows(store, run_id, methods))
    elif check == "known_feature" and kf_model is not None:
        run_id, computed = run_inner(lambda s: runner.start_evaluation(kf_model, kf_data, methods, ["known-feature"],
                                                                       config.known_feature_limit, options, s),
                                     runner.evaluate_example, store)
        rows = [{**r, "note": kf_note} for r in _evaluation_rows(store, run_id, methods, check, RULES[check].metric)]
    elif check == "plausibility":
        data = config.plausibility_dataset or spec["dataset"]
        if not any(e.rationale is not None for e in load_dataset(data, limit=config.plausibility_limit)):
            return {"rows": [_row(m, check, reason=f"{data} has no human rationales; give a dataset that has them")
                             for m in methods], "run_id": None, "computed": 0}
        run_id, computed = run_inner(lambda s: runner.start_evaluation(model, data, methods, ["plausibility"],
                                                                       config.plausibility_limit, options, s),
                                     runner.evaluate_example, store)
        rows = _evaluation_rows(store, run_id, methods, check, RULES[check].metric)
    elif check == "sanity":
        last = randomize.stage_names(cached_classifier(model))[-1]
        # the rule reads the fully randomized model only: the stages between are not explained (a 4.5x cheaper
        # cell); the original model's explanations are the faithfulness check's (same first examples, same
        # methods), served from the explanation cache when that check ran first
        run_id, computed = run_inner(lambda s: sanity.start_sanity(model, spec["dataset"], methods, config.sanity_limit,
                                                                   "layers", "cascading", protocol.sanity_init,
                                                                   config.seed, store=s, only_stages=[last],
                                                                   share_original=True),
                                     sanity.sanity_cell, store)
        rows = sanity_rows(store, run_id, methods, last, config.seed)
    elif check == "adversarial":
        attacked = {m: split_spec(m)[0] for m in methods if split_spec(m)[0] in ATTACKED_METHODS
                    and (config.attack_methods is None or split_spec(m)[0] in config.attack_methods)}
        rows = [_row(m, check, reason=f"the attack needs a differentiable method ({', '.join(ATTACKED_METHODS)})"
                     if split_spec(m)[0] not in ATTACKED_METHODS else
                     f"not attacked in this run (attacked: {', '.join(config.attack_methods or ())})")
                for m in methods if m not in attacked]
        run_id, computed = None, 0
        if attacked:
            attack_config = config_for(None, steps=config.attack_steps, seed=config.seed,
                                       loop_ig_steps=config.attack_loop_ig_steps)
            bare = list(dict.fromkeys(attacked.values()))
            run_id, computed = run_inner(lambda s: adversarial.start_attacks(model, spec["dataset"], bare,
                                                                             config.attack_limit, attack_config, s),
                                         adversarial.attack_cell, store, adversarial.batched_attacks)
            table = adversarial.summarize(adversarial.results_frame(store, run_id), seed=config.seed)
            skipped = adversarial.skipped_inputs(store, run_id)
            for method, name in attacked.items():
                found = table[(table["method"] == name) & (table["metric"] == RULES[check].metric)]
                coarse = (f"; IG attacked through a {config.attack_loop_ig_steps}-point path, read with the full "
                          f"{attack_config.ig_steps}-point IG" if name == "integrated_gradients"
                          and config.attack_loop_ig_steps else "")
                note = (f"attacked as {name} with the attack's own settings ({config.attack_steps} steps{coarse})"
                        + (f"; {skipped[name]} inputs too short to attack" if skipped.get(name) else ""))
                rows.append(_row(method, check, found.iloc[0].to_dict(), note=note) if len(found) else
                            _row(method, check, reason="every input was too short to attack (k = 15 % of the words)"))
    else:
        raise ModelError(f"Unknown check '{check}'. Choose from: {', '.join(RULES)}.")
    return {"rows": rows, "run_id": run_id, "computed": computed}


# ----- the card as a run ----------------------------------------------------------------------------------------
def start_report_card(model: str, dataset: str, methods: list[str] | None = None, config: CardConfig | None = None,
                      store: ResultStore | None = None, executor: str = "local") -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the card's run: one cell per check; ``executor``: where each check's studies
    run their cells (the checks themselves one after another, in this process)."""
    config = config or CardConfig()
    methods = list(methods or default_methods())
    protocol = get_protocol(config.protocol)  # an unknown protocol fails here, before any work
    unknown = [c for c in config.checks if c not in RULES]
    if unknown:
        raise ModelError(f"Unknown check(s) {', '.join(unknown)}. Choose from: {', '.join(RULES)}.")
    if not methods:
        raise ModelError("Choose at least one method.")
    sanity.validate(model, methods, "layers", "cascading", protocol.sanity_init)  # unknown methods fail here, before any work
    # an unknown or unreadable dataset stops here, before any job, not after a queue; the optional ones when given
    for data in [dataset] + [d for d in (config.known_feature_dataset, config.plausibility_dataset) if d]:
        check_dataset_id(data)
    store = store or ResultStore()
    classifier = cached_classifier(model)
    # the rules are part of the run's identity: a card stored under another rule is never re-read under this one
    rules = {c: [rule_for(c, protocol.id).metric, rule_for(c, protocol.id).kind] for c in config.checks}
    run_config = {"model": model, "model_fingerprint": classifier.fingerprint, "dataset": dataset,
                  "methods": methods, "card": config.to_dict(), "rules": rules}
    run_id = store.create_run(KIND, run_config, total=len(config.checks),
                              title=f"report card of {model} on {dataset} ({len(methods)} methods"
                                    + ("" if protocol.id == DEFAULT_PROTOCOL else f", {protocol.label}") + ")")
    cells = [Cell(key=check, spec={"check": check, "model": model, "dataset": dataset, "methods": methods,
                                   "config": config.to_dict(), "store": str(store.path), "executor": executor})
             for check in config.checks]
    return store, run_id, cells


def build_report_card(model: str, dataset: str, methods: list[str] | None = None, limit: int | None = None,
                      config: CardConfig | None = None, store: ResultStore | None = None,
                      progress: Progress | None = None, should_stop=None, executor: str = "local") -> dict:
    """Run (or reuse) every check and return the card (``card_from_store``)."""
    config = config or CardConfig()
    if limit is not None:
        config = replace(config, limit=limit)
    store, run_id, cells = start_report_card(model, dataset, methods, config, store, executor)
    run_cells(store, run_id, cells, check_cell, progress=progress, should_stop=should_stop)
    return card_from_store(store, run_id)


@dataclass
class _Assembly:
    rows: list[dict] = field(default_factory=list)
    runs: dict = field(default_factory=dict)
    computed: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)


def card_from_store(store: ResultStore, run_id: str) -> dict:
    """The card of a stored run: per method and check the value, its CI, the reference, the verdict and its rule;
    then the ordering with its reasoning. Checks still running or failed are listed under ``pending``/``errors``;
    ``computed_cells`` says how many examples each check computed when it ran (0: its study was reopened)."""
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"No run '{run_id}'.")
    config = run["config"]
    protocol = config["card"].get("protocol", DEFAULT_PROTOCOL)
    rules = {c: replace(rule_for(c, protocol), label=check_name(c, protocol, config["dataset"]))
             for c in config["card"]["checks"]}
    cells = store.cells(run_id)
    got = _Assembly()
    for check in config["card"]["checks"]:
        cell = cells.get(check)
        if cell is None:
            continue
        if "error" in cell:
            got.errors[check] = cell["error"]
            continue
        got.runs[check], got.computed[check] = cell.get("run_id"), cell.get("computed", 0)
        for row in cell["rows"]:
            rule = rules[check]
            if row["not_applicable"]:
                result = NOT_APPLICABLE
            else:
                result = verdict(rule, _nan(row["low"]), _nan(row["high"]), row["reference_low"],
                                 row["reference_high"])
            got.rows.append({**row, "label": rule.label, "metric": rule.metric, "verdict": result,
                             "rule": row["not_applicable"] or rule.text, "counts": rule.counts})
    methods = config["methods"]
    return {"model": config["model"], "model_fingerprint": config["model_fingerprint"], "dataset": config["dataset"],
            "methods": methods, "config": config["card"], "protocol": protocol,
            "protocol_label": get_protocol(protocol).label, "run_id": run_id, "status": run["status"],
            "rules": [asdict(rules[c]) for c in config["card"]["checks"]], "rows": got.rows,
            "ordering": ordering(got.rows, methods), "ordering_rule": ORDERING_RULE, "runs": got.runs,
            "computed_cells": got.computed, "errors": got.errors,
            "pending": [c for c in config["card"]["checks"] if c not in cells]}


def _nan(value) -> float:
    return float("nan") if value is None else float(value)
