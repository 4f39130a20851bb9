"""No server path from the browser, with AppTest on the tiny keyword model saved to a folder: in shared
mode the pages offer no path field; outside it a typed path is checked before any job starts, and no message
quotes a file's content."""
from __future__ import annotations

import pytest
from conftest import ROOT
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model
from streamlit.testing.v1 import AppTest

from corpora import DataError
from evaluation.runs.store import ResultStore
from evaluation.suite import model_comparison_dataset as mcd
from evaluation.suite import report_card as rc
from ui.views.plausibility import FILE_CHOICE, SHARED_FILE_CHOICE

PLAUSIBILITY = "app_pages/5_Plausibility.py"
REPORT_CARD = "app_pages/12_Report_card.py"
COMPARE = "app_pages/11_Compare_models.py"
SECRET = "aws_key=AKIAEXAMPLE123, password=hunter2"


@pytest.fixture()
def keyword_model(keyword_classifier, isolated_cache, tmp_path, monkeypatch):
    folder = save_keyword_model(keyword_classifier, tmp_path / "keyword-model")
    monkeypatch.setenv("EXWB_MODEL", str(folder))
    for name in ("EXWB_SHARED", "EXWB_DATA_FOLDERS"):
        monkeypatch.delenv(name, raising=False)
    return str(folder)


