"""One JSON layout for the command line, the app and the library: each writes format
"explanation-workbench/1", valid against the schema in the repository, and each reads back with the same scores."""
from __future__ import annotations

import json

import jsonschema
from conftest import ROOT

import cli
import workbench as wb
from explainers.export import read_document, scores_json

SCHEMA = json.loads((ROOT / "assets" / "schema" / "explanation-workbench-1.json").read_text())
TEXT = "the film was excellent"


def test_cli_app_and_library_write_the_same_versioned_layout(keyword_classifier, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    assert cli.main(["explain", "--model", str(folder), "--text", TEXT, "--methods", "saliency,leave_one_out",
                     "--no-cache", "--json"]) == 0
    from_cli = json.loads(capsys.readouterr().out)
    library = wb.explain(wb.load_model(str(folder)), TEXT, methods=["saliency", "leave_one_out"])
    from_app = json.loads(scores_json(list(library), context=library.context))  # the app's export button
    from_library = library.to_dict()
    for document in (from_cli, from_app, from_library):
        jsonschema.validate(json.loads(json.dumps(document, default=str)), SCHEMA)
        read = read_document(document)
        assert read.format == "explanation-workbench/1" and read.context["text"] == TEXT
        assert [e.word_scores.tobytes() for e in read.explanations] == [e.word_scores.tobytes() for e in library]
    assert set(from_app) <= set(from_cli)  # the command line adds its own fields to the common ones
