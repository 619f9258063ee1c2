"""``ecngym train agent=acc framework=rllib ray.address=...`` joins an existing two-node Ray cluster.

The README's cluster recipe, on one machine: a head node with one CPU and a worker node with two
(``ray.cluster_utils.Cluster``, each node its own raylet as ``ray start`` would run it), then the
CLI run as a separate process joining by address. Two env runners of one CPU each cannot both fit
on the head, so the run only finishes if Ray placed a runner on the worker node.

Slow (two raylets start: ~30 s on a quiet 2-core machine): ``make test-all`` or
``pytest -m slow tests/agents/test_ray_cluster.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def _cluster(monkeypatch, worker_cpus: int):
    from ray.cluster_utils import Cluster

    # No token authentication: with a token in ~/.ray, Ray >= 2.5x turns it on for a new head,
    # and this test must not depend on (or write) the user's token. The README says how to
    # carry the token to real worker nodes.
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 100_000_000})
    if worker_cpus:
        cluster.add_node(num_cpus=worker_cpus, object_store_memory=100_000_000)
    cluster.wait_for_nodes()
    return cluster


@pytest.fixture
def two_node_cluster(monkeypatch):
    cluster = _cluster(monkeypatch, worker_cpus=2)
    yield cluster
    cluster.shutdown()


@pytest.fixture
def head_only_cluster(monkeypatch):
    cluster = _cluster(monkeypatch, worker_cpus=0)
    yield cluster
    cluster.shutdown()


def _train(address: str, run_dir, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ecngym", "train", "agent=acc", "framework=rllib",
                           f"ray.address={address}", "agent.rllib.num_env_runners=2",
                           "agent.rllib.rollout_fragment_length=5", "agent.rllib.train_batch_size=16",
                           "total_timesteps=40", "agent.hyperparams.learning_starts=20",  # (RLlib: env steps)
                           "env.kwargs.episode_steps=10", "progress_bar=false",
                           f"hydra.run.dir={run_dir}"],
                          cwd=cwd, capture_output=True, text=True, timeout=300, env=dict(os.environ))


def test_rllib_training_joins_an_existing_cluster_and_uses_its_worker_node(two_node_cluster, tmp_path):
    run_dir = tmp_path / "run"
    run = _train(two_node_cluster.address, run_dir, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Connecting to existing Ray cluster" in run.stderr, run.stderr[-3000:]  # joined, did not start its own
    assert (run_dir / "rllib_checkpoint").is_dir()
    rows = (run_dir / "curve.csv").read_text().splitlines()
    assert len(rows) >= 2  # header + at least one training iteration


def test_more_runners_than_the_cluster_has_cpus_is_a_clear_error_not_a_hang(head_only_cluster, tmp_path):
    run = _train(head_only_cluster.address, tmp_path / "run", tmp_path)
    assert run.returncode != 0
    assert "agent.rllib.num_env_runners" in run.stderr and "got 2" in run.stderr and "1 CPUs" in run.stderr, \
        run.stderr[-3000:]
