"""LAECN: lightweight automatic ECN tuning with a trigger-gated DDQN (Hu et al., IEEE TNSM 2024).

LAECN; docs: algorithms/laecn.md §3; HAECN (§5) is the same agent with Δt fixed at 15 RTT. Every value is in
``configs/agent/laecn.yaml`` / ``haecn.yaml`` with its source beside it (Table I exact).

Per agent (one per port, weights shared by all, §3.1 [OURS]), once per monitoring interval Δt
(Algorithm 1, §3.6):

1. **Monitor**: the env's observation is S_t, the last k sub-states S' = {Q, T, Kmax, Kmin, Pmax}
   averaged over the interval (§3.2). Δt is 15 base RTTs while a long flow (>= 100 KB delivered)
   is active and 5 otherwise: the env's adaptive interval (``env.interval_short``), driven by its
   long-flow flag (``info["long_flow"]``).
2. **Decision module** (a small DQN on {S_t, S^save}): trigger ∈ {0, 1}. Before the first
   trigger of an episode there is no S^save / a^save to compare with and keep ([UNSPEC]): with
   ``initial_trigger`` (default, [OURS]) the first interval triggers the policy generator without
   the decision module; without it a^save starts as the fabric's static template.
3. trigger = 0: keep executing a^save; the policy generator does not run.
   trigger = 1: the **policy generator** (a six-layer DDQN) picks a_t = argmax_a Q(S_t, a);
   S^save, a^save <- S_t, a_t.
4. At t + 1, with r_t = ω·T + (1 − ω)·Q (eq. 2's bracket): the decision module stores
   ({S_t, S^save}, trigger, r_t − α·trigger, {S_t+1, S^save'}) and takes a DQN step; when
   triggered, the policy generator stores (S_t, a_t, r_t, S_t+1) and takes a Double-DQN step
   (y = r + γ Q(s', argmax_a Q(s', a; θ); θ'), MSE loss; θ' <- θ every 20 gradient steps).

The decision module's training rule is not in the paper: §3.6 [OURS] (standard DQN, own replay,
same γ / lr / batch). Episodes end by truncation (time limit), so targets always bootstrap.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.agents.acting_nets import ActingNets, sequential_tensors
from ecngym.agents.config import LaecnConfig, agent_config
from ecngym.agents.controller import LearnedController
from ecngym.agents.inference import mlp_flops
from ecngym.agents.registry import AgentKind, registered_kind
from ecngym.agents.saved_run import AGENT_FILE, load_saved, save_agent_meta
from ecngym.agents.training_run import check_resume_total, check_warm_up, resumed_seed, start_training
from ecngym.error import ConfigError
from ecngym.files import check_input_file

#: LAECN's own inference count: policy-generator evaluations (only the triggered agents run it).
POLICY_PASSES = "policy_forward_passes"

WEIGHTS_FILE = "laecn.pt"


def mlp(n_in: int, hidden: list[int], n_out: int) -> Any:
    """A ReLU MLP ``n_in -> hidden... -> n_out``."""
    import torch.nn as nn

    layers: list[Any] = []
    for width in hidden:
        layers += [nn.Linear(n_in, int(width)), nn.ReLU()]
        n_in = int(width)
    layers.append(nn.Linear(n_in, n_out))
    return nn.Sequential(*layers)


class Replay:
    """A uniform replay memory of (s, a, r, s') rows (numpy ring buffer)."""

    def __init__(self, capacity: int, obs_dim: int) -> None:
        self.capacity = int(capacity)
        self.obs = np.zeros((self.capacity, obs_dim), dtype=np.float32)
        self.next_obs = np.zeros_like(self.obs)
        self.actions = np.zeros(self.capacity, dtype=np.int64)
        self.rewards = np.zeros(self.capacity, dtype=np.float32)
        self.size = 0
        self.pos = 0

    def add(self, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_obs: np.ndarray) -> None:
        """Append a batch of rows."""
        idx = (self.pos + np.arange(len(obs))) % self.capacity
        self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx] = obs, actions, rewards, next_obs
        self.pos = int((self.pos + len(obs)) % self.capacity)
        self.size = min(self.size + len(obs), self.capacity)

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        """``n`` rows drawn uniformly (with replacement)."""
        idx = rng.integers(0, self.size, n)
        return self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx]


