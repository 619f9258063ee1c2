"""The env reward a learner trains on, on a benchmark scenario.

``training.agents.<learner>.reward`` names it (any reward of :data:`ecngym.envs.config.REWARDS`);
``score_dense`` then follows the scenario's own score (``protocol.score``), so its undiscounted return
is minus the score the learner is ranked by (:mod:`ecngym.envs.score_reward`). Unset, a learner keeps
its default:

* SB3's algorithms (``ppo``, ``dqn``) on a scenario of version 2 or later: ``score_dense`` ([OURS]:
  the plain-RL baselines learn from the score itself, paid as flows complete, instead of one
  terminal reward);
* SB3's algorithms on a version-1 scenario: the scenario env's reward (``fct``), as the frozen v1
  checkpoints were trained;
* the learning agents (``acc``, ``laecn``, ``haecn`` ...): their own YAML's reward (their papers'),
  ``configs/agent/<name>.yaml``.
"""

from __future__ import annotations

from typing import Any

#: The first scenario version on which they default to it (version 1 is frozen).
SCORE_DENSE_FROM_VERSION = 2


def learner_reward(scenario: Any, agent: str) -> dict[str, Any] | None:
    """The ``env.reward`` override a learner trains with on a scenario, or None to keep its own.

    Args:
        scenario: The scenario (:class:`~ecngym.benchmark.suite.Scenario`, with a ``training`` block).
        agent: The learner.

    Returns:
        ``{"name": ...}`` (with ``"score": protocol.score`` for ``score_dense``), or None.
    """
    from ecngym.agents.registry import is_agent

    name = scenario.training.settings(agent).reward
    if name is None and not is_agent(agent) and scenario.version >= SCORE_DENSE_FROM_VERSION:
        name = "score_dense"
    if name is None:
        return None
    return {"name": name, "score": scenario.protocol.score} if name == "score_dense" else {"name": name}
