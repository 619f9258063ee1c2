"""Stable-Baselines3 policies as controllers, and the training entry point behind ``ecngym train``."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from ecngym.agents.config import HIDDEN_WIDTHS, SB3_HYPERPARAMS, ActorCriticArch
from ecngym.agents.inference import InferenceCounter, mlp_flops
from ecngym.agents.saved_run import load_saved
from ecngym.agents.training_run import check_warm_up
from ecngym.error import ConfigError
from ecngym.files import check_input_file
from ecngym.validation import Flag, check, check_whole, plain

ALGORITHMS = ("dqn", "ppo")


def algorithm_class(name: str, field: str = "algorithm") -> Any:
    """The SB3 class for ``"dqn"`` or ``"ppo"``.

    Args:
        name: The algorithm's name.
        field: The config field it came from (for the error message).

    Raises:
        ConfigError: On another name.
    """
    from stable_baselines3 import DQN, PPO

    classes = {"dqn": DQN, "ppo": PPO}
    if not isinstance(name, str) or name not in classes:
        raise ConfigError(field, f"got {name!r}, allowed: {list(classes)}")
    return classes[name]


class SB3Controller:
    """A trained SB3 model acting (deterministically) on the observation.

    Args:
        path: The ``.zip`` saved by ``ecngym train``.
        algorithm: ``"dqn"`` or ``"ppo"`` (the model's class).
        deterministic: Greedy actions (default) or sampled ones.
        interval_steps: Act every this many env steps.

    Raises:
        ConfigError: If the file is missing or not a model of ``algorithm``, the algorithm is
            unknown, ``interval_steps`` is not a whole number >= 1 or ``deterministic`` not a boolean
            (naming ``controller.<field>``).
    """

    def __init__(self, path: str | Path, algorithm: str = "ppo", deterministic: bool = True,
                 interval_steps: int = 1) -> None:
        cls = algorithm_class(algorithm, "controller.algorithm")
        interval_steps = check_whole("controller.interval_steps", interval_steps, 1)
        deterministic = check("controller.deterministic", deterministic, Flag)
        if isinstance(path, (str, os.PathLike)) and str(path).strip() and not Path(path).exists():
            path = Path(path).with_suffix(".zip")  # SB3 saves 'model' as model.zip
        path = check_input_file("controller.path", path, "a model saved by 'ecngym train' (model.zip)")
        self.model = load_saved("controller.path", path, f"a {cls.__name__} model saved by 'ecngym train'",
                                lambda: cls.load(str(path), device="cpu"),  # not a model, or another algorithm's
                                "check controller.algorithm")
        self.deterministic = deterministic
        self.interval_steps = interval_steps
        self.name = f"sb3_{algorithm}"
        self.inference = InferenceCounter()
        self._flops = _acting_flops(self.model.policy)

    def reset(self, env: Any) -> None:
        """Check that the model fits the env's spaces.

        Raises:
            ConfigError: If the observation or action space differs from the model's.
        """
        if self.model.observation_space.shape != env.observation_space.shape:
            raise ConfigError("controller.path", f"model observes {self.model.observation_space.shape}, "
                                                 f"env gives {env.observation_space.shape}")
        if self.model.action_space != env.action_space:
            raise ConfigError("controller.path", f"model acts in {self.model.action_space}, env expects "
                                                 f"{env.action_space}")
        self.inference.reset()

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The policy's action (one decision, one network evaluation: :attr:`inference`)."""
        action, _ = self.model.predict(observation, deterministic=self.deterministic)
        self.inference.decisions += 1
        self.inference.forward(1, self._flops)
        return action.item() if np.ndim(action) == 0 else action


def _acting_flops(policy: Any) -> int:
    """Dense-layer FLOPs of one ``predict``.

    DQN's online Q-network; an actor-critic's features extractor, actor MLP and action head
    (``predict`` does not run the critic).
    """
    if hasattr(policy, "q_net"):
        return mlp_flops(policy.q_net)
    return (mlp_flops(policy.pi_features_extractor) + mlp_flops(policy.mlp_extractor.policy_net)
            + mlp_flops(policy.action_net))


#: SB3 keyword arguments that ecngym sets itself, and why (given in ``hyperparams``, SB3 would
#: refuse the second value or, for ``tensorboard_log``, write nothing: the model's logger is off)
_SET_BY_ECNGYM = {"verbose": "ecngym builds the model quiet (verbose=0)",
                  "tensorboard_log": "ecngym turns SB3's logger off and writes its own learning curve "
                                     "(monitor/*.monitor.csv, and the logger group)",
                  "_init_setup_model": "ecngym builds the model whole"}
#: Keys whose value may also be a schedule (a callable of the remaining progress; from Python only)
_SCHEDULES = ("learning_rate", "clip_range", "clip_range_vf")


def check_hyperparams(algorithm: str, hyperparams: Any) -> dict[str, Any]:
    """The SB3 algorithm's keyword arguments, checked: names against its signature, values by type.

    Values of the keys in :data:`ecngym.agents.config.SB3_HYPERPARAMS` are validated and converted
    (``3.0`` -> 3; ``train_freq: [4, step]`` -> a tuple); other keys of the signature pass as given.

    Args:
        algorithm: ``"dqn"`` or ``"ppo"``.
        hyperparams: A mapping of keyword arguments (``None``: none).

    Returns:
        The checked keyword arguments.

    Raises:
        ConfigError: Naming ``hyperparams.<key>`` for a key the algorithm does not take or that
            ecngym sets itself, or a value outside its type or range; ``hyperparams`` for a non-mapping.
    """
    cls = algorithm_class(algorithm)
    given = plain(hyperparams if hyperparams is not None else {})
    if not isinstance(given, dict):
        raise ConfigError("hyperparams", f"got {given!r}, expected a mapping of {cls.__name__}'s keyword arguments")
    known = set(inspect.signature(cls.__init__).parameters) - {"self", "policy", "env", "seed", "device",
                                                               *_SET_BY_ECNGYM}
    types = SB3_HYPERPARAMS[algorithm]
    checked = {}
    for key, value in given.items():
        field = f"hyperparams.{key}"
        if key in _SET_BY_ECNGYM:
            raise ConfigError(field, f"not settable: {_SET_BY_ECNGYM[key]}")
        if key not in known:
            raise ConfigError(field, f"not an argument of {cls.__name__}; allowed: {sorted(known)}")
        kind = types.get(key)
        if key == "policy_kwargs":
            checked[key] = _policy_kwargs(algorithm, value, field)
        elif kind is None or (key in _SCHEDULES and callable(value)):
            checked[key] = value
        else:
            checked[key] = check(field, value, kind)
    return checked


def _policy_kwargs(algorithm: str, value: Any, field: str) -> dict[str, Any]:
    """``policy_kwargs`` with its ``net_arch`` checked (layer widths; for PPO also separate pi / vf ones)."""
    if not isinstance(value, dict):
        raise ConfigError(field, f"got {value!r}, expected a mapping of the policy's keyword arguments")
    if "net_arch" not in value:
        return value
    arch = value["net_arch"]
    if algorithm == "ppo" and isinstance(arch, dict):
        return {**value, "net_arch": check(f"{field}.net_arch", arch, ActorCriticArch).model_dump()}
    return {**value, "net_arch": check(f"{field}.net_arch", arch, HIDDEN_WIDTHS)}


@contextlib.contextmanager
def unchecked_distributions() -> Iterator[None]:
    """Torch distributions skip their argument checks inside (restored after).

    PPO builds an action distribution for every step and every minibatch; the checks (of logits
    the policy just computed) cost ~80 us per step, a few per cent of a RoceIncast-v0 env step.
    """
    import torch

    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        torch.distributions.Distribution.set_default_validate_args(before)


def without_log_dir(model: Any) -> Any:
    """Give an SB3 model a logger that writes nowhere, and return the model.

    Without one, every ``learn()`` of a model built with ``verbose=0`` and no ``tensorboard_log``
    creates an empty ``$TMPDIR/SB3-<timestamp>`` directory that nothing removes (SB3's
    ``configure_logger``); ecngym writes its own curves, so SB3's logger has nothing to keep.
    """
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def fuse_adam(policy: Any) -> None:
    """Give a fresh SB3 policy torch's fused Adam (same update rule, one kernel per step).

    The default (per-tensor) Adam runs ~8 small ops for each weight tensor; for these small
    networks that is ~0.25 ms of a ~1.7 ms gradient step on one CPU thread (ACC's six-layer net,
    batch 64). Only a policy whose optimizer has no state yet is changed (a resumed model keeps
    the optimizer it was saved with); other optimizers are left alone.
    """
    import torch

    opt = getattr(policy, "optimizer", None)
    if type(opt) is not torch.optim.Adam or opt.state or opt.defaults.get("fused"):
        return
    params = [p for group in opt.param_groups for p in group["params"]]  # (DQN: the online net only)
    policy.optimizer = torch.optim.Adam(params, **{**opt.defaults, "foreach": None, "fused": True})


class _FreshInfos(list):
    """The sub-envs' info dicts of the current step: ``deepcopy`` gives a new list of the same dicts."""

    def __deepcopy__(self, memo: dict) -> list:
        return list(self)


def in_process_vec_env_class() -> type:
    """SB3's ``DummyVecEnv`` without its per-step ``deepcopy`` of the infos.

    ``DummyVecEnv.step_wait`` deep-copies every step's info dicts in case an env reuses them; our
    envs build a fresh info (telemetry arrays included) every step, so that copy is pure overhead
    (about a fifth of an env step's wall time on RoceIncast-v0). The list returned is still a new
    one each step.
    """
    from stable_baselines3.common.vec_env import DummyVecEnv

    class InProcessVecEnv(DummyVecEnv):
        def __init__(self, env_fns: list, *args: Any, **kwargs: Any) -> None:
            super().__init__(env_fns, *args, **kwargs)
            self.buf_infos = _FreshInfos(self.buf_infos)

    return InProcessVecEnv


def new_model(algorithm: str, venv: Any, seed: int, hyperparams: dict[str, Any] | None = None) -> Any:
    """A fresh SB3 model as ``ecngym train`` builds it (and ``ecngym bench train`` times it).

    SB3's MLP policy with the lean per-step paths of :mod:`ecngym.agents.sb3_policies` (same
    networks, same actions), no log directory (:func:`without_log_dir`) and fused Adam
    (:func:`fuse_adam`), on the CPU.

    Args:
        algorithm: ``"dqn"`` or ``"ppo"``.
        venv: The SB3 vector env.
        seed: The algorithm's seed.
        hyperparams: Keyword arguments of the SB3 algorithm, as :func:`check_hyperparams` returns them.

    Raises:
        ConfigError: On an unknown algorithm or hyperparameters SB3 refuses (naming ``algorithm`` /
            ``hyperparams``; :func:`train` names an unknown keyword before building any env).
    """
    from ecngym.agents.sb3_policies import LeanActorCriticPolicy, LeanDQNPolicy

    cls = algorithm_class(algorithm)
    policy = LeanDQNPolicy if algorithm == "dqn" else LeanActorCriticPolicy
    try:
        model = without_log_dir(cls(policy, venv, seed=seed, device="cpu", verbose=0, **(hyperparams or {})))
    except (AssertionError, ValueError, TypeError) as exc:  # SB3's own checks of the values
        raise ConfigError("hyperparams", f"{cls.__name__} refused them: {exc}") from None
    fuse_adam(model.policy)
    return model


#: The most parallel envs ``train`` starts: each is a process holding a fabric (~150 MB)
MAX_ENVS = 256


def train(env_factory: Any, algorithm: str, total_timesteps: int, seed: int, out_dir: Path,
          n_envs: int = 1, hyperparams: dict[str, Any] | None = None, progress_bar: bool = True,
          checkpoint_every: int = 0, threads: Any = None) -> Path:
    """Train an SB3 algorithm and save the model.

    Every env is wrapped in SB3's ``Monitor``: the training episodes' returns and lengths land in
    ``out_dir/monitor/*.monitor.csv`` as they finish (the learning curve).

    Args:
        env_factory: Zero-argument callable returning a fresh env (one fabric per process).
        algorithm: ``"dqn"`` or ``"ppo"``.
        total_timesteps: Environment steps to train for (>= 1).
        seed: Seed of the algorithm and the envs (>= 0).
        out_dir: Where ``model.zip`` is written.
        n_envs: Parallel envs (1 .. :data:`MAX_ENVS`; ``SubprocVecEnv`` when > 1, one fabric per process).
        hyperparams: Keyword arguments of the SB3 algorithm (checked: :func:`check_hyperparams`).
        progress_bar: Show SB3's progress bar.
        checkpoint_every: Save ``out_dir/checkpoints/model_<steps>_steps.zip`` every this many env
            steps (summed over envs), so a run that fails later keeps its progress; 0 = never.
        threads: Threads per torch / BLAS pool in this process and in each env worker
            (:func:`ecngym.agents.threads.limit_threads`; default 1 or ``$ECNGYM_THREADS``).

    Returns:
        The saved model's path.

    Raises:
        ConfigError: On a bad algorithm, count, seed or hyperparameter (naming the field).
    """
    from stable_baselines3.common.callbacks import CheckpointCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from ecngym.agents.threads import in_worker, limit_threads

    n_threads = limit_threads(threads)
    hyperparams = check_hyperparams(algorithm, hyperparams)  # before any env is built
    total_timesteps = check_whole("total_timesteps", total_timesteps, 1)
    n_envs = check_whole("n_envs", n_envs, 1, MAX_ENVS)
    seed = check_whole("seed", seed, 0)
    checkpoint_every = check_whole("checkpoint_every", checkpoint_every, 0)
    out_dir.mkdir(parents=True, exist_ok=True)
    vec_cls = SubprocVecEnv if n_envs > 1 else in_process_vec_env_class()
    if n_envs > 1 and n_threads:
        env_factory = in_worker(env_factory, n_threads)
    try:
        venv = make_vec_env(env_factory, n_envs=n_envs, seed=seed, vec_env_cls=vec_cls,
                            monitor_dir=str(out_dir / "monitor"))
    except OSError as exc:  # e.g. too many open files: one process and its pipes per env
        raise ConfigError("n_envs", f"got {n_envs}, but starting that many env processes failed ({exc}); "
                                    "lower it") from None
    try:
        if algorithm == "dqn" and not isinstance(venv.action_space, spaces.Discrete):
            raise ConfigError("algorithm", f"dqn needs a Discrete action space, this env has {venv.action_space}; "
                                           "use ppo, or one action unit (env.kwargs.action.scope=all, type discrete)")
        model = new_model(algorithm, venv, seed, hyperparams)
        if hasattr(model, "learning_starts"):  # DQN: no gradient step until more transitions than that
            check_warm_up("hyperparams.learning_starts", model.learning_starts, total_timesteps - 1,
                          f"{total_timesteps} transitions (total_timesteps)")
        callback = None
        if checkpoint_every:
            # CheckpointCallback counts calls (one per vector step): convert from env steps
            callback = CheckpointCallback(max(1, checkpoint_every // n_envs), str(out_dir / "checkpoints"), "model")
        with unchecked_distributions():
            model.learn(total_timesteps=total_timesteps, progress_bar=progress_bar, callback=callback)
        path = out_dir / "model.zip"
        model.save(str(path))
    finally:
        venv.close()
    return path


@functools.cache
def takes_multi_discrete(algorithm: str) -> bool:
    """Whether SB3's ``algorithm`` takes a MultiDiscrete action (PPO does; DQN picks one of n actions).

    Asked of SB3 itself: its algorithms declare their ``supported_action_spaces`` to the base class,
    which refuses an env outside them when the model is built (here without its networks).
    """
    import gymnasium as gym

    class _Probe(gym.Env):
        observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        action_space = spaces.MultiDiscrete([2, 2])

    try:
        algorithm_class(algorithm, "agent")("MlpPolicy", _Probe(), _init_setup_model=False)
    except AssertionError:
        return False
    return True
