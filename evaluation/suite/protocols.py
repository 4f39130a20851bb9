"""Which protocol the report card and the dataset model comparison run: this project's default checks,
or paper 003's own, each check named by what it runs.

- ``default``: faithfulness = ERASER AOPC (bins 1/5/10/20/50 %, floor, words deleted) on the card's dataset;
  layer randomization = cascading, re-initialized with the model's own initializer.
- ``paper-003``: faithfulness = the thesis's Def. 2.1 / 2.2 (paper 003 s. 2.2.3.2): the top ceil(5/10/20/50 % x n)
  words replaced by [MASK] (comprehensiveness), the bottom ceil(95/90/80/50 % x n) (sufficiency), n counting
  [CLS]/[SEP] as the thesis code does, the mean |p(x) - p(x')| as its figures plot (seed-003.md s. 3.2, 6.3 #4),
  on the known-feature task (s. 3.1); layer randomization = cascading, every parameter of a unit drawn from
  N(0, 1) (s. 3.3; the thesis code's ``torch.nn.init.normal_``).

The other checks (known feature, plausibility, adversarial, agreement) run the same under both protocols.
"""
from __future__ import annotations

from dataclasses import dataclass

from models import ModelError


@dataclass(frozen=True)
class Protocol:
    id: str
    label: str
    faithfulness_evaluator: str                 # the evaluator id (evaluation/faithfulness/presets.py)
    faithfulness_metrics: tuple[str, str]       # (comprehensiveness, sufficiency) metric ids
    faithfulness_on_known_feature: bool         # True: on the known-feature task and its model, not the card's data
    faithfulness_options: tuple[tuple[str, object], ...]  # removal options beyond the seed and random orderings
    faithfulness_runs: str                      # what the faithfulness check runs, in words ({data}: where)
    sanity_init: str                            # models.randomize.INITS
    sanity_runs: str                            # what the randomization check runs, in words


DEFAULT = "default"
PROTOCOLS = {p.id: p for p in (
    Protocol("default", "this project's checks", "eraser", ("comprehensiveness-eraser", "sufficiency-eraser"),
             False, (), "ERASER AOPC comprehensiveness (1/5/10/20/50 %, floor, words deleted) on {data}", "model",
             "cascading layer randomization (the model's own initializer)"),
    # paper 003 s. 2.2.3.2 Def. 2.1 / 2.2 with the code's |delta| (as plotted) and its count of special tokens;
    # s. 3.1 the known-feature task; s. 3.3 / seed-003.md 6.3 #5: N(0, 1) on every parameter of the unit
    Protocol("paper-003", "paper 003's protocol", "paper-003-code",
             ("comprehensiveness-003-code", "sufficiency-003-code"), True, (("exclude_special", False),),
             "paper 003 Def. 2.2 comprehensiveness (top 5/10/20/50 %, ceil, [MASK], mean |delta p|) on {data}",
             "normal", "cascading layer randomization (N(0, 1), paper 003)"),
)}


def get_protocol(name: str | None) -> Protocol:
    """The protocol called ``name`` (None: the default); an unknown name is a message with the choices."""
    protocol = PROTOCOLS.get(name or DEFAULT)
    if protocol is None:
        raise ModelError(f"Unknown protocol '{name}'. Choose from: {', '.join(PROTOCOLS)}.")
    return protocol


def check_runs(check: str, protocol: str | None, dataset: str) -> str:
    """What ``check`` runs under ``protocol``, in words (its displayed name after the question it answers)."""
    chosen = get_protocol(protocol)
    if check == "faithfulness":
        where = "the known-feature task" if chosen.faithfulness_on_known_feature else dataset
        return chosen.faithfulness_runs.format(data=where)
    if check == "sanity":
        return f"{chosen.sanity_runs} on {dataset}"
    return CHECK_RUNS[check].format(data=dataset)


# the checks both protocols run the same way
CHECK_RUNS = {
    "known_feature": "mean rank % of the known feature on the known-feature task",
    "plausibility": "AUPRC against human rationales",
    "adversarial": "Rank Change under the class-keeping attack on {data}",
    "agreement": "mean Spearman rho with the other methods on {data}",
}
