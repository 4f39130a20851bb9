"""Method options that name a server folder (a masked LM, an AML checkpoint) are shown but cannot be typed on a
shared server; on one user's machine they stay free text."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explainers import explainer_class, schema


def _page(method_id: str) -> None:
    from ui.widgets.controls import method_controls

    method_controls(method_id, "m")


def test_the_options_that_name_server_folders_are_marked():
    methods = ("lime_bert", "leave_one_out_fill", "input_marginalization", "input_marginalization_phrase", "aml")
    marked = {(m, s.name) for m in methods for s in schema(explainer_class(m).Params) if s.server_path}
    assert marked == {("lime_bert", "masked_lm"), ("leave_one_out_fill", "masked_lm"),
                      ("input_marginalization", "masked_lm"), ("input_marginalization_phrase", "masked_lm"),
                      ("aml", "checkpoint"), ("aml", "generator")}


@pytest.mark.parametrize("shared, disabled", [("1", True), ("0", False)])
def test_a_server_folder_option_is_not_typed_in_shared_mode(monkeypatch, shared, disabled):
    monkeypatch.setenv("EXWB_SHARED", shared)
    at = AppTest.from_function(_page, args=("lime_bert",)).run()
    assert not at.exception, at.exception
    field = at.text_input(key="m-None-masked_lm")  # {prefix}-{preset}-{field}
    assert field.disabled is disabled and field.value == "mlm"
