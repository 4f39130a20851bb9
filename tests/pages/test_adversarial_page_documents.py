"""The Adversarial page on a text longer than the model's window (AppTest, the real quick classifier): the text is
read whole in windows and attacked over them; the measures and both heatmaps of the whole document are shown."""
from __future__ import annotations

import pytest
from page_support import open_with_text

pytestmark = pytest.mark.integration

PAGE = "app_pages/10_Adversarial.py"
SENTENCE = "the acting is superb , but the plot is dull and the ending drags on far too long . "


def test_a_document_is_attacked_over_its_windows(monkeypatch, quick_classifier):
    text = SENTENCE * 40  # about 780 tokens: two windows of the quick model's 512
    at = open_with_text(monkeypatch, PAGE, text)
    at.number_input(key="adv-paper-003-steps").set_value(2).run()
    assert any("overlapping windows: the attack keeps the document's prediction" in c.value for c in at.caption)
    assert not any("does not run" in w.value for w in at.warning)
    next(b for b in at.button if b.label.startswith("Attack (up to 2 steps")).click().run()
    for job in at.session_state["adversarial_live"].values():
        job.wait(600)
        assert job.result is not None and job.result.windows["windows"] == 2, job.error
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    measures = next(df.value for df in at.dataframe if "measure" in df.value.columns)
    values = dict(zip(measures["measure"], measures["value"]))
    assert 0.0 <= values["Rank Change"] <= 1.0
    page = "\n".join(element.proto.body for element in at.get("markdown"))
    assert "Clean explanation" in page and "Attacked explanation" in page and page.count("superb") >= 40
