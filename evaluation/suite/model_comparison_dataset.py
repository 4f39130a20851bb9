"""Several models at dataset level: the project's checks per model, as paper 003 compares sizes and architectures.

A comparison is a run (kind ``model-comparison``) whose cells are (model, check) pairs. A cell is the report card's
cell for that check (``evaluation.suite.report_card.check_cell``): it runs or reopens the check's own study in the result
store, so the studies stay resumable and Ray-capable, and nothing is computed twice. The comparison's run id does
not depend on the list of models (cells are keyed by model name and weights fingerprint), so adding a model to a
finished comparison runs only that model's cells.

Checks (paper 003 s. 3.1, 2.2.3.2, 3.3; its figures in s. 4.1 and 4.2):
- ``known_feature``: ground-truth overlap (precision@k) and mean rank % on the known-feature task. The task needs a
  model trained on it: each built-in model has a known-feature twin of the same shape (blocks, causal attention),
  trained in the cell when it is missing (``evaluation.faithfulness.known_feature.recipe_for``); any other model
  needs its twin named in ``known_feature_models``;
- ``faithfulness``: comprehensiveness and sufficiency with the random orderings' band: ERASER AOPC with deleted words
  on the comparison's dataset (protocol ``default``), or paper 003's Def. 2.1 / 2.2 (5/10/20/50 %, ceil, [MASK],
  mean |delta p|) on each model's known-feature twin (protocol ``paper-003``; ``evaluation/suite/protocols.py``);
- ``sanity``: Spearman rho with the original explanation under cascading layer randomization (the model's own
  initializer, or N(0, 1) under ``paper-003``), the whole curve and its chance band;
- ``plausibility``: AUPRC against human rationales (datasets that have them);
- ``adversarial``: Rank Change, Top-k Sum Change and Probability Change under the class-keeping attack on the
  differentiable methods (paper 003 s. 3.5), with the report card's settings (200 steps, IG attacked through an
  8-point path and read with the full IG).

Each model is described by its size (parameters, transformer blocks) and its architecture (encoder or causal),
read from its loaded configuration, which is what its manifest's recipe produced.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import pandas as pd

from corpora import check_dataset_id
from evaluation import summary
from evaluation.adversarial import dataset as adversarial
from evaluation.faithfulness import known_feature
from evaluation.runs.jobs import Cell, Progress, current_stop_check, run_cells
from evaluation.runs.store import ResultStore
from evaluation.sanity import dataset as sanity
from evaluation.suite.protocols import DEFAULT as DEFAULT_PROTOCOL
from evaluation.suite.protocols import get_protocol
from evaluation.suite.report_card import CardConfig, check_cell, default_methods, run_study, sanity_rows
from evaluation.suite.report_card_rules import check_name, rule_for
from explainers import split_spec
from models import ModelError, cached_classifier, randomize

KIND = "model-comparison"
CHECKS = ("known_feature", "faithfulness", "sanity", "plausibility", "adversarial")
# per check, the metrics shown (the report card keeps the first; the others come from the same study); the
# faithfulness metrics are the protocol's (``metrics_of``)
METRICS = {
    "known_feature": ("known-feature.precision@k", "known-feature.rank-fraction"),
    "faithfulness": ("comprehensiveness-eraser", "sufficiency-eraser"),
    "sanity": ("sanity_spearman",),
    "plausibility": ("plaus_auprc",),
    "adversarial": ("rank_change", "top_k_sum_change", "probability_change"),
}
METRIC_LABELS = {
    "known-feature.precision@k": "Ground-truth overlap", "known-feature.rank-fraction": "Mean rank %",
    "comprehensiveness-eraser": "Comprehensiveness (ERASER AOPC, words deleted)",
    "sufficiency-eraser": "Sufficiency (ERASER AOPC, words deleted)",
    "comprehensiveness-003-code": "Comprehensiveness (paper 003 Def. 2.2: [MASK], mean |delta p|)",
    "sufficiency-003-code": "Sufficiency (paper 003 Def. 2.1: [MASK], mean |delta p|)",
    "sanity_spearman": "Spearman rho after randomizing every layer", "plaus_auprc": "AUPRC vs human rationales",
    "rank_change": "Rank Change under the attack", "top_k_sum_change": "Top-k Sum Change under the attack",
    "probability_change": "Probability Change under the attack",
}
CAUSAL_MODEL_TYPES = ("gpt2", "gpt_neo", "gptj", "llama", "mistral", "opt", "bloom", "qwen2", "phi")
ENCODER, CAUSAL = "encoder", "causal"


def metrics_of(check: str, protocol: str | None = None) -> tuple[str, ...]:
    """The metrics a check shows under ``protocol`` (the faithfulness check's are the protocol's)."""
    if check == "faithfulness":
        return get_protocol(protocol).faithfulness_metrics
    return METRICS[check]


@dataclass(frozen=True)
class ComparisonConfig:
    """Which checks at what sizes. ``quick()`` gives the tiny sizes the tests use."""

    checks: tuple[str, ...] = CHECKS
    limit: int = 32                     # faithfulness examples
    known_feature_limit: int = 32
    sanity_limit: int = 16
    plausibility_limit: int = 32
    attack_limit: int = 6               # the first 6 SST-2 dev sentences (5 long enough to attack); paper 003: 16
    attack_steps: int = 200             # the report card's: the thesis's 500 at most
    attack_loop_ig_steps: int = 8       # the report card's: IG attacked through an 8-point path, read with the full IG
    attack_methods: tuple[str, ...] | None = None  # None: every differentiable method
    plausibility_dataset: str | None = None   # None: the comparison's dataset, when it has human rationales
    known_feature_dataset: str | None = None  # None: the known-feature task's dev split
    random_orderings: int = 10
    seed: int = 0
    protocol: str = DEFAULT_PROTOCOL          # evaluation/suite/protocols.py: "default" or "paper-003"

    @classmethod
    def quick(cls, **overrides) -> ComparisonConfig:
        return replace(cls(limit=4, known_feature_limit=4, sanity_limit=3, plausibility_limit=4, attack_limit=2,
                           attack_steps=3), **overrides)

    def to_dict(self) -> dict:
        out = {**asdict(self), "checks": list(self.checks)}
        if self.attack_methods is None:
            del out["attack_methods"]
        else:
            out["attack_methods"] = list(self.attack_methods)
        if self.protocol == DEFAULT_PROTOCOL:  # absent unless chosen: comparisons stored before it keep their run ids
            del out["protocol"]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> ComparisonConfig:
        chosen = data.get("attack_methods")
        return cls(**{**data, "checks": tuple(data["checks"]),
                      "attack_methods": None if chosen is None else tuple(chosen)})

    def card(self, known_feature_model: str | None) -> CardConfig:
        """The report card's configuration of one model's cells."""
        return CardConfig(checks=self.checks, limit=self.limit, sanity_limit=self.sanity_limit,
                          known_feature_limit=self.known_feature_limit, plausibility_limit=self.plausibility_limit,
                          known_feature_model=known_feature_model, known_feature_dataset=self.known_feature_dataset,
                          plausibility_dataset=self.plausibility_dataset, random_orderings=self.random_orderings,
                          attack_limit=self.attack_limit, attack_steps=self.attack_steps,
                          attack_loop_ig_steps=self.attack_loop_ig_steps, attack_methods=self.attack_methods,
                          seed=self.seed, protocol=self.protocol)


@dataclass
class Comparison:
    """What ``results`` returns: one row per (model, check, method, metric), the randomization curves, and the
    cells still missing or failed."""

    models: list[dict]
    rows: pd.DataFrame
    curves: pd.DataFrame
    errors: dict = field(default_factory=dict)
    pending: list = field(default_factory=list)
    computed: dict = field(default_factory=dict)
    protocol: str = DEFAULT_PROTOCOL
    check_names: dict = field(default_factory=dict)  # check -> what it runs (``report_card.check_name``)


def model_info(model: str) -> dict:
    """Size and architecture of a model: parameters, transformer blocks, encoder or causal."""
    classifier = cached_classifier(model)
    config = classifier.model.config
    causal = bool(getattr(config, "is_decoder", False)) or getattr(config, "model_type", "") in CAUSAL_MODEL_TYPES
    blocks = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None)
    return {"model": model, "fingerprint": classifier.fingerprint,
            "parameters": int(sum(p.numel() for p in classifier.model.parameters())),
            "blocks": None if blocks is None else int(blocks), "architecture": CAUSAL if causal else ENCODER}


def known_feature_model_for(model: str, given: dict | None = None) -> str | None:
    """The model to run the known-feature task on for ``model``: the one given, else its built-in twin's folder
    (trained when missing, by the cell), else None."""
    if given and model in given:
        return given[model]
    recipe = known_feature.recipe_for(model)
    return None if recipe is None else str(known_feature.model_dir(recipe))


def _cell_key(info: dict, check: str) -> str:
    return f"{info['model']}@{info['fingerprint'][:12]}|{check}"


def _needs_twin(check: str, protocol: str) -> bool:
    """Whether the check runs on the model's known-feature twin (paper 003's faithfulness runs there too)."""
    on_task = get_protocol(protocol).faithfulness_on_known_feature
    return check == "known_feature" or (check == "faithfulness" and on_task)


def start_comparison(models: list[str], dataset: str, methods: list[str] | None = None,
                     config: ComparisonConfig | None = None, known_feature_models: dict | None = None,
                     store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to extend or resume) the comparison run: one cell per (model, check)."""
    config = config or ComparisonConfig()
    methods = list(methods or default_methods())
    protocol = get_protocol(config.protocol)  # an unknown protocol fails here, before any work
    models = list(dict.fromkeys(m.strip() for m in models if m.strip()))
    unknown = [c for c in config.checks if c not in CHECKS]
    if unknown:
        raise ModelError(f"Unknown check(s) {', '.join(unknown)}. Choose from: {', '.join(CHECKS)}.")
    if not models:
        raise ModelError("Choose at least one model.")
    if not methods:
        raise ModelError("Choose at least one method.")
    sanity.validate(models[0], methods, "layers", "cascading", protocol.sanity_init)  # unknown methods fail before any work
    # an unknown or unreadable dataset stops here, before any job, not after a queue; the optional ones when given
    for data in [dataset] + [d for d in (config.known_feature_dataset, config.plausibility_dataset) if d]:
        check_dataset_id(data)
    store = store or ResultStore()
    infos = [model_info(m) for m in models]
    # the card rules are part of the identity: their metric labels the rows a cell stores
    rules = {c: [rule_for(c, config.protocol).metric, rule_for(c, config.protocol).kind] for c in config.checks}
    run_id = store.create_run(KIND, {"dataset": dataset, "methods": methods, "comparison": config.to_dict(),
                                     "rules": rules},
                              total=len(models) * len(config.checks),
                              title=f"model comparison on {dataset} ({len(methods)} methods"
                                    + ("" if protocol.id == DEFAULT_PROTOCOL else f", {protocol.label}") + ")")
    cells = []
    for info in infos:
        twin = known_feature_model_for(info["model"], known_feature_models)
        for check in config.checks:
            key = _cell_key(info, check) + (f"|{twin}" if _needs_twin(check, protocol.id) and twin else "")
            cells.append(Cell(key=key, spec={"check": check, "model": info["model"], "info": info,
                                             "dataset": dataset, "methods": methods, "config": config.to_dict(),
                                             "known_feature_model": twin, "store": str(store.path)}))
    return store, run_id, cells


