"""What a learner acts with, as data: the networks a checkpoint ships and how a checkpoint plays.

A shipped checkpoint (:mod:`ecngym.benchmark.checkpoints`) holds a learner's acting networks as
named arrays (safetensors), never the trainer's pickled model. :class:`ActingNets` says, per
learner, which networks those are and how to take them from the trainer's saved model and from a
live one (the validation snapshots); a learner whose acting is not "arg-max of its first network"
(LAECN's two modules) gives a ``player`` too. An agent's :class:`~ecngym.agents.registry.AgentKind`
carries its own (``acting=``); SB3's algorithms get theirs from :func:`sb3_acting`, so the
checkpoint code has no per-learner branch. :func:`learner_acting` finds either by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.error import ConfigError

#: Named arrays of a checkpoint's weights file and their description (``{net: {activation, layers}}``).
Tensors = tuple[dict[str, np.ndarray], dict[str, Any]]


@dataclass(frozen=True)
class ActingNets:
    """A learner's acting networks.

    Args:
        nets: The tensor groups of its weights file (``q``, ``pi``, ``policy`` ...); the first one's
            input width and output count are the policy input and the action count, unless
            ``player`` says otherwise.
        saved: The trainer's saved model file -> (tensors, nets): called as ``saved(weights_path)``.
        live: A live training model -> (tensors, nets) (a validation snapshot): ``live(model)``.
        player: None: act by the arg-max of the first network, per agent row. Otherwise called as
            ``player(card, tensors, obs_dim)`` when a checkpoint is reset on an env; it returns a
            callable ``act(obs_rows, inference) -> actions`` (one action per row) for the episode.
    """

    nets: tuple[str, ...]
    saved: Callable[[Path], Tensors]
    live: Callable[[Any], Tensors]
    player: Callable[[dict[str, Any], dict[str, np.ndarray], int], Callable[..., np.ndarray]] | None = None


def sequential_tensors(prefix: str, net: Any) -> Tensors:
    """A ``torch.nn.Sequential`` of Linear and activation layers as named arrays plus its description."""
    import torch.nn as nn

    tensors = {f"{prefix}.{k}": v.detach().cpu().numpy().astype(np.float32).copy()
               for k, v in net.state_dict().items()}
    acts = sorted({type(m).__name__.lower() for m in net if not isinstance(m, nn.Linear)})
    layers = [[m.in_features, m.out_features] for m in net if isinstance(m, nn.Linear)]
    return tensors, {prefix: {"activation": acts[0] if acts else "none", "layers": layers}}


def q_network(model: Any) -> Tensors:
    """A DQN-style model's (SB3 ``DQN``, ACC's ``DoubleDQN``) greedy network: its online Q-network, ``q``."""
    return sequential_tensors("q", model.policy.q_net.q_net)


def policy_head(model: Any) -> Tensors:
    """An actor-critic model's (SB3 ``PPO``) deterministic action: its policy MLP and action head, ``pi``."""
    import torch.nn as nn

    return sequential_tensors("pi", nn.Sequential(*model.policy.mlp_extractor.policy_net, model.policy.action_net))


def sb3_acting(algorithm: str) -> ActingNets:
    """The acting networks of SB3's ``algorithm`` (value-based: its Q-network; otherwise: its policy head).

    Raises:
        ConfigError: Naming ``agent`` if it is not one of :data:`ecngym.agents.sb3.ALGORITHMS`.
    """
    from stable_baselines3.dqn.policies import DQNPolicy

    from ecngym.agents.sb3 import algorithm_class

    cls = algorithm_class(algorithm, "agent")
    # (SB3's value-based policies act greedily on q_net; the actor-critic ones on their policy head)
    value_based = issubclass(cls.policy_aliases["MlpPolicy"], DQNPolicy)
    live = q_network if value_based else policy_head
    return ActingNets(nets=("q",) if value_based else ("pi",),
                      saved=lambda weights: live(cls.load(str(weights), device="cpu")), live=live)


def learner_acting(name: Any, field: str = "agent") -> ActingNets:
    """The :class:`ActingNets` of learner ``name``: its agent kind's ``acting``, or SB3's for an SB3 algorithm.

    Raises:
        ConfigError: Naming ``field`` if ``name`` is no learner's, or its agent kind declares no acting networks.
    """
    from ecngym.agents.registry import agent_kind, agent_names, learner_names
    from ecngym.agents.sb3 import ALGORITHMS

    if name in ALGORITHMS:
        return sb3_acting(name)
    if not isinstance(name, str) or name not in agent_names():
        raise ConfigError(field, f"got {name!r}; the learners: {learner_names()}")
    acting = agent_kind(name).acting
    if acting is None:
        raise ConfigError(field, f"learner {name}'s AgentKind declares no acting networks (acting=): it has no "
                                 "checkpoint")
    return acting
