"""What the learning agents (ACC, LAECN, HAECN) share: their configs, saved runs, and controllers.

* **Configs** live in ``configs/agent/<name>.yaml`` (one home per hyperparameter, each with its
  source beside it); :func:`agent_config` loads one and merges overrides.
* **Saved runs**: a trained agent is a directory with the weights and ``agent.json`` (which agent,
  framework, granularity, the env overrides that define its state / action / reward / Δt, and the
  episode seeds and trace hashes it trained on: eval refuses those traces).
* **Controllers**: :class:`LearnedController` turns the single-agent env's observation table into
  the per-agent observations the policy trained on (the same helper as the parallel env), counts
  its inference (:class:`InferenceCounter`) and checks that eval traces are held out.
"""

from __future__ import annotations

import json
import os
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ecngym.agents.config import GRANULARITY
from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError, check_whole
from ecngym.files import check_directory_path, check_input_file, read_json
from ecngym.validation import Flag, Whole, check

AGENTS = ("acc", "laecn", "haecn")
AGENT_FILE = "agent.json"
#: What every saved agent's ``agent.json`` holds (what :class:`LearnedController` reads).
AGENT_META_KEYS = ("agent", "framework", "granularity", "env", "env_config", "n_actions")
#: The type of each scalar ``agent.json`` entry a controller reads (checked with its presence)
_META_KINDS = {"granularity": GRANULARITY, "n_actions": Whole(1, 65_535), "obs_dim": Whole(1, 1 << 20),
               "static_action": Whole(0, 65_534), "seed": Whole(0, None)}
#: The observation settings an ``agent.json``'s ``env_config.observation`` holds, which eval's env must match.
OBSERVATION_KEYS = ("features", "history", "queue_mapping")
#: What torch's, SB3's and RLlib's readers (and ours, on the saved state's keys and shapes) raise on
#: a file that is not the weights or checkpoint they expect: SB3 asserts, torch raises RuntimeError
#: on a zip of another layout and on a shape mismatch. It stays this broad because the readers
#: themselves raise these on files that are no checkpoint (tried: SB3 gives AttributeError and
#: KeyError for a zip whose 'data' is another JSON, AssertionError for a zip without it; a pickle
#: may raise any error of the constructors it names, TypeError included), so a narrower tuple would
#: turn such files into tracebacks. An ImportError is not among them: a file naming a module that
#: cannot be imported here (a missing dependency) may well be a checkpoint (:func:`load_saved`).
LOAD_ERRORS = (pickle.UnpicklingError, EOFError, OSError, RuntimeError, ValueError, KeyError, TypeError,
               AttributeError, AssertionError, zipfile.BadZipFile)



