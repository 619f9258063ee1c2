"""Learning agents by name: ``configs/agent/<name>.yaml`` names the agent's :class:`AgentKind`.

Every agent config names what trains and plays it, as a controller config names its class::

    # configs/agent/laecn.yaml
    _kind_: ecngym.agents.laecn.LAECN
    name: laecn
    ...

An :class:`AgentKind` ties the agent's typed config, its trainer per framework and the controller
that plays a trained run. :func:`~ecngym.agents.train_agent` (``ecngym train agent=<name>``),
:func:`~ecngym.agents.learned_controller` and :func:`~ecngym.agents.config.agent_config` find it
by the name alone; there is no list of agents to extend. A new learning agent is one module (its
trainer, its controller, its config model and the ``AgentKind`` that ties them) plus its YAML
(and ``configs/controller/<name>.yaml`` for ``ecngym eval controller=<name>``). A variant is a YAML
that inherits another's (``haecn.yaml``: ``defaults: [laecn, _self_]``, same kind). An agent whose
config lives outside ecngym joins with :func:`register_agent`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError

#: The config group of the learning agents shipped with ecngym (one YAML each).
AGENT_DIR = CONFIG_DIR / "agent"
#: The key of an agent YAML that names its :class:`AgentKind` (``module.NAME``).
KIND_KEY = "_kind_"


@dataclass(frozen=True)
class AgentKind:
    """What makes a learning agent, by its parts.

    Args:
        config: The :class:`~ecngym.validation.ConfigModel` of its YAML (every field typed; the
            YAML's ``_kind_`` key is not a field).
        trainers: Framework (``framework=``, e.g. ``"sb3"``, ``"rllib"``) -> trainer. A trainer is
            called as ``trainer(base_env, agent, out_dir, *, timesteps, seed, progress_bar,
            checkpoint_every, resume, device, threads)`` (RLlib's also with ``ray_address``) and
            returns the path of the trained model; it writes ``agent.json`` and ``curve.csv`` into
            ``out_dir`` (:func:`~ecngym.agents.saved_run.save_agent_meta`).
        controller: The controller class of a trained run, called as ``controller(path, deterministic)``
            (usually a :class:`~ecngym.agents.controller.LearnedController`).
        resumable: The trainer of a benchmark tier's run (None: the agent has none, and ``tier=``
            refuses it), called as ``resumable(base_env, agent, out_dir, *, timesteps, seed,
            episode_seeds, every, hook, halt_at, progress_bar, threads)``: it saves the run's whole
            state in ``out_dir/state`` at an episode end every ``every`` env steps, after
            ``hook(model, env_steps)`` (the benchmark's validation; True stops the run), resumes
            from it when started again, and writes ``agent.json`` with a ``run`` record
            (``env_steps``, ``stopped``, ``resumed_from``) and its curve (``curve``, default ``curve.csv``).
        acting: Its acting networks (:class:`~ecngym.agents.acting_nets.ActingNets`): what its shipped
            checkpoint holds and how one plays (None: it has no checkpoint, and the suite cannot train it).
    """

    config: type
    trainers: Mapping[str, Callable[..., Path]]
    controller: Callable[..., Any]
    resumable: Callable[..., Path] | None = None
    acting: Any = None


#: Agents added by :func:`register_agent`: name -> (kind, config file).
_REGISTERED: dict[str, tuple[AgentKind, Path]] = {}


def register_agent(name: str, kind: AgentKind, config_file: str | Path) -> None:
    """Make an agent whose config lives outside ecngym known by ``name``.

    Args:
        name: The agent's name (its config's ``name``); not one of ecngym's own.
        kind: What trains and plays it.
        config_file: Its YAML (the agent config's fields; a ``_kind_`` key there is not read).

    Raises:
        ConfigError: Naming ``agent`` if ``name`` is not a non-empty string or is an agent of
            ecngym's own, ``agent.config_file`` if the file does not exist.
    """
    if not isinstance(name, str) or not name.strip() or (AGENT_DIR / f"{name}.yaml").is_file():
        raise ConfigError("agent", f"got {name!r}; give a new agent's name (ecngym's own: {_shipped_names()})")
    path = Path(config_file)
    if not path.is_file():
        raise ConfigError("agent.config_file", f"got {str(config_file)!r}, which is no file")
    _REGISTERED[name] = (kind, path)


def _shipped_names() -> list[str]:
    return sorted(p.stem for p in AGENT_DIR.glob("*.yaml"))


def agent_names() -> list[str]:
    """Every agent's name: ecngym's own (``configs/agent``, sorted), then the registered ones."""
    return [*_shipped_names(), *(n for n in _REGISTERED if n not in _shipped_names())]


def learner_names() -> list[str]:
    """Every learner of the benchmark suites: the agents (:func:`agent_names`), then SB3's algorithms."""
    from ecngym.agents.sb3 import ALGORITHMS

    return [*agent_names(), *(a for a in ALGORITHMS if a not in agent_names())]


def is_agent(name: Any) -> bool:
    """Whether learner ``name`` is a learning agent (its own kind, config and trainer), not an SB3 algorithm."""
    return isinstance(name, str) and name in agent_names()


def agent_file(name: Any, field: str = "agent") -> Path:
    """The YAML of agent ``name``.

    Raises:
        ConfigError: Naming ``field`` if ``name`` is no agent's.
    """
    if isinstance(name, str) and name in _REGISTERED:
        return _REGISTERED[name][1]
    if isinstance(name, str) and name in _shipped_names():
        return AGENT_DIR / f"{name}.yaml"
    raise ConfigError(field, f"got {name!r}, allowed: {agent_names()}")


def load_agent_yaml(name: str) -> Any:
    """Agent ``name``'s YAML with its Hydra-style ``defaults`` (a parent agent's YAML, then ``_self_``).

    Raises:
        ConfigError: Naming ``agent`` if ``name`` (or a parent it names) is no agent's.
    """
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(agent_file(name))
    parents = [d for d in cfg.pop("defaults", []) if d != "_self_"]
    return OmegaConf.merge(*[load_agent_yaml(p) for p in parents], cfg) if parents else cfg


def agent_kind(name: Any, field: str = "agent") -> AgentKind:
    """The :class:`AgentKind` of agent ``name`` (its YAML's ``_kind_``, imported).

    Raises:
        ConfigError: Naming ``field`` if ``name`` is no agent's; naming ``agent._kind_`` if the YAML
            names no importable ``AgentKind``.
    """
    if isinstance(name, str) and name in _REGISTERED:
        return _REGISTERED[name][0]
    agent_file(name, field)  # an unknown name is named as such before its YAML is read
    target = load_agent_yaml(name).get(KIND_KEY)
    try:
        from hydra.utils import get_object

        kind = get_object(target) if isinstance(target, str) else None
    except Exception as exc:  # hydra raises ImportError / ValueError variants
        raise ConfigError(f"agent.{KIND_KEY}", f"{name}: cannot import {target!r}: {exc}") from None
    if not isinstance(kind, AgentKind):
        raise ConfigError(f"agent.{KIND_KEY}", f"{name}: got {target!r}; every agent YAML names its AgentKind "
                                               "(e.g. ecngym.agents.laecn.LAECN)")
    return kind


def registered_kind(name: Any) -> AgentKind | None:
    """The :class:`AgentKind` of agent ``name``, or None if no agent has that name (a saved run's check)."""
    return agent_kind(name) if isinstance(name, str) and name in agent_names() else None
