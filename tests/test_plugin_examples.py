"""Adding a plug-in: the worked examples under ``tests/plugin_examples/``, each exactly the files it adds.

``tests/structure_counts.py`` prints how many files each example is ("files a new plug-in adds");
these tests show that those files are all it takes: a learning agent that trains and plays through
``ecngym.agents`` (one module and its YAML, no list of agents to extend), and a scenario that the
suite reads and the benchmark runner plays (one YAML, listed by its suite).
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from ecngym.error import ConfigError

EXAMPLES = Path(__file__).resolve().parent / "plugin_examples"

#: The tiny env the toy agent trains on: 6 hosts on one switch (6 port agents), short episodes.
TINY_ENV = {"topology": {"kind": "incast_star", "hosts": 6, "link_rate": "100Gbps", "link_delay": "1us"},
            "workload": {"workload": "websearch", "load": 0.5,
                         "incast": {"degree": 4, "size": "64KB", "interval": "100us", "arrival": "poisson"}},
            "episode_steps": 12}


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix in (".py", ".yaml"))


def test_a_learning_agent_is_one_module_and_its_yaml(tmp_path, monkeypatch):
    from ecngym.agents import learned_controller, registry, train_agent
    from ecngym.agents.config import agent_config
    from ecngym.agents.learning import evaluate

    folder = EXAMPLES / "agent"
    assert _files(folder) == ["toy.yaml", "toy_agent.py"]
    monkeypatch.setattr(registry, "AGENT_DIR", folder)  # the folder stands for configs/agent
    monkeypatch.syspath_prepend(str(folder))  # and for the module's package
    assert registry.agent_names() == ["toy"]
    agent = agent_config("toy", {"template": 1})  # the YAML, validated by the agent's own model
    with pytest.raises(ConfigError, match=r"^agent.template: "):
        agent_config("toy", {"template": 65})
    train_agent(TINY_ENV, agent, tmp_path / "run", timesteps=3, seed=0, progress_bar=False)
    assert json.loads((tmp_path / "run" / "agent.json").read_text())["template"] == 1
    controller = learned_controller("toy", str(tmp_path / "run"))
    figures = evaluate(controller, TINY_ENV, [1000])
    assert figures["decisions"] == TINY_ENV["episode_steps"] * 6  # 6 port agents, every step
    with pytest.raises(ConfigError, match=r"^seed: the episode's trace .* was a training trace"):
        evaluate(learned_controller("toy", str(tmp_path / "run")), TINY_ENV, [0])


def test_a_learning_agent_reaches_the_suite_board_by_its_module_and_yaml_alone(tmp_path, monkeypatch):
    """No scenario, tier or benchmark file lists the toy: it is planned, trained, shipped and played as a learner."""
    import numpy as np
    import yaml

    from ecngym.agents import registry
    from ecngym.benchmark.checkpoints import CheckpointController, load_card
    from ecngym.benchmark.runner import BenchmarkOptions
    from ecngym.benchmark.suite import load_scenario, load_suite
    from ecngym.benchmark.tiers import resolve_tier
    from ecngym.benchmark.training import train_run
    from ecngym.benchmark.training_runs import learner_name, plan_training

    folder, fixture = EXAMPLES / "agent", Path(__file__).resolve().parent / "benchmark" / "learners"
    scenarios = tmp_path / "scenarios"  # the tiny fixture scenario (it lists acc ... dqn only), with validation seeds
    scenarios.mkdir()
    data = yaml.safe_load((fixture / "tiny_learn.yaml").read_text())
    data["protocol"]["validation_seeds"] = [301, 302]
    (scenarios / "tiny_learn.yaml").write_text(yaml.safe_dump(data))
    (scenarios / "tiny_learn_suite.yaml").write_text((fixture / "tiny_learn_suite.yaml").read_text())
    monkeypatch.setattr(registry, "_REGISTERED", {})
    monkeypatch.syspath_prepend(str(folder))
    import toy_agent

    registry.register_agent("toy", toy_agent.KIND, folder / "toy.yaml")  # (as a package outside ecngym would)
    assert registry.learner_names()[-3:] == ["toy", "dqn", "ppo"]
    suite = load_suite(scenarios / "tiny_learn_suite.yaml", scenarios)
    runs = plan_training(suite, BenchmarkOptions.parse({"scenario_dir": str(scenarios)}, "benchmark"), tmp_path)
    toy = [r for r in runs if r.agent == "toy"]
    assert [(r.scenario, r.seed, learner_name(r.agent, r.seed)) for r in toy] == [("tiny_learn", 1, "toy_seed1")]
    assert len(runs) == len(registry.learner_names())  # one training seed each
    plan = resolve_tier(load_scenario("tiny_learn", scenarios), "toy", "100k")  # the tiers file does not list it
    assert plan.n_envs == 1 and plan.hyperparams == {} and "defaults" in plan.source

    out = train_run("tiny_learn", "toy", 1, tmp_path / "toy", progress=False, scenario_dir=scenarios)
    _, card = load_card(out)
    assert card["agent"] == "toy" and "defaults" in card["hyperparams_source"]
    assert set(card["trace_hashes"]) == {"101", "102"}  # it trained on the scenario's train seeds, in turn
    sc = load_scenario("tiny_learn", scenarios)
    controller = CheckpointController(out)  # the board's player of a shipped checkpoint
    env = gym.make(sc.id, **{**sc.env, **controller.env_overrides()})
    try:
        obs, info = env.reset(seed=1002)
        controller.reset(env)
        assert np.all(controller.act(obs, info) == 2)  # the YAML's template, on every port
    finally:
        env.close()


def test_a_scenario_is_one_yaml_that_its_suite_lists(tmp_path):
    from ecngym.benchmark.runner import BenchmarkOptions, plan_jobs, run_job
    from ecngym.benchmark.suite import load_suite

    folder = EXAMPLES / "scenario"
    assert _files(folder) == ["toy_incast.yaml", "toy_suite.yaml"]
    suite = load_suite(folder / "toy_suite.yaml", folder)
    assert list(suite.scenarios) == ["toy_incast"]

    def references(name: str) -> dict:  # (a shipped scenario's come from its references file, a command's output)
        return {"static_default": {"_target_": "ecngym.baselines.StaticEcnController", "setting": "env_default",
                                   "name": "static_default"}}

    jobs = plan_jobs(suite, {}, tmp_path / "store", tmp_path / "out", True, BenchmarkOptions(), references)
    assert [(j.scenario, j.controller, j.seeds) for j in jobs] == [("toy_incast", "static_default", [1001])]
    result = run_job(jobs[0])
    assert result.failure is None and len(result.row_ids) == 1