def agent_config(name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """``configs/agent/<name>.yaml`` with ``overrides`` merged in (nested keys merge), validated.

    Args:
        name: ``"acc"``, ``"laecn"`` or ``"haecn"``.
        overrides: Fields to change (a mapping, nested like the YAML; an OmegaConf config too).
            Values are validated as given: Python or NumPy numbers, lists or tuples.

    Returns:
        The validated config as a plain dict.

    Raises:
        ConfigError: On an unknown agent name, overrides that are not a mapping, an override of
            ``name``, or a bad or unknown field (named ``agent.<field>``).
    """
    if not isinstance(name, str) or name not in AGENTS:
        raise ConfigError("agent", f"got {name!r}, allowed: {list(AGENTS)}")
    from ecngym.agents.config import MODELS
    from ecngym.envs.config import EnvConfig
    from ecngym.validation import config_values

    base = MODELS[name].parse(config_values(_load_agent_yaml(name)), "agent")
    cfg = base.updated({} if overrides is None else overrides, "agent").as_dict()
    if cfg["name"] != name:  # (the name picks the file: laecn with name=haecn would be neither)
        raise ConfigError("agent.name", f"got {cfg['name']!r} for the agent {name!r}; the name is not an override: "
                                        f"choose the agent with agent={cfg['name']}")
    EnvConfig().updated(cfg["env"], "agent.env")  # the agent's env overrides are valid env fields
    if "online" in cfg:  # (ACC) checked now, not only once a run reaches its online phase
        EnvConfig().updated(cfg["online"]["env"], "agent.online.env")
    return cfg


def _load_agent_yaml(name: str) -> Any:
    """One agent YAML with its Hydra-style ``defaults`` (a parent in the same group, then ``_self_``)."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(CONFIG_DIR / "agent" / f"{name}.yaml")
    parents = [d for d in cfg.pop("defaults", []) if d != "_self_"]
    return OmegaConf.merge(*[_load_agent_yaml(p) for p in parents], cfg) if parents else cfg


def agent_env_config(base: dict[str, Any], agent_env: dict[str, Any]) -> Any:
    """The :class:`~ecngym.envs.EnvConfig` an agent trains on: the scenario plus the agent's overrides.

    Args:
        base: The scenario (a registered preset merged with the user's env overrides).
        agent_env: The agent's ``env`` overrides (its observation, reward, Δt).
    """
    from ecngym.envs.config import EnvConfig, merge

    return merge(EnvConfig.from_dict(base), agent_env, "env")


def check_warm_up(field: str, learning_starts: int, high: int, collects: str) -> None:
    """Refuse a warm-up that a training run never gets past: it would take no gradient step.

    Such a run used to finish and save its untrained initial weights as a trained agent. The bound
    depends on the run (its length, its number of agents), so it is checked when training starts.

    Args:
        field: The warm-up's config field (``agent.hyperparams.learning_starts``).
        learning_starts: Its value.
        high: The largest warm-up after which this run still takes a gradient step.
        collects: What the run collects, for the message (``"160 transitions (total_timesteps 10 x
            16 agents)"``).

    Raises:
        ConfigError: Naming ``field``, if ``learning_starts > high``.
    """
    if learning_starts > high:
        raise ConfigError(field, f"got {learning_starts}, allowed range is [0, {high}] for this run, which collects "
                                 f"{collects}: a longer warm-up takes no gradient step and would save the untrained "
                                 "weights; lower it or raise total_timesteps")


def check_resumed_hyperparams(given: dict[str, Any], saved: dict[str, Any]) -> None:
    """Refuse hyperparameters other than the resumed checkpoint's: a resumed ACC continues with its own.

    (SB3's load keeps the saved ones; RLlib would train on with the run's, its optimizer's first
    step still at the checkpoint's learning rate.) One rule for both frameworks.

    Args:
        given: The run's ``agent.hyperparams`` that the framework reads (as it holds them).
        saved: The checkpoint's value of each of them.

    Raises:
        ConfigError: Naming ``agent.hyperparams.<key>``, with both values.
    """
    for key, value in given.items():
        if key in saved and value != saved[key]:
            raise ConfigError(f"agent.hyperparams.{key}", f"got {value!r}, but the resumed checkpoint trained with "
                                                          f"{saved[key]!r}: a resume continues with the checkpoint's "
                                                          "hyperparameters; give its value or start a new run")


def check_resume_total(timesteps: int, done_env_steps: int) -> None:
    """Refuse a resume whose ``total_timesteps`` the checkpoint has already reached.

    ``total_timesteps`` counts the whole run, the resumed checkpoint's env steps included (so an
    interrupted run resumes with its own command and ends where it would have; SB3's ACC, RLlib's
    ACC and LAECN alike). A total at or below what the checkpoint trained would train nothing.

    Args:
        timesteps: The run's ``total_timesteps`` (env steps).
        done_env_steps: Env steps the resumed checkpoint has trained.

    Raises:
        ConfigError: Naming ``total_timesteps``, if it is not above ``done_env_steps``.
    """
    if timesteps <= done_env_steps:
        raise ConfigError("total_timesteps", f"got {timesteps}, but the resumed checkpoint has trained "
                                             f"{done_env_steps} env steps already: total_timesteps counts the whole "
                                             f"run, the checkpoint's steps included; give more than {done_env_steps}")


def resumed_seed(seed: int, episodes_played: int) -> int:
    """The seed a run's traces start from: ``seed`` offset by the episodes its checkpoint has played.

    Each trainer draws its sequence of training traces from one seed, so a run resumed with its
    first run's seed (the usual case: the same command plus ``resume=``) replayed that run's traces
    from the first one; offset by the episodes already played, it goes on with other traces (and
    the same resume, run twice, plays the same ones). A fresh run (0 episodes) starts at ``seed``.

    Args:
        seed: The run's ``seed``.
        episodes_played: Episodes the resumed checkpoint has played (0 for a fresh run).
    """
    return seed + episodes_played


def start_training(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int, seed: int,
                   checkpoint_every: int, threads: Any) -> tuple[int, int, int, str, Path, Any]:
    """The prologue every trainer shares: thread limits, checked counts, the run folder, the env config.

    Args:
        base_env: The scenario (``EnvConfig`` fields).
        agent: The agent config (its ``granularity`` and ``env`` overrides are read).
        out_dir: Run directory (a path; created).
        timesteps: Env steps to train for (>= 1).
        seed: Seed of the learner and of the training traces (>= 0).
        checkpoint_every: Checkpoint period in env steps (>= 0; 0 = never).
        threads: Threads per torch / BLAS pool (:func:`ecngym.agents.threads.limit_threads`).

    Returns:
        ``(timesteps, seed, checkpoint_every, granularity, out_dir, env_config)``, checked.

    Raises:
        ConfigError: On a bad count, granularity or thread setting, or an ``out_dir`` that is not a
            path or names a file.
    """
    from ecngym.agents.threads import limit_threads

    limit_threads(threads)
    timesteps = check_whole("total_timesteps", timesteps, 1)
    seed = check_whole("seed", seed, 0)
    checkpoint_every = check_whole("checkpoint_every", checkpoint_every, 0)
    granularity = check("agent.granularity", agent["granularity"], GRANULARITY)
    out_dir = check_directory_path("out_dir", out_dir, "a run directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    env_cfg = agent_env_config({**base_env, "seed": seed}, agent["env"])
    return timesteps, seed, checkpoint_every, granularity, out_dir, env_cfg


def save_agent_meta(out_dir: Path, meta: dict[str, Any]) -> Path:
    """Write ``agent.json`` next to the weights.

    NumPy numbers and arrays are written as the JSON numbers and lists they hold (an override
    given as ``np.int64(2)`` reads back as 2, not as the string ``"2"`` that eval would refuse);
    anything else JSON has no type for, as its ``str``.
    """
    path = Path(out_dir) / AGENT_FILE
    path.write_text(json.dumps(meta, indent=2, default=_json_value))
    return path


def _json_value(value: Any) -> Any:
    """A JSON-able stand-in for a value ``json`` cannot write (``json.dumps``'s ``default``)."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()  # (a NumPy scalar's tolist() is its Python value)
    return str(value)


def load_agent_meta(path: str | Path, field: str = "controller.path") -> tuple[Path, dict[str, Any]]:
    """(run directory, ``agent.json``) of a saved agent, given the directory or a file in it.

    Args:
        path: The run directory, or a file in it.
        field: The option that gave ``path``, named in the error.

    Returns:
        The run directory and its ``agent.json`` (with at least the keys of :data:`AGENT_META_KEYS`,
        and the nested ones :class:`LearnedController` reads).

    Raises:
        ConfigError: If ``path`` is not a path or names nothing, there is no ``agent.json`` there, or
            it is not a JSON object with the keys every saved agent has (nested ones included:
            ``env_config.observation``, each of ``episodes``' ``trace_hash``).
    """
    expected = f"a trained agent's directory (with {AGENT_FILE}, as 'ecngym train agent=...' writes) or a file in it"
    if not (isinstance(path, (str, os.PathLike)) and Path(path).is_dir()):
        check_input_file(field, path, expected)
    p = Path(path)
    run_dir = p if p.is_dir() else p.parent
    meta_path = run_dir / AGENT_FILE
    if not meta_path.is_file():
        raise ConfigError(field, f"no trained agent at {str(path)!r} (expected a directory with {AGENT_FILE}, "
                                 "as 'ecngym train agent=...' writes)")
    meta = read_json(field, meta_path)
    check_agent_meta(meta_path, meta, AGENT_META_KEYS, field)
    _check_agent_layout(meta_path, meta, field)
    return run_dir, meta


def _check_agent_layout(meta_path: Path, meta: dict[str, Any], field: str) -> None:
    """Refuse an ``agent.json`` whose nested entries lack what :class:`LearnedController` reads.

    A hand-edited file without ``episodes[i].trace_hash`` or ``env_config.observation`` was a raw
    ``KeyError`` when the controller was built or reset.

    Args:
        meta_path: The file, named in the error.
        meta: Its parsed content (holding every key of :data:`AGENT_META_KEYS`).
        field: The option that gave the run, named in the error.

    Raises:
        ConfigError: Naming ``field``, the file and the dotted key that is missing or not of its
            type: ``env`` (an object), ``env_config.observation`` and its :data:`OBSERVATION_KEYS`,
            or ``episodes`` (a list, when given) and each one's ``trace_hash`` (a string).
    """
    def refuse(what: str) -> NoReturn:
        raise ConfigError(field, f"{str(meta_path)!r} {what}: not the {AGENT_FILE} of an 'ecngym train agent=...' run")

    if not isinstance(meta["env"], dict):
        refuse(f"has env = {meta['env']!r}, expected an object (the agent's env overrides)")
    observation = meta["env_config"].get("observation") if isinstance(meta["env_config"], dict) else None
    if observation is None:
        refuse("lacks env_config.observation")
    if not isinstance(observation, dict):
        refuse(f"has env_config.observation = {observation!r}, expected an object (the observation settings)")
    missing = [f"env_config.observation.{key}" for key in OBSERVATION_KEYS if key not in observation]
    if missing:
        refuse(f"lacks {missing}")
    problem = episode_records_problem(meta.get("episodes", []))
    if problem is not None:
        refuse(problem)


def episode_records_problem(episodes: Any) -> str | None:
    """What is wrong with a run's list of training episodes, or ``None`` if nothing.

    One rule for ``agent.json``'s ``episodes`` and an RLlib checkpoint's ``ecngym_episodes.json``
    (whose records a resume copies into ``agent.json``): eval reads each record's ``trace_hash``.

    Returns:
        ``"has episodes = ..., expected a list ..."``, ``"lacks episodes[i].trace_hash"`` or ``"has
        episodes[i].trace_hash = ..., expected a string ..."`` (to follow the file's name), or ``None``.
    """
    if not isinstance(episodes, list):
        return f"has episodes = {episodes!r}, expected a list of {{episode_seed, trace_hash}} records"
    for i, episode in enumerate(episodes):
        trace_hash = episode.get("trace_hash") if isinstance(episode, dict) else None
        if trace_hash is None:
            return f"lacks episodes[{i}].trace_hash"
        if not isinstance(trace_hash, str):
            return f"has episodes[{i}].trace_hash = {trace_hash!r}, expected a string (the trace's hash)"
    return None


def check_agent_meta(meta_path: Path, meta: Any, keys: tuple[str, ...], field: str = "controller.path") -> None:
    """Refuse an ``agent.json`` that lacks one of ``keys`` (those every run has, or one kind's own).

    Args:
        meta_path: The file, named in the error.
        meta: Its parsed content.
        keys: The keys it must hold.
        field: The option that gave the run, named in the error.

    Raises:
        ConfigError: Naming ``field``, the file and the missing keys, if ``meta`` is not a JSON
            object holding every key.
    """
    missing = [key for key in keys if key not in meta] if isinstance(meta, dict) else list(keys)
    if missing:
        raise ConfigError(field, f"{str(meta_path)!r} lacks {missing}: not the {AGENT_FILE} of an 'ecngym train "
                                 "agent=...' run")
    for key in keys:  # (an edited value reached torch as a shape error, or a message naming no file)
        if key in _META_KINDS:
            try:
                check(key, meta[key], _META_KINDS[key])
            except ConfigError as exc:
                raise ConfigError(field, f"{str(meta_path)!r} has a bad {key} ({exc.message}): not the {AGENT_FILE} "
                                         "of an 'ecngym train agent=...' run") from None


def load_saved(field: str, path: str | Path, expected: str, load: Callable[[], Any], hint: str = "") -> Any:
    """``load()`` of a weights or checkpoint file, its readers' errors as one naming the file.

    Args:
        field: The option that gave the file (``controller.path``, ``resume``).
        path: The file (or checkpoint directory), named in the error.
        expected: What it should be (``"the laecn.pt of a LAECN / HAECN run"``).
        load: Reads it.
        hint: What to check, appended to the message.

    Returns:
        What ``load`` returns.

    Raises:
        ConfigError: Naming ``field`` and ``path``, if ``load`` raises one of :data:`LOAD_ERRORS`
            (the file is not ``expected``), or an ImportError (a module the file needs, which
            cannot be imported here: named, as missing, not the file as no checkpoint).
    """
    try:
        return load()
    except ImportError as exc:  # (ModuleNotFoundError too) a pickle names the classes it holds by module
        module = f"the module {exc.name!r}" if exc.name else "a module"
        raise ConfigError(field, f"{str(path)!r} needs {module} to load ({expected}); it cannot be imported here "
                                 f"({type(exc).__name__}: {exc}): install it, in the version that wrote the file"
                                 + (f"; {hint}" if hint else "")) from None
    except LOAD_ERRORS as exc:
        raise ConfigError(field, f"{str(path)!r} is not {expected} ({type(exc).__name__}: {exc})"
                                 + (f"; {hint}" if hint else "")) from None


class InferenceCounter:
    """Inference accounting of one controller (docs: algorithms/laecn.md §3.8 [OURS]: the "CPU overhead" proxy).

    Attributes:
        decisions: Agent decisions taken (one per agent per interval at which it acts).
        forward_passes: Network evaluations, counted per agent (a batch of n agents counts n).
        flops: Multiply-adds x 2 of those evaluations (dense layers).
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Zero every counter."""
        self.decisions = 0
        self.forward_passes = 0
        self.flops = 0
        # agent-specific counts (LAECN: policy_forward_passes), listed in the controller class's extra_metrics
        self.extra: dict[str, int] = {}

    def forward(self, rows: int, flops_per_row: int) -> None:
        """Count ``rows`` evaluations of a network costing ``flops_per_row`` each."""
        self.forward_passes += rows
        self.flops += rows * flops_per_row

    def as_dict(self) -> dict[str, int]:
        """The counters."""
        return {"decisions": self.decisions, "forward_passes": self.forward_passes, "flops": self.flops,
                **self.extra}


def mlp_flops(module: Any) -> int:
    """2 x multiply-adds of one input row through the linear layers of a torch module."""
    import torch.nn as nn

    return sum(2 * m.in_features * m.out_features for m in module.modules() if isinstance(m, nn.Linear))


class LearnedController:
    """Base of the trained-agent controllers: per-agent observations, held-out traces, accounting.

    Subclasses load their networks and implement :meth:`decide`.

    Args:
        path: The saved run (directory, or a file in it).
        deterministic: Greedy actions (exploration off); a real boolean.

    Raises:
        ConfigError: Naming ``controller.deterministic`` if it is not a boolean, ``controller.path``
            if it holds no trained agent.
    """

    name = "learned"

    def __init__(self, path: str | Path, deterministic: bool = True) -> None:
        from ecngym.agents.threads import limit_threads

        limit_threads()  # inference of small nets: one thread per pool (or $ECNGYM_THREADS)
        self.deterministic = check("controller.deterministic", deterministic, Flag)
        self.run_dir, self.meta = load_agent_meta(path)
        self.granularity = self.meta["granularity"]
        self.trained_traces = {e["trace_hash"] for e in self.meta.get("episodes", [])}
        self.interval_steps = 1  # the agent's Δt is the env's step (its env overrides set it)
        self.inference = InferenceCounter()
        self._rows: list[np.ndarray] = []
        self._history = 1
        self._checked_trace: str | None = None

    def require_meta(self, *keys: str) -> None:
        """Refuse a run whose ``agent.json`` lacks one of the keys this kind of controller reads.

        Raises:
            ConfigError: Naming ``controller.path``, the file and the missing keys.
        """
        check_agent_meta(self.run_dir / AGENT_FILE, self.meta, keys)

    def env_overrides(self, env: Any = None) -> dict[str, Any]:
        """EnvConfig overrides the agent needs (its state, reward, Δt; one action per port), whatever ``env``."""
        env = json.loads(json.dumps(self.meta["env"]))
        env["action"] = {**env.get("action", {}), "scope": "port"}
        return env

    def reset(self, env: Any) -> None:
        """Check the env matches the training one (observation, actions); group its ports into agents.

        Raises:
            ConfigError: On an observation or action layout other than the training env's.
        """
        from ecngym.envs.multi_agent import agent_port_rows

        u = env.unwrapped
        trained = self.meta["env_config"]
        for key in OBSERVATION_KEYS:
            if getattr(u.config.observation, key) != trained["observation"][key]:
                raise ConfigError("controller.path", f"the agent trained with observation.{key}="
                                                     f"{trained['observation'][key]!r}, this env has "
                                                     f"{getattr(u.config.observation, key)!r}")
        if u.config.action.scope != "port" or u.config.action.type != "discrete":
            raise ConfigError("controller.path", "the agent sets each port: the env needs action.scope=port, "
                                                 "type=discrete (ecngym eval applies it)")
        n_templates = len(u.scenario.actions.templates)
        if n_templates != self.meta["n_actions"]:
            raise ConfigError("controller.path", f"the agent chooses among {self.meta['n_actions']} ECN templates, "
                                                 f"this env has {n_templates}")
        self._rows = list(agent_port_rows(u.scenario, self.granularity).values())
        self._history = u.scenario.features.history
        self._n_ports = len(u.scenario.ports)
        self._action_shape = u.scenario.actions.space.shape
        self.inference.reset()

    def agent_observations(self, observation: np.ndarray) -> np.ndarray:
        """(agents, obs) array from the env's flattened observation table."""
        from ecngym.envs.multi_agent import agent_observation

        table = np.asarray(observation).reshape(self._n_ports, -1)
        return np.stack([agent_observation(table[rows], self.granularity, self._history) for rows in self._rows])

    def check_held_out(self, info: dict[str, Any]) -> None:
        """Refuse a trace the agent trained on (eval must use held-out traces).

        Raises:
            ConfigError: Naming ``seed``, if the episode's trace was a training trace.
        """
        trace = info.get("trace_hash")
        if trace is None or trace == self._checked_trace:
            return
        self._checked_trace = trace
        if trace in self.trained_traces:
            raise ConfigError("seed", f"the episode's trace {trace[:12]} was a training trace of this agent; "
                                      "evaluate on held-out seeds (pick another seed)")

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """Per-port template indices from the per-agent decisions."""
        self.check_held_out(info)
        agent_actions = self.decide(self.agent_observations(observation), info)
        per_port = np.empty(self._n_ports, dtype=np.int64)
        for rows, a in zip(self._rows, agent_actions, strict=True):
            per_port[rows] = a
        return per_port.reshape(self._action_shape)  # one controlled port: Discrete's scalar, not shape (1,)

    def decide(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """One template index per agent (subclasses)."""
        raise NotImplementedError
