"""ACC: automatic ECN tuning with multi-agent Double DQN and shared weights (Yan et al., SIGCOMM'21).

What the public record pins down (PRED §III-B, LAECN §I; docs: concepts/prior-art.md §7, algorithms/pred.md §4.1,
algorithms/laecn.md §4)
and how it maps here (every [OURS] / [UNSPEC] value is in ``configs/agent/acc.yaml`` with its
source):

* **Agents**: one per switch, distributed, one set of weights shared by all of them (parameter
  sharing over :class:`~ecngym.envs.multi_agent.EcnTuningParallelEnv`); ``granularity=port``
  (default) applies it per egress port with the port's own history (LAECN §III-A; docs: algorithms/laecn.md §3.1
  [OURS]),
  ``granularity=switch`` gives one agent per switch seeing the mean and max over its ports.
* **State**: the last k intervals of the step-mapped queue, the output rate (utilisation), the
  ECN-marked rate and the current (Kmin, Kmax, Pmax) (PRED §III-B, LAECN §III-B; docs: algorithms/pred.md §4.1;
  algorithms/laecn.md §3.2 step map).
* **Action**: an ECN template (the env's discrete templates, always including the static one).
* **Reward**: ω·U + (1 − ω)·Q_step (LAECN §III-C; docs: algorithms/laecn.md §3.4 without LAECN's trigger penalty).
* **Learner**: Double DQN (:class:`~ecngym.agents.ddqn.DoubleDQN`, SB3) or RLlib's DQN with
  double-Q and one shared policy (:func:`ecngym.agents.rllib.shared_policy_dqn`).
* **Schedule**: a decision every Δt = 15 base RTTs, no gating (LAECN; docs: algorithms/laecn.md §4 [OURS]).
* **Training**: offline on a set of traces (the workload's traces over training seeds), then
  online fine-tuning on the deployment scenario with little exploration (``online``), as ACC
  combines offline and online training (docs: concepts/prior-art.md §7).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.agents.acting_nets import ActingNets
from ecngym.agents.config import AccConfig, agent_env_config
from ecngym.agents.controller import LearnedController
from ecngym.agents.inference import mlp_flops
from ecngym.agents.registry import AgentKind
from ecngym.agents.rllib import train_acc_rllib_run
from ecngym.agents.saved_run import load_saved, save_agent_meta
from ecngym.agents.training_run import (
    check_resume_total,
    check_resumed_hyperparams,
    check_warm_up,
    resumed_seed,
    start_training,
)
from ecngym.error import ConfigError
from ecngym.files import check_input_file
from ecngym.validation import check_whole


class ConstantSchedule:
    """A constant exploration rate (picklable, for online fine-tuning)."""

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def __call__(self, progress_remaining: float) -> float:
        """The constant, whatever the progress."""
        return self.value


def make_shared_vec_env(env_config: Any, granularity: str, monitor_file: Path | None = None) -> Any:
    """The parallel env of ``env_config`` as one SB3 VecEnv (one sub-env per agent), monitored.

    Returns:
        A ``VecMonitor`` over :class:`~ecngym.envs.adapters.SharedPolicyVecEnv` (each agent's
        episode returns land in ``monitor_file``).
    """
    from stable_baselines3.common.vec_env import VecMonitor

    from ecngym.envs.adapters import SharedPolicyVecEnv
    from ecngym.envs.multi_agent import EcnTuningParallelEnv

    par = EcnTuningParallelEnv(env_config, agent_granularity=granularity)
    if monitor_file is not None:
        monitor_file.parent.mkdir(parents=True, exist_ok=True)
    return VecMonitor(SharedPolicyVecEnv(par), filename=str(monitor_file) if monitor_file else None)


def shared_env(venv: Any) -> Any:
    """The :class:`SharedPolicyVecEnv` under a ``VecMonitor``."""
    return getattr(venv, "venv", venv)


def _curve_callback(path: Path, n_agents: int, every: int) -> Any:
    """An SB3 callback writing the learning curve (loss, mean Q, ε, mean step reward) to ``path``."""
    from stable_baselines3.common.callbacks import BaseCallback

    class LearningCurve(BaseCallback):
        def _on_training_start(self) -> None:
            self._rewards: list[float] = []
            self._start = time.perf_counter()
            if not path.exists():
                path.write_text("env_steps,transitions,loss,q_mean,exploration,mean_reward,wall_s\n")

        def _on_step(self) -> bool:
            self._rewards.append(float(np.mean(self.locals["rewards"])))
            steps = self.model.num_timesteps // n_agents
            if steps % every == 0:
                m = self.model
                with path.open("a") as f:
                    f.write(f"{steps},{m.num_timesteps},{m.last_loss:.6g},{m.last_q_mean:.6g},"
                            f"{m.exploration_rate:.4g},{np.mean(self._rewards):.6g},"
                            f"{time.perf_counter() - self._start:.1f}\n")
                self._rewards = []
            return True

    return LearningCurve()


def _checkpoint_callback(record_episodes: Any, every: int, folder: Path) -> Any:
    """SB3's ``CheckpointCallback`` (weights and replay buffer every ``every`` env steps), recording first.

    Before each save it calls ``record_episodes``, which stores the traces trained on so far in the
    model (saved in its zip): a resume from that checkpoint knows them.
    """
    from stable_baselines3.common.callbacks import CheckpointCallback

    class RecordingCheckpoint(CheckpointCallback):
        def _on_step(self) -> bool:
            if self.n_calls % self.save_freq == 0:
                record_episodes()
            return super()._on_step()

    return RecordingCheckpoint(every, str(folder), "model", save_replay_buffer=True)


def acc_meta(agent: dict[str, Any], env_cfg: Any, venv: Any, seed: int) -> dict[str, Any]:
    """What :class:`AccController` reads beside an SB3 ACC model (``agent.json``), for ``venv``'s env."""
    par = shared_env(venv).par_env
    return {"agent": agent["name"], "framework": "sb3", "granularity": agent["granularity"], "env": agent["env"],
            "env_config": env_cfg.as_dict(), "n_agents": venv.num_envs,
            "n_actions": int(par.action_space(par.possible_agents[0]).n), "seed": seed}