def comparison_cell(spec: dict) -> dict:
    """The work of one (model, check) cell: the report card's cell, plus the check's other metrics and, for the
    sanity check, the whole randomization curve."""
    config = ComparisonConfig.from_dict(spec["config"])
    check, model, methods, twin = spec["check"], spec["model"], spec["methods"], spec.get("known_feature_model")
    on_twin = _needs_twin(check, config.protocol)
    recipe = known_feature.recipe_for(model)
    if on_twin and twin is not None and recipe is not None and twin == str(known_feature.model_dir(recipe)):
        # a built-in model's twin: train it now when it is missing (minutes; stops with the run)
        known_feature.prepare_known_feature_model(recipe, should_stop=current_stop_check(), log=lambda message: None)
    if on_twin and twin is None:
        return {"info": spec["info"], "rows": [], "curves": [], "computed": 0, "run_id": None,
                "not_applicable": f"{model} has no known-feature twin; name one trained on the known-feature task "
                                  f"(`--known-feature-model {model}=FOLDER`)"}
    store = ResultStore(spec.get("store"))
    if check == "sanity":
        # the curve needs every stage of the cascade; the card's row (the last stage) is read from the same study,
        # so the card's last-stage-only study is not run beside it
        result = _sanity_study(store, model, spec["dataset"], methods, config)
        return {"info": spec["info"], "rows": [{**row, "metric": metrics_of(check)[0]} for row in result["rows"]],
                "curves": _curves(store, result["run_id"], model, config.seed), "computed": result["computed"],
                "run_id": result["run_id"], "not_applicable": None}
    result = check_cell({**spec, "config": config.card(twin).to_dict()})
    return {"info": spec["info"], "rows": _rows(store, result, check, methods, config.seed, config.protocol),
            "curves": [],
            "computed": result["computed"], "run_id": result["run_id"], "not_applicable": None}


