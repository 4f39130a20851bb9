"""The Start block of the dataset pages (ui/widgets/run_control.py): a Start reached without a usable dataset is a
message the block shows (one of its SETUP_ERRORS), never a call with None."""
from __future__ import annotations

import pytest

from models import UserFacingError
from ui.widgets.run_control import SETUP_ERRORS, chosen_dataset


def test_a_start_without_a_dataset_gets_a_message():
    assert chosen_dataset("sst2:dev") == "sst2:dev"
    with pytest.raises(UserFacingError, match="Choose a usable dataset first") as raised:
        chosen_dataset(None)
    assert isinstance(raised.value, SETUP_ERRORS)  # shown by start_stop as st.error
