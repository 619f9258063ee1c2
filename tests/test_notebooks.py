"""The notebooks in ``notebooks/`` run top to bottom on the installed package and show their results."""

from __future__ import annotations

import re
from pathlib import Path

import nbclient
import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _execute(path: Path, tmp_path: Path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(out["text"])
        parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    # executed outputs belong to the reader's run, not to the repository
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_quickstart_runs_and_every_flow_finishes(tmp_path):
    nb = _execute(NOTEBOOKS[[p.stem for p in NOTEBOOKS].index("quickstart")], tmp_path)
    text = "\n".join(_text(c) for c in nb.cells if c.cell_type == "code")
    finished = re.findall(r"(\d+)/(\d+) flows finished", text)
    assert len(finished) == 2
    assert all(done == total and int(total) > 0 for done, total in finished)
    # the queue / slowdown figure was drawn (a PNG in the outputs)
    assert any("image/png" in out.get("data", {}) for c in nb.cells for out in c.get("outputs", []))
    assert re.search(r"return -?\d+\.\d+ over 20 steps", text)
