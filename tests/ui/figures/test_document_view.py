"""The long-document heatmap: strip, folded sentences, top sentences open, escaped words."""
import re

import numpy as np

from ui.figures.document_view import STRIP_CELLS, document_html, is_long


def test_strip_locates_the_strong_word_and_top_sentences_open():
    words = (["plain", "words", "here", "."] * 100)
    words[301] = "<b>strong</b>"
    scores = np.full(len(words), 0.01)
    scores[301] = 5.0
    page = document_html(words, scores, signed=True)
    assert is_long(words)
    cells = re.findall(r'<span title="words (\d+)-(\d+): strongest ([^"]+)"', page)
    assert len(cells) == STRIP_CELLS
    strongest = [c for c in cells if float(c[2]) == 5.0]
    assert len(strongest) == 1 and int(strongest[0][0]) <= 302 <= int(strongest[0][1])
    details = re.findall(r"<details( open)?>", page)
    assert len(details) == 100 and sum(1 for d in details if d) == 3  # one per sentence, three open
    opened = page.split("<details open>")[1:]
    assert any("&lt;b&gt;strong&lt;/b&gt;" in part.split("</details>")[0] for part in opened)
    assert "<b>strong</b>" not in page.replace("<b>&lt;b&gt;strong&lt;/b&gt;</b>", "")  # escaped everywhere


def test_text_without_punctuation_is_folded_by_length():
    words = ["word"] * 200
    page = document_html(words, np.zeros(200), signed=False)
    assert page.count("<details") == 8 and "every 25 words" in page
