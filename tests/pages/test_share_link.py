"""Shareable links with AppTest and the real default-quick model: a link's query parameters reopen its model,
input, methods and options; the link a page shows reopens the same view in a fresh session; an input too long for a
link and a method this installation lacks get a message."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

TEXT = "a wonderful , moving film"


@pytest.fixture(scope="module")
def page_env(quick_classifier):
    """default-quick as the app's model; explanations cached in memory only (not in the user's cache)."""
    from explainers import cache

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_MODEL", "default-quick")
        patch.setattr(cache.DEFAULT_CACHE, "directory", None)
        yield
        cache.DEFAULT_CACHE.clear()


def open_link(page_file: str | None = None, **query) -> AppTest:
    """A fresh session opened on ``page_file`` (else the address without a path) with ``query`` as the link."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.query_params.update(query)
    if page_file is not None:
        at.run()
        at.switch_page(page_file)
    at.run()
    assert not at.exception, at.exception
    return at


def shown_link(at: AppTest) -> dict[str, str]:
    (block,) = [c for c in at.sidebar.code]
    return dict(parse_qsl(urlsplit(block.value).query))


def test_a_link_opens_its_input_methods_and_options(page_env):
    at = open_link(model="default-quick", text=TEXT, methods="saliency,leave_one_out", level="token",
                   palette="blue-orange", norm="max-abs")
    assert at.radio(key="input_source").value == "Your text"
    assert at.text_area(key="text").value == TEXT
    assert at.multiselect(key="methods").value == ["saliency", "leave_one_out"]
    assert at.radio(key="level").value == "token"
    assert at.selectbox(key="palette").value == "blue-orange"
    assert at.selectbox(key="display-norm").value == "max-abs"
    rows = " ".join(m.value for m in at.markdown)
    assert "**Saliency (gradient)**" in rows and "**Leave-one-out**" in rows and "**Attention weights**" not in rows
    assert "rgba(0,114,178" in " ".join(str(h.proto.body) for h in at.get("html"))  # the palette reached the rows


def test_the_link_a_page_shows_reopens_the_same_view(page_env):
    at = open_link(model="default-quick", methods="attention")
    at.radio(key="input_source").set_value("Sentence pair").run()
    at.text_area(key="pair_second").set_value("the film is good .").run()
    at.multiselect(key="methods").set_value(["attention", "leave_one_out"]).run()
    link = shown_link(at)
    assert link["pair"] == "the film is good ." and link["methods"] == "attention,leave_one_out"

    again = open_link(**link)
    assert again.radio(key="input_source").value == "Sentence pair"
    assert again.text_area(key="pair_text").value == at.text_area(key="pair_text").value
    assert again.text_area(key="pair_second").value == "the film is good ."
    assert again.multiselect(key="methods").value == ["attention", "leave_one_out"]
    assert shown_link(again) == link


def test_a_dataset_example_travels_as_its_number(page_env):
    at = open_link(model="default-quick", dataset="sst2:dev", index="5", methods="attention")
    assert at.radio(key="input_source").value == "Dataset"
    assert at.number_input(key="dataset_index_sst2:dev").value == 5
    link = shown_link(at)
    assert (link["dataset"], link["index"]) == ("sst2:dev", "5") and "text" not in link


def test_a_text_too_long_for_a_link_gets_a_message(page_env):
    at = open_link(model="default-quick", text="long " * 600, methods="attention")
    assert not at.sidebar.code
    assert any("too long for a link" in w.value for w in at.sidebar.warning)


def test_a_method_this_installation_lacks_is_named_and_left_out(page_env):
    at = open_link(model="default-quick", text=TEXT, methods="attention,no_such_method")
    assert at.multiselect(key="methods").value == ["attention"]
    assert any("no_such_method" in w.value for w in at.sidebar.warning)


def test_the_link_names_its_page_and_the_bare_address_opens_it(page_env):
    at = open_link("app_pages/9_Guided_tour.py", model="default-quick", text=TEXT, step="compare")
    link = shown_link(at)
    assert link["page"] == "Guided_tour" and link["step"] == "compare"

    again = open_link(**link)  # no switch_page: the address without a path
    assert [t.value for t in again.title] == ["Guided tour"]
    assert again.radio(key="tour-step").value == "compare"
    assert again.text_area(key="text").value == TEXT


