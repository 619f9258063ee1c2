"""SB3 training (``ecngym.agents.sb3.train``) and the SB3-based Double DQN: side effects on the machine."""

import tempfile

import gymnasium as gym
import pytest

import ecngym.envs  # noqa: F401
from ecngym.agents.acc import make_shared_vec_env
from ecngym.agents.config import agent_config, agent_env_config
from ecngym.agents.ddqn import DoubleDQN
from ecngym.agents.sb3 import check_hyperparams, train
from ecngym.error import ConfigError


def _temp_dir_entries(monkeypatch, tmp_path):
    """Point ``tempfile.gettempdir()`` (where SB3's default logger makes its folder) at an empty dir.

    Returns what appears there from SB3 (torch keeps its reusable compile cache there too).
    """
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return lambda: sorted(p.name for p in scratch.iterdir() if p.name.startswith("SB3-"))


def test_sb3_training_leaves_no_log_folder_in_the_temp_dir(tiny_env, tmp_path, monkeypatch):
    entries = _temp_dir_entries(monkeypatch, tmp_path)
    path = train(lambda: gym.make("ecngym/RoceIncast-v0", **tiny_env), "ppo", 16, 0, tmp_path / "run",
                 hyperparams={"n_steps": 8, "batch_size": 8, "n_epochs": 1})
    assert path.is_file()
    assert entries() == []  # SB3's default logger would have made SB3-<timestamp> here


def test_double_dqn_learning_and_loading_leave_no_log_folder(tiny_env, tmp_path, monkeypatch):
    entries = _temp_dir_entries(monkeypatch, tmp_path)
    agent = agent_config("acc", {"hyperparams": {"learning_starts": 6, "buffer_size": 500}})
    venv = make_shared_vec_env(agent_env_config(tiny_env, agent["env"]), agent["granularity"])
    model = DoubleDQN("MlpPolicy", venv, seed=0, device="cpu", **agent["hyperparams"])
    model.learn(total_timesteps=4 * venv.num_envs)
    model.save(tmp_path / "model.zip")
    loaded = DoubleDQN.load(tmp_path / "model.zip", env=venv, device="cpu")
    loaded.learn(total_timesteps=2 * venv.num_envs, reset_num_timesteps=False)
    venv.close()
    assert entries() == []


@pytest.mark.parametrize(("make", "kwargs", "message"), [
    # were a TypeError, an IsADirectoryError, SB3's ValueError / TypeError, and a 0 interval taken
    (None, {"path": None}, r"^controller.path: got None, expected the path of a model saved by 'ecngym train'"),
    (None, {"path": "."}, r"^controller.path: got '\.', which is a directory"),
    ("garbage", {}, r"^controller.path: '.*/m.zip' is not a PPO model saved by 'ecngym train' \(ValueError"),
    # a zip without SB3's data was SB3's AssertionError
    ("zip", {}, r"^controller.path: '.*/m.zip' is not a PPO model saved by 'ecngym train' \(AssertionError: No data"),
    ("dqn", {"algorithm": "ppo"}, r"^controller.path: '.*/m.zip' is not a PPO model .*check controller.algorithm"),
    ("dqn", {"algorithm": "dqn", "interval_steps": 0},
     r"^controller.interval_steps: got 0, allowed range is \[1, inf\)"),
    ("dqn", {"algorithm": ["dqn"]}, r"^controller.algorithm: got \['dqn'\], allowed: \['dqn', 'ppo'\]"),
    ("dqn", {"algorithm": "dqn", "deterministic": "no"},  # was taken as true
     r"^controller.deterministic: expected true or false, got 'no'"),
])
def test_a_bad_sb3_controller_is_named(tmp_path, make, kwargs, message):
    from stable_baselines3 import DQN

    from ecngym.agents import SB3Controller
    from ecngym.error import ConfigError

    if make == "garbage":
        (tmp_path / "m.zip").write_text("not a zip")
    elif make == "zip":
        import zipfile

        with zipfile.ZipFile(tmp_path / "m.zip", "w") as z:
            z.writestr("notes.txt", "not a model")
    elif make == "dqn":
        DQN("MlpPolicy", "CartPole-v1", learning_starts=0, buffer_size=100, device="cpu").save(tmp_path / "m.zip")
    with pytest.raises(ConfigError, match=message):
        SB3Controller(**{"path": str(tmp_path / "m"), **kwargs})


