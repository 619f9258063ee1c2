"""RLlib: multi-agent PPO, and ACC's multi-agent double-Q DQN, with one policy shared by every agent."""

from __future__ import annotations

import json
import logging
import os
import pickle
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ENV_NAME = "ecngym_multi_agent"
#: Beside every ACC checkpoint: the episodes (seed, trace hash) its env runners played
EPISODES_FILE = "ecngym_episodes.json"
#: Beside every ACC checkpoint: the ``agent.hyperparams`` it trained with (a resume refuses others)
HYPERPARAMS_FILE = "ecngym_hyperparams.json"
#: Beside every ACC checkpoint: the replay buffer's state (RLlib's checkpoints of the new API stack hold none)
REPLAY_FILE = "ecngym_replay_buffer.pkl"
#: What ``resume=`` must name, for its errors
RESUME_EXPECTED = "an RLlib checkpoint of ACC on this scenario (checkpoints/iter_<n> or rllib_checkpoint)"


def shared_policy_of(agent_id: Any, *args: Any, **kwargs: Any) -> str:
    """RLlib's policy mapping: every agent acts with the one policy ``"shared"``.

    A module-level function, not a lambda: the replay buffer's episodes hold it, and a checkpoint
    pickles them (:data:`REPLAY_FILE`).
    """
    return "shared"


def acc_env_config(env_cfg: Any, granularity: str) -> dict[str, Any]:
    """RLlib's ``env_config`` for ACC's parallel env (:func:`~ecngym.envs.adapters.rllib_env_creator`).

    The resolved config is the env's base (``scenario``), not overrides of the default scenario:
    as overrides its free mappings merged into the default's (a workload without incasts gained
    the default's 8-way incasts).

    Args:
        env_cfg: The :class:`~ecngym.envs.EnvConfig` the agent trains on.
        granularity: ``"port"`` or ``"switch"`` agents.
    """
    return {"scenario": env_cfg.as_dict(), "agent_granularity": granularity}


def recording_env_creator(env_config: dict[str, Any]) -> Any:
    """:func:`~ecngym.envs.adapters.rllib_env_creator` whose env remembers the traces it played.

    Every reset appends ``{"episode_seed", "trace_hash"}`` to the env's ``played_episodes`` (as
    SB3's :class:`~ecngym.envs.adapters.SharedPolicyVecEnv` records them), so that a trained run
    lists its training traces and ``ecngym eval`` can refuse them.
    """
    from ecngym.envs.adapters import rllib_env_creator

    env = rllib_env_creator(env_config)
    env.played_episodes = []
    inner = env.par_env.reset
    first_agent = env.par_env.possible_agents[0]

    def reset(seed: int | None = None, options: dict | None = None) -> Any:
        obs, infos = inner(seed=seed, options=options)
        info = infos[first_agent]
        env.played_episodes.append({"episode_seed": info["episode_seed"], "trace_hash": info["trace_hash"]})
        return obs, infos

    env.par_env.reset = reset
    return env


def _runner_episodes(runner: Any) -> list[dict[str, Any]]:
    """The episodes played by one env runner's envs (runs in the runner)."""
    vec = getattr(runner, "env", None)
    return [e for sub in (getattr(vec, "envs", None) or []) for e in getattr(sub.unwrapped, "played_episodes", [])]


def played_episodes(algo: Any) -> list[dict[str, Any]]:
    """Every episode the algorithm's env runners (local and remote) have played so far."""
    return [e for runner in algo.env_runner_group.foreach_env_runner(_runner_episodes) for e in runner]


