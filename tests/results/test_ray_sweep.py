"""A sweep through Hydra's Ray launcher on a local Ray instance writes its rows to the store.

Slow (a local Ray instance starts: ~30 s on a quiet 2-core machine, over a minute under load):
run with ``make test-all`` or ``pytest -m slow tests/results/test_ray_sweep.py``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ecngym.results import ResultStore


@pytest.mark.slow
def test_ray_launcher_sweep_on_a_local_ray_instance(tmp_path):
    env_without_cluster = {k: v for k, v in __import__("os").environ.items() if k != "RAY_ADDRESS"}
    run = subprocess.run([sys.executable, "-m", "ecngym", "eval", "-m", "sweep=ray",
                          "controller=static_dcqcn,static_hpcc", "seed=1,2", "env.kwargs.episode_steps=10",
                          "hydra.launcher.ray.init.address=local",  # a new instance, never another job's cluster
                          "+hydra.launcher.ray.init.num_cpus=2",
                          "hydra.launcher.ray.init.object_store_memory=100000000",
                          f"results.dir={tmp_path / 'store'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env_without_cluster)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "_run_job pid=" in run.stdout + run.stderr  # the jobs ran as Ray tasks
    rows = ResultStore(tmp_path / "store").episodes()
    assert len(rows) == 4 and rows["row_id"].is_unique
    assert rows.groupby("seed")["trace_hash"].nunique().tolist() == [1, 1]
    assert sorted(rows["controller"].unique()) == ["static_dcqcn", "static_hpcc"]
