"""A ROAR / Recursive ROAR study's configuration: what every number of the study depends on (paper 001 section 3,
paper 000 section 3.3; shared/notes/seeds-000-001.md)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from evaluation import targets
from evaluation.roar.masking import COUNT_RULES, RANKINGS, SEGMENTS, check_operator
from evaluation.roar.measures import Measure, random_measure
from evaluation.roar.training import Variant
from explainers.params import coerce, param, validate
from models.errors import UserFacingError

MODES = {"roar": "ROAR only", "recursive": "Recursive ROAR only", "both": "ROAR and Recursive ROAR"}
# the two choices of the one target policy (evaluation/targets.py) that make sense for retraining on every example
TARGETS = {targets.PREDICTED: "the class the model predicts (paper 000; no gold-label leakage through the explanation)",
           targets.GOLD: "the gold label (paper 001; can leak the label, see the leakage check)"}
FULL_RATIOS = (10, 20, 30, 40, 50, 60, 70, 80, 90)


@dataclass(frozen=True)
class StudyConfig:
    model: str = "default"
    train_data: str = "sst2:train"
    test_data: str = "sst2:dev"
    measures: tuple[dict, ...] = ()  # Measure.to_dict() of each measure (random is added automatically)
    ratios: tuple[float, ...] = FULL_RATIOS  # percent of the eligible words, 0 < r < 100
    seeds: tuple[int, ...] = (0, 1, 2)
    mode: str = param("roar", "Mode", "; ".join(f"{k}: {v}" for k, v in MODES.items()), choices=tuple(MODES))
    operator: str = param("mask", "Removal operator", "mask ([MASK], paper 001), delete (paper 000), mlm (ROAR-BERT, "
                          "needs the masked LM), unk, pad")  # check_operator says why zero is not offered
    target: str = param("predicted", "Label explained", "; ".join(f"{k}: {v}" for k, v in TARGETS.items()),
                        choices=tuple(TARGETS))
    rank_by: str = param("signed", "Ranking", "; ".join(f"{k}: {v}" for k, v in RANKINGS.items()),
                         choices=tuple(RANKINGS))
    count_rule: str = param("floor", "Count rule", "; ".join(f"{k}: {v}" for k, v in COUNT_RULES.items()),
                            choices=tuple(COUNT_RULES))
    segments: str = param("first", "Segments masked", "; ".join(f"{k}: {v}" for k, v in SEGMENTS.items()),
                          choices=tuple(SEGMENTS))
    anchors: bool = param(True, "0 % and 100 % anchors", "the shared 0 % and 100 % models")
    data_seed: int = param(0, "Data seed", "which training / test subset is drawn (the same for every seed)", min=0)
    filler: str = param("mlm", "Masked LM of the mlm operator", "mlm (the prepared stand-in), a folder or a hub id")
    variant: Variant = field(default_factory=Variant)
    model_fingerprint: str = ""

    def __post_init__(self):
        problems = []
        if self.mode not in MODES:
            problems.append(f"mode must be one of {', '.join(MODES)}")
        if self.target not in TARGETS:
            problems.append(f"target must be one of {', '.join(TARGETS)}")
        if self.rank_by not in RANKINGS:
            problems.append(f"ranking must be one of {', '.join(RANKINGS)}")
        if self.count_rule not in COUNT_RULES:
            problems.append(f"count rule must be one of {', '.join(COUNT_RULES)}")
        if self.segments not in SEGMENTS:
            problems.append(f"segments must be one of {', '.join(SEGMENTS)}")
        if not self.ratios or any(not 0 < r < 100 for r in self.ratios) or list(self.ratios) != sorted(set(self.ratios)):
            problems.append("ratios must be increasing percentages strictly between 0 and 100 (0 % and 100 % are "
                            "the shared anchor models)")
        if self.count_rule == "tokens" and any(float(r) != int(r) for r in self.ratios):
            problems.append("with the 'tokens' count rule the ratios are numbers of words (1, 2, 3, ...)")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds) or any(s < 0 for s in self.seeds):
            problems.append("seeds must be distinct non-negative integers")
        if problems:
            raise UserFacingError("Invalid ROAR study: " + "; ".join(problems) + ".")
        check_operator(self.operator)
        validate(self)

    # ----- identity ------------------------------------------------------------------------------
    def measure_list(self) -> list[Measure]:
        """The study's measures followed by the random baseline (always included)."""
        chosen = [Measure.from_dict(m) for m in self.measures]
        return [m for m in chosen if not m.is_random] + [random_measure()]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["measures"] = [dict(m) for m in self.measures]
        data["ratios"] = [float(r) for r in self.ratios]
        data["seeds"] = [int(s) for s in self.seeds]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> StudyConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["variant"] = Variant.from_dict(values.get("variant"))
        values["measures"] = tuple(dict(m) for m in values.get("measures", ()))
        values["ratios"] = tuple(float(r) for r in values.get("ratios", FULL_RATIOS))
        values["seeds"] = tuple(int(s) for s in values.get("seeds", (0,)))
        return coerce(cls, values)

    def provenance(self) -> dict:
        """What every number of the study depends on, for tables and exports."""
        return {"model": self.model, "fingerprint": self.model_fingerprint, "train": self.train_data,
                "test": self.test_data, "variant": self.variant.label(),
                "operator": self.operator + (f" ({self.filler})" if self.operator == "mlm" else ""),
                "target": self.target, "ranking": self.rank_by, "count rule": self.count_rule,
                "segments": self.segments, "seeds": list(self.seeds), "mode": self.mode}

    def title(self) -> str:
        names = ", ".join(m.id for m in self.measure_list())
        return (f"{MODES[self.mode]}: {names} on {self.test_data} ({self.model}, {self.variant.trainable}, "
                f"{self.operator}, {len(self.ratios)} ratios x {len(self.seeds)} seeds)")
