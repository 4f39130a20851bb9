"""The app's upload widget takes parquet: an uploaded .parquet file is read by the isolated upload
parser (corpora/isolated_parse.py: a worker process under the time and memory limits), through the same path the
widget uses (``save_upload`` -> ``loaders.dataset``), with the examples a plain reading of the frame gives, its
columns mapped like a CSV's, and a message (never a traceback, never the file's content) for a broken file."""
from __future__ import annotations

import io

import pandas as pd
import pytest
from streamlit.proto.Common_pb2 import FileURLs
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

from corpora import DataError, isolated_parse, load_dataset
from corpora.isolated_parse import parse_in_worker
from corpora.objects import user_file_examples
from ui.widgets import loaders
from ui.widgets.dataset_field import FILE_TYPES
from ui.widgets.uploads import save_upload

LABELS = ("negative", "positive")
FRAME = pd.DataFrame({"sentence": ["a fine film", "a dull film", "warm and funny"],
                      "gold": ["positive", "NEGATIVE", "1"],  # names matched to the model's labels, an index
                      "premise": ["the film", "the plot", None]})
# (text, label index, pair) of each row, read off FRAME by hand
EXPECTED = [("a fine film", 1, "the film"), ("a dull film", 0, "the plot"), ("warm and funny", 1, None)]


def _upload(name: str, data: bytes) -> UploadedFile:
    """What st.file_uploader returns for a file the browser sent."""
    return UploadedFile(UploadedFileRec(file_id="f", name=name, type="application/octet-stream", data=data),
                        FileURLs())


def _parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


@pytest.fixture()
def charged(monkeypatch):
    """The CPU seconds of each worker process: one entry per parse in the worker."""
    seen: list[float] = []
    monkeypatch.setattr(isolated_parse, "CPU_LISTENERS", [seen.append])
    return seen


def test_the_widget_offers_parquet_and_an_upload_is_read_in_the_worker_with_its_columns(isolated_cache, charged):
    assert "parquet" in FILE_TYPES
    path = save_upload(_upload("my reviews.parquet", _parquet_bytes(FRAME)))
    dataset_id = f"file:{path}?text=sentence&label=gold&pair=premise"
    examples = loaders.dataset(dataset_id, LABELS)  # what the widget calls once a file is uploaded
    assert len(charged) == 1  # parsed in a worker process, not in the server's
    assert [(e.text, e.label, e.pair) for e in examples] == EXPECTED
    assert {e.dataset for e in examples} == {"my reviews.parquet"}
    assert [e.text for e in load_dataset(dataset_id, label_names=LABELS, isolated=True)] == list(FRAME.sentence)


def test_the_worker_gives_the_in_process_examples_of_a_parquet_file(tmp_path, charged):
    path = tmp_path / "texts.parquet"
    FRAME.rename(columns={"sentence": "text"}).to_parquet(path)
    in_process = user_file_examples(path, LABELS, max_rows=10, columns={"label": "gold"})
    assert parse_in_worker(path, LABELS, 10, 60, 500, columns={"label": "gold"}) == in_process
    assert [(e.text, e.label) for e in in_process] == [(text, label) for text, label, _ in EXPECTED]
    with pytest.raises(DataError, match="more than 2 rows") as in_worker:  # the row limit (EXWB_UPLOAD_ROWS)
        parse_in_worker(path, LABELS, 2, 60, 500)
    with pytest.raises(DataError) as here:
        user_file_examples(path, LABELS, max_rows=2)
    assert str(in_worker.value) == str(here.value)


def test_a_broken_or_textless_parquet_upload_gets_a_message_naming_the_file_only(isolated_cache, charged):
    broken = save_upload(_upload("broken.parquet", b"PAR1 secret=hunter2 not a parquet file"))
    with pytest.raises(DataError) as error:
        loaders.dataset(f"file:{broken}", LABELS)
    assert str(error.value).startswith("broken.parquet: not a readable parquet file") and "hunter2" not in str(
        error.value)
    textless = save_upload(_upload("notext.parquet", _parquet_bytes(FRAME.drop(columns=["sentence"]))))
    with pytest.raises(DataError, match="notext.parquet: no column 'text'") as error:
        loaders.dataset(f"file:{textless}", LABELS)
    assert "premise" not in str(error.value)  # a server's message never lists the file's own columns
    assert len(charged) == 2