def _page(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["methods"] = ["random"]
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def _keys(elements) -> set:
    return {element.key for element in elements}


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_plausibility_in_shared_mode_offers_uploads_and_shared_files_but_no_path(keyword_model, tmp_path,
                                                                                 monkeypatch):
    shared = tmp_path / "class"
    shared.mkdir()
    write_rationale_csv(shared / "week1.csv", 4, seed=3)
    monkeypatch.setenv("EXWB_SHARED", "1")
    monkeypatch.setenv("EXWB_DATA_FOLDERS", str(shared))
    at = _page(PLAUSIBILITY)
    at.multiselect(key="plaus-methods").set_value(["saliency"]).run()
    assert FILE_CHOICE not in at.selectbox(key="plaus-ds").options
    at.selectbox(key="plaus-ds").set_value(SHARED_FILE_CHOICE).run()
    assert not at.exception, at.exception
    assert "plaus-file" not in _keys(at.text_input) and "Path" not in [t.label for t in at.text_input]
    files = at.selectbox(key="plaus-file-shared")
    assert files.options == ["upload a file", "shared file: class/week1.csv"]
    assert at.get("file_uploader")  # an upload is the other way in
    assert at.button(key="plaus-start").disabled  # nothing uploaded yet
    files.set_value(f"file:{shared / 'week1.csv'}").run()
    assert not at.button(key="plaus-start").disabled and not at.error


def test_plausibility_outside_shared_mode_never_quotes_a_files_content(keyword_model, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text(SECRET + "\n1,2\n")
    at = _page(PLAUSIBILITY)
    at.multiselect(key="plaus-methods").set_value(["saliency"]).run()
    at.selectbox(key="plaus-ds").set_value(FILE_CHOICE).run()
    for path in (secret, tmp_path / "missing.csv", tmp_path, "/etc/passwd"):
        at.text_input(key="plaus-file").input(str(path)).run()
        if not at.button(key="plaus-start").disabled:  # the file exists: its content is refused when it is read
            at.button(key="plaus-start").click().run()
        assert not at.exception, at.exception
        messages = _errors(at)
        assert messages, path  # every one refused with a message ...
        assert not any(token in m for m in messages for token in ("AKIAEXAMPLE123", "hunter2", "aws_key")), messages
    assert ResultStore().list_runs() == []  # ... and no run created


@pytest.mark.parametrize("dataset", ["file:/etc/passwd", "file:/no/such/file.csv", "nope:dev", "sst2:nosuch"])
def test_report_card_refuses_a_dataset_it_cannot_read_and_starts_nothing(keyword_model, dataset):
    at = _page(REPORT_CARD)
    at.text_input(key="card-dataset").input(dataset).run()
    assert _errors(at) and at.button(key="card-start").disabled
    assert not at.exception, at.exception
    assert ResultStore().list_runs(rc.KIND) == [] and "report_card_run" not in at.session_state
    with pytest.raises(DataError):  # and the start function refuses it too, whoever calls it
        rc.start_report_card(keyword_model, dataset, ["saliency"])
    assert ResultStore().list_runs(rc.KIND) == []


def test_report_card_and_compare_refuse_a_csv_that_is_no_dataset_before_any_run(keyword_model, tmp_path):
    """a readable .csv without a 'text' column is refused at its header, with what to fix."""
    table = tmp_path / "accounts.csv"
    table.write_text(f"user,{SECRET}\nalice,1\n")
    at = _page(REPORT_CARD)
    at.text_input(key="card-dataset").input(f"file:{table}").run()
    assert any("'text' column is required" in m and "accounts.csv" in m for m in _errors(at)), _errors(at)
    assert at.button(key="card-start").disabled and not at.exception
    at.switch_page(COMPARE).run()
    at.multiselect(key="cmp-models").set_value([]).run()
    at.multiselect(key="cmpd-models").set_value([keyword_model]).run()
    at.text_input(key="cmpd-dataset").input(f"file:{table}").run()
    assert any("'text' column is required" in m for m in _errors(at)) and at.button(key="cmpd-start").disabled
    assert not any("AKIAEXAMPLE123" in m for m in _errors(at))
    assert ResultStore().list_runs() == []


def test_report_card_in_shared_mode_has_no_dataset_text(keyword_model, monkeypatch):
    monkeypatch.setenv("EXWB_SHARED", "1")
    at = _page(REPORT_CARD)
    assert not {"card-dataset", "card-kf-data", "card-plaus-data", "card-kf-model"} & _keys(at.text_input)
    assert at.selectbox(key="card-dataset").value == "sst2:dev"
    assert "upload a file" in at.selectbox(key="card-dataset").options


def test_compare_models_refuses_a_dataset_it_cannot_read_and_starts_nothing(keyword_model):
    at = _page(COMPARE)
    at.multiselect(key="cmp-models").set_value([]).run()
    at.multiselect(key="cmpd-models").set_value([keyword_model]).run()
    at.text_input(key="cmpd-dataset").input("file:/etc/passwd").run()
    assert any("passwd" in m for m in _errors(at)) and at.button(key="cmpd-start").disabled
    assert not at.exception, at.exception
    assert ResultStore().list_runs(mcd.KIND) == [] and "model_comparison_run" not in at.session_state
    with pytest.raises(DataError):
        mcd.start_comparison([keyword_model], "file:/etc/passwd", ["saliency"])
    assert ResultStore().list_runs(mcd.KIND) == []


def test_shared_mode_offers_no_model_folder_and_refuses_a_study_naming_one(keyword_model, monkeypatch):
    from ui.views.roar import check_imported
    from ui.widgets.sidebar import OTHER_MODEL

    monkeypatch.setenv("EXWB_SHARED", "1")
    at = _page(REPORT_CARD)
    model = next(box for box in at.selectbox if box.label == "Model")
    assert OTHER_MODEL not in model.options and keyword_model in model.options  # the admin's EXWB_MODEL only
    check_imported({"model": "default", "train_data": "sst2:train", "test_data": "sst2:dev"})
    with pytest.raises(DataError):
        check_imported({"model": "default", "train_data": "file:/etc/passwd.csv"})
    with pytest.raises(ValueError, match="built-in"):
        check_imported({"model": keyword_model, "train_data": "sst2:train"})


def test_the_sidebars_your_file_offers_the_admins_files_in_shared_mode(keyword_model, tmp_path, monkeypatch):
    from corpora import load_dataset

    shared = tmp_path / "class"
    (shared / "week2").mkdir(parents=True)
    data = write_rationale_csv(shared / "week2" / "reviews.csv", 4, seed=3)
    monkeypatch.setenv("EXWB_SHARED", "1")
    monkeypatch.setenv("EXWB_DATA_FOLDERS", str(shared))
    at = _page(REPORT_CARD)
    at.radio(key="input_source").set_value("Dataset").run()
    at.selectbox(key="dataset_name").set_value("your file").run()
    pick = at.selectbox(key="dataset_file_pick")
    assert pick.options == ["upload a file", "shared file: class/week2/reviews.csv"]
    pick.set_value(data).run()
    assert not at.exception and not at.error, (at.exception, _errors(at))
    first = load_dataset(data)[0]
    assert any(first.id in c.value for c in at.sidebar.caption)  # the shared file's first row is the input


def test_faithfulness_offers_the_admins_files_in_shared_mode_like_every_dataset_field(keyword_model, tmp_path,
                                                                                      monkeypatch):
    """the Faithfulness dataset picker (and the Table 4 one that shares it) offers built-ins, the admin's
    EXWB_DATA_FOLDERS files and an upload, as ui/widgets/dataset_field.py does everywhere; a file picked is read."""
    shared = tmp_path / "class"
    shared.mkdir()
    data = write_rationale_csv(shared / "week3.csv", 4, seed=3)
    monkeypatch.setenv("EXWB_SHARED", "1")
    monkeypatch.setenv("EXWB_DATA_FOLDERS", str(shared))
    at = _page("app_pages/2_Faithfulness.py")
    for key in ("faith-ds", "faith-shift-ds"):
        picker = at.selectbox(key=key)
        assert picker.options[0].startswith("sst2:") and picker.options[-2:] == [
            "shared file: class/week3.csv", "upload a CSV / TSV / JSONL / Parquet file"], picker.options
    assert not any("path" in t.label.lower() or "file" in t.label.lower() for t in at.text_input)
    from corpora import isolated_parse

    workers = []  # the app parses a user file in a worker process (its CPU time is reported when it ends)
    monkeypatch.setattr(isolated_parse, "CPU_LISTENERS", [workers.append])
    at.selectbox(key="faith-ds").set_value(data).run()
    assert not at.exception and not _errors(at), (at.exception, _errors(at))
    assert len(workers) == 1
    outside = tmp_path / "elsewhere.csv"  # a file outside the folders is never an option
    outside.write_text("text\nfine\n")
    assert not any("elsewhere" in o for o in at.selectbox(key="faith-ds").options)
    for page, key in (("app_pages/3_Sanity_checks.py", "sanity-ds"), ("app_pages/10_Adversarial.py", "adv-ds-name")):
        at.switch_page(page).run()  # the other dataset runs offer the same choices
        assert at.selectbox(key=key).options[-2:] == ["shared file: class/week3.csv", "upload a CSV / TSV / JSONL / Parquet file"]
        assert not at.exception, at.exception