def shared_policy_ppo(env_config: dict[str, Any], *, train_batch_size: int = 400, minibatch_size: int = 64,
                      num_epochs: int = 2, num_env_runners: int = 0, seed: int = 0) -> Any:
    """An RLlib ``PPOConfig`` on :class:`~ecngym.envs.multi_agent.EcnTuningParallelEnv`.

    Every agent maps to the policy ``"shared"`` (ACC-style parameter sharing). Env runners are
    separate processes when ``num_env_runners > 0`` (one fabric each).

    Args:
        env_config: :class:`~ecngym.envs.EnvConfig` fields, plus optionally ``scenario`` (a registered
            scenario or a whole resolved config to start from, e.g. ``"RoceLeafSpine-v0"``) and
            ``agent_granularity`` (:func:`~ecngym.envs.adapters.rllib_env_creator`).
        train_batch_size: Environment steps per training iteration.
        minibatch_size: SGD minibatch size.
        num_epochs: Passes over each batch.
        num_env_runners: Remote sampling workers (0 = sample in the driver).
        seed: RLlib's seed.

    Returns:
        The config; ``.build_algo()`` then ``.train()``.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    from ecngym.envs.adapters import rllib_env_creator

    register_env(ENV_NAME, rllib_env_creator)
    return (PPOConfig()
            .environment(ENV_NAME, env_config=env_config)
            .env_runners(num_env_runners=num_env_runners)
            .multi_agent(policies={"shared"}, policy_mapping_fn=shared_policy_of)
            .training(train_batch_size=train_batch_size, minibatch_size=minibatch_size, num_epochs=num_epochs)
            .debugging(seed=seed))


def agents_per_env_step(env_config: dict[str, Any]) -> int:
    """How many agents act in each env step of the parallel env of ``env_config`` (builds no fabric).

    Imports nothing of Ray: ``train_acc_rllib`` checks its warm-up with it before Ray starts.
    """
    from ecngym.envs.adapters import parallel_env_of

    return len(parallel_env_of(env_config).possible_agents)


def acc_counts_in_env_steps(agent: dict[str, Any], n_agents: int, timesteps: int) -> dict[str, int]:
    """ACC's step-counted hyperparameters in RLlib's unit, env steps, as SB3's ACC applies them.

    ``configs/agent/acc.yaml`` counts ``learning_starts`` and ``exploration_decisions`` in agent
    transitions (SB3's timesteps: one per agent per env step), ``target_update_interval`` in
    gradient steps, and updates ``gradient_steps`` times every ``train_freq`` env steps. RLlib's
    DQN (new API stack, ``count_steps_by="env_steps"``) counts its warm-up, the ε schedule's ``t``
    and the learner's target-network period in env steps sampled, and its updates as replayed
    per sampled env steps (``training_intensity``).

    Args:
        agent: The ACC config.
        n_agents: Agents acting per env step (:func:`agents_per_env_step`).
        timesteps: Env steps of the run (SB3's ε schedule ends at the run's end if
            ``exploration_decisions`` is more than it collects).

    Returns:
        ``learning_starts`` (env steps), ``exploration_end`` (env step at which ε reaches its final
        value), ``target_update`` (env steps), ``training_intensity`` (transitions replayed per
        sampled env step).
    """
    h = agent["hyperparams"]
    train_freq, gradient_steps = int(h["train_freq"]), int(h["gradient_steps"])  # (whole, >= 1: agents.config)

    def env_steps(transitions: Any) -> int:  # rounded up: at least as many transitions as SB3's
        return -(-int(transitions) // n_agents)

    return {"learning_starts": env_steps(h["learning_starts"]),
            "exploration_end": max(1, min(env_steps(agent["exploration_decisions"]), int(timesteps))),
            "target_update": max(1, round(int(h["target_update_interval"]) * train_freq / gradient_steps)),
            "training_intensity": float(h["batch_size"]) * gradient_steps / train_freq}


def shared_policy_dqn(env_config: dict[str, Any], agent: dict[str, Any], *, timesteps: int,
                      n_agents: int | None = None, num_env_runners: int = 0, seed: int = 0,
                      device: str = "cpu") -> Any:
    """An RLlib ``DQNConfig`` for ACC: multi-agent DQN, double-Q, one policy shared by every agent.

    The hyperparameters are ACC's (``configs/agent/acc.yaml``: Table I lr / γ / batch, replay,
    warm-up, ε schedule, the six-layer MLP), mapped onto RLlib's names, and their step counts onto
    RLlib's env steps (:func:`acc_counts_in_env_steps`) so that both frameworks run the same
    schedule; RLlib's dueling head is off (ACC's DDQN is a plain Q-head) and the loss is the MSE
    of Algorithm 1.

    Args:
        env_config: The parallel env's config (:func:`~ecngym.envs.adapters.rllib_env_creator`'s: a resolved
            config as ``scenario``, or ``EnvConfig`` fields; plus ``agent_granularity``).
        agent: The ACC config.
        timesteps: Env steps the run will train for (where the ε schedule ends if the config's
            exploration is longer).
        n_agents: Agents per env step, if the caller has counted them (else
            :func:`agents_per_env_step`).
        num_env_runners: Sampling processes (0 = sample in the driver); one fabric each.
        seed: RLlib's seed.
        device: ``"cuda"`` puts the learner on a GPU (one is required then).

    Returns:
        The config; ``.build_algo()`` then ``.train()``.
    """
    from ray.rllib.algorithms.dqn import DQNConfig
    from ray.tune.registry import register_env

    h = agent["hyperparams"]
    counts = acc_counts_in_env_steps(agent, n_agents or agents_per_env_step(env_config), timesteps)
    register_env(ENV_NAME, recording_env_creator)
    config = (DQNConfig()
              # RLlib's env check resets each runner's env with seed 42 and steps it once: a trace that
              # would be recorded as trained on, the same in every run (resumed ones too), and one more
              # fabric per runner; ecngym's tests run PettingZoo's parallel API test on this env
              .environment(ENV_NAME, env_config=env_config, disable_env_checking=True)
              # each runner samples this many env steps per call; the replay ratio below keeps SB3 ACC's
              # gradient steps per sampled env step (gradient_steps / train_freq) whatever the fragment
              .env_runners(num_env_runners=num_env_runners, num_cpus_per_env_runner=1,
                           rollout_fragment_length=int(agent["rllib"]["rollout_fragment_length"]))
              .multi_agent(policies={"shared"}, policy_mapping_fn=shared_policy_of)
              .rl_module(model_config={"fcnet_hiddens": list(h["policy_kwargs"]["net_arch"]),
                                       "fcnet_activation": "relu"})
              .training(double_q=True, dueling=False, lr=float(h["learning_rate"]), gamma=float(h["gamma"]),
                        train_batch_size=int(h["batch_size"]), td_error_loss_fn=h.get("loss", "mse"),
                        target_network_update_freq=counts["target_update"],
                        num_steps_sampled_before_learning_starts=counts["learning_starts"],
                        training_intensity=counts["training_intensity"],
                        replay_buffer_config={"type": "ecngym.agents.rllib_replay.SeededMultiAgentEpisodeReplayBuffer",
                                              "capacity": int(h["buffer_size"]), "seed": seed},
                        epsilon=[[0, float(h["exploration_initial_eps"])],
                                 [counts["exploration_end"], float(h["exploration_final_eps"])]])
              .learners(num_gpus_per_learner=1 if device.startswith("cuda") else 0)
              .debugging(seed=seed))
    config.min_sample_timesteps_per_iteration = int(agent["rllib"]["train_batch_size"])
    return config


def checkpoint_hyperparams(resume: Any) -> dict[str, Any]:
    """ACC's hyperparameters (``agent.hyperparams``) that an RLlib checkpoint trained with.

    Read from :data:`HYPERPARAMS_FILE`, which :func:`train_acc_rllib` writes beside every
    checkpoint as the config gave them (RLlib's own config holds them converted to env steps,
    :func:`acc_counts_in_env_steps`, which does not invert exactly). ``overlap_updates`` (SB3's
    option) is left out: RLlib does not read it.

    Args:
        resume: The checkpoint directory (checked by :func:`resumed_episodes`).

    Raises:
        ConfigError: Naming ``resume``, if that file is missing (a checkpoint written before
            ecngym recorded it, or not one of ACC's) or is not a JSON mapping.
    """
    from ecngym.error import ConfigError
    from ecngym.files import read_json

    path = Path(resume) / HYPERPARAMS_FILE
    if not path.is_file():
        raise ConfigError("resume", f"{str(resume)!r} is not {RESUME_EXPECTED}: it has no {HYPERPARAMS_FILE} "
                                    "(the hyperparameters a resume continues with, written beside every checkpoint "
                                    "of 'ecngym train agent=acc framework=rllib'); give such a checkpoint or start "
                                    "a new run")
    saved = read_json("resume", path)
    if not isinstance(saved, dict):
        raise ConfigError("resume", f"{str(path)!r} is not a mapping of ACC's hyperparameters")
    return {k: v for k, v in saved.items() if k != "overlap_updates"}


def resumed_episodes(resume: Any) -> list[dict[str, Any]]:
    """The episodes a run resumed from ``resume`` had played (its ``ecngym_episodes.json``; none if absent).

    Args:
        resume: The RLlib checkpoint directory to resume from.

    Returns:
        The records, each with ``episode_seed`` and ``trace_hash``.

    Raises:
        ConfigError: Naming ``resume``, if it is not a checkpoint directory, or its episodes file is
            not readable JSON or not a list of such records.
    """
    from ecngym.agents.saved_run import episode_records_problem
    from ecngym.error import ConfigError
    from ecngym.files import check_directory_path, read_json

    directory = check_directory_path("resume", resume, "an RLlib checkpoint directory")
    if not directory.is_dir():
        raise ConfigError("resume", f"no RLlib checkpoint directory at {str(resume)!r}")
    path = directory / EPISODES_FILE
    if not path.exists():
        return []
    episodes = read_json("resume", path)
    problem = episode_records_problem(episodes)
    if problem is not None:
        raise ConfigError("resume", f"{str(path)!r} {problem}: not the episodes file 'ecngym train agent=acc "
                                    "framework=rllib' writes beside its checkpoints")
    return episodes


def train_acc_rllib(env_config: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int,
                    seed: int, checkpoint_every: int = 0, resume: str | None = None, progress_bar: bool = True,
                    ray_address: str | None = None, device: str = "cpu") -> tuple[Path, list[dict[str, Any]]]:
    """Train ACC with RLlib (multi-agent DQN, double-Q, one shared policy) and checkpoint it.

    Runs on this machine (``ray_address=None``: a local Ray with ``agent.rllib.num_env_runners``
    sampling processes) or on an existing cluster (``ray_address="auto"`` on a cluster node,
    ``"ray://<head>:10001"`` from outside; see the README's cluster recipe). Writes
    ``out_dir/rllib_checkpoint`` (and ``checkpoints/iter_<n>`` every ``checkpoint_every`` env
    steps), each with the episodes played so far (``ecngym_episodes.json``: seed and trace hash,
    a resumed run's included), the hyperparameters and the replay buffer (so that a resume goes on
    as SB3's ACC does, with the transitions collected so far), and ``curve.csv`` (one row per
    iteration).

    Args:
        env_config: The parallel env's config (:func:`~ecngym.envs.adapters.rllib_env_creator`'s: a resolved
            config as ``scenario``, or ``EnvConfig`` fields; plus ``agent_granularity``).
        agent: The ACC config.
        out_dir: Run directory.
        timesteps: Env steps (agent steps summed over agents / agents) to train for; a resumed
            run's total, the checkpoint's steps included.
        seed: RLlib's seed.
        checkpoint_every: Env steps between checkpoints (0 = only the final one).
        resume: A checkpoint directory to continue from.
        progress_bar: Show a progress bar.
        ray_address: An existing Ray cluster to join (``None`` = start a local one).
        device: Torch device of the learner.

    Returns:
        The final checkpoint directory, and the episodes trained on (``episode_seed``, ``trace_hash``).

    Raises:
        ConfigError: Naming ``resume``, if it is not a checkpoint directory or its
            ``ecngym_episodes.json`` is broken (checked before Ray starts), or RLlib cannot restore
            it; naming ``total_timesteps``, if the resumed checkpoint has trained that many env
            steps already; naming ``agent.rllib.num_env_runners``, if the cluster (or this machine,
            without ``ray_address``) has fewer CPUs than runners; naming ``ray.address``, if Ray
            cannot join a cluster there;
            naming ``agent.hyperparams.learning_starts``, if a fresh run would never get past it;
            naming ``agent.hyperparams.<key>``, if a resumed checkpoint trained with another value
            (a resume continues with the checkpoint's hyperparameters, as SB3's ACC does).
    """
    from ecngym.agents.saved_run import load_saved
    from ecngym.agents.training_run import check_resume_total, check_resumed_hyperparams, check_warm_up, resumed_seed
    from ecngym.error import ConfigError

    earlier = resumed_episodes(resume) if resume else []  # a resumed run's episodes before the checkpoint
    if not os.environ.get("PYTHONHASHSEED", "random").isdigit():
        log.warning("PYTHONHASHSEED is not set to a number: this RLlib run will not repeat with the same seed "
                    "(RLlib orders agents by string hashes); set e.g. PYTHONHASHSEED=0 for a repeatable run")
    n_agents = agents_per_env_step(env_config)
    if resume:  # as SB3's ACC: the checkpoint's hyperparameters go on (checked before Ray starts)
        check_resumed_hyperparams(agent["hyperparams"], checkpoint_hyperparams(resume))
    else:  # learning starts once more than learning_starts transitions were collected (as SB3's ACC)
        check_warm_up("agent.hyperparams.learning_starts", int(agent["hyperparams"]["learning_starts"]),
                      timesteps * n_agents - 1,
                      f"{timesteps * n_agents} transitions (total_timesteps {timesteps} env steps x {n_agents} agents)")
    runners = int(agent["rllib"]["num_env_runners"])
    cores = os.cpu_count() or 1
    if not ray_address and runners > cores:  # a local Ray started them all, time-sliced (1000: hundreds of processes)
        raise ConfigError("agent.rllib.num_env_runners", f"got {runners}, but this machine has {cores} CPUs (each env "
                                                         "runner takes one); lower it, or join a cluster with "
                                                         "ray.address=...")
    import numpy as np
    import ray
    from tqdm.auto import tqdm

    if not ray.is_initialized():
        if ray_address:
            try:
                ray.init(address=ray_address, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:  # no cluster there, or none Ray reaches
                reason = " ".join(str(exc).split())
                raise ConfigError("ray.address", f"got {ray_address!r}, but Ray could not join a cluster there "
                                                 f"({type(exc).__name__}: {reason}); give the head's address "
                                                 "('auto' on a cluster node, 'ray://<head>:10001' from outside) or "
                                                 "leave it out for a local Ray") from None
        else:
            # address='local': a new instance of our own; without it ray.init joins any cluster already running on
            # this machine (a user's `ray start`, another job's) and then refuses num_cpus
            ray.init(address="local", num_cpus=max(2, runners + 1), include_dashboard=False, log_to_driver=False)
    cpus = ray.cluster_resources().get("CPU", 0.0)
    if runners > cpus:  # RLlib would wait for the missing runners forever, silently
        raise ConfigError("agent.rllib.num_env_runners",
                          f"got {runners}, but the Ray cluster has {cpus:g} CPUs (each env runner takes one); "
                          "lower it or add nodes")
    # (RLlib seeds its env runners' traces with it: a resume goes on with other traces)
    algo = shared_policy_dqn(env_config, agent, timesteps=timesteps, n_agents=n_agents, num_env_runners=runners,
                             seed=resumed_seed(seed, len(earlier)), device=device).build_algo()
    steps = 0  # env steps sampled over the run's life (a resumed checkpoint's included)
    if resume:
        from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

        try:
            load_saved("resume", resume, RESUME_EXPECTED, lambda: algo.restore_from_path(str(Path(resume).resolve())))
            steps = int(algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0))
            check_resume_total(timesteps, steps)
            replay = Path(resume) / REPLAY_FILE
            if replay.is_file():  # a checkpoint without its buffer file resumes with an empty replay
                load_saved("resume", replay, "the replay buffer of that checkpoint",
                           lambda: algo.local_replay_buffer.set_state(pickle.loads(replay.read_bytes())))
        except ConfigError:
            algo.stop()  # (its env runners' fabrics)
            raise

    def save(path: Path) -> list[dict[str, Any]]:
        algo.save_to_path(str(path))
        episodes = earlier + played_episodes(algo)
        (path / EPISODES_FILE).write_text(json.dumps(episodes))
        (path / HYPERPARAMS_FILE).write_text(json.dumps(agent["hyperparams"]))
        (path / REPLAY_FILE).write_bytes(pickle.dumps(algo.local_replay_buffer.get_state()))
        return episodes

    curve = out_dir / "curve.csv"
    curve.write_text("iteration,env_steps,agent_steps,episode_return_mean,loss,q_mean\n")
    bar = tqdm(total=timesteps, initial=steps, disable=not progress_bar, unit="step", desc="acc (rllib)")
    last_ckpt, it = steps, 0
    try:
        while steps < timesteps:
            result = algo.train()
            it += 1
            r = result["env_runners"]
            new = int(r.get("num_env_steps_sampled_lifetime", steps))
            bar.update(max(0, min(new, timesteps) - steps))
            steps = new
            learner = result.get("learners", {}).get("shared", {})
            with curve.open("a") as f:
                agent_steps = r.get("num_agent_steps_sampled_lifetime", float("nan"))
                if isinstance(agent_steps, dict):  # per agent id
                    agent_steps = sum(agent_steps.values())
                f.write(f"{it},{steps},{agent_steps},"
                        f"{r.get('episode_return_mean', float('nan'))},{learner.get('qf_loss', float('nan'))},"
                        f"{learner.get('qf_mean', float('nan'))}\n")
            if checkpoint_every and steps - last_ckpt >= checkpoint_every:
                save((out_dir / "checkpoints" / f"iter_{it}").resolve())
                last_ckpt = steps
        path = (out_dir / "rllib_checkpoint").resolve()
        episodes = save(path)
        final = {k: (float(v) if isinstance(v, (int, float, np.floating)) else v)
                 for k, v in result.get("learners", {}).get("shared", {}).items() if np.isscalar(v)}
    finally:
        bar.close()
        algo.stop()
    (out_dir / "rllib_learner.json").write_text(json.dumps(final, indent=2, default=str))
    return path, episodes


def train_acc_rllib_run(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int,
                        seed: int, progress_bar: bool = True, checkpoint_every: int = 0, resume: str | None = None,
                        threads: Any = None, device: str = "cpu", ray_address: str | None = None) -> Path:
    """ACC's trainer for ``framework=rllib``: :func:`train_acc_rllib` on the agent's env, then ``agent.json``.

    Args:
        base_env: The scenario (``EnvConfig`` fields).
        agent: The ACC config (``configs/agent/acc.yaml`` merged with overrides).
        out_dir: Run directory.
        timesteps: Env steps of training (a resumed run's total, the checkpoint's included).
        seed: Seed of the learner and of the training traces.
        progress_bar: Show a progress bar.
        checkpoint_every: Save a checkpoint every this many env steps (0 = never).
        resume: An RLlib checkpoint to continue from.
        threads: Threads per torch / BLAS pool (:func:`ecngym.agents.threads.limit_threads`).
        device: Torch device of the learner.
        ray_address: An existing Ray cluster (None: a local Ray).

    Returns:
        The checkpoint's path.

    Raises:
        ConfigError: As :func:`~ecngym.agents.training_run.start_training` and :func:`train_acc_rllib`.
    """
    from ecngym.agents.saved_run import save_agent_meta
    from ecngym.agents.training_run import start_training
    from ecngym.envs.scenario import EcnScenario

    timesteps, seed, checkpoint_every, _, out_dir, env_cfg = start_training(
        base_env, agent, out_dir, timesteps=timesteps, seed=seed, checkpoint_every=checkpoint_every, threads=threads)
    path, episodes = train_acc_rllib(acc_env_config(env_cfg, agent["granularity"]), agent, out_dir,
                                     timesteps=timesteps, seed=seed, progress_bar=progress_bar,
                                     checkpoint_every=checkpoint_every, resume=resume, device=device,
                                     ray_address=ray_address)
    n_actions = len(EcnScenario(env_cfg).actions.templates)  # (builds no fabric)
    save_agent_meta(out_dir, {"agent": "acc", "framework": "rllib", "granularity": agent["granularity"],
                              "env": agent["env"], "env_config": env_cfg.as_dict(), "seed": seed,
                              "n_actions": n_actions, "final_eps": agent["hyperparams"]["exploration_final_eps"],
                              "checkpoint": str(path), "timesteps": timesteps,
                              "episodes": episodes})  # every env runner's traces: eval refuses them
    return path
