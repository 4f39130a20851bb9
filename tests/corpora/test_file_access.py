"""Which ``file:`` paths may be read: in shared mode only inside the uploads folder or an admin folder,
with one message for every refusal (no existence oracle); otherwise any path, checked first with a clear message.
No message ever quotes a file's content."""
from __future__ import annotations

import os

import pytest

from corpora import DataError, check_dataset_id, load_dataset, load_user_file
from corpora.file_access import NOT_AVAILABLE, readable_file, shared_files, shown_name

SECRET = "aws_key=AKIAEXAMPLE123, password=hunter2"


@pytest.fixture()
def folders(tmp_path, monkeypatch):
    """A cache (with its uploads folder), an admin folder, and a place outside both holding a secret file."""
    cache, shared, outside = tmp_path / "cache", tmp_path / "shared", tmp_path / "outside"
    for folder in (cache / "uploads" / "abc", shared / "class", outside / "dir.csv"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))
    monkeypatch.setenv("EXWB_DATA_FOLDERS", os.pathsep.join([str(shared), str(tmp_path / "not-there")]))
    monkeypatch.delenv("EXWB_UPLOAD_MB", raising=False)
    good = "text,label\na fine film,1\na dull film,0\n"
    (cache / "uploads" / "abc" / "mine.csv").write_text(good)
    (shared / "class" / "week1.jsonl").write_text('{"text": "ok", "label": 1}\n')
    (shared / "notes.txt").write_text("not a dataset")
    secret = outside / "secret.csv"
    secret.write_text(SECRET + "\nmore\n")
    (cache / "uploads" / "abc" / "link.csv").symlink_to(secret)
    (shared / "link-out.csv").symlink_to(secret)
    return {"upload": cache / "uploads" / "abc" / "mine.csv", "shared": shared / "class" / "week1.jsonl",
            "secret": secret, "missing": outside / "missing.csv", "dir": outside / "dir.csv",
            "link": cache / "uploads" / "abc" / "link.csv", "link_out": shared / "link-out.csv",
            "unreadable": _unreadable(outside / "locked.csv"), "root": shared}


def _unreadable(path):
    path.write_text(SECRET + "\n")
    path.chmod(0)
    return path


def _message(text) -> str:
    with pytest.raises(DataError) as error:
        check_dataset_id(f"file:{text}")
    return str(error.value)


def test_shared_mode_reads_uploads_and_admin_folders(folders, monkeypatch):
    monkeypatch.setenv("EXWB_SHARED", "1")
    assert readable_file(folders["upload"]) == folders["upload"].resolve()
    assert readable_file(folders["shared"]) == folders["shared"].resolve()
    assert len(load_dataset(f"file:{folders['upload']}")) == 2
    assert shared_files() == [folders["shared"]]  # recursive, dataset suffixes only, links out of it not offered
    assert shown_name(folders["shared"]) == "shared/class/week1.jsonl"


def test_shared_mode_gives_one_message_for_every_refusal(folders, monkeypatch):
    monkeypatch.setenv("EXWB_SHARED", "1")
    probes = [folders[k] for k in ("secret", "missing", "dir", "link", "link_out")] + [
        "/etc/passwd", "/etc", folders["upload"].parent / ".." / ".." / ".." / "outside" / "secret.csv",
        folders["root"] / "notes.txt"]
    if os.geteuid() != 0:  # root reads a file whatever its mode
        probes.append(folders["unreadable"])
    messages = {_message(p) for p in probes}
    assert messages == {NOT_AVAILABLE}  # missing, a directory, unreadable, outside: the same words
    with pytest.raises(DataError, match="not available"):
        load_dataset(f"file:{folders['secret']}")  # the loader itself refuses too, not only the check


def test_a_symlink_in_the_uploads_folder_pointing_outside_is_refused(folders, monkeypatch):
    monkeypatch.setenv("EXWB_SHARED", "1")
    assert folders["link"].is_file()  # the link works: only its target is outside
    assert _message(folders["link"]) == NOT_AVAILABLE


def test_outside_shared_mode_any_path_is_checked_with_a_clear_message(folders, monkeypatch):
    monkeypatch.delenv("EXWB_SHARED", raising=False)
    assert len(load_dataset(f"file:{folders['upload']}")) == 2
    assert "No file at" in _message(folders["missing"])
    assert "is not a file" in _message(folders["dir"])
    assert "unsupported file type" in _message("/etc/passwd")
    if os.geteuid() != 0:
        assert "cannot be read" in _message(folders["unreadable"])
    monkeypatch.setenv("EXWB_UPLOAD_MB", "0.00001")  # 10 bytes
    assert "EXWB_UPLOAD_MB" in _message(folders["secret"])


@pytest.mark.parametrize("shared", ["0", "1"])
def test_no_message_quotes_a_secret_files_content(folders, monkeypatch, tmp_path, shared):
    """A secret token on a file's first line never appears in any message, whichever way the file is named."""
    monkeypatch.setenv("EXWB_SHARED", shared)
    tsv = folders["secret"].with_suffix(".tsv")
    tsv.write_text(SECRET + "\tx\n1\t2\n")
    jsonl = folders["secret"].with_suffix(".jsonl")
    jsonl.write_text('{"' + SECRET + '": 1}\n')
    labelled = folders["secret"].parent / "labels.csv"
    labelled.write_text(f"text,label,rationale\nfine,{SECRET},\nfine,1,{SECRET}\nfine,7,\n")
    messages = []
    for path in (folders["secret"], tsv, jsonl, labelled, folders["link"], folders["unreadable"]):
        for call in (lambda: check_dataset_id(f"file:{path}"), lambda: load_dataset(f"file:{path}"),
                     lambda: load_dataset(f"file:{path}", label_names=("negative", "positive"))):
            try:
                call()
            except DataError as error:
                messages.append(str(error))
    for path in (folders["secret"], tsv, jsonl, labelled):  # read directly, as an upload is
        with pytest.raises(DataError) as error:
            load_user_file(path, label_names=("negative", "positive"))
        messages.append(str(error.value))
    assert len(messages) >= 10
    for token in ("AKIAEXAMPLE123", "hunter2", "aws_key"):
        assert not any(token in m for m in messages), [m for m in messages if token in m]


def test_rows_over_the_limit_are_refused_while_reading(tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_UPLOAD_ROWS", "3")
    path = tmp_path / "many.csv"
    path.write_text("text\n" + "".join(f"row {i}\n" for i in range(4)))
    with pytest.raises(DataError, match="more than 3 rows.*EXWB_UPLOAD_ROWS"):
        load_user_file(path)
    jsonl = tmp_path / "many.jsonl"
    jsonl.write_text("".join(f'{{"text": "row {i}"}}\n' for i in range(4)))
    with pytest.raises(DataError, match="more than 3 rows"):
        load_user_file(jsonl)
    path.write_text("text\n" + "".join(f"row {i}\n" for i in range(3)))
    assert len(load_user_file(path)) == 3  # exactly the limit is fine


def test_unknown_datasets_and_splits_are_refused_before_any_load():
    for bad in ("nope:dev", "sst2:nosuch", "known-feature:dev:x"):
        with pytest.raises(DataError):
            check_dataset_id(bad)
    for good in ("sst2:dev", "sst2", "known-feature:dev:0", "eraser-movies:validation"):
        check_dataset_id(good)
