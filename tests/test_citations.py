"""Section numbers cited for the five papers are the papers' own, not the research notes' numbering (the
notes number their own chapters, e.g. seed-003.md's "6.2 Pitfalls", which is no section of the thesis).

The sections below are the numbered headings of the papers' texts in ``shared/seeds/`` (appendices are cited as
"App." and are not checked here). A citation such as "paper 003 section 6.2" or "paper 000 s. 8" fails.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

SECTIONS = {
    "000": "1 2 3 3.1 3.2 3.3 4 5 5.1 5.2 5.3 5.4 6 6.1 6.2 7",
    "001": "1 2 2.1 2.2 2.3 2.4 3 3.1 3.2 3.3 4 5 5.1 5.2 5.2.1 5.3 6 7 8 9",
    "002": "1 2 2.1 2.2 2.3 3 3.1 3.2 3.3 4 4.1 4.2 4.3 5 6 7",
    "003": "1 1.1 1.2 2 2.1 2.1.1 2.1.2 2.1.3 2.2 2.2.1 2.2.2 2.2.2.1 2.2.2.2 2.2.2.3 2.2.3 2.2.3.1 2.2.3.2 2.2.3.3 2.3 "
           "3 3.1 3.2 3.2.1 3.2.2 3.3 3.4 3.5 3.6 3.6.1 3.6.2 3.6.2.1 3.6.2.2 3.6.2.3 3.6.2.4 3.6.3 4 4.1 4.1.1 4.1.2 "
           "4.1.3 4.1.4 4.1.5 4.1.6 4.2 4.2.1 4.2.2 4.2.3 4.2.4 4.2.5 4.2.6 5 5.1 5.2 5.3",
    "004": "1 2 3 3.1 3.2 3.3 4 4.1 5 6",
}
SECTIONS = {paper: set(numbers.split()) for paper, numbers in SECTIONS.items()}

# "paper 003 section 2.2.3.3, 3.3", "paper 000 s. 5.4", "paper 004 sections 3.1-3.3", "paper 003 §3.3 and §4.1"
NUMBER = r"\d+(?:\.\d+)*"
CITATION = re.compile(rf"paper (00[0-4])(?P<between>[^\n\"]{{0,30}}?)(?:\bs\.|\bsections?\b|\bsec\.|§)\s?"
                      rf"(?P<numbers>{NUMBER}(?:\s?(?:,|/|and|-)\s?§?{NUMBER})*)")


def citations(text: str):
    for line_number, line in enumerate(text.splitlines(), 1):
        for match in CITATION.finditer(line):
            if re.search(r"paper 00\d", match.group("between")):
                continue  # the section belongs to the later paper named in between
            for number in re.findall(NUMBER, match.group("numbers")):
                yield line_number, match.group(1), number


def test_the_pattern_reads_section_lists():
    found = list(citations("as paper 003 sections 2.2.3.3 and 3.3 say; paper 000 s. 6.1; paper 004 s. 3.1-3.3"))
    assert [(paper, number) for _, paper, number in found] == [("003", "2.2.3.3"), ("003", "3.3"), ("000", "6.1"),
                                                                ("004", "3.1"), ("004", "3.3")]
    assert [number for _, _, number in citations("paper 003 section 6.2 #3")] == ["6.2"]  # the notes' numbering


def test_every_cited_section_exists_in_its_paper():
    files = subprocess.run(["git", "ls-files", "*.py", "*.md"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    wrong = [f"{path}:{line}: paper {paper} section {number}"
             for path in files if (ROOT / path).is_file() and path != SELF  # this file quotes wrong examples
             for line, paper, number in citations((ROOT / path).read_text(encoding="utf-8"))
             if number.rstrip(".") not in SECTIONS[paper]]
    assert not wrong, "sections the papers do not have (the notes' numbering?):\n" + "\n".join(wrong)
