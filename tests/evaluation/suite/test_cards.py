"""Method cards: every registered method, metric group and metric has a card with every required section, and the
formulas are LaTeX that Streamlit's KaTeX can read (balanced $ and braces)."""
from __future__ import annotations

import re

import pytest

from evaluation.metric import EVALUATORS, METRICS
from evaluation.suite import cards
from explainers import REGISTRY


def _problems(card_id: str) -> str | None:
    card = cards.load(card_id)
    if card is None:
        return f"{card_id}: no card. " + cards.HOW_TO_ADD.format(id=card_id)
    missing = cards.missing_sections(card)
    if missing:
        return f"{card_id}: missing sections {missing}. " + cards.HOW_TO_ADD.format(id=card_id)
    return None


def test_every_registered_method_has_a_complete_card():
    problems = [p for p in map(_problems, REGISTRY) if p]
    assert not problems, "\n".join(problems)


def test_every_metric_group_has_a_complete_card():
    problems = [p for p in map(_problems, EVALUATORS) if p]
    assert not problems, "\n".join(problems)


def test_every_registered_metric_resolves_to_a_complete_card():
    unresolved = [m for m in METRICS if cards.card_id_for(m) is None]
    assert not unresolved, (f"metrics without a card: {unresolved}. Add assets/cards/<metric id>.md, or register the "
                            f"metric in a metric group that has a card.")
    problems = {p for p in (_problems(cards.card_id_for(m)) for m in METRICS) if p}
    assert not problems, "\n".join(sorted(problems))


def test_the_procedure_cards_are_complete():
    problems = [p for p in map(_problems, cards.TOPICS) if p]
    assert not problems, "\n".join(problems)


def test_a_card_missing_a_section_is_reported():
    card = cards.parse("x", "# X\n\n## What it computes\nsomething\n\n## Formula\n\n## Paper\nP\n")
    assert card.title == "X"
    assert cards.missing_sections(card) == ["Formula", "What it assumes", "What it costs", "How it fails"]


@pytest.mark.parametrize("name, card_id", [
    ("saliency", "saliency"),
    ("lime:paper-000", "lime"),  # a preset shares its method's card
    ("paper-004", "paper-004"),  # a metric group
    ("comprehensiveness-eraser", "eraser"),  # a metric: the first group that computes it
    ("deletion-auc[mask]", "operator-sweep"),  # one operator of the bias matrix
    ("p000_iou@0.50", "plausibility-sweep"),  # one threshold of a sweep metric
    ("sanity_spearman", "sanity-checks"),  # a metric with no group: its family's card
    ("no-such-thing", None),
])
def test_names_resolve_to_the_card_that_explains_them(name, card_id):
    assert cards.card_id_for(name) == card_id


def _latex_blocks(text: str) -> list[str]:
    return re.findall(r"\$\$(.+?)\$\$", text, flags=re.DOTALL) + re.findall(r"(?<!\$)\$([^$\n]+)\$(?!\$)", text)


def test_every_formula_is_balanced_latex():
    """KaTeX shows a raw error for an unbalanced brace, a stray $ or a multi-line $$ block written inline (the browser
    test tests/e2e/test_e2e_teaching.py renders every card); catch them here rather than in class."""
    problems = []
    for path in sorted(cards.CARDS_DIR.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if text.replace("$$", "").count("$") % 2:
            problems.append(f"{path.name}: odd number of $")
        for block in re.findall(r"\$\$(.+?)\$\$", text, flags=re.DOTALL):
            if "\n" in block.strip() and not (block.startswith("\n") and block.endswith("\n")):
                problems.append(f"{path.name}: a display formula over several lines needs its $$ on lines of their "
                                f"own (Streamlit reads it as broken inline math otherwise): {block[:40]!r}")
        for block in _latex_blocks(text):
            if block.count("{") != block.count("}"):
                problems.append(f"{path.name}: unbalanced braces in {block[:60]!r}")
        if not _latex_blocks(cards.parse(path.stem, text).sections.get("Formula", "")):
            problems.append(f"{path.name}: the Formula section has no LaTeX")
    assert not problems, "\n".join(problems)


def test_the_catalogue_lists_every_card_once():
    listed = [card_id for group in cards.catalogue().values() for card_id, _ in group]
    assert len(listed) == len(set(listed))
    assert set(listed) == {p.stem for p in cards.CARDS_DIR.glob("*.md")}
