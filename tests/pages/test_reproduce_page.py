"""The Reproduce page with AppTest: paper 001 on the tiny budget started as a background job, its findings table
(the generated page's) shown with a verdict per finding, the markdown download, and Stop / resume through the store."""
from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from evaluation.reproduce import findings_for, results
from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore

PAGE = "app_pages/14_Reproduce.py"

pytestmark = pytest.mark.slow


def test_the_page_starts_a_reproduce_run_and_shows_its_findings(isolated_cache):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="reproduce-paper").set_value("001").run()
    at.selectbox(key="reproduce-budget").set_value("tiny").run()
    assert any("Estimate" in c.value for c in at.caption)
    at.button(key="reproduce-start").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    run_id = at.session_state["reproduce_run"]
    try:  # training three tiny models: minutes on a loaded 2-core machine
        JOBS.wait(run_id, timeout=600)
    finally:  # a run left going would hold the job slot of the tests after this one
        JOBS.stop(run_id)
        JOBS.wait(run_id, timeout=120)
    at.run()
    assert not at.exception, at.exception
    report = results(ResultStore(), run_id)
    findings = findings_for("001", "tiny")
    assert report["status"] == "finished" and report["done"] == report["total"] == 3 * len(findings)  # 3 seeds each
    shown = at.dataframe[0].value
    assert list(shown["finding"]) == [f.title + (" (this project's addition)" if f.addition else "") for f in findings]
    assert list(shown["verdict"]) == [row["verdict"] for row in report["rows"]]
    assert list(shown["seeds"]) == [row["n"] for row in report["rows"]]
    assert set(shown["seeds"]) <= {0, 1, 2, 3} and shown["seeds"].iloc[0] == 3  # the synthetic finding: all 3
    assert at.get("download_button")
