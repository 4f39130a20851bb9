"""Text a user types, split into words the way the datasets are.

The datasets here are tokenised before they reach us (SST, SST-2 and ERASER in the Penn Treebank style:
``a breathtaking , funny film`` and ``it 's`` / ``does n't``), and a word is a run of non-whitespace
(``corpora.records``). Typed text keeps punctuation glued to words (``breathtaking,``), which would make
``breathtaking,`` one word of a heatmap and of every word-removal metric. ``normalize_typed_text`` splits
it the same way: punctuation marks and the clitics ``'s 're 've 'll 'd 'm n't`` become words of their own;
hyphens, inner dots and other apostrophes stay inside a word (``k-19``, ``3.5``, ``o'brien``), and a few
abbreviations keep their period (``mr.``, ``u.s.``); PTB's own marks (``-lrb-``, two backquotes) are left as
they are, so splitting dataset text again changes almost nothing. Case is kept
(the tokenizer lowercases where its model does). Only typed text goes through here: dataset texts are
already split, and their human rationales index those words. Invisible characters (``corpora.invisible``) split
nothing here: each stays inside the word it touches (the first word, before any), so that the one rule that
removes them before tokenization (``models.encoding.check_text``) removes them and says so.
"""
from __future__ import annotations

import bisect
import re

from corpora.invisible import is_invisible

_CLITIC = r"(?:s|re|ve|ll|d|m)"
_ABBREVIATION = r"(?:mr|mrs|ms|dr|st|vs|jr|sr|etc|inc|bros|no)\."  # a title keeps its period (PTB)
_TOKEN = re.compile(rf"""
      -[lr][rcs]b-|``|''|'\d0s\b               # PTB brackets and quotes, '70s: already split
    | \b{_ABBREVIATION}|\b\w(?:\.\w)+\.          # mr., u.s., e.t.
    | \w+(?=n[']t\b)                          # do|n't, ca|n't (split as SST does)
    | n[']t\b
    | [']{_CLITIC}\b                           # it|'s, you|'ve
    | \w+(?:[-.]\w+|['](?!{_CLITIC}\b|t\b)\w+)*  # words, with inner hyphens, dots and apostrophes
    | \.\.\.|--|[^\w\s]                        # every other mark on its own (an ellipsis, a dash kept whole)
""", re.VERBOSE | re.IGNORECASE)
_CURLY = str.maketrans({"\u2019": "'", "\u2018": "'"})


def typed_words(text: str) -> list[str]:
    """The words of typed text, split as the datasets are (see the module docstring)."""
    text = text.translate(_CURLY)
    visible = [i for i, c in enumerate(text) if not is_invisible(c)]
    if len(visible) == len(text):
        return _TOKEN.findall(text)
    # split the visible characters; a word keeps the invisible ones inside it, and one outside every word joins
    # the word before it (or the first word)
    spans = [(visible[m.start()], visible[m.end() - 1] + 1)
             for m in _TOKEN.finditer("".join(text[i] for i in visible))]
    if not spans:  # only invisible characters: kept as they are, so check_text says what the text held
        return text.split()
    words = [text[start:end] for start, end in spans]
    covered = {i for start, end in spans for i in range(start, end)}
    starts = [start for start, _ in spans]
    for i, character in enumerate(text):
        if words and is_invisible(character) and i not in covered:
            words[max(0, bisect.bisect_right(starts, i) - 1)] += character
    return words


def normalize_typed_text(text: str) -> str:
    """Typed text with its words separated by single spaces: ``"Breathtaking, isn't it?"`` ->
    ``"Breathtaking , is n't it ?"``."""
    return " ".join(typed_words(text))
