"""The Guided tour with AppTest and the real default-quick model: each step asks its question and shows nothing
of the answer until Reveal; walking every step reveals the prediction, the method's top word, the comparison, the
head-randomization check and the faithfulness numbers; a link starts at any step."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from ui.views import tour

pytestmark = pytest.mark.integration

PAGE = "app_pages/9_Guided_tour.py"
TEXT = "not bad at all , actually ."


@pytest.fixture(scope="module")
def page_env(quick_classifier):
    from explainers import cache

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_MODEL", "default-quick")
        patch.setattr(cache.DEFAULT_CACHE, "directory", None)
        yield
        cache.DEFAULT_CACHE.clear()


def open_tour(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update({"model": "default-quick", "text": TEXT, **query})
    at.run()
    assert not at.exception, at.exception
    return at


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def reveal(at: AppTest, step: str) -> None:
    at.button(key=f"tour-reveal-{step}").click().run()
    assert not at.exception, at.exception


def test_walking_every_step_reveals_each_answer_after_its_question(page_env, quick_classifier):
    at = open_tour()
    encoding = quick_classifier.encode(TEXT)
    predicted = quick_classifier.labels[int(np.argmax(quick_classifier.proba_of(encoding)))]

    assert at.radio(key="tour-step").value == "prediction"
    assert tour.QUESTIONS["prediction"] in text_of(at)
    assert "Prediction:" not in text_of(at)  # nothing revealed before the click
    at.radio(key="tour-guess-prediction").set_value(predicted).run()
    reveal(at, "prediction")
    assert f"**Prediction: {predicted}**" in text_of(at) and "right" in text_of(at)

    at.button(key="tour-next-prediction").click().run()
    assert at.radio(key="tour-step").value == "method"
    assert tour.QUESTIONS["method"] in text_of(at) and "ranks" not in text_of(at)
    at.selectbox(key="tour-guess-word").set_value(0).run()
    reveal(at, "method")
    assert "**Leave-one-out** ranks" in text_of(at)
    assert [e.label for e in at.expander if e.label.startswith("About")] == ["About Leave-one-out"]

    at.button(key="tour-next-method").click().run()
    assert not at.get("plotly_chart")
    reveal(at, "compare")
    assert len(at.get("plotly_chart")) == 1  # the compact matrix
    assert f"of {len(tour.COMPARED)} methods put" in text_of(at)

    at.button(key="tour-next-compare").click().run()
    at.radio(key="tour-guess-sanity").set_value("change").run()
    reveal(at, "sanity")
    assert "Rank correlation with the trained model's explanation" in text_of(at)
    assert "You said: change" in text_of(at)

    at.button(key="tour-next-sanity").click().run()
    at.slider(key="tour-guess-drop").set_value(30).run()
    reveal(at, "faithfulness")
    assert "(you guessed 30)" in text_of(at)
    assert len(at.dataframe) == 1
    assert "tour-next-faithfulness" not in [b.key for b in at.button]  # the last step has no Next button


def test_a_link_starts_the_tour_at_its_step_with_its_method(page_env):
    at = open_tour(step="sanity", method="saliency")
    assert at.radio(key="tour-step").value == "sanity"
    assert at.selectbox(key="tour-method").value == "saliency"
    assert tour.QUESTIONS["sanity"] in text_of(at)


def test_teacher_mode_shows_the_answer_without_a_click(page_env):
    at = open_tour(step="method")
    at.toggle(key="tour-teacher").set_value(True).run()
    assert not at.exception
    assert "**Leave-one-out** ranks" in text_of(at)
    assert "tour-reveal-method" not in [b.key for b in at.button]


def test_a_mistyped_step_in_a_link_says_so_and_starts_at_the_first(page_env):
    at = open_tour(step="nonsense")
    assert at.radio(key="tour-step").value == "prediction"
    assert any("nonsense" in w.value for w in at.warning)


def test_every_step_shows_the_sentence_it_is_about_escaped(page_env):
    import html

    at = open_tour(text="a <b>bold</b> & moving film")
    sentence = at.session_state["selection"].text  # as the model reads it (typed text split into words)
    assert "bold" in sentence and "<" in sentence
    for step in tour.STEPS:
        at.radio(key="tour-step").set_value(step).run()
        (shown,) = [h.proto.body for h in at.get("html") if "xw-tour-input" in h.proto.body]
        assert html.escape(sentence) in shown and "<b>" not in shown, (step, shown)
