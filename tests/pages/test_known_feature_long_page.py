"""The Faithfulness page's known-feature tab on documents (known-feature-long) with AppTest, on a tiny budget: the
tiny keyword model stands in for the short known-feature twin, the document twin is fine-tuned on 4 documents. The
tab names the missing short twin, offers the build with its estimate, builds it in the background, then runs the
check on documents; the table it shows equals what `cli.py known-feature --documents` computes on the same model."""
from __future__ import annotations

import pandas as pd
import pytest
from conftest import ROOT
from known_feature_long_fixtures import TINY_BUDGET, save_short_twin
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/2_Faithfulness.py"
TEXT = "a gorgeous , witty film"


@pytest.fixture()
def page_cache(monkeypatch, quick_cache):
    """An isolated cache that sees the prepared default-quick classifier (the page's model) and nothing else."""
    from evaluation.suite.known_feature_long import BUDGET_ENV
    from explainers.cache import DEFAULT_CACHE
    cache = quick_cache.parent
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setenv(BUDGET_ENV, TINY_BUDGET)
    monkeypatch.setattr(DEFAULT_CACHE, "directory", cache / "explanations")
    return cache


def open_documents_task() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = TEXT
    at.run()
    at.switch_page(PAGE)
    at.session_state["faith-methods"] = ["saliency"]
    at.session_state["faith-metrics"] = ["deletion"]
    at.run()
    assert not at.exception, at.exception
    at.radio(key="faith-kf-task").set_value("documents").run()
    assert not at.exception, at.exception
    return at


def test_the_documents_task_builds_the_twin_then_checks_it_as_the_cli_does(page_cache, keyword_classifier, capsys):
    import json

    import cli
    from evaluation.runs.jobs import JOBS, run_cells
    from evaluation.runs.store import ResultStore
    from evaluation.suite import known_feature_long as kfl
    from models.document_twin import is_prepared, twin_dir

    at = open_documents_task()
    assert any("not trained yet" in i.value and "known-feature --prepare" in i.value for i in at.info)
    assert not [b for b in at.button if b.label.startswith("Build the document twin")]

    save_short_twin(keyword_classifier)
    at.run()
    assert not at.exception, at.exception
    assert any("document twin is not built yet" in i.value and "4 documents" in i.value for i in at.info)
    recipe = kfl.document_recipe()
    assert ResultStore().get_run(kfl.build_run_id(recipe)) is None and not is_prepared(recipe)  # nothing before
    # a build stopped at its first training step (as the page's Stop does through the job): said, nothing saved
    polls = []
    store, run_id, cells = kfl.start_build(recipe, None, ResultStore())
    run_cells(store, run_id, cells, kfl.build_cell, should_stop=lambda: polls.append(1) or len(polls) > 1)
    at.run()
    assert any("stopped before it finished; nothing was saved" in i.value for i in at.info) and not is_prepared(recipe)
    next(b for b in at.button if b.label.startswith("Build the document twin (about ")).click().run()
    assert not at.exception, at.exception
    JOBS.wait(kfl.build_run_id(recipe), timeout=240)
    assert is_prepared(recipe)
    at.run()
    assert not at.exception, at.exception
    assert any("held-out accuracy" in c.value and str(twin_dir(recipe)) in c.value for c in at.caption)
    assert any("1 method(s) on 20 documents: about" in c.value for c in at.caption)  # the check's estimate

    at.number_input(key="faith-kfl-limit").set_value(2).run()
    next(b for b in at.button if b.key == "faith-kfl-start").click().run()
    assert not at.exception, at.exception
    run_id = at.session_state["faithfulness:kf-long-run"]
    JOBS.wait(run_id, timeout=240)
    at.run()
    assert not at.exception, at.exception
    shown = next(d.value for d in at.dataframe if "mean rank %" in d.value.columns)
    assert list(shown["method"]) == ["saliency"] and list(shown["documents"]) == [2]
    assert any(b.label == "Download this table (CSV)" for b in at.get("download_button"))

    # the CLI on the same model, recomputed from scratch (the page's run removed from the store)
    ResultStore().delete_run(run_id)
    assert cli.main(["known-feature", "--documents", "--limit", "2", "--methods", "saliency", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["run_id"] == run_id  # the same run: model, dataset, methods, options
    from_cli = kfl.findings(pd.DataFrame(printed["summary"]))
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), from_cli, check_dtype=False)
