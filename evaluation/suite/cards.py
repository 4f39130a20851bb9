"""Method cards: one markdown file per explanation method and per metric group in ``assets/cards/<id>.md``.

A card tells a student what a method or metric computes, its formula (markdown + LaTeX, as Streamlit renders it),
what it assumes, what it costs, how it fails (the papers' own warnings) and the paper it follows. It lives in the
evaluation layer because it names metrics as well as methods; it reads files only (no Streamlit, no torch work).

Which card a name gets:
- a method id or "method:preset" spec: ``<method id>.md``;
- an evaluator (metric group) id: ``<evaluator id>.md``;
- a metric id: ``<metric id>.md`` if there is one, else the card of the first metric group that computes it
  ("deletion-auc[mask]" -> the operator sweep), else its family's card (the sanity measures -> ``sanity-checks``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import settings
from evaluation.metric import EVALUATORS, METRICS
from evaluation.sanity import one_input as sanity_one_input  # noqa: F401  (registers the sanity measures)
from evaluation.suite import registry  # noqa: F401  (imports every module that registers evaluators)
from explainers import REGISTRY, split_spec

CARDS_DIR = settings.ROOT / "assets" / "cards"
SECTIONS = ("What it computes", "Formula", "What it assumes", "What it costs", "How it fails", "Paper")
FAMILY_CARDS = {"sanity": "sanity-checks", "plausibility": "plausibility"}  # metrics registered without a group
# cards about a procedure that is neither a method nor a metric group
TOPICS = ("sanity-checks", "roar", "roar-synthetic")
HOW_TO_ADD = ("Add assets/cards/{id}.md with a '# Title' line and the sections " + ", ".join(f"'## {s}'" for s in SECTIONS)
              + " (copy assets/cards/saliency.md as a template).")


@dataclass(frozen=True)
class Card:
    id: str
    title: str
    sections: dict[str, str]  # section heading -> markdown body, in file order
    text: str  # the whole file

    def body(self) -> str:
        """The card without its title line (for an expander or popover whose label is the title)."""
        return self.text.split("\n", 1)[1].strip() if self.text.startswith("# ") else self.text


def card_path(card_id: str) -> Path:
    return CARDS_DIR / f"{card_id}.md"


def parse(card_id: str, text: str) -> Card:
    """A card from its markdown: the '# ' title and the '## ' sections."""
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), card_id)
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.MULTILINE)
    sections = {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    return Card(card_id, title, sections, text.strip())


@cache
def load(card_id: str) -> Card | None:
    """The card stored under ``card_id`` exactly, or None."""
    path = card_path(card_id)
    return parse(card_id, path.read_text(encoding="utf-8")) if path.is_file() else None


def card_id_for(name: str) -> str | None:
    """The card that explains ``name`` (a method id or spec, an evaluator id or a metric id); None if unknown."""
    name = name.strip()
    if name in EVALUATORS or card_path(name).is_file():
        return name
    method, _ = split_spec(name)
    if method in REGISTRY:
        return method
    base = name.split("@", 1)[0]  # "p000_iou@0.50": one point of a sweep metric
    metric = METRICS.get(name) or METRICS.get(base)
    if metric is None:
        return None
    if card_path(metric.id).is_file():
        return metric.id
    owner = next((e.id for e in EVALUATORS.values() if any(m.id == metric.id for m in e.metrics)), None)
    return owner or FAMILY_CARDS.get(metric.family)


def card_for(name: str) -> Card | None:
    card_id = card_id_for(name)
    return load(card_id) if card_id else None


def missing_sections(card: Card) -> list[str]:
    """The required sections a card lacks or leaves empty."""
    return [s for s in SECTIONS if not card.sections.get(s, "").strip()]


def method_ids() -> list[str]:
    return list(REGISTRY)


def metric_group_ids() -> list[str]:
    return list(EVALUATORS)


def catalogue() -> dict[str, list[tuple[str, str]]]:
    """(card id, title) of every card that exists, grouped for a picker: methods, metric groups, procedures."""
    def listed(ids):
        return [(i, load(i).title) for i in ids if load(i) is not None]
    return {"Methods": listed(method_ids()), "Metrics": listed(metric_group_ids()), "Checks": listed(TOPICS)}
