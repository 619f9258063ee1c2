"""EnvView: what controllers read of an env (and of a parallel env), from the scenario it describes."""

import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import ecngym
import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.envs.multi_agent import EcnTuningParallelEnv, agent_port_rows
from ecngym.envs.view import EnvView
from ecngym.units import parse_bytes


@pytest.mark.parametrize("env_id", ["ecngym/RoceIncast-v0", "ecngym/DctcpLeafSpine-v0"])
def test_the_view_reports_the_scenarios_ports_actions_and_packets(env_id):
    env = gym.make(env_id)
    try:
        sc = env.unwrapped.scenario
        view = EnvView(env)  # before reset: the scenario alone
        table = sc.topology.port_table()
        assert np.array_equal(view.port_peers, table["peer"][sc.ports])
        assert np.array_equal(view.port_to_host, table["peer"][sc.ports] < sc.topology.num_hosts)
        assert np.array_equal(view.port_rates_bps, np.repeat(sc.topology.rate_bps, 2)[sc.ports])
        assert view.action_templates == list(sc.actions.templates) and len(view.action_templates) > 1
        assert view.action_templates[view.static_action_index] == view.static_setting
        assert view.observation_history == sc.features.history
        cfg = sc.fabric_config
        assert view.packet_bytes == parse_bytes(cfg.mtu_payload) + parse_bytes(cfg.data_header) > 1000
        assert view.buffer_bytes == cfg.buffer.buffer > view.packet_bytes
        assert view.action_space is env.unwrapped.action_space
        assert {k: v.tolist() for k, v in view.agent_rows("switch").items()} == {
            k: v.tolist() for k, v in agent_port_rows(sc, "switch").items()}
    finally:
        env.close()


def test_a_parallel_env_has_the_same_view_of_its_scenario():
    par = EcnTuningParallelEnv({"episode_steps": 4}, agent_granularity="port")
    try:
        view = EnvView(par)
        assert view.static_action_index == par.scenario.actions.static_index
        assert view.action_space is par.scenario.actions.space
        assert list(view.agent_rows("port")) == par.possible_agents
    finally:
        par.close()


def test_controllers_agents_and_reproductions_read_the_env_through_the_view_only():
    # baselines/, agents/ and reproduce/ reach no env's scenario (EnvView is their one way in)
    root = Path(ecngym.__file__).parent
    reads = [f"{p.relative_to(root)}:{n}" for d in ("baselines", "agents", "reproduce") for p in (root / d).glob("*.py")
             for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\.scenario\b(?!\s+import)", line)]
    assert reads == []
    # nor do the benches, the benchmark and the commands (their ``.scenario`` attributes are a job's or
    # a run's scenario name, so only a read through the env counts)
    reads = [f"{p.relative_to(root)}:{n}" for d in ("perf", "benchmark", "commands", "results")
             for p in (root / d).glob("*.py") for n, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"unwrapped\.scenario\b", line)]
    assert reads == []


def test_the_view_gives_the_episodes_trace_hash_and_the_profilers_hooks():
    env = gym.make("ecngym/RoceIncast-v0", episode_steps=3)
    try:
        view = EnvView(env)
        assert view.trace_hash is None  # no episode yet
        _, info = env.reset(seed=5)
        assert view.trace_hash == info["trace_hash"] and view.sim_wall_s == 0.0
        env.step(env.unwrapped.static_action())
        assert view.sim_wall_s > 0.0
        parts = view.step_parts()
        assert set(parts) == {"fabric", "kernel", "scenario"}
        assert parts["kernel"] is env.unwrapped.scenario.step_kernel is not None
        assert parts["fabric"] is env.unwrapped.scenario.fabric
        env.reset(seed=6)  # a new episode: a new fabric and trace, the same view
        assert view.trace_hash == env.unwrapped.scenario.trace.hash
        assert view.step_parts()["fabric"] is not parts["fabric"]
    finally:
        env.close()
