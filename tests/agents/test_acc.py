"""ACC: Double DQN with one set of weights shared by every port agent (fast checks, tiny scenario)."""

import json

import gymnasium as gym
import numpy as np
import pytest
import torch as th

import ecngym.envs  # noqa: F401
from ecngym.agents.acc import AccController, make_shared_vec_env, train_acc
from ecngym.agents.config import agent_config, agent_env_config
from ecngym.agents.ddqn import DoubleDQN
from ecngym.error import ConfigError

FAST = {"hyperparams": {"learning_starts": 48, "buffer_size": 5000}}


def _model(tiny_env, seed=0, **hyperparams):
    agent = agent_config("acc", FAST)
    venv = make_shared_vec_env(agent_env_config({**tiny_env, "seed": seed}, agent["env"]), agent["granularity"])
    hyper = {**agent["hyperparams"], "exploration_fraction": 0.5, **hyperparams}
    return DoubleDQN("MlpPolicy", venv, seed=seed, device="cpu", **hyper), venv


def test_acc_trains_with_finite_loss_and_one_shared_set_of_weights(tiny_env, tmp_path):
    model, venv = _model(tiny_env)
    n_agents = venv.num_envs
    assert n_agents == 6  # one agent per controlled port of the 6-host star
    model.learn(total_timesteps=40 * n_agents)  # 240 transitions, ~30 gradient steps
    assert model._n_updates > 10
    assert np.isfinite(model.last_loss) and np.isfinite(model.last_q_mean)
    # one Q-network (and its target) serve every agent ...
    assert sum(1 for _ in model.policy.modules() if isinstance(_, th.nn.Linear)) == 10  # 5 layers x (net, target)
    # ... and its replay holds every agent's transitions, each from its own port
    buf = model.replay_buffer
    filled = buf.observations[: buf.pos]  # (steps, agents, obs)
    assert filled.shape[1] == n_agents and buf.pos == 40
    assert all(np.any(filled[:, i] != 0) for i in range(n_agents))
    assert len({filled[:, i].tobytes() for i in range(n_agents)}) == n_agents  # different ports, different data
    # save -> load -> identical greedy actions
    obs = filled[-1]
    model.save(tmp_path / "m.zip")
    venv.close()
    loaded = DoubleDQN.load(tmp_path / "m.zip", device="cpu")
    np.testing.assert_array_equal(model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0])
    with th.no_grad():
        np.testing.assert_array_equal(model.q_net(th.as_tensor(obs)).numpy(), loaded.q_net(th.as_tensor(obs)).numpy())


def test_overlapped_updates_run_while_the_fabric_simulates_and_keep_every_gradient_step(tiny_env):
    import threading

    from ecngym.agents.acc import shared_env

    steps = 30
    seq, venv = _model(tiny_env)
    seq.learn(total_timesteps=steps * venv.num_envs)
    venv.close()
    model, venv = _model(tiny_env, overlap_updates=True)
    shared = shared_env(venv)
    queued, concurrent, env_threads = [], [], set()
    updated = threading.Event()
    step_async, step_wait, update = shared.step_async, shared.step_wait, model.update

    def spy_async(actions):  # on the learner's thread
        queued.append(bool(model._deferred))
        updated.clear()
        step_async(actions)

    def spy_wait():  # a step with an update queued must see the update finish while it runs
        env_threads.add(threading.get_ident())
        if queued[-1]:
            concurrent.append(updated.wait(timeout=30))  # a sequential update would time out here
        return step_wait()

    def spy_update(*args, **kwargs):
        update(*args, **kwargs)
        updated.set()

    shared.step_async, shared.step_wait, model.update = spy_async, spy_wait, spy_update
    model.learn(total_timesteps=steps * venv.num_envs)
    venv.close()
    assert len(concurrent) > 10 and all(concurrent)
    assert threading.get_ident() not in env_threads
    assert model._n_updates == seq._n_updates and not model._deferred  # the last interval's update ran too
    assert np.isfinite(model.last_loss) and np.isfinite(model.last_q_mean)
    assert model.env is venv  # the thread wrapper is gone after learn
    # deterministic: the threads share no state and are joined every interval
    again, venv = _model(tiny_env, overlap_updates=True)
    again.learn(total_timesteps=steps * venv.num_envs)
    venv.close()
    for a, b in zip(model.q_net.state_dict().values(), again.q_net.state_dict().values(), strict=True):
        th.testing.assert_close(a, b, rtol=0, atol=0)


def test_double_q_target_uses_the_online_argmax_and_the_target_value(tiny_env):
    model, venv = _model(tiny_env)
    model.learn(total_timesteps=10 * venv.num_envs)
    venv.close()
    # make online and target nets disagree, then check one update's target by hand
    with th.no_grad():
        for p in model.q_net_target.parameters():
            p.add_(0.3 * th.randn_like(p))
    data = model.replay_buffer.sample(8)
    with th.no_grad():
        pick = model.q_net(data.next_observations).argmax(1, keepdim=True)
        expected = data.rewards + model.gamma * th.gather(model.q_net_target(data.next_observations), 1, pick)
        plain_max = data.rewards + model.gamma * model.q_net_target(data.next_observations).max(1, keepdim=True).values
    assert not th.allclose(expected, plain_max)  # the test can tell double-Q from max-Q
    captured = {}
    orig = th.nn.functional.mse_loss

    def spy(q, target):
        captured["target"] = target
        return orig(q, target)

    model.replay_buffer.sample = lambda *a, **k: data
    th.nn.functional.mse_loss = spy
    try:
        model.train(gradient_steps=1, batch_size=8)
    finally:
        th.nn.functional.mse_loss = orig
    th.testing.assert_close(captured["target"], expected)


