"""The app with AppTest on the real quick model: the first page, every input kind, and bad input."""
from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration


@pytest.fixture()
def app(monkeypatch, quick_classifier):
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    return at


def _html(at) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def _type(at, text: str) -> None:
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input(text).run()
    assert not at.exception, at.exception


def test_first_page_shows_the_prediction_and_five_method_rows(app):
    assert [t.value for t in app.title] == ["Heatmaps"]
    assert any("Prediction:" in m.value for m in app.markdown)
    labels = [e.label for e in app.expander if e.label.startswith("Provenance")]
    assert len(labels) >= 5
    assert any("operator: delete" in label for label in labels)
    html = _html(app)
    assert html.count('class="xw-row"') >= 5 and "acting" in html  # the first example sentence


def test_html_in_the_text_is_escaped(app):
    _type(app, "<script>alert(1)</script> a <b>great</b> film")
    html = _html(app)
    # typed text is split as the datasets are, so every mark of a tag is a word of its own, escaped
    assert ">&lt;</span>" in html and ">script</span>" in html and ">&gt;</span>" in html and "<script>" not in html
    assert ">b</span>" in html and ">great</span>" in html and "<b>" not in html


def test_typed_text_is_split_like_the_datasets_and_the_sidebar_says_so(app):
    _type(app, "A breathtaking, funny film!")
    html = _html(app)
    assert ">breathtaking</span>" in html and ">,</span>" in html and ">!</span>" in html
    assert ">breathtaking,</span>" not in html
    split = [c.value for c in app.sidebar.caption if c.value.startswith("Split as the datasets are")]
    assert split and "` breathtaking, ` → ` breathtaking , `" in split[0] and "` film! ` → ` film ! `" in split[0]
    # text already split (the examples, dataset rows) is left alone and nothing is said
    _type(app, "a gorgeous , witty film .")
    assert not [c for c in app.sidebar.caption if c.value.startswith("Split as the datasets are")]


def test_emoji_and_non_latin_text(app):
    _type(app, "ein großartiger Film 😀 素晴らしい")
    html = _html(app)
    assert "😀" in html and "素晴らしい" in html and "großartiger" in html


@pytest.mark.parametrize("text", ["", "   \n  "])
def test_empty_text_gets_a_message(app, text):
    _type(app, text)
    assert any("empty" in w.value for w in app.warning)
    assert not _html(app).count('class="xw-row"')


def test_very_long_text_is_read_whole_in_windows_and_costly_methods_wait(app):
    _type(app, "the film was good . " * 1250)  # 6,250 words: read whole in windows, never cut
    captions = " ".join(c.value for c in app.caption)
    assert "6250 words read whole in" in captions and "overlapping windows of 512 tokens" in captions
    assert "were cut" not in " ".join(w.value for w in app.warning)
    buttons = [b.label for b in app.button if b.label.startswith("Run ")]
    assert buttons, "expensive methods wait for a click instead of running for minutes"


def test_sentence_pair_shows_the_segment_boundary(app):
    app.radio(key="input_source").set_value("Sentence pair").run()
    assert not app.exception
    assert "segment boundary" in _html(app)


def test_dataset_example_with_human_rationale(app):
    app.radio(key="input_source").set_value("Dataset").run()
    app.selectbox(key="dataset_name").set_value("eraser-movies").run()
    assert not app.exception
    assert any("Gold label" in c.value for c in app.caption)
    assert "xw-human" in _html(app)


def test_unknown_model_and_folder_without_model(app, tmp_path):
    app.selectbox(key="model_choice").set_value("other: a folder or hub id").run()
    app.text_input(key="model_path").input("nobody/nothing").run()
    assert not app.exception
    assert any("hub access is off" in e.value for e in app.error)
    app.text_input(key="model_path").input(str(tmp_path)).run()
    assert any("no config.json" in e.value for e in app.error)


def test_unprepared_built_in_model_offers_to_prepare(app, isolated_cache):
    app.selectbox(key="model_choice").set_value("default-nli").run()
    assert not app.exception
    assert any("not prepared yet" in w.value for w in app.warning)
    assert any(b.label == "Prepare 'default-nli' now" for b in app.button)