def train_acc(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int, seed: int,
              progress_bar: bool = True, checkpoint_every: int = 0, resume: str | None = None,
              threads: Any = None, device: str = "cpu", callbacks: list[Any] | None = None,
              episode_seeds: list[int] | None = None) -> Path:
    """Train ACC with SB3: offline on the scenario's traces, then (optionally) online fine-tuning.

    Writes ``out_dir/model.zip``, ``out_dir/agent.json``, the learning curve ``curve.csv`` and the
    per-agent episode returns ``monitor/*.monitor.csv``; with ``checkpoint_every``, checkpoints
    (weights and replay buffer) in ``out_dir/checkpoints``.

    Args:
        base_env: The scenario (``EnvConfig`` fields: a registered preset merged with overrides).
        agent: The ACC config (``configs/agent/acc.yaml`` merged with overrides).
        out_dir: Run directory.
        timesteps: Env steps (control intervals) of offline training, each giving one transition
            per agent; a resumed run's total, the checkpoint's steps included.
        seed: Seed of the learner and of the training traces.
        progress_bar: Show a progress bar.
        checkpoint_every: Save a checkpoint every this many env steps (0 = never).
        resume: A checkpoint or ``model.zip`` to continue from (its replay buffer too, if saved).
        threads: Threads per torch / BLAS pool (:func:`ecngym.agents.threads.limit_threads`).
        device: Torch device of the learner (``"cpu"``, ``"cuda"``).
        callbacks: Further SB3 callbacks of the offline phase (``ecngym bench train --plateau``
            evaluates the policy with one); one returning False ends that phase early.
        episode_seeds: Reset seeds of the offline episodes, in turn (a benchmark scenario's train
            seeds: :func:`ecngym.agents.seeds.cycle_episode_seeds`); None: drawn from ``seed``.

    Returns:
        The saved model's path.

    Raises:
        ConfigError: On a bad count, granularity, hyperparameter or resume path, a resumed
            checkpoint that has already trained ``timesteps``, or a ``learning_starts`` the run
            never gets past (it would save untrained weights).
    """
    from stable_baselines3.common.callbacks import CallbackList

    from ecngym.agents.ddqn import DoubleDQN

    timesteps, seed, checkpoint_every, granularity, out_dir, env_cfg = start_training(
        base_env, agent, out_dir, timesteps=timesteps, seed=seed, checkpoint_every=checkpoint_every, threads=threads)
    venv = make_shared_vec_env(env_cfg, granularity, out_dir / "monitor" / "offline")
    if episode_seeds is not None:
        from ecngym.agents.seeds import cycle_episode_seeds

        cycle_episode_seeds(shared_env(venv).par_env, episode_seeds)
    n_agents = venv.num_envs
    hyper = dict(agent["hyperparams"])
    transitions = timesteps * n_agents
    hyper["exploration_fraction"] = _exploration_fraction(agent, timesteps, n_agents)
    episodes: list[dict[str, Any]] = []
    try:
        if resume:
            model = _resume(DoubleDQN, resume, venv, device)
            _check_same_hyperparams(model, hyper)
            check_resume_total(timesteps, model.num_timesteps // n_agents)
            episodes = list(model.trained_episodes)  # the resumed run's traces so far (eval refuses them too)
            # SB3's load seeds everything (the env's traces too) with the checkpoint's seed: use the run's
            model.set_random_seed(resumed_seed(seed, len(episodes)))
        else:
            try:
                model = DoubleDQN("MlpPolicy", venv, seed=seed, device=device, verbose=0, **hyper)
            except (AssertionError, ValueError, TypeError) as exc:
                raise ConfigError("agent.hyperparams", f"DoubleDQN refused them: {exc}") from None
        online = agent.get("online") or {}
        online_steps = check_whole("agent.online.timesteps", online.get("timesteps", 0), 0)
        # SB3 takes its first gradient step once more than learning_starts transitions were collected
        # (num_timesteps: one per agent per env step, a resumed model's included, as total_timesteps)
        collected = (timesteps + online_steps) * n_agents
        online_text = f" + agent.online.timesteps {online_steps}" if online_steps else ""
        resumed = f", the resumed model's {model.num_timesteps} included" if resume else ""
        check_warm_up("agent.hyperparams.learning_starts", model.learning_starts, collected - 1,
                      f"{collected} transitions (total_timesteps {timesteps}{online_text} env steps x {n_agents} "
                      f"agents{resumed})")
        earlier = list(episodes)

        def record_episodes() -> None:  # saved in the model's zip: a resume from it knows its traces
            model.trained_episodes = earlier + [{**e, "phase": "offline"} for e in shared_env(venv).episodes]

        curve = _curve_callback(out_dir / "curve.csv", n_agents, max(1, timesteps // 100))
        offline = [curve, *(callbacks or [])]
        if checkpoint_every:
            offline.append(_checkpoint_callback(record_episodes, checkpoint_every, out_dir / "checkpoints"))
        # a resumed model trains up to the run's total: SB3 adds its own count to the steps asked for
        model.learn(total_timesteps=transitions - model.num_timesteps, progress_bar=progress_bar,
                    callback=CallbackList(offline), reset_num_timesteps=not resume)
        record_episodes()
        episodes = list(model.trained_episodes)
        if online_steps:
            online_cfg = agent_env_config({**base_env, "seed": seed + 1, **(online.get("env") or {})}, agent["env"])
            online_env = make_shared_vec_env(online_cfg, granularity, out_dir / "monitor" / "online")
            if online_env.num_envs != n_agents:
                raise ConfigError("agent.online.env", f"has {online_env.num_envs} agents, the offline scenario "
                                                      f"{n_agents}: fine-tune on the same fabric")
            venv.close()
            venv = online_env
            model.set_env(venv)
            model.exploration_schedule = ConstantSchedule(online.get("exploration_eps", 0.01))
            model.learn(total_timesteps=online_steps * n_agents, progress_bar=progress_bar,
                        callback=curve, reset_num_timesteps=False)
            episodes += [{**e, "phase": "online"} for e in shared_env(venv).episodes]
        model.trained_episodes = episodes
        path = out_dir / "model.zip"
        model.save(str(path))
        save_agent_meta(out_dir, {
            **acc_meta(agent, env_cfg, venv, seed),
            "timesteps": {"offline": timesteps, "online": online_steps}, "hyperparams": hyper,
            "last_loss": model.last_loss, "last_q_mean": model.last_q_mean, "episodes": episodes})
    finally:
        venv.close()
    return path


def _exploration_fraction(agent: dict[str, Any], timesteps: int, n_agents: int) -> float:
    """ε's schedule as SB3 reads it: a share of the run's transitions (all agents')."""
    per_agent = agent.get("exploration_decisions_per_agent")
    return min(1.0, per_agent / timesteps if per_agent else agent["exploration_decisions"] / (timesteps * n_agents))


def train_acc_resumable(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int, seed: int,
                        episode_seeds: list[int], every: int = 0, hook: Any = None, halt_at: int | None = None,
                        progress_bar: bool = False, threads: Any = None) -> Path:
    """Train ACC offline (SB3) so that a killed run resumes from its saved state (a benchmark tier's run).

    As :func:`train_acc` without online fine-tuning, checkpoints or ``resume=``: the run's state
    (weights, optimizer, replay, RNGs, counters, the traces played) is saved in ``out_dir/state`` at
    episode ends every ``every`` env steps, after ``hook(model, env_steps)`` (the benchmark's
    validation), by :func:`ecngym.agents.resumable.learn_resumable`; a rerun goes on from it.

    Args:
        base_env: The scenario (``EnvConfig`` fields).
        agent: The ACC config.
        out_dir: Run directory (``model.zip``, ``agent.json``, ``train_curve.csv``, ``state/``).
        timesteps: Env steps of the whole run.
        seed: Seed of the learner.
        episode_seeds: Reset seeds of the episodes, in turn.
        every: Env steps between state saves (0: never).
        hook: Called at each save; True stops the run.
        halt_at: Stop at the first save at or past this many env steps (tests of the resume).
        progress_bar: SB3's progress bar.
        threads: Threads per torch / BLAS pool.

    Returns:
        ``model.zip``'s path; ``agent.json`` holds the run's record (``run``: env steps, stopped,
        resumed from) and names its curve (``curve``: the agents' mean return per episode).

    Raises:
        ConfigError: As :func:`train_acc`; naming ``agent.online.timesteps`` if it is not 0.
    """
    from ecngym.agents.ddqn import DoubleDQN
    from ecngym.agents.resumable import TRAIN_CURVE, learn_resumable, saved_run
    from ecngym.agents.seeds import cycle_episode_seeds

    timesteps, seed, _, granularity, out_dir, env_cfg = start_training(
        base_env, agent, out_dir, timesteps=timesteps, seed=seed, checkpoint_every=0, threads=threads)
    if (agent.get("online") or {}).get("timesteps", 0):
        raise ConfigError("agent.online.timesteps", "a resumable (tier) run trains offline only; set it to 0")
    saved, starts = saved_run(out_dir, 1, "agent")
    venv = make_shared_vec_env(env_cfg, granularity)
    try:
        cycle_episode_seeds(shared_env(venv).par_env, episode_seeds, start=starts[0])
        n_agents = venv.num_envs
        hyper = {**agent["hyperparams"], "exploration_fraction": _exploration_fraction(agent, timesteps, n_agents)}
        if hyper.get("overlap_updates"):
            raise ConfigError("agent.hyperparams.overlap_updates", "got true; a resumable run saves its state "
                                                                   "between updates: set it to false")
        try:
            model = DoubleDQN("MlpPolicy", venv, seed=seed, device="cpu", verbose=0, **hyper)
        except (AssertionError, ValueError, TypeError) as exc:
            raise ConfigError("agent.hyperparams", f"DoubleDQN refused them: {exc}") from None
        check_warm_up("agent.hyperparams.learning_starts", model.learning_starts, timesteps * n_agents - 1,
                      f"{timesteps * n_agents} transitions ({timesteps} env steps x {n_agents} agents)")
        path, record = learn_resumable(model, venv, out_dir, timesteps, saved, every=every, hook=hook,
                                       halt_at=halt_at, progress_bar=progress_bar, per_step=n_agents,
                                       played=lambda v: [shared_env(v).episodes])
        episodes = [{**e, "phase": "offline"} for e in record["traces"][0]]
        save_agent_meta(out_dir, {
            **acc_meta(agent, env_cfg, venv, seed), "timesteps": {"offline": timesteps, "online": 0},
            "hyperparams": hyper, "last_loss": model.last_loss, "last_q_mean": model.last_q_mean,
            "episodes": episodes, "curve": TRAIN_CURVE,
            "run": {k: record[k] for k in ("env_steps", "stopped", "resumed_from")}})
    finally:
        venv.close()
    return path


def _resume(cls: Any, resume: str, venv: Any, device: str) -> Any:
    """Load a checkpoint (and its replay buffer when one was saved beside it).

    Raises:
        ConfigError: Naming ``resume``, if it names no file, or it or the replay buffer is not one
            of an ACC on this scenario.
    """
    expected = "an ACC checkpoint (a model.zip or checkpoints/model_<n>_steps.zip)"
    path = check_input_file("resume", resume, expected)
    model = load_saved("resume", path, f"{expected} of this scenario",
                       lambda: cls.load(str(path), env=venv, device=device))
    name = path.name.removesuffix(".zip")
    buffers = [path.parent / f"{name.replace('model_', 'model_replay_buffer_')}.pkl",
               path.parent / "replay_buffer.pkl"]
    buf = next((b for b in buffers if b.is_file()), None)
    if buf is not None:
        load_saved("resume", buf, "the replay buffer of that checkpoint", lambda: model.load_replay_buffer(str(buf)))
    return model


def _check_same_hyperparams(model: Any, hyper: dict[str, Any]) -> None:
    """Refuse hyperparameters that differ from the resumed checkpoint's: a resume continues with its own.

    ``exploration_fraction`` is left out: each run sets it from ``exploration_decisions``.

    Raises:
        ConfigError: Naming ``agent.hyperparams.<key>``, with both values.
    """
    from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit

    given = {key: value for key, value in hyper.items() if key != "exploration_fraction" and hasattr(model, key)}
    freq = given.get("train_freq")
    if freq is not None:  # SB3 keeps it as TrainFreq(n, unit); given as n or [n, unit]
        n, unit = freq if isinstance(freq, (list, tuple)) else (freq, "step")
        given["train_freq"] = TrainFreq(n, TrainFrequencyUnit(unit))
    check_resumed_hyperparams(given, {key: getattr(model, key) for key in given})


class AccController(LearnedController):
    """A trained ACC acting greedily on the single-agent env (``ecngym eval controller=acc``).

    Every interval, each agent (port or switch) evaluates the shared Q-network once; the
    :attr:`inference` counters record it.

    Args:
        path: The run directory of ``ecngym train agent=acc`` (or its ``model.zip``).
        deterministic: Greedy actions (default); else ε = the final exploration rate.

    Raises:
        ConfigError: Naming ``controller.path``, if it holds no ACC run (its ``agent.json`` missing,
            unreadable or lacking a key, e.g. an RLlib run's ``checkpoint``; no ``model.zip``).
    """

    name = "acc"

    def __init__(self, path: str | Path, deterministic: bool = True) -> None:
        super().__init__(path, deterministic)
        if self.meta["agent"] != "acc":
            raise ConfigError("controller.path", f"expected an ACC run, got {self.meta['agent']} "
                                                 f"({self.meta['framework']})")
        self._rng = np.random.default_rng(0)
        self.rllib_module = None
        if self.meta["framework"] == "rllib":  # the shared policy's RLModule (greedy actions)
            self.require_meta("checkpoint")
            from ray.rllib.core.rl_module.rl_module import RLModule

            module_dir = Path(self.meta["checkpoint"]) / "learner_group" / "learner" / "rl_module" / "shared"
            self.rllib_module = load_saved("controller.path", module_dir, "the shared policy of an RLlib ACC run",
                                           lambda: RLModule.from_checkpoint(str(module_dir)))
            self._flops = mlp_flops(self.rllib_module)
            self.exploration_eps = float(self.meta.get("final_eps", 0.05))
            return
        from ecngym.agents.ddqn import DoubleDQN

        weights = check_input_file("controller.path", self.run_dir / "model.zip", "the model.zip of an ACC run")
        self.model = load_saved("controller.path", weights, "the model.zip of an ACC run",
                                lambda: DoubleDQN.load(str(weights), device="cpu"))
        self.q_net = self.model.q_net
        self.q_net.set_training_mode(False)
        self._flops = mlp_flops(self.q_net)
        self.exploration_eps = float(self.model.exploration_final_eps)

    def decide(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """Greedy template per agent (one batched forward pass)."""
        import torch as th

        with th.no_grad():
            if self.rllib_module is not None:
                actions = self.rllib_module.forward_inference({"obs": th.as_tensor(obs)})["actions"].numpy()
            else:
                actions = self.q_net(th.as_tensor(obs)).argmax(dim=1).numpy()
        self.inference.decisions += len(obs)
        self.inference.forward(len(obs), self._flops)
        if not self.deterministic:
            explore = self._rng.random(len(obs)) < self.exploration_eps
            actions = np.where(explore, self._rng.integers(0, self.meta["n_actions"], len(obs)), actions)
        return actions


#: ACC (``configs/agent/acc.yaml``): SB3's DoubleDQN or RLlib's multi-agent DQN, one shared policy.
def _saved_q_network(weights: Path) -> Any:
    """The greedy Q-network of a saved SB3 run (a DoubleDQN ``model.zip``, our own file just written)."""
    from ecngym.agents.acting_nets import q_network
    from ecngym.agents.ddqn import DoubleDQN

    return q_network(DoubleDQN.load(str(weights), device="cpu"))


def _live_q_network(model: Any) -> Any:
    from ecngym.agents.acting_nets import q_network

    return q_network(model)


ACC = AgentKind(config=AccConfig, trainers={"sb3": train_acc, "rllib": train_acc_rllib_run}, controller=AccController,
                resumable=train_acc_resumable,
                acting=ActingNets(nets=("q",), saved=_saved_q_network, live=_live_q_network))
