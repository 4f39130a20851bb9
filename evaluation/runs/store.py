"""The result store: every dataset-level run (evaluation, sanity check, ROAR study) and each finished cell.

SQLite under the cache directory. A run's id is a hash of its kind and configuration, so starting the
same study again finds the finished cells and resumes; a finished run reopens instantly. Runs export
to and import from plain JSON, so a study computed on a GPU machine can be viewed on a laptop. A run read back
as "running" or "queued" is so now: one whose process is gone reads "interrupted" (evaluation/runs/liveness.py).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

import settings
from evaluation.runs.liveness import ACTIVE, shown_status, this_process
from explainers.export import FORMAT, KIND_EXPLANATIONS, KIND_RUN, LEGACY_RUN_FORMAT, is_run_document

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT, config TEXT NOT NULL, status TEXT NOT NULL,
    total INTEGER NOT NULL, created REAL NOT NULL, updated REAL NOT NULL, meta TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS cells (
    run_id TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL, seconds REAL, finished REAL NOT NULL,
    PRIMARY KEY (run_id, key)
);
"""


def run_id_for(kind: str, config: dict) -> str:
    payload = json.dumps({"kind": kind, "config": config}, sort_keys=True, default=str)
    return f"{kind}-{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


class ResultStore:
    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else settings.cache_dir() / "results.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.executescript(SCHEMA)

    @contextmanager
    def _connect(self):
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        try:
            db.execute("PRAGMA journal_mode=WAL")
            yield db
            db.commit()
        finally:
            db.close()

    # ----- runs ------------------------------------------------------------------------------------
    def create_run(self, kind: str, config: dict, total: int, title: str = "", meta: dict | None = None) -> str:
        """Create a run, or return the existing one with the same kind and configuration (to resume)."""
        run_id = run_id_for(kind, config)
        now = time.time()
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO runs (id, kind, title, config, status, total, created, updated, meta) "
                       "VALUES (?, ?, ?, ?, 'new', ?, ?, ?, ?)",
                       (run_id, kind, title, json.dumps(config, default=str), total, now, now,
                        json.dumps(meta or {}, default=str)))
            db.execute("UPDATE runs SET total = ? WHERE id = ?", (total, run_id))
        return run_id

    def get_run(self, run_id: str) -> dict | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
            done = db.execute("SELECT COUNT(*) FROM cells WHERE run_id = ?", (run_id,)).fetchone()[0]
        return None if row is None else self._run_dict(row, done)

    def list_runs(self, kind: str | None = None) -> list[dict]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM runs" + (" WHERE kind = ?" if kind else "") + " ORDER BY updated DESC",
                              (kind,) if kind else ()).fetchall()
            counts = dict(db.execute("SELECT run_id, COUNT(*) FROM cells GROUP BY run_id").fetchall())
        return [self._run_dict(row, counts.get(row["id"], 0)) for row in rows]

    def set_status(self, run_id: str, status: str, meta: dict | None = None) -> None:
        """Set a run's status (and its meta when given). A running or queued run records this process in its meta
        (``process``), so readers can tell a live run from one whose process is gone (evaluation/runs/liveness.py)."""
        with self._connect() as db:
            if meta is None and status in ACTIVE:
                row = db.execute("SELECT meta FROM runs WHERE id = ?", (run_id,)).fetchone()
                meta = json.loads(row["meta"]) if row is not None else {}
            if meta is None:
                db.execute("UPDATE runs SET status = ?, updated = ? WHERE id = ?", (status, time.time(), run_id))
            else:
                if status in ACTIVE:
                    meta = {**meta, "process": this_process()}
                db.execute("UPDATE runs SET status = ?, updated = ?, meta = ? WHERE id = ?",
                           (status, time.time(), json.dumps(meta, default=str), run_id))

    def delete_run(self, run_id: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM cells WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    @staticmethod
    def _run_dict(row, done: int) -> dict:
        meta = json.loads(row["meta"])
        return {"id": row["id"], "kind": row["kind"], "title": row["title"], "config": json.loads(row["config"]),
                "status": shown_status(row["status"], meta), "total": row["total"], "done": done,
                "created": row["created"], "updated": row["updated"], "meta": meta}

    # ----- cells -----------------------------------------------------------------------------------
    def put_cell(self, run_id: str, key: str, result: dict, seconds: float | None = None) -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO cells (run_id, key, result, seconds, finished) VALUES (?, ?, ?, ?, ?)",
                       (run_id, key, json.dumps(result, default=str), seconds, time.time()))
            db.execute("UPDATE runs SET updated = ? WHERE id = ?", (time.time(), run_id))

    def cells(self, run_id: str) -> dict[str, dict]:
        with self._connect() as db:
            # by key, not by finish time: whatever read the cells (tables, bootstrap draws over examples) sees them
            # in one order whichever executor ran them and in whatever order they finished (same inputs, same numbers)
            rows = db.execute("SELECT key, result FROM cells WHERE run_id = ? ORDER BY key", (run_id,)).fetchall()
        return {row["key"]: json.loads(row["result"]) for row in rows}

    def cell_seconds(self, run_id: str) -> list[float]:
        with self._connect() as db:
            rows = db.execute("SELECT seconds FROM cells WHERE run_id = ? AND seconds IS NOT NULL", (run_id,)).fetchall()
        return [row[0] for row in rows]

    def finished_keys(self, run_id: str) -> set[str]:
        with self._connect() as db:
            return {row[0] for row in db.execute("SELECT key FROM cells WHERE run_id = ?", (run_id,)).fetchall()}

    # ----- export / import -------------------------------------------------------------------------
    def export_run(self, run_id: str) -> dict:
        run = self.get_run(run_id)
        if run is None:
            raise KeyError(f"No run '{run_id}' in {self.path}.")
        with self._connect() as db:
            rows = db.execute("SELECT key, result, seconds, finished FROM cells WHERE run_id = ?", (run_id,)).fetchall()
        return {"format": FORMAT, "kind": KIND_RUN, "run": run,  # the one layout, its run kind
                "cells": [{"key": r["key"], "result": json.loads(r["result"]), "seconds": r["seconds"],
                           "finished": r["finished"]} for r in rows]}

    def import_run(self, data: dict) -> str:
        """Store an exported run (``format`` 1 with ``kind`` "run", or the older ``explanation-workbench-run/1``);
        returns its id."""
        if not is_run_document(data):
            hint = (" It holds explanations of one input: read it with `workbench.load(FILE)`."
                    if isinstance(data, dict) and data.get("kind", KIND_EXPLANATIONS) == KIND_EXPLANATIONS
                    and "explanations" in data else "")
            raise ValueError(f"Not an exported run (expected format '{FORMAT}' with kind '{KIND_RUN}', or "
                             f"'{LEGACY_RUN_FORMAT}').{hint}")
        run = data["run"]
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO runs (id, kind, title, config, status, total, created, updated, meta) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (run["id"], run["kind"], run.get("title", ""), json.dumps(run["config"]), run["status"],
                        run["total"], run["created"], time.time(), json.dumps(run.get("meta", {}))))
            for cell in data["cells"]:
                db.execute("INSERT OR REPLACE INTO cells (run_id, key, result, seconds, finished) VALUES (?, ?, ?, ?, ?)",
                           (run["id"], cell["key"], json.dumps(cell["result"]), cell.get("seconds"), cell["finished"]))
        return run["id"]


class CellsReadOnce(ResultStore):
    """The same store with each run's cells read once: the tables of one finished run (its summary, the plausibility
    binarization, per-example values, random orderings, ERASER's and micro F1's tables) each read every cell, so
    ``cli.py evaluate`` reads a finished run through this. A cell written through it is read again next time."""

    def __init__(self, path: Path | str | None = None):
        super().__init__(path)
        self._read: dict[str, dict[str, dict]] = {}

    def cells(self, run_id: str) -> dict[str, dict]:
        if run_id not in self._read:
            self._read[run_id] = super().cells(run_id)
        return self._read[run_id]

    def put_cell(self, run_id: str, key: str, result: dict, seconds: float | None = None) -> None:
        self._read.pop(run_id, None)
        super().put_cell(run_id, key, result, seconds)