def test_trained_run_plays_in_eval_with_identical_greedy_actions(tiny_env, tmp_path):
    agent = agent_config("acc", FAST)
    path = train_acc(tiny_env, agent, tmp_path, timesteps=30, seed=2, progress_bar=False)
    meta = json.loads((tmp_path / "agent.json").read_text())
    assert meta["episodes"] and np.isfinite(meta["last_loss"]) and (tmp_path / "curve.csv").is_file()
    ctrl = AccController(tmp_path)
    env = gym.make("ecngym/RoceIncast-v0", **{**tiny_env, **ctrl.env_overrides()})
    try:
        obs, info = env.reset(seed=12345)
        ctrl.reset(env)
        acts = ctrl.act(obs, info)
        model = DoubleDQN.load(path, device="cpu")
        expected = model.predict(ctrl.agent_observations(obs), deterministic=True)[0]
        np.testing.assert_array_equal(acts, expected)  # one row per port agent
        assert ctrl.inference.decisions == 6 and ctrl.inference.forward_passes == 6 and ctrl.inference.flops > 0
        # a training trace is refused
        trained_seed = meta["episodes"][0]["episode_seed"]
        info_train = {**info, "trace_hash": meta["episodes"][0]["trace_hash"]}
        with pytest.raises(ConfigError, match="seed"):
            ctrl.act(obs, info_train)
        assert trained_seed >= 0
    finally:
        env.close()


def test_acc_refuses_a_bad_granularity(tiny_env, tmp_path):
    with pytest.raises(ConfigError, match="agent.granularity"):
        train_acc(tiny_env, agent_config("acc", {"granularity": "queue"}), tmp_path, timesteps=5, seed=0,
                  progress_bar=False)


