"""Run exports in the one versioned layout: ``"format": "explanation-workbench/1"`` with ``"kind":
"run"``, valid against the schema in the repository; the older ``explanation-workbench-run/1`` files still import,
and each reader refuses the other kind with a message that says which reader to use."""
from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import ROOT

from evaluation.runs.store import ResultStore
from explainers.export import FormatError, read_document

SCHEMA = json.loads((ROOT / "assets" / "schema" / "explanation-workbench-1.json").read_text())
CELLS = {"0|saliency": {"values": {"comprehensiveness-eraser": 0.25}, "label": 1},
         "1|saliency": {"values": {"comprehensiveness-eraser": -0.5}, "label": 0}}


@pytest.fixture()
def store_with_a_run(tmp_path):
    store = ResultStore(tmp_path / "gpu.sqlite")
    run_id = store.create_run("evaluation", {"model": "m", "methods": ["saliency"]}, total=2, title="two cells",
                              meta={"provenance": {"seed": 0}})
    for key, result in CELLS.items():
        store.put_cell(run_id, key, result, seconds=0.5)
    store.set_status(run_id, "finished")
    return store, run_id


def exported(store, run_id) -> dict:
    return json.loads(json.dumps(store.export_run(run_id), default=str))  # what a downloaded file holds


def test_a_run_export_is_format_1_of_kind_run_and_follows_the_schema(store_with_a_run):
    store, run_id = store_with_a_run
    document = exported(store, run_id)
    assert (document["format"], document["kind"], document["run"]["kind"]) == ("explanation-workbench/1", "run",
                                                                               "evaluation")
    jsonschema.validate(document, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # the run branch of the schema is checked, not only the format
        jsonschema.validate({key: value for key, value in document.items() if key != "cells"}, SCHEMA)


@pytest.mark.parametrize("layout", ["format-1", "explanation-workbench-run/1"])
def test_new_and_old_run_exports_import_with_the_same_cells_and_run(store_with_a_run, tmp_path, layout):
    store, run_id = store_with_a_run
    document = exported(store, run_id)
    if layout != "format-1":  # a file written before the one layout
        document = {"format": layout, "run": document["run"], "cells": document["cells"]}
    laptop = ResultStore(tmp_path / "laptop.sqlite")
    assert laptop.import_run(document) == run_id
    assert laptop.cells(run_id) == store.cells(run_id) == dict(sorted(CELLS.items()))
    imported, original = laptop.get_run(run_id), store.get_run(run_id)
    assert {k: imported[k] for k in ("kind", "title", "config", "status", "total", "done", "meta")} == \
        {k: original[k] for k in ("kind", "title", "config", "status", "total", "done", "meta")}


def test_each_reader_refuses_the_other_kind_and_names_the_right_one(store_with_a_run, tmp_path):
    store, run_id = store_with_a_run
    with pytest.raises(FormatError, match="run export.*roar --import"):
        read_document(exported(store, run_id))
    explanations = {"format": "explanation-workbench/1", "kind": "explanations", "context": {}, "display": {},
                    "explanations": []}
    assert read_document(explanations).explanations == []
    with pytest.raises(ValueError, match=r"Not an exported run.*workbench\.load"):
        ResultStore(tmp_path / "other.sqlite").import_run(explanations)
    with pytest.raises(FormatError, match="kind 'report'"):
        read_document({**explanations, "kind": "report"})


def test_explanation_documents_of_format_1_written_before_the_kind_field_still_follow_the_schema():
    document = {"format": "explanation-workbench/1", "context": {}, "display": {"normalization": "none",
                                                                               "absolute": False},
                "explanations": []}
    jsonschema.validate(document, SCHEMA)
    assert read_document(document).format == "explanation-workbench/1"
    jsonschema.validate({**document, "kind": "explanations"}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "kind": "run"}, SCHEMA)  # a run must carry its run and cells
