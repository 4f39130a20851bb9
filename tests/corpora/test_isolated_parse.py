"""A user file parsed in a worker process (corpora/isolated_parse.py): the same examples and the same
messages as the in-process parse, progress on the way, and a message naming the limit when the worker's memory or
CPU limit ends it; the worker's CPU time is reported to the listeners (a job's CPU quota)."""
from __future__ import annotations

import codecs
import os

import pytest

from corpora import DataError, isolated_parse, load_dataset
from corpora.isolated_parse import parse_in_worker
from corpora.user_file import PROGRESS_ROWS, load_user_file

LABELS = ("negative", "positive")


def _write_rows(path, rows: int):
    with open(path, "w") as handle:
        handle.write("text,label\n")
        for i in range(rows):
            handle.write(f"a fine film number {i} with warm scenes and a dull plot,{i % 2}\n")
    return path


def test_the_worker_gives_the_in_process_examples(tmp_path):
    path = tmp_path / "mixed.csv"  # labels by name, a pair, a marked rationale, and a Latin-1 byte
    path.write_bytes("text,pair,label,rationale\n"
                     "a great film,caf\u00e9 scenes,positive,a *great* film caf\u00e9 scenes\n"
                     "a dull film,long scenes,NEGATIVE,\"0,1\"\n".encode("latin-1"))
    expected = load_user_file(path, label_names=LABELS, max_rows=10)
    got = parse_in_worker(path, LABELS, 10, 60, 500)
    assert got == expected and got[0].extra["file_note"]  # the encoding note travels with the examples
    assert got[1].label == 0 and got[0].rationale == (0, 1, 0, 0, 0) and got[1].rationale == (1, 1, 0, 0, 0)


@pytest.mark.parametrize("content, rows", [
    ("text,label\nfine,1\nfine,9\n", 10),   # a label index outside the model's classes
    ("title\nx\n", 10),                     # no text column
    ("text\na\nb\nc\n", 2),                 # over the row limit
    ('text\n"never closed\nb\n', 10),       # a quote never closed
])
def test_the_workers_refusals_are_the_in_process_messages(tmp_path, content, rows):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DataError) as in_process:
        load_user_file(path, label_names=LABELS, max_rows=rows)
    with pytest.raises(DataError) as in_worker:
        parse_in_worker(path, LABELS, rows, 60, 500)
    assert str(in_worker.value) == str(in_process.value)


def test_progress_reports_rows_and_the_worker_cpu_reaches_the_listeners(tmp_path, monkeypatch):
    path = _write_rows(tmp_path / "many.csv", 3 * PROGRESS_ROWS + 10)
    charged, seen = [], []
    monkeypatch.setattr(isolated_parse, "CPU_LISTENERS", [charged.append])
    examples = parse_in_worker(path, None, 10 ** 6, 60, 500, progress=lambda share, rows: seen.append((share, rows)))
    assert len(examples) == 3 * PROGRESS_ROWS + 10
    assert [rows for _, rows in seen] == [PROGRESS_ROWS, 2 * PROGRESS_ROWS, 3 * PROGRESS_ROWS]
    shares = [share for share, _ in seen]
    assert shares == sorted(shares) and 0 < shares[0] < shares[-1] < 1
    assert len(charged) == 1 and charged[0] > 0  # the worker's own CPU (its rusage), once it ended


def test_a_file_over_the_memory_limit_gets_a_message_naming_it(tmp_path):
    path = _write_rows(tmp_path / "big.csv", 40_000)  # ~2.4 MB of text: far more than 2 MB once parsed
    with pytest.raises(DataError, match="more than the 2 MB .*EXWB_PARSE_MB.*split the file") as error:
        parse_in_worker(path, None, 10 ** 6, 60, 2)
    assert "fine film" not in str(error.value)


def test_a_parse_over_its_cpu_seconds_is_ended_by_the_kernel_with_a_message(tmp_path):
    path = _write_rows(tmp_path / "slow.csv", 400_000)  # several CPU seconds; the limit is 1 s (RLIMIT_CPU)
    with pytest.raises(DataError, match=r"longer than the 0\.5 s .*EXWB_PARSE_SECONDS"):
        parse_in_worker(path, None, 10 ** 6, 0.5, 2000)


def test_load_dataset_parses_in_a_worker_when_asked_and_in_shared_mode(tmp_path, monkeypatch):
    paths = [tmp_path / f"utf16-{i}.csv" for i in range(3)]  # three files: a file parsed once is kept (below)
    for path in paths:
        path.write_bytes(codecs.BOM_UTF16_LE + "text,label\nfine,positive\n".encode("utf-16-le"))
    charged = []
    monkeypatch.setattr(isolated_parse, "CPU_LISTENERS", [charged.append])
    monkeypatch.delenv("EXWB_SHARED", raising=False)
    plain = [e.text for e in load_dataset(f"file:{paths[0]}", label_names=LABELS)]
    assert charged == []  # outside shared mode the command line parses in its own process
    assert [e.text for e in load_dataset(f"file:{paths[1]}", label_names=LABELS, isolated=True)] == plain
    assert len(charged) == 1
    monkeypatch.setenv("EXWB_SHARED", "1")
    monkeypatch.setenv("EXWB_DATA_FOLDERS", str(tmp_path))
    assert [e.text for e in load_dataset(f"file:{paths[2]}", label_names=LABELS)] == plain and len(charged) == 2
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _is_zombie_child(int(p))]


def _is_zombie_child(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] == "Z" and int(fields[1]) == os.getpid()


def test_a_file_is_parsed_once_for_the_cells_of_a_run_until_it_changes(tmp_path, monkeypatch):
    """Each cell of a dataset run loads its example; the file is parsed once, again only when it changed."""
    path = _write_rows(tmp_path / "cells.csv", 10)
    charged = []
    monkeypatch.setattr(isolated_parse, "CPU_LISTENERS", [charged.append])
    first = [load_dataset(f"file:{path}", limit=i + 1, isolated=True)[i] for i in range(5)]
    assert len(charged) == 1 and [e.id for e in first] == [f"file:cells.csv:{i}" for i in range(5)]
    _write_rows(path, 12)  # changed on disk: read again
    assert len(load_dataset(f"file:{path}", isolated=True)) == 12 and len(charged) == 2
