"""The prompt-revision notebook runs top to bottom and is committed without outputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "prompt_revision.ipynb"


def test_committed_notebook_has_no_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    for cell in code:
        assert cell.outputs == [], cell.source[:60]
        assert cell.execution_count is None


@pytest.mark.integration
def test_notebook_executes_against_the_local_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kernelspec pointing at this interpreter, so the kernel sees the installed citecal.
    subprocess.run(
        [sys.executable, "-m", "ipykernel", "install", "--prefix", str(tmp_path / "jupyter"),
         "--name", "citecal-test", "--display-name", "citecal test"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter" / "share" / "jupyter"))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        nb,
        kernel_name="citecal-test",
        timeout=300,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    streams = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    images = sum(
        "image/png" in o.get("data", {})
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "86 records, 237 annotations, 3 annotators, 8 reports" in streams
    assert "Judge vs humans" in streams
    assert "rejudged 86 record(s)" in streams and "verdict(s) changed" in streams
    assert "McNemar exact p" in streams
    assert "v2 significantly better: True | significantly worse: False" in streams
    assert "kept: edit-2" in streams and "v1-aligned.md (edit-2)" in streams
    assert "aligned prompt vs v1: weighted κ 0.404 -> 0.522" in streams
    assert "significantly better: True" in streams
    assert images >= 7
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]  # fmt: skip
    assert not errors