def _sanity_study(store: ResultStore, model: str, dataset: str, methods: list[str], config: ComparisonConfig) -> dict:
    """Run (or reopen) the full cascading study; the original model's explanations are shared with the
    faithfulness check through the explanation cache (the same first examples and methods)."""
    init = get_protocol(config.protocol).sanity_init  # the model's initializer, or N(0, 1) (paper 003 s. 3.3)
    run_id, computed = run_study(lambda s: sanity.start_sanity(model, dataset, methods, config.sanity_limit, "layers",
                                                               "cascading", init, config.seed, store=s,
                                                               share_original=True),
                                 sanity.sanity_cell, store)
    last = randomize.stage_names(cached_classifier(model))[-1]
    return {"rows": sanity_rows(store, run_id, methods, last, config.seed), "run_id": run_id,
            "computed": computed}


def _rows(store: ResultStore, result: dict, check: str, methods: list[str], seed: int,
          protocol: str = DEFAULT_PROTOCOL) -> list[dict]:
    """Every metric of the check: the card's rows (its rule's metric), the others from the same stored study."""
    card_metric = rule_for(check, protocol).metric
    rows = [{**row, "metric": card_metric} for row in result["rows"]]
    extra = [m for m in metrics_of(check, protocol) if m != card_metric]
    if not extra or not result["run_id"]:
        return rows
    if check == "adversarial":  # the attack's study is keyed by the bare method names
        table = adversarial.summarize(adversarial.results_frame(store, result["run_id"]), seed=seed)
        names = {m: split_spec(m)[0] for m in methods}
    else:
        table = summary.summarize(summary.results_frame(store, result["run_id"]),
                                 summary.random_orderings_frame(store, result["run_id"]))
        names = {m: m for m in methods}
    for metric in extra:
        for method in methods:
            found = table[(table["method"] == names[method]) & (table["metric"] == metric)] if len(table) else table
            if len(found):
                record = found.iloc[0].to_dict()
                rows.append({"method": method, "check": check, "metric": metric, "mean": record["mean"],
                             "low": record["low"], "high": record["high"], "n": int(record["n"]),
                             "reference_low": record.get("random_low"), "reference_high": record.get("random_high"),
                             "not_applicable": None, "note": None})
    return rows


