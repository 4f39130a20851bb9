"""The Adversarial page on the tiny keyword model saved to a folder: the reference code's detached preset
(`paper-003-code`) chosen on the page reaches the attack, the nearest vocabulary words are named, and the dataset tab
runs a stored attack run whose summary has a bootstrap interval per measure."""
from __future__ import annotations

import pytest
from conftest import ROOT
from roar_fixtures import save_keyword_model
from streamlit.testing.v1 import AppTest

from evaluation.adversarial.config import config_for
from evaluation.runs.jobs import JOBS

PAGE = "app_pages/10_Adversarial.py"
TEXT = "the acting is superb but the plot is dull and the ending drags on far too long"


@pytest.fixture()
def at(keyword_classifier, isolated_cache, tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("EXWB_MODEL", str(save_keyword_model(keyword_classifier, tmp_path / "keyword-model")))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    app.session_state["methods"] = ["random"]
    app.run()
    app.switch_page(PAGE)
    app.run()
    app.radio(key="input_source").set_value("Your text").run()
    app.text_area(key="text").input(TEXT).run()
    assert not app.exception, app.exception
    return app


def test_the_detached_preset_reaches_the_attack_and_nearest_words_are_named(at):
    at.selectbox(key="adv-preset").set_value("paper-003-code").run()
    at.number_input(key="adv-paper-003-code-steps").set_value(4).run()
    next(b for b in at.button if b.label.startswith("Attack (up to 4 steps")).click().run()
    jobs = at.session_state["adversarial_live"]
    for job in jobs.values():
        job.wait(120)
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    (job,) = jobs.values()
    assert job.config == config_for("paper-003-code", steps=4) and job.config.double_backprop is False
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Nearest vocabulary token") or c.startswith("Every perturbed embedding is still nearest")
               for c in captions), captions


def test_the_dataset_tab_stores_a_run_with_intervals(at):
    at.number_input(key="adv-paper-003-steps").set_value(3).run()
    at.number_input(key="adv-ds-limit").set_value(2).run()
    at.button(key="adv-ds-start").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    run_id = at.session_state["adversarial_run"]
    JOBS.wait(run_id, timeout=240)
    at.run()
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if "measure" in df.value.columns and "low" in df.value.columns)
    assert {"Rank Change", "Top-k Sum Change", "Probability Change"} <= set(table["measure"])
    assert (table["low"] <= table["mean"] + 1e-12).all() and (table["mean"] <= table["high"] + 1e-12).all()