# ----- every bad link value gets a warning that names it and says what is shown instead --------------------
def warnings_of(at: AppTest) -> str:
    return " ".join(w.value for w in [*at.warning, *at.sidebar.warning])


def assert_no_traceback(at: AppTest) -> None:
    assert not at.exception
    shown = " ".join(str(e.proto) for e in at.main) + " ".join(str(e.proto) for e in at.sidebar)
    assert "Traceback" not in shown and "/site-packages/" not in shown and str(ROOT) not in shown


def test_an_example_number_past_the_end_of_the_dataset_is_named_and_the_first_shown(page_env):
    at = open_link(page="ROAR", model="default-quick", dataset="sst2:dev", index="99999999")
    assert "99999999" in warnings_of(at) and "past the end" in warnings_of(at) and "872 examples" in warnings_of(at)
    assert at.number_input(key="dataset_index_sst2:dev").value == 0
    assert_no_traceback(at)


@pytest.mark.parametrize("query, named, instead", [
    ({"dataset": "nosuch:dev"}, "nosuch:dev", "keeping the current input"),
    ({"dataset": "file:/etc/passwd"}, "file:/etc/passwd", "keeping the current input"),
    ({"dataset": "sst2:nosplit", "index": "3"}, "nosplit", "showing dev"),
    ({"dataset": "sst2:dev", "index": "-1"}, "-1", "showing the first example"),
    ({"example": "999"}, "999", "keeping the current input"),
    ({"example": "two"}, "two", "keeping the current input"),
    ({"target": "7"}, "7", "explaining the predicted class"),
    ({"target": "1.5"}, "1.5", "explaining the predicted class"),
    ({"level": "sideways"}, "sideways", "showing words"),
    ({"palette": "neon"}, "neon", "keeping the current colours"),
    ({"model": "no-such-model"}, "no-such-model", "showing ` default-quick ` instead"),
    ({"page": "Nowhere"}, "Nowhere", "showing Heatmaps"),
])
def test_a_bad_link_value_is_named_with_what_is_shown_instead(page_env, query, named, instead):
    at = open_link(**{"page": "ROAR", "model": "default-quick", **query})
    text = warnings_of(at)
    assert named in text and instead in text, text
    assert_no_traceback(at)
    assert at.selectbox(key="model_choice").value == "default-quick"
    if "target" in query:
        assert at.selectbox(key="target-default-quick").value is None
    if "dataset" in query and "sst2:" in query["dataset"]:
        assert at.radio(key="input_source").value == "Dataset"
        expected = 3 if query.get("index") == "3" else 0  # a bad split: its example in the default split
        assert at.number_input(key="dataset_index_sst2:dev").value == expected
    elif "dataset" in query:
        assert at.radio(key="input_source").value != "Dataset"


def test_a_script_in_a_link_value_is_shown_as_text(page_env):
    at = open_link(page="ROAR", model="default-quick", dataset="<script>alert(1)</script>", target="<b>x</b>")
    assert "`` <script>alert(1)</script> ``" in warnings_of(at) or "` <script>alert(1)</script> `" in warnings_of(at)
    assert_no_traceback(at)


def test_an_unknown_preset_or_heatmap_option_is_named_and_a_known_preset_applied(page_env):
    from explainers import REGISTRY

    preset = next(iter(REGISTRY["lime"].presets))
    at = open_link(model="default-quick", text=TEXT, methods=f"attention,lime:{preset},saliency:no-such-preset",
                   norm="sideways", abs="maybe")
    text = warnings_of(at)
    assert "no-such-preset" in text and "using its default settings" in text
    assert "sideways" in text and "maybe" in text and "keeping the page's own choice" in text
    assert "(expected true or false)" in text and "(expected one of none, max-abs" in text
    assert at.multiselect(key="methods").value == ["attention", "lime", "saliency"]
    assert at.session_state["keep:methods:settings"]["lime"] == (preset, {})
    assert_no_traceback(at)


def test_an_unknown_card_is_named(page_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(page="Method_cards", card="../../README")
    at.run()
    assert "../../README" in warnings_of(at) and "not one of the method cards" in warnings_of(at)
    assert "Explanation Workbench" not in " ".join(m.value for m in at.markdown)  # the README is never read
    assert_no_traceback(at)
