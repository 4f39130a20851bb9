"""The guided tour on a long document: a method's heatmap covers every word of the document, drawn as
the Heatmaps page draws a document (strip, folded sentences), and a short input keeps its one-row heatmap."""
import html
import random

from tiny_models import FILLER, KEYWORD

from explainers import create
from models.windows import DocumentEncoding, encode_document
from ui.views import tour


def long_text() -> str:
    rng = random.Random(4)
    words = [rng.choice(FILLER) for _ in range(150)]
    words[99] = KEYWORD
    for end in range(14, 150, 15):  # ten sentences
        words[end] += "."
    return " ".join(words)


def test_the_tour_draws_the_whole_document(keyword_classifier):
    document = encode_document(keyword_classifier, long_text())
    assert isinstance(document, DocumentEncoding) and len(document.windows) > 1
    explanation = create("saliency").explain(keyword_classifier, document, target=1)
    drawn = tour.row_html(explanation, "word")
    assert 'class="xw-strip"' in drawn and drawn.count("<details") == 10
    assert "150 words, 10 sentences" in drawn
    for index, word in enumerate(document.words):  # every word, also those of the later windows
        assert f'title="{html.escape(word)}: {explanation.word_scores[index]:+.3g}"' in drawn


def test_a_short_input_keeps_its_row(keyword_classifier):
    explanation = create("saliency").explain(keyword_classifier, keyword_classifier.encode(f"a {KEYWORD} film"),
                                              target=1)
    drawn = tour.row_html(explanation, "word")
    assert "xw-strip" not in drawn and KEYWORD in drawn
