"""Uploaded files are kept under the user's own file name, so every message about them names that file
(upload errors named an internal hash file such as bbc52a1dbf1a15a2.csv)."""
from __future__ import annotations

import pytest
from streamlit.proto.Common_pb2 import FileURLs
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

from corpora import SENTIMENT_LABELS, DataError, load_dataset
from ui.widgets.uploads import save_upload


def _upload(name: str, data: bytes) -> UploadedFile:
    """What st.file_uploader returns for a file the browser sent."""
    return UploadedFile(UploadedFileRec(file_id="f", name=name, type="text/csv", data=data), FileURLs())


def test_an_upload_keeps_the_users_file_name_and_errors_name_it(isolated_cache):
    path = save_upload(_upload("my reviews.csv", b"text,label\na fine film,positive\na dull film,so-so\n"))
    assert path.name == "my reviews.csv" and path.is_relative_to(isolated_cache / "uploads")
    with pytest.raises(DataError) as error:
        load_dataset(f"file:{path}", label_names=SENTIMENT_LABELS)
    message = str(error.value)
    assert message.startswith("my reviews.csv: 1 malformed row(s): row 2: the label matches none of the model's")
    assert "so-so" not in message  # a message never quotes the file
    assert path.parent.name not in message  # the content hash folder is never shown


def test_two_files_of_one_name_do_not_collide_and_one_file_is_stored_once(isolated_cache):
    first = save_upload(_upload("data.csv", b"text\none\n"))
    second = save_upload(_upload("data.csv", b"text\ntwo\n"))
    assert first != second and first.read_text() == "text\none\n" and second.read_text() == "text\ntwo\n"
    assert save_upload(_upload("data.csv", b"text\none\n")) == first
    # a name from the browser is a name, never a path
    assert save_upload(_upload("../../etc/x.csv", b"text\nthree\n")).parent.parent == isolated_cache / "uploads"


def test_an_upload_over_the_size_limit_is_refused_before_it_is_written(isolated_cache, monkeypatch):
    """EXWB_UPLOAD_MB caps one file; nothing is written or parsed when it is over."""
    monkeypatch.setenv("EXWB_UPLOAD_MB", "0.00002")  # 20 bytes
    with pytest.raises(DataError, match=r"big\.csv is 0\.0 MB; this server takes files up to 2e-05 MB"):
        save_upload(_upload("big.csv", b"text\n" + b"a long enough line\n"))
    assert not (isolated_cache / "uploads").exists()
    assert save_upload(_upload("small.csv", b"text\nok\n")).is_file()  # 8 bytes: under it


def test_a_sessions_uploads_are_capped_in_all_and_the_same_file_counts_once(isolated_cache, monkeypatch):
    monkeypatch.setenv("EXWB_UPLOAD_SESSION_MB", "0.00003")  # 30 bytes per session
    taken = {}
    first = b"text\n" + b"x" * 14 + b"\n"  # 20 bytes
    save_upload(_upload("one.csv", first), taken)
    save_upload(_upload("one.csv", first), taken)  # the same file again: not counted twice
    assert sum(taken.values()) == len(first)
    with pytest.raises(DataError, match="per session"):
        save_upload(_upload("two.csv", b"text\n" + b"y" * 14 + b"\n"), taken)
    assert sum(taken.values()) == len(first) and len(list((isolated_cache / "uploads").iterdir())) == 1
    save_upload(_upload("two.csv", b"text\n" + b"y" * 14 + b"\n"), {})  # another session starts afresh


def test_a_latin1_upload_is_read_as_written_with_the_note_the_sidebar_shows(isolated_cache):
    text = "un film très réussi"
    path = save_upload(_upload("avis.csv", f"text,label\n{text},positive\n".encode("latin-1")))
    assert path.read_bytes() == f"text,label\n{text},positive\n".encode("latin-1")  # the bytes, kept as sent
    [example] = load_dataset(f"file:{path}", label_names=SENTIMENT_LABELS)
    assert example.text == text and example.label_name == "positive"
    assert example.extra["file_note"].startswith("avis.csv is not UTF-8: read as Latin-1 (cp1252), e.g. 'très'")