@pytest.mark.parametrize(("algorithm", "hyperparams", "message"), [
    # Each went to SB3 as given (SB3 2.9, on CartPole): trained on with gamma 2, 'no' as true, target_kl 0,
    # a zero-width value layer, an unknown net_arch key, gradient_steps -2 (as -1), eps 1.5; failed in
    # learn() (NaN entropy weight: torch's distribution check; train_freq 0: an assertion) or at build
    # (batch 1, 2.5 steps, train_freq unit: SB3's own messages; DQN's pi / vf layers: a KeyError)
    ("ppo", {"gamma": 2}, r"^hyperparams\.gamma: got 2, allowed range is \[0, 1\]$"),
    ("ppo", {"ent_coef": float("nan")}, r"^hyperparams\.ent_coef: expected a finite number, got nan$"),
    ("ppo", {"batch_size": 1}, r"^hyperparams\.batch_size: got 1, allowed range is \[2, 100000000\]$"),
    ("ppo", {"n_steps": 2.5}, r"^hyperparams\.n_steps: expected a whole number, got 2\.5$"),
    ("ppo", {"normalize_advantage": "no"}, r"^hyperparams\.normalize_advantage: expected true or false, got 'no'$"),
    ("ppo", {"target_kl": 0}, r"^hyperparams\.target_kl: got 0, allowed range is \(0, inf\)$"),
    ("ppo", {"policy_kwargs": {"net_arch": {"pi": [64], "vf": [0]}}},
     r"^hyperparams\.policy_kwargs\.net_arch\.vf\[0\]: got 0, allowed range is \[1, 65536\]$"),
    ("ppo", {"policy_kwargs": {"net_arch": {"pi": [64], "q": [8]}}},
     r"^hyperparams\.policy_kwargs\.net_arch\.q: unknown field; known fields: \['pi', 'vf'\]$"),
    ("dqn", {"policy_kwargs": {"net_arch": {"pi": [64]}}},  # DQN has one network
     r"^hyperparams\.policy_kwargs\.net_arch: got \{'pi': \[64\]\}: input should be a valid list$"),
    ("dqn", {"policy_kwargs": [64]}, r"^hyperparams\.policy_kwargs: got \[64\], expected a mapping"),
    ("dqn", {"train_freq": 0}, r"^hyperparams\.train_freq: got 0, allowed range is \[1, inf\)$"),
    ("dqn", {"train_freq": [4, "epoch"]},
     r"^hyperparams\.train_freq: got \[4, 'epoch'\], allowed: a whole number >= 1, or \[n, 'step' \| 'episode'\]$"),
    ("dqn", {"gradient_steps": -2}, r"^hyperparams\.gradient_steps: got -2, allowed range is \[-1, inf\)$"),
    ("dqn", {"exploration_final_eps": 1.5}, r"^hyperparams\.exploration_final_eps: got 1\.5, allowed range"),
    # SB3's logger is off (ecngym writes its own curves): a TensorBoard folder would stay empty
    ("ppo", {"tensorboard_log": "tb"}, r"^hyperparams\.tensorboard_log: not settable: ecngym turns SB3's logger off"),
    ("ppo", {"verbose": 1}, r"^hyperparams\.verbose: not settable"),
    ("ppo", {"n_stepz": 8}, r"^hyperparams\.n_stepz: not an argument of PPO; allowed: \["),
    ("ppo", [("gamma", 0.9)], r"^hyperparams: got \[\['gamma', 0\.9\]\], expected a mapping of PPO's keyword"),
])
def test_bad_sb3_hyperparameters_are_named(algorithm, hyperparams, message):
    with pytest.raises(ConfigError, match=message):
        check_hyperparams(algorithm, hyperparams)


def test_sb3_hyperparameters_are_converted_as_sb3_takes_them():
    schedule = lambda progress: 1e-3 * progress  # noqa: E731 (a schedule passes to SB3 as given)
    assert check_hyperparams("dqn", {"train_freq": [4, "episode"], "batch_size": 32.0, "learning_rate": schedule,
                                     "replay_buffer_kwargs": {"x": 1}}) == {
        "train_freq": (4, "episode"), "batch_size": 32, "learning_rate": schedule, "replay_buffer_kwargs": {"x": 1}}
    assert check_hyperparams("ppo", {"policy_kwargs": {"net_arch": {"pi": [16]}, "ortho_init": False},
                                     "clip_range_vf": None}) == {
        "policy_kwargs": {"net_arch": {"pi": [16], "vf": []}, "ortho_init": False}, "clip_range_vf": None}
    assert check_hyperparams("ppo", None) == {}


def test_sb3_training_builds_the_checked_hyperparameters(tiny_env, tmp_path):
    from stable_baselines3 import PPO

    path = train(lambda: gym.make("ecngym/RoceIncast-v0", **tiny_env), "ppo", 16, 0, tmp_path / "run",
                 hyperparams={"n_steps": 8.0, "batch_size": 8, "n_epochs": 1,
                              "policy_kwargs": {"net_arch": {"pi": [16], "vf": [8, 8]}}}, progress_bar=False)
    extractor = PPO.load(path, device="cpu").policy.mlp_extractor
    assert [m.out_features for m in extractor.policy_net if hasattr(m, "out_features")] == [16]
    assert [m.out_features for m in extractor.value_net if hasattr(m, "out_features")] == [8, 8]
