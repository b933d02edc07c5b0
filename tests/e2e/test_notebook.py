"""notebooks/quickstart.ipynb runs top to bottom offline, with its own temporary data folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NOTEBOOK = REPO / "notebooks" / "quickstart.ipynb"


def _seeded(nb: Any, template: Path) -> Any:
    """Return the notebook with one cell added after the one making its data folder: it copies
    in the ingested textbook (and compiled model), so the ingest cell finds every file unchanged.

    The tests ingest the book into an empty store once a run (`ingested_template`, the same
    `ingest(store, [corpus])` call the notebook makes); doing it again here cost a minute.
    """
    import nbformat

    made = [i for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and "DATA_DIR = tempfile.mkdtemp" in cell.source]
    assert len(made) == 1, "the notebook no longer makes its data folder in one cell"
    seed = nbformat.v4.new_code_cell(
        "import shutil\n"
        f"shutil.copytree({str(template)!r}, DATA_DIR, dirs_exist_ok=True)")
    nb.cells.insert(made[0] + 1, seed)
    return nb


def test_quickstart_notebook_runs_without_errors(tmp_path: Path, ingested_template: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cell executes (its own asserts included) and the graph and tables are shown."""
    import nbclient
    import nbformat

    monkeypatch.setenv("LANGSMITH_TEST_TRACKING", "false")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("TEXTBOUND_ANSWERABILITY", "true")  # as a user runs it (conftest: off)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's mkdtemp lands here
    nb = _seeded(nbformat.read(NOTEBOOK, as_version=4), ingested_template)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError on the first failing cell

    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "flowchart" in text or "graph TD" in text  # the mermaid source
    assert "validate_grounding" in text and "refuse_" in text
    # the conversation section: a follow-up shown as the standalone question it was read as
    assert "understood as: What physics engines does Gazebo support?" in text
    html = [o["data"]["text/html"] for o in outputs
            if o.output_type == "display_data" and "text/html" in o.get("data", {})]
    assert any("refusal_reason" in h and "<table>" in h for h in html)  # the audit log table
    # the notebook deleted its temporary data folder when it finished
    assert not [p for p in os.listdir(tmp_path) if p.startswith("textbound-quickstart-")]