class QLearner:
    """One (Double) DQN: online and target nets, Adam, its replay (LAECN §III-D; docs: algorithms/laecn.md §3.6).

    Args:
        n_in: Input width.
        hidden: Hidden widths.
        n_out: Number of actions.
        cfg: The agent config (lr, γ, batch, target interval, replay, warm-up).
        double_q: Double-DQN target (the policy generator) or the plain DQN one.
        device: Torch device.
    """

    def __init__(self, n_in: int, hidden: list[int], n_out: int, cfg: dict[str, Any], double_q: bool,
                 device: str) -> None:
        import torch

        self.net = mlp(n_in, hidden, n_out).to(device)
        self.target = copy.deepcopy(self.net)
        # fused: one kernel per step instead of ~8 small ops per weight tensor (same update rule)
        self.learning_rate = float(cfg["learning_rate"])
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.learning_rate, fused=True)
        self.replay = Replay(int(cfg["buffer_size"]), n_in)
        self.double_q = double_q
        self.gamma = float(cfg["gamma"])
        self.batch_size = int(cfg["batch_size"])
        self.target_interval = int(cfg["target_update_interval"])
        self.learning_starts = int(cfg["learning_starts"])
        self.device = device
        self.n_out = n_out
        self.flops = mlp_flops(self.net)
        self.updates = 0
        self.last_loss = float("nan")
        self.last_q_mean = float("nan")

    def q_values(self, obs: np.ndarray) -> np.ndarray:
        """Q-values of a batch of inputs (online net, no gradient)."""
        import torch

        with torch.no_grad():
            return self.net(torch.as_tensor(obs, device=self.device)).cpu().numpy()

    def update(self, rng: np.random.Generator) -> None:
        """One gradient step on a uniform batch, once the replay holds ``learning_starts`` rows."""
        import torch
        import torch.nn.functional as F

        if self.replay.size < max(self.learning_starts, 1):
            return
        obs, act, rew, nxt = (torch.as_tensor(x, device=self.device)
                              for x in self.replay.sample(rng, self.batch_size))
        with torch.no_grad():
            if self.double_q:  # the online net picks, the target net rates
                pick = self.net(nxt).argmax(dim=1, keepdim=True)
                next_q = self.target(nxt).gather(1, pick).squeeze(1)
            else:
                next_q = self.target(nxt).max(dim=1).values
            y = rew + self.gamma * next_q  # truncation only: always bootstrap
        q_all = self.net(obs)
        loss = F.mse_loss(q_all.gather(1, act[:, None]).squeeze(1), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.updates += 1
        self.last_loss, self.last_q_mean = float(loss.item()), float(q_all.detach().mean().item())
        if self.updates % self.target_interval == 0:
            self.target.load_state_dict(self.net.state_dict())

    def state(self, with_replay: bool) -> dict[str, Any]:
        """Weights, optimiser and counters (and the replay, for resuming)."""
        out = {"net": self.net.state_dict(), "target": self.target.state_dict(),
               "optimizer": self.optimizer.state_dict(), "updates": self.updates}
        if with_replay:
            r = self.replay
            out["replay"] = {k: getattr(r, k) for k in ("obs", "next_obs", "actions", "rewards", "size", "pos")}
        return out

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state`."""
        self.net.load_state_dict(state["net"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        for group in self.optimizer.param_groups:  # the state carries the saved lr; the run's config sets it
            group["lr"] = self.learning_rate
        self.updates = int(state["updates"])
        for k, v in (state.get("replay") or {}).items():
            setattr(self.replay, k, v)


class LaecnAgent:
    """The two-level LAECN agent shared by every port agent: decision DQN + policy DDQN.

    Args:
        obs_dim: Width of one agent's state S_t (5k).
        n_actions: Number of ECN templates.
        static_action: Template executed before the first trigger (the fabric's static setting).
        cfg: The agent config (``configs/agent/laecn.yaml``).
        seed: Seed of the networks and of exploration.
        device: Torch device.
    """

    def __init__(self, obs_dim: int, n_actions: int, static_action: int, cfg: dict[str, Any], seed: int,
                 device: str = "cpu") -> None:
        import torch

        torch.manual_seed(seed)
        self.cfg = cfg
        self.alpha = float(cfg["trigger_penalty"])
        self.policy = QLearner(obs_dim, cfg["policy_net"], n_actions, cfg, True, device)
        self.decision = QLearner(2 * obs_dim, cfg["decision_net"], 2, cfg, bool(cfg["decision_double_q"]), device)
        self.static_action = int(static_action)
        self.rng = np.random.default_rng(seed)
        self.decisions = 0  # agent decisions so far (drives ε)
        self.n_agents = 1  # (set by begin: ε per agent counts decisions / agents)
        self.saved_state: np.ndarray | None = None
        self.saved_action: np.ndarray | None = None
        # runs trained before the option existed started from the static template
        self.initial_trigger = bool(cfg.get("initial_trigger", False))
        self._must_trigger = False

    def epsilon(self) -> float:
        """ε: linear from ``exploration_initial_eps`` to ``exploration_final_eps`` over the first decisions."""
        c = self.cfg
        per_agent = c.get("exploration_decisions_per_agent")
        span = int(per_agent) * self.n_agents if per_agent else int(c["exploration_decisions"])
        frac = min(1.0, self.decisions / max(1, span))
        return float(c["exploration_initial_eps"] + frac * (c["exploration_final_eps"] - c["exploration_initial_eps"]))

    def begin(self, states: np.ndarray) -> None:
        """New episode: S^save = S_0, a^save = the static template, for every agent.

        With ``initial_trigger`` the first :meth:`step` then triggers the policy generator for every
        agent (there is no S^save / a^save of this episode yet, LAECN §III-A; docs: algorithms/laecn.md §3.1 [UNSPEC]).
        """
        self.n_agents = len(states)
        self.saved_state = states.copy()
        self.saved_action = np.full(len(states), self.static_action, dtype=np.int64)
        self._must_trigger = self.initial_trigger

    def _greedy(self, q: np.ndarray, eps: float) -> np.ndarray:
        choice = q.argmax(axis=1)
        if eps > 0:
            explore = self.rng.random(len(q)) < eps
            choice = np.where(explore, self.rng.integers(0, q.shape[1], len(q)), choice)
        return choice

    def step(self, states: np.ndarray, eps: float, counter: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One interval for every agent: decide, maybe run the policy, return what to execute.

        Args:
            states: S_t per agent.
            eps: Exploration rate of both modules (0 = greedy).
            counter: An :class:`~ecngym.agents.inference.InferenceCounter` to charge.

        Returns:
            (actions to execute per agent, trigger per agent, the decision module's input).
        """
        x = np.concatenate([states, self.saved_state], axis=1)
        if counter is not None:
            counter.decisions += len(states)
        if self._must_trigger:  # the episode's first interval: nothing saved to keep yet
            trigger = np.ones(len(states), dtype=np.int64)
            self._must_trigger = False
        else:
            trigger = self._greedy(self.decision.q_values(x), eps)
            if counter is not None:
                counter.forward(len(states), self.decision.flops)
        fired = np.flatnonzero(trigger == 1)
        if len(fired):
            self.saved_action[fired] = self._greedy(self.policy.q_values(states[fired]), eps)
            self.saved_state[fired] = states[fired]
            if counter is not None:
                counter.forward(len(fired), self.policy.flops)
                counter.extra[POLICY_PASSES] = counter.extra.get(POLICY_PASSES, 0) + len(fired)
        return self.saved_action.copy(), trigger, x

    def learn(self, states: np.ndarray, x: np.ndarray, actions: np.ndarray, trigger: np.ndarray,
              rewards: np.ndarray, next_states: np.ndarray) -> None:
        """Store the interval's experience (Algorithm 1) and take one gradient step per module."""
        next_x = np.concatenate([next_states, self.saved_state], axis=1)
        self.decision.replay.add(x, trigger, rewards - self.alpha * trigger, next_x)
        fired = trigger == 1
        if fired.any():  # the policy generator learns only from its own decisions (§3.6)
            self.policy.replay.add(states[fired], actions[fired], rewards[fired], next_states[fired])
        self.decisions += len(states)
        self.decision.update(self.rng)
        self.policy.update(self.rng)

    def save(self, path: Path, with_replay: bool = False, extra: dict[str, Any] | None = None) -> None:
        """Both modules (and their replays, for resuming) in one file."""
        import torch

        torch.save({"policy": self.policy.state(with_replay), "decision": self.decision.state(with_replay),
                    "decisions": self.decisions, **(extra or {})}, path)

    def load(self, path: Path) -> dict[str, Any]:
        """Restore :meth:`save`; return the whole saved dict."""
        import torch

        state = torch.load(path, map_location=self.policy.device, weights_only=False)
        self.policy.load_state(state["policy"])
        self.decision.load_state(state["decision"])
        self.decisions = int(state["decisions"])
        return state


def train_laecn(base_env: dict[str, Any], agent: dict[str, Any], out_dir: Path, *, timesteps: int, seed: int,
                progress_bar: bool = True, checkpoint_every: int = 0, resume: str | None = None,
                threads: Any = None, device: str = "cpu", episode_seeds: list[int] | None = None,
                every: int = 0, hook: Any = None, halt_at: int | None = None) -> Path:
    """Train LAECN (or HAECN) online over the parallel env, one shared agent for every port.

    Writes ``out_dir/laecn.pt`` (both modules), ``agent.json``, the learning curve ``curve.csv``
    (one row per episode: return, trigger rate, mean Δt, losses, Q) and, with
    ``checkpoint_every``, ``checkpoints/laecn_<steps>_steps.pt`` (with the replays, for ``resume``).

    Args:
        base_env: The scenario (``EnvConfig`` fields).
        agent: The LAECN / HAECN config (``configs/agent/<name>.yaml`` merged with overrides).
        out_dir: Run directory.
        timesteps: Env steps (monitoring intervals) to train for; a resumed run's total, the
            checkpoint's steps included.
        seed: Seed of the networks, exploration and the training traces.
        progress_bar: Show a progress bar.
        checkpoint_every: Save a checkpoint every this many env steps (0 = never).
        resume: A checkpoint to continue from.
        threads: Threads per torch / BLAS pool.
        device: Torch device.
        episode_seeds: Reset seeds of the episodes, in turn (a benchmark scenario's train seeds:
            :func:`ecngym.agents.seeds.cycle_episode_seeds`); None: drawn from ``seed``.
        every: > 0: a resumable run (a benchmark tier's): at the first episode end every ``every``
            env steps it calls ``hook(agent, env_steps)`` (True stops the run there) and saves its
            state (both modules' weights, optimizers and replays, the RNG, counters, the traces
            played) in ``out_dir/state`` (:mod:`ecngym.agents.train_state`: JSON + npz); a rerun
            with the same arguments goes on from it as if never stopped.
        hook: See ``every``.
        halt_at: Stop at the first state save at or past this many env steps, as if killed there
            (:class:`~ecngym.agents.resumable.TrainingHalted`; tests of the resume).

    Returns:
        The weights' path.

    Raises:
        ConfigError: On a bad count or granularity, a resume path that is not a checkpoint of this
            agent on this scenario or one that has already trained ``timesteps``, or a
            ``learning_starts`` above the transitions the run collects
            (neither module would take a gradient step).
    """
    from tqdm.auto import tqdm

    from ecngym.agents.inference import InferenceCounter
    from ecngym.envs.multi_agent import EcnTuningParallelEnv
    from ecngym.envs.view import EnvView

    timesteps, seed, checkpoint_every, granularity, out_dir, env_cfg = start_training(
        base_env, agent, out_dir, timesteps=timesteps, seed=seed, checkpoint_every=checkpoint_every, threads=threads)
    if resume:
        resume = check_input_file("resume", resume, "a LAECN checkpoint (checkpoints/laecn_<n>_steps.pt)")
    env = EcnTuningParallelEnv(env_cfg, agent_granularity=granularity)
    ids = env.possible_agents
    obs_dim = int(env.observation_space(ids[0]).shape[0])
    learner = LaecnAgent(obs_dim, int(env.action_space(ids[0]).n), EnvView(env).static_action_index, agent, seed,
                         device)
    done_steps, episodes = 0, []
    if resume:
        state = load_saved("resume", resume, f"a checkpoint of this {agent['name']} on this scenario",
                           lambda: learner.load(resume))
        if "env_steps" not in state:  # final weights: no step count, no traces (eval's held-out check reads them)
            raise ConfigError("resume", f"{str(resume)!r} holds a run's final weights, not a checkpoint (no step "
                                        "count, no replays, no traces): resume from checkpoints/laecn_<n>_steps.pt, "
                                        "which checkpoint_every=... writes")
        if state.get("agent", agent["name"]) != agent["name"]:
            raise ConfigError("resume", f"{str(resume)!r} is a checkpoint of {state['agent']}, this run trains "
                                        f"{agent['name']}: resume it with agent={state['agent']}")
        done_steps, episodes = int(state["env_steps"]), list(state.get("episodes", []))
        check_resume_total(timesteps, done_steps)
    counter = InferenceCounter()
    run = {"next_at": int(every), "stopped": False, "stopped_at": None, "resumed_from": None}
    if every:
        from ecngym.agents.resumable import STATE_DIR
        from ecngym.agents.train_state import load_state, state_exists

        if resume:
            raise ConfigError("resume", "a resumable run (every > 0) resumes from its own state folder; leave "
                                        "resume out")
        if state_exists(out_dir / STATE_DIR):
            done_steps, episodes, run = _restore_run(learner, counter, load_state(out_dir / STATE_DIR), out_dir)
    if episode_seeds is not None:  # (a resumed run goes on with the next trace)
        from ecngym.agents.seeds import cycle_episode_seeds

        cycle_episode_seeds(env, episode_seeds, start=len(episodes))
    remaining = timesteps - done_steps
    # each step adds one row per agent to the decision module's replay (fewer to the policy's)
    resumed = f", after the {learner.decision.replay.size} of the resumed replay" if resume else ""
    check_warm_up("agent.learning_starts", learner.decision.learning_starts,
                  learner.decision.replay.size + remaining * len(ids),
                  f"{remaining * len(ids)} transitions ({remaining} env steps x {len(ids)} agents{resumed})")
    curve = out_dir / "curve.csv"
    if not curve.exists():
        curve.write_text("episode,env_steps,mean_reward,trigger_rate,mean_interval_ns,long_flow_fraction,"
                         "policy_loss,policy_q_mean,decision_loss,epsilon,wall_s\n")
    start = time.perf_counter()
    bar = tqdm(total=timesteps, initial=min(done_steps, timesteps), disable=not progress_bar, unit="step",
               desc=agent["name"])
    obs_d, infos = env.reset(seed=resumed_seed(seed, len(episodes)))
    try:
        while done_steps < timesteps and not run["stopped"]:
            first = infos[ids[0]]
            episodes.append({"episode_seed": first["episode_seed"], "trace_hash": first["trace_hash"]})
            states = np.stack([obs_d[a] for a in ids])
            learner.begin(states)
            rewards_sum, triggers, spans, longs, n = 0.0, 0, 0, 0, 0
            while env.agents and done_steps < timesteps:
                actions, trigger, x = learner.step(states, learner.epsilon(), counter)
                obs_d, rew_d, _, _, infos = env.step(dict(zip(ids, actions.tolist(), strict=True)))
                next_states = np.stack([obs_d[a] for a in ids])
                rewards = np.array([rew_d[a] for a in ids], dtype=np.float32)
                learner.learn(states, x, actions, trigger, rewards, next_states)
                states = next_states
                info = infos[ids[0]] if infos else {}
                rewards_sum += float(rewards.mean())
                triggers += int(trigger.sum())
                spans += int(info.get("interval_ns", 0))
                longs += int(bool(info.get("long_flow", False)))
                n += 1
                done_steps += 1
                bar.update(1)
                if checkpoint_every and done_steps % checkpoint_every == 0:
                    (out_dir / "checkpoints").mkdir(exist_ok=True)
                    learner.save(out_dir / "checkpoints" / f"laecn_{done_steps}_steps.pt", with_replay=True,
                                 extra={"env_steps": done_steps, "episodes": episodes, "agent": agent["name"]})
            with curve.open("a") as f:
                f.write(f"{len(episodes) - 1},{done_steps},{rewards_sum / max(n, 1):.6g},"
                        f"{triggers / max(n * len(ids), 1):.4g},{spans / max(n, 1):.0f},{longs / max(n, 1):.3g},"
                        f"{learner.policy.last_loss:.6g},{learner.policy.last_q_mean:.6g},"
                        f"{learner.decision.last_loss:.6g},{learner.epsilon():.4g},{time.perf_counter() - start:.1f}\n")
            if every and not env.agents and run["next_at"] <= done_steps < timesteps:
                _clean_point(learner, counter, episodes, done_steps, run, every, hook, halt_at, out_dir)
            if not env.agents and done_steps < timesteps and not run["stopped"]:
                obs_d, infos = env.reset()
    finally:
        bar.close()
        env.close()
    path = out_dir / WEIGHTS_FILE
    learner.save(path)
    save_agent_meta(out_dir, {
        "agent": agent["name"], "framework": "torch", "granularity": granularity, "env": agent["env"],
        "env_config": env_cfg.as_dict(), "n_agents": len(ids), "n_actions": learner.policy.n_out,
        "obs_dim": obs_dim, "static_action": learner.static_action, "seed": seed,
        "timesteps": done_steps, "config": agent, "training_inference": counter.as_dict(),
        "policy_last_loss": learner.policy.last_loss, "policy_last_q_mean": learner.policy.last_q_mean,
        "decision_last_loss": learner.decision.last_loss, "decision_last_q_mean": learner.decision.last_q_mean,
        "episodes": episodes,
        **({"run": {"env_steps": done_steps if not run["stopped"] else run["stopped_at"], **run}} if every else {})})
    return path


def _run_state(learner: LaecnAgent, counter: Any, episodes: list[dict[str, Any]], done_steps: int,
               run: dict[str, Any]) -> dict[str, Any]:
    """A resumable run's state at an episode end (:func:`train_laecn` with ``every``)."""
    from ecngym.agents.train_state import rng_state

    return {"policy": learner.policy.state(True), "decision": learner.decision.state(True),
            "decisions": learner.decisions, "agent_rng": learner.rng.bit_generator.state, "rng": rng_state(),
            "inference": {"decisions": counter.decisions, "forward_passes": counter.forward_passes,
                          "flops": counter.flops, "extra": dict(counter.extra)},
            "run": {**run, "env_steps": done_steps, "episodes": episodes}}


def _restore_run(learner: LaecnAgent, counter: Any, state: dict[str, Any], out_dir: Path) -> tuple[
        int, list[dict[str, Any]], dict[str, Any]]:
    """Put a saved :func:`_run_state` back; cut the curve to the episodes it had; (env steps, episodes, run)."""
    from ecngym.agents.train_state import set_rng_state

    learner.policy.load_state(state["policy"])
    learner.decision.load_state(state["decision"])
    learner.decisions = int(state["decisions"])
    learner.rng.bit_generator.state = state["agent_rng"]
    set_rng_state(state["rng"])
    inference = state["inference"]
    counter.decisions, counter.forward_passes, counter.flops = (int(inference[k]) for k in
                                                                ("decisions", "forward_passes", "flops"))
    counter.extra = {k: int(v) for k, v in inference["extra"].items()}
    run = dict(state["run"])
    episodes = list(run.pop("episodes"))
    curve = out_dir / "curve.csv"
    if curve.is_file():  # rows of episodes after the state were written by the killed run: they are redone
        lines = curve.read_text().splitlines(keepends=True)
        curve.write_text("".join(lines[:1 + len(episodes)]))
    steps = int(run.pop("env_steps"))
    return steps, episodes, {**run, "resumed_from": steps}


def _clean_point(learner: LaecnAgent, counter: Any, episodes: list[dict[str, Any]], done_steps: int,
                 run: dict[str, Any], every: int, hook: Any, halt_at: int | None, out_dir: Path) -> None:
    """At an episode end of a resumable run: the hook, then the state save (and a halt, in tests)."""
    from ecngym.agents.resumable import STATE_DIR, TrainingHalted
    from ecngym.agents.train_state import save_state

    run["next_at"] = (done_steps // every + 1) * every
    if hook is not None and hook(learner, done_steps):
        run["stopped"], run["stopped_at"] = True, done_steps
    save_state(out_dir / STATE_DIR, _run_state(learner, counter, episodes, done_steps, run))
    if halt_at is not None and done_steps >= halt_at:
        raise TrainingHalted(f"halted at {done_steps} env steps")


class LaecnController(LearnedController):
    """A trained LAECN / HAECN on the single-agent env (``ecngym eval controller=laecn``).

    Each interval every agent runs the decision module; only triggered agents run the policy
    generator, the others keep a^save. :attr:`inference` counts both (``policy_forward_passes``
    separately).

    Args:
        path: The run directory of ``ecngym train agent=laecn`` (or a file in it).
        deterministic: Greedy (default) or the config's ``eval_eps``.

    Raises:
        ConfigError: Naming ``controller.path``, if it holds no LAECN / HAECN run (its ``agent.json``
            missing, unreadable or lacking a key, e.g. ``obs_dim``; no weights file).
    """

    name = "laecn"
    #: The count this controller adds to its episodes' metrics (``ecngym run`` checks a score against it).
    extra_metrics = (POLICY_PASSES,)

    def __init__(self, path: str | Path, deterministic: bool = True) -> None:
        super().__init__(path, deterministic)
        m = self.meta
        if m["framework"] != "torch" or registered_kind(m["agent"]) is not LAECN:
            raise ConfigError("controller.path", f"expected a LAECN / HAECN run, got {m['agent']} ({m['framework']})")
        self.require_meta("obs_dim", "static_action", "config", "seed")
        try:  # the config the agent trained with; a bad value there is named with the file that holds it
            config = agent_config(m["agent"], m["config"])
        except ConfigError as exc:
            raise ConfigError("controller.path", f"{str(self.run_dir / AGENT_FILE)!r} has a bad config "
                                                 f"({exc.field}: {exc.message})") from None
        self.name = m["agent"]
        self.agent = LaecnAgent(m["obs_dim"], m["n_actions"], m["static_action"], config, int(m["seed"]))
        expected = f"the {WEIGHTS_FILE} of a LAECN / HAECN run"
        weights = check_input_file("controller.path", self.run_dir / WEIGHTS_FILE, expected)
        load_saved("controller.path", weights, f"{expected} that matches its {AGENT_FILE}",
                   lambda: self.agent.load(weights))
        self.eps = 0.0 if self.deterministic else float(config["eval_eps"])
        self._started = False

    def reset(self, env: Any) -> None:
        """Check the env; a^save starts at the static template."""
        super().reset(env)
        self.inference.extra[POLICY_PASSES] = 0  # (also when the policy never runs)
        self._started = False

    def decide(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        """Decision module for every agent, policy generator for the triggered ones."""
        if not self._started:
            self.agent.begin(obs)
            self._started = True
        actions, _, _ = self.agent.step(obs, self.eps, self.inference)
        return actions


#: LAECN and its variants (``configs/agent/laecn.yaml``, ``haecn.yaml``): its own two-module torch loop,
#: run as ``framework=sb3`` (the default; RLlib does not train it).
#: The two modules a LAECN checkpoint holds (tensor groups of its weights file).
MODULES = ("policy", "decision")


def _saved_modules(weights: Path) -> Any:
    """The policy generator and decision module of a saved run (``torch.save`` of their state, our own file)."""
    import torch

    state = torch.load(weights, map_location="cpu", weights_only=True)
    tensors: dict[str, np.ndarray] = {}
    nets: dict[str, Any] = {}
    for name in MODULES:
        sd = state[name]["net"]
        linear = sorted({int(k.split(".")[0]) for k in sd})
        sizes = [sd[f"{i}.weight"].shape for i in linear]
        net = mlp(int(sizes[0][1]), [int(s[0]) for s in sizes[:-1]], int(sizes[-1][0]))
        net.load_state_dict(sd)
        t, d = sequential_tensors(name, net)
        tensors.update(t)
        nets.update(d)
    return tensors, nets


def _live_modules(agent: LaecnAgent) -> Any:
    tensors: dict[str, np.ndarray] = {}
    nets: dict[str, Any] = {}
    for name in MODULES:
        t, d = sequential_tensors(name, getattr(agent, name).net)
        tensors.update(t)
        nets.update(d)
    return tensors, nets


def _checkpoint_player(card: dict[str, Any], tensors: dict[str, np.ndarray], obs_dim: int) -> Any:
    """A checkpoint's two modules acting greedily (the decision module, then the policy generator where it fires)."""
    import torch

    cfg = {**agent_config(card["agent"], card["agent_config"]), "buffer_size": 1}  # (it only acts: no replay)
    agent = LaecnAgent(obs_dim, card["n_actions"], int(card["static_action"]), cfg, int(card["seed"]))
    for name in MODULES:
        getattr(agent, name).net.load_state_dict({k.split(".", 1)[1]: torch.from_numpy(v.copy())
                                                  for k, v in tensors.items() if k.startswith(name + ".")})
    started = []

    def act(obs: np.ndarray, inference: Any) -> np.ndarray:
        if not started:
            agent.begin(obs)
            started.append(True)
        return agent.step(obs, 0.0, inference)[0]

    return act


LAECN = AgentKind(config=LaecnConfig, trainers={"sb3": train_laecn}, controller=LaecnController,
                  resumable=train_laecn,
                  acting=ActingNets(nets=MODULES, saved=_saved_modules, live=_live_modules, player=_checkpoint_player))
