"""The Compare-models page with AppTest: the quick model next to a tiny model saved to a folder, rows
aligned by word, each model's prediction, the agreement between models; one model alone gets a message."""
from __future__ import annotations

import pytest
from page_support import open_with_text
from roar_fixtures import save_keyword_model
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/11_Compare_models.py"
TEXT = "the acting is superb but the plot is dull"


def _open(monkeypatch) -> AppTest:
    at = open_with_text(monkeypatch, PAGE, TEXT)
    at.multiselect(key="cmp-methods").set_value(["saliency", "leave_one_out"]).run()
    assert not at.exception, at.exception
    return at


def test_two_models_side_by_side(monkeypatch, tmp_path, keyword_classifier, quick_classifier):
    folder = save_keyword_model(keyword_classifier, tmp_path / "keyword-model")
    at = _open(monkeypatch)
    at.multiselect(key="cmp-models").set_value([]).run()
    at.text_input(key="cmp-extra").input(str(folder)).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    predictions = next(df.value for df in at.dataframe if "prediction" in df.value.columns)
    assert list(predictions["model"]) == ["default-quick", str(folder)]
    page = "\n".join(element.proto.body for element in at.get("markdown"))
    assert page.count("superb") >= 4  # two methods x two models, the same words in every row
    agreement = [df.value for df in at.dataframe if "model" in df.value.columns and "prediction" not in
                 df.value.columns]
    assert len(agreement) == 2 and all(frame.shape == (2, 3) for frame in agreement)


def test_one_model_alone_gets_a_message(monkeypatch, quick_classifier):
    at = _open(monkeypatch)
    at.multiselect(key="cmp-models").set_value([]).run()
    assert any("at least one more model" in i.value for i in at.info)