@pytest.mark.parametrize(("name", "override", "field"), [
    ("acc", {"hyperparams": {"gamma": 1.5}}, "agent.hyperparams.gamma"),
    ("acc", {"hyperparams": {"batch_size": 6.5}}, "agent.hyperparams.batch_size"),
    ("acc", {"hyperparams": {"lr": 0.1}}, "agent.hyperparams"),
    ("acc", {"online": {"timesteps": -1}}, "agent.online.timesteps"),
    # checked with the offline phase's config, not first when (and if) the online phase starts
    ("acc", {"online": {"timesteps": 0, "env": {"bogus": 1}}}, "agent.online.env.bogus"),
    ("acc", {"online": {"env": {"interval": "0rtt"}}}, "agent.online.env.interval"),
    ("acc", {"hyperparams": {"overlap_updates": 1}}, "agent.hyperparams.overlap_updates"),
    ("laecn", {"trigger_penalty": "high"}, "agent.trigger_penalty"),
    ("laecn", {"policy_net": [256, 0]}, "agent.policy_net"),
    ("haecn", {"decision_double_q": "no"}, "agent.decision_double_q"),
    ("laecn", {"env": {"interval_short": "0rtt"}}, "agent.env.interval_short"),
    ("dqn", {}, "agent"),
])
def test_agent_configs_are_validated_naming_the_field(name, override, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        agent_config(name, override)


@pytest.mark.parametrize(("name", "override", "message"), [
    # each was a raw OmegaConf error (UnsupportedValueType, ConfigTypeError), or accepted
    ("acc", {"hyperparams": {"policy_kwargs": {"net_arch": np.array([64, 64])}}},
     r"^agent\.hyperparams\.policy_kwargs\.net_arch: got array\(\[64, 64\]\): input should be a valid list"),
    ("acc", {"hyperparams": {"policy_kwargs": {"net_arch": []}}},
     r"^agent\.hyperparams\.policy_kwargs\.net_arch: got \[\]: list should have at least 1 item"),
    ("laecn", {"policy_net": []}, r"^agent\.policy_net: got \[\]: list should have at least 1 item"),
    ("haecn", {"decision_net": []}, r"^agent\.decision_net: got \[\]: list should have at least 1 item"),
    ("acc", {"hyperparams": {"batch_size": 200, "buffer_size": 100}},
     r"^agent\.hyperparams\.batch_size: got 200, allowed: at most buffer_size \(100\)"),
    ("laecn", {"batch_size": 65, "buffer_size": 64},
     r"^agent\.batch_size: got 65, allowed: at most buffer_size \(64\)"),
    ("laecn", {"policy_net": {"a": 1}}, r"^agent\.policy_net: got \{'a': 1\}: input should be a valid list"),
    # LAECN's warm-up counts replay rows: past buffer_size no module ever learned (losses stayed NaN)
    ("haecn", {"learning_starts": 64, "buffer_size": 32, "batch_size": 8},
     r"^agent\.learning_starts: got 64, allowed: at most buffer_size \(32\)"),
    ("acc", {"hyperparams": [1]}, r"^agent\.hyperparams: got \[1\]: input should be a valid dictionary"),
    ("laecn", [1, 2], r"^agent: expected a mapping of fields, got \[1, 2\]"),
    ("laecn", {"policy_net": "???"}, r"^agent\.policy_net: got '\?\?\?'"),  # was silently the YAML's value
    # was accepted: a "haecn" with LAECN's adaptive interval (or, with agent=laecn agent.name=acc, an
    # error about LAECN's fields being unknown to ACC)
    ("laecn", {"name": "haecn"}, r"^agent\.name: got 'haecn' for the agent 'laecn'; the name is not an override: "
                                 r"choose the agent with agent=haecn"),
])
def test_agent_config_overrides_of_any_type_get_an_error_naming_the_field(name, override, message):
    with pytest.raises(ConfigError, match=message):
        agent_config(name, override)


def test_agent_config_takes_numpy_numbers_and_tuples_as_their_values():
    # np.int64 / np.float64 were OmegaConf's UnsupportedValueType tracebacks
    cfg = agent_config("acc", {"hyperparams": {"batch_size": np.int64(32), "gamma": np.float64(0.5),
                                               "policy_kwargs": {"net_arch": (np.int64(32), 16)}}})
    h = cfg["hyperparams"]
    assert (h["batch_size"], h["gamma"], h["policy_kwargs"]["net_arch"]) == (32, 0.5, [32, 16])
    assert type(h["batch_size"]) is int and type(h["policy_kwargs"]["net_arch"][0]) is int
    assert agent_config("laecn", {"policy_net": [np.float64(8.0)], "buffer_size": 64, "learning_starts": 64})[
        "policy_net"] == [8]


_TRAIN_RLLIB = """
import json, pickle, sys
from pathlib import Path
import gymnasium as gym
import ray
import ecngym.envs
from ecngym.agents import train_agent
from ecngym.agents.acc import AccController
from ecngym.agents.config import agent_config
from ecngym.error import ConfigError
env, out, resume = json.loads(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] or None
agent = agent_config("acc", {"hyperparams": {"learning_starts": 24, "buffer_size": 2000},
                             "rllib": {"train_batch_size": 12}})
too_short = ""
try:
    if resume:  # total_timesteps counts the checkpoint's 12 env steps
        try:
            train_agent(env, agent, out, framework="rllib", timesteps=12, seed=3, resume=resume, progress_bar=False)
        except ConfigError as exc:
            too_short = str(exc)
    train_agent(env, agent, out, framework="rllib", timesteps=36 if resume else 24, seed=3,  # (resume: same command)
                checkpoint_every=12, resume=resume, progress_bar=False)
finally:
    ray.shutdown()
trained = json.loads((out / "agent.json").read_text())["episodes"]
ctrl = AccController(out)  # eval: a training trace is refused, a held-out one plays
e = gym.make("ecngym/RoceIncast-v0", **{**env, **ctrl.env_overrides()})
obs, info = e.reset(seed=987_654)
ctrl.reset(e)
try:
    ctrl.act(obs, {**info, "trace_hash": trained[-1]["trace_hash"]})
    refused = ""
except ConfigError as exc:
    refused = str(exc)
from ecngym.agents.rllib import REPLAY_FILE  # (its pickle imports Ray: read here, not in the test's process)
replay = pickle.loads((out / "rllib_checkpoint" / REPLAY_FILE).read_bytes())
print(json.dumps({"refused": refused, "held_out_actions": len(ctrl.act(obs, info)), "too_short": too_short,
                  "replay_added": replay["_num_timesteps_added"]}))
"""


def _train_rllib(tiny_env, out, resume=""):
    """Train and play in a child process (Ray's import and init change this process's stderr handling)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _TRAIN_RLLIB, json.dumps(tiny_env), str(out), resume],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "agent.json").read_text()), json.loads(done.stdout.strip().splitlines()[-1])


def test_rllib_run_records_its_training_traces_and_eval_refuses_them(tiny_env, tmp_path):
    pytest.importorskip("ray")
    import pandas as pd

    from ecngym.agents.rllib import EPISODES_FILE

    meta, played = _train_rllib(tiny_env, tmp_path / "run")
    first_ckpt = sorted((tmp_path / "run" / "checkpoints").iterdir(), key=lambda p: int(p.name.split("_")[1]))[0]
    resumed, resumed_played = _train_rllib(tiny_env, tmp_path / "resumed", str(first_ckpt))
    # a resume trains up to total_timesteps, the checkpoint's 12 env steps included (as SB3's ACC and
    # LAECN), and goes on with the checkpoint's replay buffer (RLlib's checkpoints hold none)
    assert resumed_played["too_short"].startswith("total_timesteps: got 12, but the resumed checkpoint has trained "
                                                  "12 env steps already")
    curve = pd.read_csv(tmp_path / "resumed" / "curve.csv")
    assert list(curve["env_steps"]) == [24, 36]
    assert resumed_played["replay_added"] == 36  # the first run's 12 env steps and this run's 24
    episodes = meta["episodes"]
    assert len(episodes) >= 2  # 24 env steps of 12-step episodes: at least two traces played
    before = json.loads((first_ckpt / EPISODES_FILE).read_text())
    assert before and before == resumed["episodes"][:len(before)]  # a resumed run keeps the earlier traces
    assert len(resumed["episodes"]) > len(before)
    # with the first run's seed, it goes on with other traces (it replayed the first run's)
    assert not {e["trace_hash"] for e in resumed["episodes"][len(before):]} & {e["trace_hash"] for e in episodes}
    assert "seed" in played["refused"] and "training trace" in played["refused"]
    assert played["held_out_actions"] == 6  # one template per port
    env = gym.make("ecngym/RoceIncast-v0", **{**tiny_env, **meta["env"]})  # the agent's Δt: its traces' span
    try:
        env.reset(seed=987_654)
        sc = env.unwrapped.scenario
        for episode in episodes:  # each record is the trace really played (same scenario, that episode seed)
            sc.start_episode(episode["episode_seed"])
            assert sc.trace.hash == episode["trace_hash"]
    finally:
        env.close()


_RESUME_RLLIB_CHANGED = """
import json, sys
from pathlib import Path
import ray
from ecngym.agents import train_agent
from ecngym.agents.config import agent_config
from ecngym.error import ConfigError
env, out = json.loads(sys.argv[1]), Path(sys.argv[2])
fast = {"learning_starts": 4, "buffer_size": 2000}
agent = agent_config("acc", {"hyperparams": fast, "rllib": {"train_batch_size": 12}})
try:
    first = train_agent(env, agent, out / "first", framework="rllib", timesteps=12, seed=0, progress_bar=False)
finally:
    ray.shutdown()
refused = []
for change in ({"learning_rate": 1e-3}, {"gamma": 0.5}, {"policy_kwargs": {"net_arch": [64]}}):
    changed = agent_config("acc", {"hyperparams": {**fast, **change}, "rllib": {"train_batch_size": 12}})
    try:
        train_agent(env, changed, out / "changed", framework="rllib", timesteps=12, seed=0, resume=str(first),
                    progress_bar=False)
        refused.append("")
    except ConfigError as exc:
        refused.append(str(exc) + (" (after Ray started)" if ray.is_initialized() else ""))
    finally:
        ray.shutdown()
print(json.dumps({"refused": refused}))
"""


def test_an_rllib_acc_resume_refuses_hyperparameters_other_than_the_checkpoints(tiny_env, tmp_path):
    # they applied, the optimizer's first step still at the checkpoint's learning rate (restored with
    # its state), every later one at the run's: SB3's ACC refuses them, so does RLlib's now
    import subprocess
    import sys

    pytest.importorskip("ray")
    done = subprocess.run([sys.executable, "-c", _RESUME_RLLIB_CHANGED, json.dumps(tiny_env), str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    lr, gamma, net = result["refused"]
    assert lr.startswith("agent.hyperparams.learning_rate: got 0.001, but the resumed checkpoint trained with 0.005: "
                         "a resume continues with the checkpoint's hyperparameters")
    assert gamma.startswith("agent.hyperparams.gamma: got 0.5, but the resumed checkpoint trained with 0.98")
    assert net.startswith("agent.hyperparams.policy_kwargs: got {'net_arch': [64]}, but the resumed checkpoint "
                          "trained with {'net_arch': [256, 256, 128, 64]}")
    assert not any("after Ray started" in message for message in result["refused"])  # checked first
    assert not (tmp_path / "changed" / "rllib_checkpoint").exists()


def test_online_fine_tuning_continues_on_the_deployment_scenario_with_low_exploration(tiny_env, tmp_path):
    deploy = {"workload": {**tiny_env["workload"], "load": 0.3}}
    online = {"timesteps": 24, "exploration_eps": 0.02, "env": deploy}
    offline_only = train_acc(tiny_env, agent_config("acc", FAST), tmp_path / "offline", timesteps=24, seed=5,
                             progress_bar=False)
    both = train_acc(tiny_env, agent_config("acc", {**FAST, "online": online}), tmp_path / "online", timesteps=24,
                     seed=5, progress_bar=False)
    meta = json.loads((tmp_path / "online" / "agent.json").read_text())
    assert meta["timesteps"] == {"offline": 24, "online": 24}
    phases = [e["phase"] for e in meta["episodes"]]
    assert phases[0] == "offline" and phases[-1] == "online"
    assert phases == sorted(phases, key=["offline", "online"].index)
    off_traces = {e["trace_hash"] for e in meta["episodes"] if e["phase"] == "offline"}
    on_traces = {e["trace_hash"] for e in meta["episodes"] if e["phase"] == "online"}
    assert on_traces and not on_traces & off_traces  # the deployment scenario's own traces
    assert list((tmp_path / "online" / "monitor").glob("online*.csv"))
    first, tuned = DoubleDQN.load(offline_only, device="cpu"), DoubleDQN.load(both, device="cpu")
    assert tuned.num_timesteps == first.num_timesteps + 24 * 6  # the online steps of all 6 port agents
    assert tuned.exploration_rate == pytest.approx(0.02)  # deployment exploration, not the offline schedule
    changed = [not th.equal(a, b) for a, b in zip(first.q_net.parameters(), tuned.q_net.parameters(), strict=True)]
    assert any(changed)  # the online phase took gradient steps
    with pytest.raises(ConfigError, match="agent.online.env"):  # fine-tuning needs the same fabric
        train_acc(tiny_env, agent_config("acc", {**FAST, "online": {**online, "env": {"topology": {
            **tiny_env["topology"], "hosts": 5}}}}), tmp_path / "bad", timesteps=4, seed=5, progress_bar=False)


def test_a_trained_run_acts_on_one_controlled_port_with_a_discrete_index(tiny_env, tmp_path):
    # one controlled port makes the env's space Discrete(13), whose elements are scalars: act
    # returned a shape-(1,) array, which the env now refuses (as Gymnasium's Discrete.contains does)
    train_acc(tiny_env, agent_config("acc", FAST), tmp_path, timesteps=30, seed=2, progress_bar=False)
    ctrl = AccController(tmp_path)
    probe = gym.make("ecngym/RoceIncast-v0", **{**tiny_env, **ctrl.env_overrides()})
    port = int(probe.unwrapped.ports[0])
    probe.close()
    overrides = ctrl.env_overrides()
    overrides["action"] = {**overrides["action"], "ports": [port]}
    env = gym.make("ecngym/RoceIncast-v0", **{**tiny_env, **overrides})
    try:
        assert env.action_space == gym.spaces.Discrete(13)
        obs, info = env.reset(seed=12345)
        ctrl.reset(env)
        action = ctrl.act(obs, info)
        assert np.shape(action) == () and env.action_space.contains(action)
        env.step(action)
    finally:
        env.close()


_META = {"granularity": "port", "env": {}, "n_actions": 3,
         "env_config": {"observation": {"features": ["queue_len"], "history": 1, "queue_mapping": "data"}}}


@pytest.mark.parametrize(("kind", "files", "message"), [
    # each was a TypeError / JSONDecodeError / KeyError / FileNotFoundError ('model.zip.zip') traceback,
    # and an unknown kind was read as LAECN
    ("acc", None, r"^controller.path: got None, expected the path of a trained agent's directory"),
    ("acc", {"agent.json": "{not json"}, r"^controller.path: '.*/agent.json' is not readable JSON"),
    ("acc", {"agent.json": "[1]"}, r"^controller.path: '.*/agent.json' lacks \['agent', 'framework'"),
    ("laecn", {"agent.json": "{}"}, r"^controller.path: '.*/agent.json' lacks \['agent', 'framework', 'granularity'"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3"})},
     r"^controller.path: no file at '.*/model.zip'; expected the model.zip of an ACC run"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch"})},
     r"^controller.path: expected an ACC run, got laecn \(torch\)"),
    ("bogus", {"agent.json": "{}"}, r"^kind: got 'bogus', allowed: \['acc', 'haecn', 'laecn'\]"),
    # the keys only one kind reads were KeyErrors
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "seed": 0, "config": {}})},
     r"^controller.path: '.*/agent.json' lacks \['obs_dim', 'static_action'\]: not the agent.json of an"),
    ("haecn", {"agent.json": json.dumps({**_META, "agent": "haecn", "framework": "torch", "obs_dim": 15,
                                         "static_action": 0})},
     r"^controller.path: '.*/agent.json' lacks \['config', 'seed'\]"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "rllib"})},
     r"^controller.path: '.*/agent.json' lacks \['checkpoint'\]"),
    # a hand-edited agent.json: nested keys the controller reads were raw KeyErrors (at load or at reset)
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3",
                                       "episodes": [{"episode_seed": 1, "trace_hash": "ab"}, {"episode_seed": 2}]})},
     r"^controller.path: '.*/agent.json' lacks episodes\[1\].trace_hash: not the agent.json of an 'ecngym train "
     r"agent=...' run$"),
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "episodes": [[]]})},
     r"^controller.path: '.*/agent.json' lacks episodes\[0\].trace_hash: not the agent.json"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3", "episodes": [{"trace_hash": 5}]})},
     r"^controller.path: '.*/agent.json' has episodes\[0\].trace_hash = 5, expected a string"),
    # an edited granularity reached the network (a torch shape error at the first act)
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "granularity": "nope"})},
     r"^controller.path: '.*/agent.json' has a bad granularity \(got 'nope', allowed: 'port', 'switch'\): not the "),
    # edited numbers: n_actions=1e30 was a message with ~50 lines of C++ frames, "x" one naming no file
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "n_actions": 1e30})},
     r"^controller.path: '.*/agent.json' has a bad n_actions \(got 1e\+30, allowed range is \[1, 65535\]\)"),
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "obs_dim": "x",
                                         "static_action": 0, "config": {}, "seed": 0})},
     r"^controller.path: '.*/agent.json' has a bad obs_dim \(expected a whole number, got 'x'\)"),
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "obs_dim": 15,
                                         "static_action": 0, "config": {"learning_rate": "abc"}, "seed": 0})},
     r"^controller.path: '.*/agent.json' has a bad config \(agent.learning_rate: expected a finite number, got "
     r"'abc'\)"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3", "episodes": {}})},
     r"^controller.path: '.*/agent.json' has episodes = \{\}, expected a list of \{episode_seed, trace_hash\}"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3", "env_config": {"reward": {}}})},
     r"^controller.path: '.*/agent.json' lacks env_config.observation: not the agent.json of an 'ecngym train "),
    ("haecn", {"agent.json": json.dumps({**_META, "agent": "haecn", "framework": "torch", "env_config": []})},
     r"^controller.path: '.*/agent.json' lacks env_config.observation: not"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3",
                                       "env_config": {"observation": {"features": ["queue_len"]}}})},
     r"^controller.path: '.*/agent.json' lacks \['env_config.observation.history', "
     r"'env_config.observation.queue_mapping'\]: not the agent.json"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3", "env": [1]})},
     r"^controller.path: '.*/agent.json' has env = \[1\], expected an object \(the agent's env overrides\)"),
    # weights that are not: torch's UnpicklingError, SB3's ValueError / AssertionError
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "seed": 0, "obs_dim": 15,
                                         "static_action": 0, "config": agent_config("laecn")}),
               "laecn.pt": "not torch"},
     r"^controller.path: '.*/laecn.pt' is not the laecn.pt of a LAECN / HAECN run that matches its agent.json "
     r"\(UnpicklingError"),
    # a pickle naming a module that is not installed: was a ModuleNotFoundError traceback, then "is not the
    # laecn.pt" (a checkpoint that needs a missing dependency is one): the module is named
    ("laecn", {"agent.json": json.dumps({**_META, "agent": "laecn", "framework": "torch", "seed": 0, "obs_dim": 15,
                                         "static_action": 0, "config": agent_config("laecn")}),
               "laecn.pt": "cnosuchmodule_of_ecngym_tests\nThing\n)R."},
     r"^controller.path: '.*/laecn.pt' needs the module 'nosuchmodule_of_ecngym_tests' to load \(the laecn.pt of a "
     r"LAECN / HAECN run that matches its agent.json\); it cannot be imported here \(ModuleNotFoundError: No module "
     r"named 'nosuchmodule_of_ecngym_tests'\): install it"),
    ("acc", {"agent.json": json.dumps({**_META, "agent": "acc", "framework": "sb3"}), "model.zip": "not a zip"},
     r"^controller.path: '.*/model.zip' is not the model.zip of an ACC run \(ValueError"),
])
def test_a_path_without_a_trained_run_is_named(tmp_path, kind, files, message):
    from ecngym.agents import learned_controller

    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError, match=message):
        learned_controller(kind, None if files is None else str(tmp_path))


@pytest.mark.parametrize(("error", "needs"), [
    (ModuleNotFoundError("No module named 'ray'", name="ray"), "needs the module 'ray' to load"),
    (ImportError("cannot import name 'DQN' from 'ray.rllib'", name="ray.rllib"),
     "needs the module 'ray.rllib' to load"),
    (ImportError("no name given"), "needs a module to load"),
])
def test_a_checkpoint_whose_load_misses_a_dependency_names_it_not_as_no_checkpoint(error, needs):
    # LOAD_ERRORS held ImportError: a missing dependency read "is not an RLlib checkpoint of ACC ..."
    import re

    from ecngym.agents.saved_run import load_saved

    def load():
        raise error

    with pytest.raises(ConfigError, match=rf"^resume: 'ckpt' {re.escape(needs)} \(an RLlib checkpoint\); it cannot be "
                                          rf"imported here \({type(error).__name__}: .*\): install it"):
        load_saved("resume", "ckpt", "an RLlib checkpoint", load)


@pytest.mark.parametrize("kind", ["acc", "laecn", "haecn"])
@pytest.mark.parametrize("bad", ["maybe", 0, None])
def test_a_deterministic_flag_that_is_not_a_boolean_is_named(tmp_path, kind, bad):
    # 'maybe' (controller.deterministic=maybe) was taken as true, 0 as false
    from ecngym.agents import learned_controller

    (tmp_path / "agent.json").write_text(json.dumps({**_META, "agent": kind, "framework": "torch"}))
    with pytest.raises(ConfigError, match=rf"^controller.deterministic: expected true or false, got {bad!r}"):
        learned_controller(kind, str(tmp_path), bad)


@pytest.mark.parametrize(("episodes", "message"), [
    # each was a JSONDecodeError / IsADirectoryError traceback, or a TypeError once the run had trained
    ("{not json", r"^resume: '.*/ecngym_episodes.json' is not readable JSON"),
    ("", r"^resume: '.*/ecngym_episodes.json' is not readable JSON"),
    (None, r"^resume: '.*/ecngym_episodes.json' is not readable JSON"),  # a directory of that name
    ('{"episode_seed": 1}', r"^resume: '.*/ecngym_episodes.json' has episodes = \{'episode_seed': 1\}, expected a "
                            r"list of \{episode_seed, trace_hash\} records: not the episodes file 'ecngym train"),
    ('[{"episode_seed": 1}]', r"^resume: '.*/ecngym_episodes.json' lacks episodes\[0\].trace_hash: not the episodes"),
    ('[{"trace_hash": 7}]', r"^resume: '.*/ecngym_episodes.json' has episodes\[0\].trace_hash = 7, expected a string"),
])
def test_a_broken_rllib_episodes_file_is_named_before_ray_starts(tmp_path, episodes, message):
    from ecngym.agents.rllib import EPISODES_FILE, train_acc_rllib

    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    if episodes is None:
        (checkpoint / EPISODES_FILE).mkdir()
    else:
        (checkpoint / EPISODES_FILE).write_text(episodes)
    with pytest.raises(ConfigError, match=message):
        train_acc_rllib({}, agent_config("acc"), tmp_path / "run", timesteps=4, seed=0, resume=str(checkpoint),
                        progress_bar=False)


@pytest.mark.parametrize(("resume", "message"), [
    (5, r"^resume: got 5, expected the path of an RLlib checkpoint directory"),  # was Path(5)'s TypeError
    ("missing", r"^resume: no RLlib checkpoint directory at '.*missing'"),
])
def test_a_bad_rllib_resume_path_is_named_before_ray_starts(tmp_path, resume, message):
    from ecngym.agents.rllib import train_acc_rllib

    resume = resume if isinstance(resume, int) else str(tmp_path / resume)
    with pytest.raises(ConfigError, match=message):
        train_acc_rllib({}, agent_config("acc"), tmp_path / "run", timesteps=4, seed=0, resume=resume,
                        progress_bar=False)


def test_more_local_rllib_runners_than_cores_is_refused_before_ray_starts(tiny_env, tmp_path):
    # a local Ray was given runners + 1 CPUs whatever the machine had: 1000 runners started hundreds of
    # processes on two cores
    import os

    from ecngym.agents.rllib import acc_env_config, train_acc_rllib
    from ecngym.envs.config import EnvConfig

    cores = os.cpu_count()
    agent = agent_config("acc", {"hyperparams": {"learning_starts": 16}, "rllib": {"num_env_runners": cores + 1}})
    env = acc_env_config(EnvConfig.from_dict(tiny_env), "port")
    with pytest.raises(ConfigError, match=rf"^agent.rllib.num_env_runners: got {cores + 1}, but this machine has "
                                          rf"{cores} CPUs \(each env runner takes one\)"):
        train_acc_rllib(env, agent, tmp_path / "run", timesteps=8, seed=0, progress_bar=False)


def test_an_acc_resume_refuses_hyperparameters_other_than_the_checkpoints(tiny_env, tmp_path):
    # they were ignored: the checkpoint's went on
    agent = agent_config("acc", FAST)
    first = train_acc(tiny_env, agent, tmp_path / "first", timesteps=10, seed=0, progress_bar=False)
    changed = {**agent, "hyperparams": {**agent["hyperparams"], "learning_rate": 1e-3}}
    with pytest.raises(ConfigError, match=r"^agent.hyperparams.learning_rate: got 0.001, but the resumed checkpoint "
                                          r"trained with 0.005"):
        train_acc(tiny_env, changed, tmp_path / "changed", timesteps=4, seed=0, resume=str(first), progress_bar=False)
    assert not (tmp_path / "changed" / "model.zip").exists()
    train_acc(tiny_env, agent, tmp_path / "same", timesteps=14, seed=0, resume=str(first), progress_bar=False)
    assert (tmp_path / "same" / "model.zip").exists()


def test_an_acc_resume_trains_up_to_the_runs_total_and_keeps_the_traces_of_the_checkpoint(tiny_env, tmp_path):
    # a resume trained total_timesteps more (SB3's count), where RLlib's ACC and LAECN train up to
    # it; and the resumed run's agent.json listed only its own traces, so eval took the
    # checkpoint's training traces for held-out ones
    agent = agent_config("acc", FAST)
    train_acc(tiny_env, agent, tmp_path / "first", timesteps=16, seed=0, checkpoint_every=8, progress_bar=False)
    checkpoint = tmp_path / "first" / "checkpoints" / "model_48_steps.zip"  # 8 env steps x 6 agents
    before = DoubleDQN.load(checkpoint, device="cpu").trained_episodes
    assert before and all(e["phase"] == "offline" for e in before)
    first = json.loads((tmp_path / "first" / "agent.json").read_text())["episodes"]
    assert before == first[:len(before)]
    with pytest.raises(ConfigError, match=r"^total_timesteps: got 8, but the resumed checkpoint has trained 8 env "
                                          r"steps already: total_timesteps counts the whole run"):
        train_acc(tiny_env, agent, tmp_path / "short", timesteps=8, seed=0, resume=str(checkpoint), progress_bar=False)
    path = train_acc(tiny_env, agent, tmp_path / "resumed", timesteps=16, seed=0, resume=str(checkpoint),
                     progress_bar=False)
    assert DoubleDQN.load(path, device="cpu").num_timesteps == 16 * 6  # up to the total, as the first run
    resumed = json.loads((tmp_path / "resumed" / "agent.json").read_text())["episodes"]
    assert resumed[:len(before)] == before and len(resumed) > len(before)
    # it goes on with other traces (SB3's load seeded the env with the checkpoint's seed: the same
    # command plus resume= replayed the first run's traces from its first one)
    assert not {e["trace_hash"] for e in resumed[len(before):]} & {e["trace_hash"] for e in first}
    controller = AccController(tmp_path / "resumed")
    assert {e["trace_hash"] for e in before} <= controller.trained_traces  # eval refuses them


@pytest.mark.parametrize(("framework", "out", "counts", "message"), [
    # RLlib skipped the checks every other trainer makes: a str out_dir was an AttributeError, 0 steps
    # an UnboundLocalError once Ray had started; out_dir=None was Path's TypeError
    ("rllib", "run", {"timesteps": 0}, r"^total_timesteps: got 0, allowed range is \[1, inf\)"),
    ("rllib", "run", {"seed": -1}, r"^seed: got -1"),
    ("rllib", "run", {"checkpoint_every": 1.5}, r"^checkpoint_every: expected a whole number, got 1.5"),
    ("rllib", "run", {"threads": -1}, r"^threads: expected a whole number of threads"),
    ("rllib", "run", {}, r"^resume: no RLlib checkpoint directory at '.*missing'"),  # (past the prologue)
    ("rllib", None, {}, r"^out_dir: got None, expected the path of a run directory"),
    ("sb3", None, {}, r"^out_dir: got None, expected the path of a run directory"),
])
def test_every_trainer_checks_its_counts_and_run_directory_before_starting(tiny_env, tmp_path, framework, out,
                                                                            counts, message):
    from ecngym.agents import train_agent

    kwargs = {"timesteps": 4, "seed": 0, "progress_bar": False, "resume": str(tmp_path / "missing"), **counts}
    with pytest.raises(ConfigError, match=message):
        train_agent(tiny_env, agent_config("acc"), None if out is None else str(tmp_path / out),
                    framework=framework, **kwargs)


def test_an_rllib_resume_that_is_not_a_checkpoint_is_named(tmp_path):
    # was RLlib's FileNotFoundError traceback (the algorithm, with its fabric, left running)
    import re
    import subprocess
    import sys

    pytest.importorskip("ray")
    (tmp_path / "ckpt").mkdir()
    done = subprocess.run([sys.executable, "-m", "ecngym", "train", "agent=acc", "framework=rllib",
                           f"resume={tmp_path / 'ckpt'}", "total_timesteps=4", "env.kwargs.episode_steps=4",
                           "progress_bar=false", f"hydra.run.dir={tmp_path / 'run'}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-3000:]
    assert re.search(r"ecngym train: error: resume: '.*/ckpt' is not an RLlib checkpoint of ACC on this scenario "
                     r"\(checkpoints/iter_<n> or rllib_checkpoint\): it has no ecngym_hyperparams.json \(the "
                     r"hyperparameters a resume continues with", done.stderr)
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("content", "message"), [
    (None, r"is not an RLlib checkpoint of ACC on this scenario .*: it has no ecngym_hyperparams.json"),
    ("{", r"ecngym_hyperparams.json' is not readable JSON \(Expecting"),
    ("[1]", r"ecngym_hyperparams.json' is not a mapping of ACC's hyperparameters"),
])
def test_an_rllib_checkpoints_hyperparameter_record_is_checked(tmp_path, content, message):
    from ecngym.agents.rllib import HYPERPARAMS_FILE, checkpoint_hyperparams

    if content is not None:
        (tmp_path / HYPERPARAMS_FILE).write_text(content)
    with pytest.raises(ConfigError, match=r"^resume: '.*" + message):
        checkpoint_hyperparams(tmp_path)


@pytest.mark.parametrize(("hash_seed", "warned"), [(None, True), ("random", True), ("0", False), ("123", False)])
def test_an_rllib_run_says_when_it_cannot_repeat(tiny_env, tmp_path, monkeypatch, caplog, hash_seed, warned):
    from ecngym.agents.rllib import train_acc_rllib

    if hash_seed is None:
        monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    else:
        monkeypatch.setenv("PYTHONHASHSEED", hash_seed)
    with pytest.raises(ConfigError, match=r"^agent\.hyperparams\.learning_starts"):  # (stops before Ray starts)
        train_acc_rllib({**tiny_env, "agent_granularity": "port"}, agent_config("acc"), tmp_path, timesteps=4,
                        seed=0, progress_bar=False)
    said = [r.getMessage() for r in caplog.records if "PYTHONHASHSEED" in r.getMessage()]
    assert bool(said) is warned
    if warned:
        assert said[0].startswith("PYTHONHASHSEED is not set to a number: this RLlib run will not repeat")


def test_an_rllib_checkpoints_hyperparameters_are_those_the_config_gave_but_sb3s_option(tmp_path):
    from ecngym.agents.rllib import HYPERPARAMS_FILE, checkpoint_hyperparams

    hyper = agent_config("acc")["hyperparams"]
    (tmp_path / HYPERPARAMS_FILE).write_text(json.dumps(hyper))
    assert checkpoint_hyperparams(tmp_path) == {k: v for k, v in hyper.items() if k != "overlap_updates"}


def test_agent_json_keeps_numpy_numbers_as_numbers(tmp_path):
    # np.int64(2) in an agent's env overrides was written as "2", which eval's env then refused
    from ecngym.agents.saved_run import load_agent_meta, save_agent_meta

    save_agent_meta(tmp_path, {**_META, "agent": "acc", "framework": "sb3",
                               "env": {"observation": {"history": np.int64(2)}, "reward": {"omega": np.float32(0.5)}},
                               "mask": np.array([1, 0]), "when": np.datetime64("2026-01-01")})
    meta = load_agent_meta(tmp_path)[1]
    assert meta["env"] == {"observation": {"history": 2}, "reward": {"omega": 0.5}}
    assert type(meta["env"]["observation"]["history"]) is int and meta["mask"] == [1, 0]


def test_a_warm_up_the_run_never_gets_past_is_refused(tiny_env, tmp_path):
    # learning_starts had no upper bound: 4 env steps x 6 port agents = 24 transitions under a warm-up
    # of 1000 took no gradient step and saved the untrained weights as a trained ACC
    with pytest.raises(ConfigError, match=r"^agent\.hyperparams\.learning_starts: got 1000, allowed range is "
                                          r"\[0, 23\] for this run, which collects 24 transitions \(total_timesteps "
                                          r"4 env steps x 6 agents\): a longer warm-up takes no gradient step"):
        train_acc(tiny_env, agent_config("acc"), tmp_path / "sb3", timesteps=4, seed=0, progress_bar=False)
    assert not (tmp_path / "sb3" / "model.zip").exists()
    online = {"online": {"timesteps": 2}}  # the online phase's transitions count too
    with pytest.raises(ConfigError, match=r"allowed range is \[0, 35\] .* 36 transitions \(total_timesteps 4 \+ "
                                          r"agent\.online\.timesteps 2 env steps x 6 agents\)"):
        train_acc(tiny_env, agent_config("acc", online), tmp_path / "online", timesteps=4, seed=0, progress_bar=False)
    # RLlib's ACC counts the warm-up in transitions too (it counted env steps: 16x later with 16 agents);
    # checked before Ray starts
    from ecngym.agents.rllib import train_acc_rllib

    with pytest.raises(ConfigError, match=r"^agent\.hyperparams\.learning_starts: got 1000, allowed range is "
                                          r"\[0, 23\] for this run, which collects 24 transitions \(total_timesteps "
                                          r"4 env steps x 6 agents\)"):
        train_acc_rllib({**tiny_env, "agent_granularity": "port"}, agent_config("acc"), tmp_path / "rllib",
                        timesteps=4, seed=0, progress_bar=False)


def test_rllib_acc_runs_the_sb3_schedule_in_env_steps(tiny_env):
    """RLlib's ACC gets SB3's warm-up, ε schedule and target period, converted to env steps.

    The config counts learning_starts / exploration_decisions in transitions and target_update_interval
    in gradient steps (as SB3's ACC applies them); RLlib's DQN counts all three in env steps. They were
    passed over as they stood: with 16 agents a warm-up and an ε schedule 16x longer (ε ~0.86 at the end
    of a 3000-step run) and a target copy 64x rarer than SB3's ACC.
    """
    from ecngym.agents.rllib import acc_counts_in_env_steps

    acc = agent_config("acc")  # learning_starts 1000, exploration 20000 decisions, target every 20 updates
    assert acc_counts_in_env_steps(acc, 16, 3000) == {"learning_starts": 63, "exploration_end": 1250,
                                                      "target_update": 20, "training_intensity": 64.0}
    assert acc_counts_in_env_steps(acc, 16, 1000)["exploration_end"] == 1000  # capped at the run, as SB3's
    slower = agent_config("acc", {"hyperparams": {"train_freq": 4, "gradient_steps": 2}})
    assert acc_counts_in_env_steps(slower, 16, 3000)["target_update"] == 40  # 20 updates, 2 per 4 env steps
    assert acc_counts_in_env_steps(slower, 16, 3000)["training_intensity"] == 32.0
    # the DQNConfig carries them (in a child process: RLlib's import in the pytest process breaks the
    # output capture of later tests)
    import subprocess
    import sys

    pytest.importorskip("ray")
    code = ("import json, sys; from ecngym.agents.config import agent_config; "
            "from ecngym.agents.rllib import shared_policy_dqn; "
            "c = shared_policy_dqn({**json.loads(sys.argv[1]), 'agent_granularity': 'port'}, agent_config('acc'), "
            "timesteps=100, seed=5); print(json.dumps([c.num_steps_sampled_before_learning_starts, "
            "c.target_network_update_freq, c.epsilon, c.training_intensity, c.replay_buffer_config]))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(tiny_env)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    # 6 port agents: a warm-up of ceil(1000 / 6) env steps, epsilon's 20000 / 6 capped at the run's 100
    *counts, replay = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts == [167, 20, [[0, 1.0], [100, 0.05]], 64.0]
    # RLlib's own buffer draws from an unseeded generator: ours starts from the run's seed
    assert {k: replay.get(k) for k in ("type", "capacity", "seed")} == {
        "type": "ecngym.agents.rllib_replay.SeededMultiAgentEpisodeReplayBuffer", "capacity": 100000, "seed": 5}


_RLLIB_RUN = """
import sys
from pathlib import Path
from ecngym.agents import train_agent
from ecngym.agents.config import agent_config
from ecngym.agents.learning import bursty_env
train_agent(bursty_env(), agent_config("acc"), Path(sys.argv[1]), framework="rllib", timesteps=int(sys.argv[2]), seed=7,
            progress_bar=False)
"""


@pytest.mark.slow
def test_an_rllib_acc_run_repeats_to_the_bit_with_a_fixed_hash_seed(tmp_path):
    """Same seed, same PYTHONHASHSEED: the same learning curve (losses, Q-values, returns) to the bit.

    It took the seeded replay buffer (RLlib's samples from an unseeded generator) and a fixed
    PYTHONHASHSEED (RLlib orders agents through sets of their string ids); either alone still
    gave different losses from the first update on.
    """
    import os
    import subprocess
    import sys

    pytest.importorskip("ray")
    curves = []
    for run in ("a", "b"):
        done = subprocess.run([sys.executable, "-c", _RLLIB_RUN, str(tmp_path / run), "256"], capture_output=True,
                              text=True, timeout=600, env={**os.environ, "PYTHONHASHSEED": "0"})
        assert done.returncode == 0, done.stderr[-3000:]
        curves.append((tmp_path / run / "curve.csv").read_text())
    assert len(curves[0].splitlines()) > 3  # updates ran (loss columns filled)
    assert curves[0] == curves[1]
