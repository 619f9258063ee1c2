"""The notebooks in ``notebooks/`` run top to bottom on the installed package and show their results."""

from __future__ import annotations

import os
import re
from pathlib import Path
from unittest import mock

import nbclient
import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def _execute(name: str, tmp_path: Path) -> tuple[str, int]:
    """Run a notebook; return its printed text and how many figures it drew.

    The kernel's temporary directory is ``tmp_path`` (``$TMPDIR``), so the demo stores the notebooks
    make there go with the test's directory instead of piling up in the machine's ``/tmp``.
    """
    nb = nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)
    with mock.patch.dict(os.environ, {"TMPDIR": str(tmp_path)}):
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [out for c in nb.cells if c.cell_type == "code" for out in c.get("outputs", [])]
    text = "".join(out.get("text", "") + out.get("data", {}).get("text/plain", "") for out in outputs)
    return text, sum("image/png" in out.get("data", {}) for out in outputs)


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "compare_controllers", "leaderboard", "training_curves"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    # executed outputs belong to the reader's run, not to the repository
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_quickstart_runs_and_every_flow_finishes(tmp_path):
    text, figures = _execute("quickstart", tmp_path)
    finished = re.findall(r"(\d+)/(\d+) flows finished", text)
    assert len(finished) == 2
    assert all(done == total and int(total) > 0 for done, total in finished)
    assert figures == 1  # the queue / slowdown figure
    assert re.search(r"return -?\d+\.\d+ over 20 steps", text)


def test_compare_controllers_reads_a_sweep_from_the_store_on_identical_traces(tmp_path):
    text, figures = _execute("compare_controllers", tmp_path)
    assert len(list(tmp_path.glob("ecngym-store-*"))) == 1  # its demo store, in the test's directory
    assert "1 scenario(s), 6 episodes" in text and ": 3 controllers, 6 episodes" in text
    assert "identical traces for every (scenario, seed): True" in text
    assert figures == 1


def test_leaderboard_notebook_ranks_the_store(tmp_path):
    text, figures = _execute("leaderboard", tmp_path)
    assert len(list(tmp_path.glob("ecngym-store-*"))) == 1  # its demo store, in the test's directory
    assert "1 ranking(s)" in text and "rows ranked: 6" in text
    assert all(name in text for name in ("static_dcqcn", "static_hpcc", "static_vendor"))
    assert figures == 1


def test_training_curves_notebook_plots_every_training_run(tmp_path):
    text, figures = _execute("training_curves", tmp_path)
    assert len(list(tmp_path.glob("ecngym-store-*"))) == 1  # its demo store, in the test's directory
    assert "2 training runs" in text
    # an SB3 curve has one point per episode: 160 steps / 16 per episode
    assert len(re.findall(r"sb3_ppo seed \d: 10 points, last episode_return", text)) == 2
    assert figures == 1


def test_learner_curves_plots_every_shipped_scenario(tmp_path):
    text, figures = _execute("learner_curves", tmp_path)
    assert re.search(r"(\d+) scenarios with checkpoints", text) and figures == 1
    assert "training seeds, last reward" in text


def test_learner_curves_plots_the_validation_curves_of_tier_runs(tmp_path):
    import pandas as pd

    # rows of the shape a tier run writes (benchmark.validation), made up here: this checks the plot, not a learner
    for seed, level in ((1, 0.2), (2, 0.4)):
        folder = tmp_path / "outputs" / "checkpoints" / "100k" / "tiny" / "dqn" / f"seed{seed}"
        folder.mkdir(parents=True)
        pd.DataFrame({"env_steps": [5000, 10000], "score_mean": [3.0, 2.0],
                      "normalized_mean": [level, level + 0.1]}).to_csv(folder / "validation.csv", index=False)
    laecn = tmp_path / "outputs" / "checkpoints" / "100k" / "tiny" / "laecn" / "seed1"
    laecn.mkdir(parents=True)
    pd.DataFrame({"env_steps": [5012, 10040], "score_mean": [3.0, 2.0],
                  "normalized_mean": [0.5, 0.6]}).to_csv(laecn / "validation.csv", index=False)
    text, figures = _execute("learner_curves", tmp_path)
    assert "validation curves: 3 runs under outputs/checkpoints/100k" in text and figures == 2
    assert "tiny dqn: 2 training seeds, validation score 0.400 at 10000 env steps" in text
    assert "tiny laecn: 1 training seeds, validation score 0.600 at 10000 env steps" in text
