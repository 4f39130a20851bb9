"""Paper 000 Fig. 1's candidate inspector: one card per word with the masked LM's top replacements and their
likelihoods, a word the LM predicts as itself with high confidence flagged (Input Marginalization gives it little
attribution whatever the model does). Every word is escaped."""
from __future__ import annotations

import html

from models.mlm import WordCandidates

FLAG = "#d95f02"


def word_card_html(row: WordCandidates, threshold: float) -> str:
    """One word's card; flagged (orange border and mark) when ``row.predictable(threshold)``."""
    flagged = row.predictable(threshold)
    border = f"2px solid {FLAG}" if flagged else "1px solid rgba(0,0,0,0.12)"
    lines = "".join(f'<div style="font-size:12px;color:#333">{html.escape(c.word)} '
                    f'<span style="color:#777">{c.probability:.4f}</span></div>' for c in row.candidates)
    mark = f' <span title="predicted as itself with high confidence" style="color:{FLAG}">&#9888;</span>' \
        if flagged else ""
    return (f'<div style="display:inline-block;vertical-align:top;margin:3px;padding:4px 6px;border:{border};'
            f'border-radius:6px;min-width:70px"><div style="font-weight:600">{html.escape(row.word)}{mark}</div>'
            f"{lines}</div>")


def candidate_cards_html(rows: list[WordCandidates], threshold: float) -> str:
    """Every word's card, in reading order."""
    return '<div style="line-height:1.3">' + "".join(word_card_html(r, threshold) for r in rows) + "</div>"
