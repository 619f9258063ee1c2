"""The full-suite recipe on a two-node local Ray cluster: a reduced suite trained and scored, then a worker killed.

docs/tutorials/train-on-a-cluster.md's recipe on one machine: a head node and a worker node of one
CPU each (``ray.cluster_utils.Cluster``: each node its own raylet, as ``ray start`` runs it), and
``ecngym run -m sweep=ray suite=... train=true`` joining by address, one Hydra job (one Ray task)
per training run, every job writing to one checkpoint folder and one results store. The suite is
reduced: the fixture scenario ``tiny_incast`` (40-step episodes) with a training protocol of tiny
budgets (:data:`TRAINING`), 2 learners, 2 test seeds.

1. The first sweep (2 learners x training seed 0) finishes: every run's checkpoint folder is
   complete, every (run x test seed) has its row, and the two jobs ran on both nodes.
2. A second sweep (2 learners x training seeds 1, 2) is killed mid-way: the worker node is removed
   (its raylet and task processes killed) and the driver is killed, once one of its runs has
   finished and another is still training. Nothing finished before is lost or redone: the rerun
   trains exactly the runs that had not finished, scores exactly the episodes that were missing,
   and leaves the earlier checkpoints and rows as they were.

The cluster is stopped by its own handle (its processes only: ``ray stop --force`` would kill every
Ray process of the machine, other users' too).

Slow (a cluster starts, 10 short trainings): ``pytest -m slow tests/benchmark/test_train_cluster.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ecngym.benchmark.training_runs import DONE_FILE, PARTIAL
from ecngym.results import ResultStore

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
AGENTS = ("dqn", "ppo")
TEST_SEEDS = 2
#: The reduced training protocol: 120 env steps, hyperparameters that fit it (PPO's default rollout is
#: 2048 steps, DQN's warm-up 100 transitions, ACC's 1000).
TRAINING = {"budget_steps": 120, "seeds": [0, 1, 2],
            "agents": {"acc": {"source": "test", "hyperparams": {"hyperparams": {"learning_starts": 40}}},
                       "laecn": {"source": "test"}, "haecn": {"source": "test"},
                       "ppo": {"source": "test", "hyperparams": {"n_steps": 60, "batch_size": 30}},
                       "dqn": {"source": "test", "hyperparams": {"learning_starts": 40}}}}


@pytest.fixture
def scenario_dir(tmp_path):
    """The fixture scenario with the reduced training protocol."""
    data = yaml.safe_load((HERE / "scenarios" / "tiny_incast.yaml").read_text())
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "tiny_incast.yaml").write_text(yaml.safe_dump({**data, "training": TRAINING}))
    return folder


@pytest.fixture
def cluster(monkeypatch):
    from ray.cluster_utils import Cluster

    # no token authentication (Ray >= 2.5x turns it on where ~/.ray holds a token; the docs say how
    # to carry it to real nodes) and never another job's cluster
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 100_000_000})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=100_000_000)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def _sweep(cluster, tmp: Path, seeds: str, name: str) -> subprocess.Popen:
    args = [sys.executable, "-m", "ecngym", "run", "-m", "sweep=ray", "suite.scenarios=[tiny_incast]",
            f"suite.test_seeds={TEST_SEEDS}", f"benchmark.scenario_dir={tmp / 'scenarios'}", "train=true",
            f"benchmark.agent={','.join(AGENTS)}", f"benchmark.train_seed={seeds}",
            f"benchmark.checkpoint_dir={tmp / 'checkpoints'}",
            f"results.dir={tmp / 'store'}", f"hydra.launcher.ray.init.address={cluster.address}",
            f"hydra.sweep.dir={tmp / name}"]
    log = (tmp / f"{name}.log").open("w")
    return subprocess.Popen(args, cwd=tmp, stdout=log, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ), start_new_session=True)


def _finished(tmp: Path) -> dict[str, dict]:
    return {str(p.parent.relative_to(tmp / "checkpoints")): json.loads(p.read_text())
            for p in (tmp / "checkpoints").glob(f"*/*/*/{DONE_FILE}")}


def _rows(tmp: Path) -> dict[str, str]:
    if not (tmp / "store").exists():
        return {}
    rows = ResultStore(tmp / "store").episodes()
    return dict(zip(rows["row_id"], rows["created_at"].astype(str), strict=True))


def _wait(proc: subprocess.Popen, tmp: Path, name: str, timeout_s: float = 900) -> None:
    try:
        proc.wait(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, (tmp / f"{name}.log").read_text()[-4000:]


def test_a_reduced_suite_trains_on_two_nodes_and_a_killed_worker_loses_nothing(cluster, scenario_dir, tmp_path):
    started = time.perf_counter()
    # 1. the reduced suite, one training seed: two jobs on two one-CPU nodes
    _wait(_sweep(cluster, tmp_path, "0", "first"), tmp_path, "first")
    log = (tmp_path / "first.log").read_text()
    assert "_run_job pid=" in log  # the jobs ran as Ray tasks
    first = _finished(tmp_path)
    assert sorted(first) == [f"tiny_incast/{a}/seed0" for a in sorted(AGENTS)]
    assert len({r["ray_node"] for r in first.values()}) == 2, first  # one job on each node
    rows = _rows(tmp_path)
    assert len(rows) == len(AGENTS) * TEST_SEEDS

    # 2. a second sweep, killed once one of its runs has finished and another is training
    proc = _sweep(cluster, tmp_path, "1,2", "second")
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and proc.poll() is None:
        done = set(_finished(tmp_path)) - set(first)
        training = list((tmp_path / "checkpoints").glob(f"*/*/.seed*{PARTIAL}*"))
        if done and training:
            break
        time.sleep(0.5)
    assert proc.poll() is None, "the second sweep ended before a worker could be killed mid-way"
    worker = next(node for node in cluster.list_all_nodes() if not node.head)
    cluster.remove_node(worker, allow_graceful=False)  # the worker node dies: its raylet and its task
    os.killpg(proc.pid, signal.SIGKILL)  # and the driver: the head's task ends with it
    proc.wait()
    time.sleep(2)
    before_rerun = _finished(tmp_path)
    rows_before_rerun = _rows(tmp_path)
    missing = {f"tiny_incast/{a}/seed{k}" for a in AGENTS for k in (1, 2)} - set(before_rerun)
    assert missing, "every run had finished: nothing was killed mid-way"
    assert all(rows_before_rerun.get(k) == v for k, v in rows.items())  # the first sweep's rows are all there

    # 3. the rerun (the worker node back) completes only what is missing
    cluster.add_node(num_cpus=1, object_store_memory=100_000_000)
    cluster.wait_for_nodes()
    _wait(_sweep(cluster, tmp_path, "1,2", "rerun"), tmp_path, "rerun")
    after = _finished(tmp_path)
    assert sorted(after) == sorted(f"tiny_incast/{a}/seed{k}" for a in AGENTS for k in (0, 1, 2))
    assert {k: after[k] for k in before_rerun} == before_rerun  # no finished checkpoint trained again
    assert {k for k in after if after[k] != before_rerun.get(k)} == missing  # exactly the missing ones trained
    rows_after = _rows(tmp_path)
    assert len(rows_after) == len(AGENTS) * 3 * TEST_SEEDS
    assert all(rows_after[k] == v for k, v in rows_before_rerun.items())  # no stored episode played again
    print(f"two-node cluster test: {time.perf_counter() - started:.0f} s; killed with {len(missing)} of 4 runs "
          f"unfinished and {len(rows_before_rerun) - len(rows)} of 8 new rows stored")
