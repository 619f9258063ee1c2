"""A learning agent is found by name: a tiny agent registered here trains and plays through the same path.

The agent is one class of config, one trainer and one controller, tied by an ``AgentKind`` and
registered with its YAML; ``train_agent`` and ``learned_controller`` then serve it as they serve
ACC and LAECN (no list of agents to extend).
"""

import json

import numpy as np
import pytest

from ecngym.agents import learned_controller, train_agent
from ecngym.agents.config import agent_config
from ecngym.agents.controller import LearnedController
from ecngym.agents.registry import AgentKind, agent_kind, agent_names, register_agent
from ecngym.agents.saved_run import save_agent_meta
from ecngym.agents.training_run import start_training
from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, OneOf, Whole

CALLS = []


class BestTemplateConfig(ConfigModel):
    """The tiny agent's YAML."""

    name: OneOf("best_template")
    granularity: OneOf("port", "switch")
    env: dict
    template: Whole(0, 64)


def train_best_template(base_env, agent, out_dir, *, timesteps, seed, progress_bar, checkpoint_every, resume, device,
                        threads):
    """'Trains' by playing its configured template; writes the run as every trainer does."""
    import gymnasium as gym

    import ecngym.envs  # noqa: F401

    CALLS.append("train")
    timesteps, seed, _, _, out_dir, env_cfg = start_training(base_env, agent, out_dir, timesteps=timesteps, seed=seed,
                                                            checkpoint_every=checkpoint_every, threads=threads)
    env = gym.make("ecngym/RoceIncast-v0", **env_cfg.as_dict())
    _, info = env.reset(seed=seed)
    n_ports = len(info["ports"])
    rewards = [float(env.step(np.full(n_ports, agent["template"]))[1]) for _ in range(timesteps)]
    env.close()
    (out_dir / "curve.csv").write_text(f"episode,env_steps,episode_return\n0,{timesteps},{sum(rewards)}\n")
    save_agent_meta(out_dir, {"agent": agent["name"], "framework": "numpy", "granularity": agent["granularity"],
                              "env": agent["env"], "env_config": env_cfg.as_dict(), "seed": seed,
                              "n_actions": int(env.action_space.nvec[0]), "template": agent["template"],
                              "episodes": [{"seed": seed, "trace_hash": info["trace_hash"]}]})
    return out_dir / "agent.json"


class BestTemplateController(LearnedController):
    """Plays the template of the run."""

    name = "best_template"

    def decide(self, obs, info):
        """The run's template for every agent."""
        self.inference.decisions += len(obs)
        return np.full(len(obs), self.meta["template"])


TINY_KIND = AgentKind(config=BestTemplateConfig, trainers={"sb3": train_best_template},
                      controller=BestTemplateController)


@pytest.fixture
def best_template(tmp_path, monkeypatch):
    from ecngym.agents import registry

    monkeypatch.setattr(registry, "_REGISTERED", {})  # registered for this test only
    (tmp_path / "best_template.yaml").write_text(
        "name: best_template\ngranularity: port\ntemplate: 2\n"
        "env:\n  action: {scope: port}\n"
        "  observation: {features: [queue, utilization], history: 1, queue_mapping: linear}\n")
    register_agent("best_template", TINY_KIND, tmp_path / "best_template.yaml")
    return "best_template"


def test_a_registered_agent_trains_and_plays_through_the_same_path(tiny_env, tmp_path, best_template):
    from ecngym.agents.learning import evaluate

    assert best_template in agent_names() and agent_kind(best_template) is TINY_KIND
    agent = agent_config(best_template, {"template": 1})  # its YAML, validated by its own model
    assert agent["template"] == 1
    with pytest.raises(ConfigError, match=r"^agent.template: "):
        agent_config(best_template, {"template": 65})
    with pytest.raises(ConfigError, match=r"^framework: got 'rllib'; best_template trains with framework in \['sb3'\]"):
        train_agent(tiny_env, agent, tmp_path / "run", framework="rllib", timesteps=3, seed=0, progress_bar=False)
    CALLS.clear()
    train_agent(tiny_env, agent, tmp_path / "run", timesteps=3, seed=0, progress_bar=False)
    assert CALLS == ["train"] and json.loads((tmp_path / "run" / "agent.json").read_text())["template"] == 1

    controller = learned_controller(best_template, str(tmp_path / "run"))
    assert isinstance(controller, BestTemplateController)
    figures = evaluate(controller, tiny_env, [1000])
    assert figures["episodes"][0]["seed"] == 1000 and figures["episodes"][0]["steps"] == tiny_env["episode_steps"]
    assert figures["decisions"] == tiny_env["episode_steps"] * 6  # 6 port agents
    # the run's own trace is refused, as for every learned controller
    with pytest.raises(ConfigError, match=r"^seed: the episode's trace .* was a training trace"):
        evaluate(learned_controller(best_template, str(tmp_path / "run")), tiny_env, [0])


def test_an_agent_of_ecngyms_own_cannot_be_replaced(tmp_path):
    (tmp_path / "acc.yaml").write_text("name: acc\n")
    with pytest.raises(ConfigError, match=r"^agent: got 'acc'; give a new agent's name"):
        register_agent("acc", TINY_KIND, tmp_path / "acc.yaml")
    assert agent_kind("acc").controller.__name__ == "AccController"


def test_every_shipped_agent_yaml_names_its_kind():
    from ecngym.agents.acc import ACC
    from ecngym.agents.laecn import LAECN

    assert {n: agent_kind(n) for n in ("acc", "laecn", "haecn")} == {"acc": ACC, "laecn": LAECN, "haecn": LAECN}
