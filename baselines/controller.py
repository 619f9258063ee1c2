"""The interface every controller (baseline or learning agent) implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Controller(Protocol):
    """A controller decides the ECN action of an :class:`~ecngym.envs.EcnTuningEnv`.

    The contract, as :func:`ecngym.envs.rollout.run_episode` (and ``ecngym eval``) drives it::

        obs, info = env.reset(seed=seed)
        controller.reset(env)
        for step in count():
            if step % controller.interval_steps == 0:
                action = controller.act(obs, info)      # else the last action is held
            obs, reward, terminated, truncated, info = env.step(action)

    * It may act on the **observation** (what a learning agent sees) or on the **raw telemetry**
      of the last interval, ``info["telemetry"]`` (per-port arrays of every fabric port, e.g.
      ``mean_queue_bytes``, ``utilization``, ``ecn_marked_packets``, ``distinct_flows``; the
      controlled ports are the rows ``info["ports"]``; ``info["time_ns"]`` is the simulated
      time). The info that ``reset`` returns carries the same keys for t = 0.
    * It acts at **its own interval**: every ``interval_steps`` env steps (one env step is
      ``EnvView(env).interval_ns`` of simulated time); in between, its last action is
      held. A controller whose period is a time (PRED's T_QLA = 5 RTT) sets ``interval_steps``
      in :meth:`reset` from the env's interval.
    * :meth:`act` returns an element of ``env.action_space``; the env raises
      :class:`ecngym.error.InvalidAction` otherwise. Read the env's ports, rates, interval and
      current settings through :class:`ecngym.envs.view.EnvView` (``EnvView(env)`` in
      :meth:`reset`), and turn byte settings into actions with ``EnvView.encode``; knobs outside
      the action space (PFC per switch, the port AQM policy) are set through the view too.

    Optional members (the runner and ``ecngym eval`` use them when present):

    * ``observe(observation, info)``: called after **every** env step, also between decisions
      (to average telemetry over the controller's own period).
    * ``log``: a list of per-decision records (dicts of scalars: step, λ, A/B outcome,
      temperature, accepted move ...), reset by :meth:`reset`; ``ecngym eval`` saves it with
      the episode's results (``controller_log.csv``).
    * ``env_overrides(env) -> dict``: ``gymnasium.make`` overrides the controller needs (e.g. a
      continuous action space to set arbitrary thresholds); ``ecngym eval`` rebuilds the env with
      them. Traces do not depend on the action space, so the trace hash is unchanged.
    * ``inference``: an :class:`~ecngym.agents.inference.InferenceCounter`, whose counts join the
      episode's metrics; a class whose counter adds counts of its own (``extra``) names them in a
      class attribute ``extra_metrics`` (LAECN: ``("policy_forward_passes",)``), so that
      ``ecngym run`` can check ``leaderboard.score`` against them before it simulates anything.
    * ``forks``: ``True`` for a controller that forks the process while it acts (branches of the
      fabric, :mod:`ecngym.envs.branch`): ``ecngym eval`` then starts no thread of its own (no
      spinner) while an episode runs, since a fork refuses to run beside other threads.

    A controller is built from ``configs/controller/<name>.yaml`` (``_target_`` plus keyword
    arguments) by :func:`ecngym.baselines.registry.build_controller`; bad parameters raise
    :class:`ecngym.error.ConfigError` naming ``controller.<field>``.

    Attributes:
        name: Short name for tables and results (``"static_dcqcn"``, ``"sb3_ppo"``).
        interval_steps: Act every this many env steps (≥ 1).
    """

    name: str
    interval_steps: int

    def reset(self, env: Any) -> None:
        """Prepare for a new episode of ``env`` (read its action space, ports, templates, interval).

        Called after ``env.reset``, before the first :meth:`act`.
        """

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """Return an action from ``env.action_space`` for the next ``interval_steps`` steps.

        Args:
            observation: The env's observation after the last step (or the reset).
            info: The info of that step (or the reset): ``telemetry``, ``ports``, ``time_ns``.
        """