def _curves(store: ResultStore, run_id: str, model: str, seed: int) -> list[dict]:
    stages = randomize.stage_names(cached_classifier(model))
    summary = sanity.summarize(sanity.results_frame(store, run_id), seed=seed)
    chance, curves = sanity.chance_band(sanity.curves(summary, stages, "sanity_spearman"))
    return [{"method": r["method"], "stage": r["stage"], "stage_index": int(r["stage_index"]), "mean": r["mean"],
             "low": r["low"], "high": r["high"], "n": int(r["n"]),
             "chance_low": chance["low"] if chance else None, "chance_high": chance["high"] if chance else None}
            for r in curves.to_dict("records")]


def run_comparison(models: list[str], dataset: str, methods: list[str] | None = None,
                   config: ComparisonConfig | None = None, known_feature_models: dict | None = None,
                   store: ResultStore | None = None, executor: str = "local", progress: Progress | None = None,
                   should_stop=None) -> Comparison:
    """Run (or reopen) every cell and return the comparison of these models (``results``)."""
    store, run_id, cells = start_comparison(models, dataset, methods, config, known_feature_models, store)
    reopened = {key for key, stored in store.cells(run_id).items() if "error" not in stored}
    run_cells(store, run_id, cells, comparison_cell, executor=executor, progress=progress, should_stop=should_stop)
    comparison = results(store, run_id, cells)
    # a stored cell keeps the count of the call that computed it; reopened now, it computed nothing
    for cell in cells:
        if cell.key in reopened and _where(cell) in comparison.computed:
            comparison.computed[_where(cell)] = 0
    return comparison


