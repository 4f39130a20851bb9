"""What a removal metric's number came from, shown beside it and stored with it."""
from __future__ import annotations

from evaluation.faithfulness.curves import RemovalMetric, RemovalOptions, effective_operator
from models import OPERATORS, Operator


def provenance(metric: RemovalMetric, options: RemovalOptions) -> dict:
    """What a number came from: preset, operator, target, special tokens, tie-breaking seed, ranking."""
    operator = effective_operator(metric, options)
    return {"metric": metric.id, "preset": metric.preset_label, "operator": operator,
            "operator_label": OPERATORS[Operator(operator)].label, "target": options.target,
            "paper_target": metric.paper_target,
            "special_tokens": "excluded" if options.exclude_special else "counted in fractions",
            "tie_break_seed": options.seed, "rank_by": options.rank_by, "reference": metric.reference,
            **({"aopc_divisor": options.aopc_divisor or metric.aopc_divisor} if metric.summary == "aopc" else {}),
            **({"convention": metric.convention} if metric.convention else {}),
            **({"contrast": options.contrast, "contrast_read": "s(target) - s(contrast) after removal: p(A) - p(B) "
                "for probability scores"} if options.contrast is not None else {})}
