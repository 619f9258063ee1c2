"""SB3 training (``ecngym.agents.sb3.train``) and the SB3-based Double DQN: side effects on the machine."""

import tempfile

import gymnasium as gym
import pytest

import ecngym.envs  # noqa: F401
from ecngym.agents.acc import make_shared_vec_env
from ecngym.agents.common import agent_config, agent_env_config
from ecngym.agents.ddqn import DoubleDQN
from ecngym.agents.sb3 import train


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
