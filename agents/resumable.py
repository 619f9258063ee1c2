"""SB3 training (DQN, PPO) that saves its state as it goes and resumes from it when killed.

:func:`train_resumable` trains like :func:`ecngym.agents.sb3.train`, in ``n_envs`` processes
(``SubprocVecEnv``; in this process for one env), and at **clean points** (every env has just
finished an episode and no rollout is half collected: the start of a rollout right after an
episode end) it may

* call ``hook(model, env_steps)`` (the benchmark scores the policy on validation seeds there;
  the hook returns whether to stop: a converged tier's stopping rule), then
* save the run's state (:mod:`ecngym.agents.train_state`: weights, optimizer, replay buffer, RNG
  states, counters, the trainer's reward curve, the traces played) in ``out_dir/state``,

once at least ``every`` env steps after the last time. A run started again with the same
arguments finds the state and goes on from it: each env resumes with the trace that comes next in
its cycle, and the model with everything an unbroken run would hold at that point, so the resumed
run reaches the same weights (checked by ``tests/agents/test_resumable.py``). A PPO rollout must end
on an episode end for a clean point to come (its ``n_steps`` a multiple of the episode length).

Only files this module wrote are read back (JSON and ``.npz``; no pickle). The final model is
written with SB3's own ``save`` (``model.zip``, our file, read only by ecngym's checkpoint writer).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.agents.train_state import load_state, restore_sb3_state, save_state, sb3_state, state_exists
from ecngym.validation import check_whole

STATE_DIR = "state"
#: The trainer's own reward per finished episode (env steps at its end, return, length).
TRAIN_CURVE = "train_curve.csv"


class TrainingHalted(Exception):
    """Raised when a run stops at ``halt_at`` (as if killed there: the state is saved, no final model)."""


def _env_fn(make_env: Callable[[int, int], Any], rank: int, start: int, threads: int | None) -> Any:
    """Env ``rank``, its traces starting ``start`` episodes into its cycle, in SB3's Monitor."""
    from stable_baselines3.common.monitor import Monitor

    if threads:
        from ecngym.agents.threads import limit_threads

        limit_threads(threads)
    return Monitor(make_env(rank, start))


