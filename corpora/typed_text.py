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
already split, and their human rationales index those words.
"""
from __future__ import annotations

import re

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
    return _TOKEN.findall(text.translate(_CURLY))


def normalize_typed_text(text: str) -> str:
    """Typed text with its words separated by single spaces: ``"Breathtaking, isn't it?"`` ->
    ``"Breathtaking , is n't it ?"``."""
    return " ".join(typed_words(text))