def _where(cell: Cell) -> str:
    return f"{cell.spec['model']}: {cell.spec['check']}"


ROW_COLUMNS = ["model", "parameters", "blocks", "architecture", "check", "metric", "method", "mean", "low", "high",
               "n", "reference_low", "reference_high", "not_applicable", "note"]
CURVE_COLUMNS = ["model", "method", "stage", "stage_index", "mean", "low", "high", "n", "chance_low", "chance_high"]


def results(store: ResultStore, run_id: str, cells: list[Cell]) -> Comparison:
    """The stored results of these cells (a comparison run may hold more models than are asked for now)."""
    stored = store.cells(run_id)
    rows, curves, errors, pending, computed = [], [], {}, [], {}
    models: dict[str, dict] = {}  # model -> its info
    config = ComparisonConfig.from_dict(cells[0].spec["config"]) if cells else ComparisonConfig()
    for cell in cells:
        models.setdefault(cell.spec["model"], cell.spec["info"])
        result = stored.get(cell.key)
        where = _where(cell)
        if result is None:
            pending.append(where)
            continue
        if "error" in result:
            errors[where] = result["error"]
            continue
        computed[where] = result.get("computed", 0)
        info = {k: result["info"][k] for k in ("model", "parameters", "blocks", "architecture")}
        if result.get("not_applicable"):
            rows += [{**info, "check": cell.spec["check"], "metric": rule_for(cell.spec["check"], config.protocol).metric,
                      "method": m,
                      "not_applicable": result["not_applicable"]} for m in cell.spec["methods"]]
        rows += [{**info, **row} for row in result["rows"]]
        curves += [{"model": info["model"], **curve} for curve in result["curves"]]
    dataset = cells[0].spec["dataset"] if cells else ""
    return Comparison(list(models.values()), pd.DataFrame(rows, columns=ROW_COLUMNS),
                      pd.DataFrame(curves, columns=CURVE_COLUMNS), errors, pending, computed, config.protocol,
                      {check: check_name(check, config.protocol, dataset) for check in config.checks})


def export(comparison: Comparison) -> dict:
    """A JSON-ready record of a comparison."""
    return {"protocol": comparison.protocol, "protocol_label": get_protocol(comparison.protocol).label,
            "checks": comparison.check_names, "models": comparison.models, "rows": _records(comparison.rows),
            "curves": _records(comparison.curves), "errors": comparison.errors, "pending": comparison.pending,
            "computed_examples": comparison.computed,
            "rules": {check: {**asdict(rule_for(check, comparison.protocol)),
                              "label": comparison.check_names.get(check, rule_for(check).label)}
                      for check in CHECKS}}


def _records(frame: pd.DataFrame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records")
