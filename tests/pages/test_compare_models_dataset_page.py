"""The Compare-models page's dataset section with AppTest: two tiny keyword models saved to folders (each its own
known-feature twin), the comparison run as a background job, the figures, the table of both models and the two
downloads; a twin written wrong gets a message."""
from __future__ import annotations

import pytest
from conftest import ROOT
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model
from streamlit.testing.v1 import AppTest
from tiny_models import keyword_classifier as build_keyword_classifier

from evaluation.runs.jobs import JOBS

PAGE = "app_pages/11_Compare_models.py"


@pytest.fixture()
def setup(keyword_classifier, isolated_cache, tmp_path, monkeypatch):
    first = str(save_keyword_model(keyword_classifier, tmp_path / "first"))
    second = str(save_keyword_model(build_keyword_classifier(seed=1), tmp_path / "second"))
    data = write_rationale_csv(tmp_path / "keyword.csv", 4, seed=3)
    monkeypatch.setenv("EXWB_MODEL", first)
    return first, second, data


def _open(first, second, data, twins: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"]
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    at.multiselect(key="cmp-models").set_value([]).run()  # the one-input tab: no second model, no work
    at.multiselect(key="cmpd-models").set_value([first]).run()
    at.text_input(key="cmpd-extra").input(second).run()
    at.text_input(key="cmpd-dataset").input(data).run()
    at.multiselect(key="cmpd-methods").set_value(["saliency", "leave_one_out"]).run()
    at.multiselect(key="cmpd-checks").set_value(["known_feature", "plausibility"]).run()
    at.number_input(key="cmpd-limit").set_value(3).run()
    at.text_input(key="cmpd-kf-data").input(data).run()
    at.text_input(key="cmpd-twins").input(twins).run()
    assert not at.exception, at.exception
    return at


def test_two_models_over_a_dataset(setup):
    first, second, data = setup
    at = _open(first, second, data, f"{first}={first}, {second}={second}")
    at.button(key="cmpd-start").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    run_id = at.session_state["model_comparison_run"]
    JOBS.wait(run_id, timeout=240)
    at.run()
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if "architecture" in df.value.columns)
    assert list(dict.fromkeys(table["model"])) == [first, second]
    assert set(table["metric"]) == {"known-feature.precision@k", "known-feature.rank-fraction", "plaus_auprc"}
    assert len(at.get("plotly_chart")) == 2  # the metric vs size lines and the bars (no sanity check chosen)
    labels = [button.proto.label for button in at.get("download_button")]
    assert any("CSV" in label for label in labels) and any("JSON" in label for label in labels)


def test_a_twin_written_wrong_gets_a_message(setup):
    first, second, data = setup
    at = _open(first, second, data, "just-a-folder")
    assert any("MODEL=FOLDER" in w.value for w in at.warning)


def test_the_paper_003_protocol_is_chosen_in_a_selectbox(setup):
    first, second, data = setup
    at = _open(first, second, data, f"{first}={first}, {second}={second}")
    at.selectbox(key="cmpd-protocol").set_value("paper-003").run()
    assert any("Def. 2.2" in o and "known-feature task" in o for o in at.multiselect(key="cmpd-checks").options)
    at.multiselect(key="cmpd-checks").set_value(["faithfulness"]).run()
    at.button(key="cmpd-start").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    JOBS.wait(at.session_state["model_comparison_run"], timeout=240)
    at.run()
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if "architecture" in df.value.columns)
    assert set(table["metric"]) == {"comprehensiveness-003-code", "sufficiency-003-code"}
    assert any("Protocol `paper-003`" in c.value and "N(0, 1)" not in c.value for c in at.caption)