def _resume_callback(state_dir: Path, every: int, hook: Callable[[Any, int], bool] | None, halt_at: int | None,
                     saved: dict[str, Any] | None, per_step: int = 1,
                     played: Callable[[Any], list[list[dict[str, Any]]]] | None = None) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    def traces_of(venv: Any) -> list[list[dict[str, Any]]]:
        return played(venv) if played is not None else venv.get_attr("episodes")

    class ResumeCallback(BaseCallback):
        """Hooks and state saves at clean points (module docstring); the trainer's reward per episode.

        With ``per_step`` > 1 the VecEnv's envs are the agents of one parallel env (ACC's shared
        policy): an env step is ``per_step`` of SB3's timesteps, the agents' episodes end together
        and count as one, and the curve holds the agents' mean return.
        """

        def _on_training_start(self) -> None:
            n = len(traces_of(self.training_env))
            extra = (saved or {}).get("run", {})
            self.episodes_done = list(extra.get("episodes_done", [0] * n))
            self.curve: list[list[float]] = [list(r) for r in extra.get("train_curve", [])]
            self.traces: list[list[dict[str, Any]]] = [list(t) for t in extra.get("traces", [[] for _ in range(n)])]
            self.next_at = int(extra.get("next_at", every))
            self.stopped = bool(extra.get("stopped", False))
            self.stopped_at = extra.get("stopped_at")
            self.clean = False

        def env_steps(self) -> int:
            return self.model.num_timesteps // per_step

        def _on_step(self) -> bool:
            if self.stopped:
                return False
            dones = self.locals["dones"]
            infos = self.locals["infos"]
            if per_step > 1:
                if np.all(dones):
                    self.episodes_done[0] += 1
                    returns = [float(i.get("episode", {}).get("r", np.nan)) for i in infos]
                    length = int(infos[0].get("episode", {}).get("l", 0))
                    self.curve.append([self.env_steps(), float(np.mean(returns)), length])
            else:
                for i, (done, info) in enumerate(zip(dones, infos, strict=True)):
                    if done:
                        self.episodes_done[i] += 1
                        ep = info.get("episode", {})
                        self.curve.append([self.model.num_timesteps, float(ep.get("r", np.nan)), int(ep.get("l", 0))])
            self.clean = bool(np.all(dones))
            return True

        def _on_rollout_start(self) -> None:
            steps = self.env_steps()
            if not self.clean or steps < self.next_at:
                return
            self.clean = False
            self.next_at = (steps // every + 1) * every
            if hook is not None and hook(self.model, steps):
                self.stopped, self.stopped_at = True, steps
            self.save()
            if halt_at is not None and steps >= halt_at:
                raise TrainingHalted(f"halted at {steps} env steps")

        def run_record(self) -> dict[str, Any]:
            now = traces_of(self.training_env)
            # the episode each env has just started is the resumed env's first: recorded again there
            traces = [old + new[:-1] if new else old for old, new in zip(self.traces, now, strict=True)]
            return {"env_steps": self.env_steps(), "episodes_done": self.episodes_done, "train_curve": self.curve,
                    "traces": traces,
                    "next_at": self.next_at, "stopped": self.stopped, "stopped_at": self.stopped_at}

        def save(self) -> None:
            save_state(state_dir, {**sb3_state(self.model), "run": self.run_record()})

    return ResumeCallback()


def write_train_curve(path: Path, rows: list[list[float]]) -> None:
    """The trainer's reward curve (``env_steps``, ``episode_return``, ``episode_length``) as CSV."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["env_steps", "episode_return", "episode_length"])
        w.writerows(rows)


def train_resumable(make_env: Callable[[int, int], Any], algorithm: str, total_timesteps: int, seed: int,
                    out_dir: Path, *, n_envs: int = 1, hyperparams: dict[str, Any] | None = None,
                    every: int = 0, hook: Callable[[Any, int], bool] | None = None, progress_bar: bool = False,
                    threads: Any = None, halt_at: int | None = None) -> tuple[Path, dict[str, Any]]:
    """Train (or resume) an SB3 DQN / PPO; save its state every ``every`` env steps at clean points.

    Args:
        make_env: ``make_env(rank, start)``: env ``rank`` whose episodes take their traces from its
            cycle, starting ``start`` episodes in (a resumed env goes on where it stopped).
        algorithm: ``"dqn"`` or ``"ppo"``.
        total_timesteps: Env steps of the whole run (summed over envs; a resumed run's included).
        seed: Seed of the algorithm.
        out_dir: Run folder: ``state/`` (the resumable state), ``model.zip``, :data:`TRAIN_CURVE`.
        n_envs: Env processes (1: in this process).
        hyperparams: The algorithm's keyword arguments (:func:`~ecngym.agents.sb3.check_hyperparams`).
        every: Env steps between clean points that call ``hook`` and save the state (0: never).
        hook: ``hook(model, env_steps)`` at those points; True stops the run (it then ends there).
        progress_bar: SB3's progress bar.
        threads: Threads per torch / BLAS pool (:func:`ecngym.agents.threads.limit_threads`).
        halt_at: Stop at the first state save at or past this many env steps, as if killed there
            (raises :class:`TrainingHalted`; for tests of the resume).

    Returns:
        The model's path and the run's record (``traces`` per env, ``train_curve``, ``stopped``,
        ``env_steps``, ``resumed_from`` env steps or None).

    Raises:
        ConfigError: On a bad count or hyperparameter (naming the field).
        TrainingHalted: At ``halt_at``.
    """
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from ecngym.agents.sb3 import MAX_ENVS, check_hyperparams, in_process_vec_env_class, new_model
    from ecngym.agents.threads import limit_threads

    n_threads = limit_threads(threads)
    hyperparams = check_hyperparams(algorithm, hyperparams)
    total_timesteps = check_whole("total_timesteps", total_timesteps, 1)
    n_envs = check_whole("n_envs", n_envs, 1, MAX_ENVS)
    every = check_whole("every", every, 0)
    saved, starts = saved_run(out_dir, n_envs, "n_envs")
    fns = [partial(_env_fn, make_env, i, starts[i], n_threads if n_envs > 1 else None) for i in range(n_envs)]
    venv = SubprocVecEnv(fns) if n_envs > 1 else in_process_vec_env_class()(fns)
    try:
        model = new_model(algorithm, venv, seed, hyperparams)
        return learn_resumable(model, venv, out_dir, total_timesteps, saved, every=every, hook=hook,
                               halt_at=halt_at, progress_bar=progress_bar)
    finally:
        venv.close()


def saved_run(out_dir: Path, streams: int, field: str) -> tuple[dict[str, Any] | None, list[int]]:
    """The run's saved state in ``out_dir/state`` (None: a new run) and the episodes each env has played.

    Args:
        out_dir: The run folder (created).
        streams: Envs of the run, each with its own cycle of traces.
        field: The option that sets ``streams``, named if the state ran another number.

    Raises:
        ConfigError: Naming ``field`` if the saved state ran another number of envs.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    state_dir = out_dir / STATE_DIR
    saved = load_state(state_dir) if state_exists(state_dir) else None
    starts = list(saved["run"]["episodes_done"]) if saved else [0] * streams
    if len(starts) != streams:
        from ecngym.error import ConfigError

        raise ConfigError(field, f"got {streams}, but the saved state in {state_dir} ran {len(starts)} envs; "
                                 f"resume with its {field}")
    return saved, starts


def learn_resumable(model: Any, venv: Any, out_dir: Path, total_env_steps: int, saved: dict[str, Any] | None, *,
                    every: int = 0, hook: Callable[[Any, int], bool] | None = None, halt_at: int | None = None,
                    progress_bar: bool = False, per_step: int = 1,
                    played: Callable[[Any], list[list[dict[str, Any]]]] | None = None,
                    callbacks: list[Any] | None = None) -> tuple[Path, dict[str, Any]]:
    """Train a freshly built SB3 model on ``venv`` up to ``total_env_steps``, from ``saved`` if given.

    The core of :func:`train_resumable`, shared with ACC's tier runs (its DoubleDQN over one
    parallel env whose agents are the VecEnv's envs: ``per_step`` = agents).

    Args:
        model: The model, built with the run's seed and hyperparameters on ``venv``.
        venv: Its VecEnv, whose envs resume their traces where :func:`saved_run` said.
        out_dir: The run folder (``state/``, ``model.zip``, :data:`TRAIN_CURVE`).
        total_env_steps: Env steps of the whole run (a resumed run's included).
        saved: The saved state (:func:`saved_run`), or None.
        every: Env steps between clean points that call ``hook`` and save the state (0: never).
        hook: ``hook(model, env_steps)``; True stops the run.
        halt_at: As in :func:`train_resumable`.
        progress_bar: SB3's progress bar.
        per_step: SB3 timesteps per env step (agents of a shared-policy env; 1 otherwise).
        played: ``played(venv)``: the traces each env has started (default: its envs' ``episodes``).
        callbacks: Further SB3 callbacks.

    Returns:
        As :func:`train_resumable`.

    Raises:
        TrainingHalted: At ``halt_at``.
    """
    from stable_baselines3.common.callbacks import CallbackList

    from ecngym.agents.sb3 import unchecked_distributions

    out_dir = Path(out_dir)
    state_dir = out_dir / STATE_DIR
    if saved is not None:
        restore_sb3_state(model, saved, venv.reset())
    callback = _resume_callback(state_dir, every or total_env_steps + 1, hook if every else None, halt_at, saved,
                                per_step, played)
    remaining = total_env_steps * per_step - model.num_timesteps
    learns = remaining > 0 and not (saved and saved["run"]["stopped"])
    if learns:
        with unchecked_distributions():
            model.learn(total_timesteps=remaining, progress_bar=progress_bar,
                        callback=CallbackList([callback, *(callbacks or [])]), reset_num_timesteps=saved is None)
        record = callback.run_record()
    else:  # the saved run had finished its training (its stopping rule or budget): nothing to add
        record = dict(saved["run"])
    path = out_dir / "model.zip"
    model.save(str(path))
    if learns:  # every trace played, the current episodes' included
        now = played(venv) if played is not None else venv.get_attr("episodes")
        record["traces"] = [old + new for old, new in zip(callback.traces, now, strict=True)]
    write_train_curve(out_dir / TRAIN_CURVE, record["train_curve"])
    # (a run its hook stopped took one more env step before SB3 read the stop; it changed no weight)
    record.update(env_steps=int(record.get("stopped_at") or model.num_timesteps // per_step),
                  resumed_from=None if saved is None else int(saved["counters"]["num_timesteps"]) // per_step)
    return path, record
