"""Reproducing the papers: one stored, resumable run per paper of its headline findings, each with the
paper's number, ours over training seeds with a 95 % interval, and a verdict; the page is generated from the store.

``findings.py`` (findings, budgets, the verdict rule), ``seed_models.py`` (the seeded models), ``studies.py`` (the
project's studies as inner runs), ``run.py`` (the run, its cells, its estimate), ``page.py`` (the markdown page),
``paper_000.py`` ... ``paper_004.py`` (one file per paper).
"""
from evaluation.reproduce.findings import BUDGETS, NOT, NOT_RUN, PARTLY, REPRODUCED, Budget, Claim, Finding, verdict
from evaluation.reproduce.page import markdown, table, write_page
from evaluation.reproduce.run import (
                                      KIND,
                                      PAPERS,
                                      estimate,
                                      findings_for,
                                      reproduce_cell,
                                      results,
                                      run_reproduce,
                                      start_reproduce,
)

__all__ = ["BUDGETS", "NOT", "NOT_RUN", "PARTLY", "REPRODUCED", "Budget", "Claim", "Finding", "verdict", "markdown",
           "table", "write_page", "KIND", "PAPERS", "estimate", "findings_for", "reproduce_cell", "results",
           "run_reproduce", "start_reproduce"]
