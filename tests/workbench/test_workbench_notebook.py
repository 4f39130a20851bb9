"""The example notebook runs headless (nbclient) on the quick model, and shows a table and an image."""
from __future__ import annotations

import nbformat
import pytest
from conftest import ROOT
from nbclient import NotebookClient

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_the_example_notebook_runs_and_shows_a_table_and_an_image(quick_classifier, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    notebook = nbformat.read(ROOT / "docs" / "examples" / "quickstart.ipynb", as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                   ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("xw-row" in h for h in html)  # the heatmap
    assert any("<table" in h and "comprehensiveness" in h for h in html)  # the faithfulness table
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the figure
