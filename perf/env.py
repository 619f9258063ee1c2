"""``ecngym bench env``: environment steps per second, overhead share, reset time, peak RSS.

Measured on ``ecngym/RoceLeafSpine-v0`` at its default interval with the static action; worker
``i`` replays the traces of seed ``i``:

* ``steps_per_s_1`` / ``steps_per_s_2``: total env steps per wall second of a Gymnasium
  ``AsyncVectorEnv`` with 1 and with 2 worker processes (one fabric each). A vector env steps in
  lockstep: every step waits for the slower worker, and the wall time of one interval varies a
  lot with the traffic in it (``step_time_cv``), so two workers on different traces lose
  E[max(t1, t2)] / E[t] of the ideal 2x (≈ 1 + 0.56 x cv for independent normal step times);
* ``speedup_2_same_seed``: 2 / 1 workers when both workers replay the same seed (identical step
  costs, so no barrier imbalance): what the simulations themselves scale to under lockstep;
* ``steps_per_s_1_free`` / ``steps_per_s_2_free``: the same envs stepped by 1 and 2 free-running
  processes (no lockstep, as RLlib's env runners or independent rollout workers step them);
* ``overhead_fraction``: in one process, the share of step time spent outside the simulator
  (outside ``Fabric.advance``: Python, bindings, telemetry, features, reward, summary);
  ``outside_us_per_step``: that time per ordinary step, ``episode_end_us``: what an episode's
  last step adds (flow records, summary); ``outside_us_per_step_changing``: the same per
  ordinary step with seeded random actions (a new ECN setting at most steps, as a learner's)
  instead of the static one; ``outside_us_parts``: a second, instrumented run's
  split of the outside time per step into telemetry read (the block and the ``info`` mapping
  of its arrays), step kernel (features, history, reward and statistics in one C++ call,
  :mod:`ecngym.envs.step_kernel`), action, episode end (amortised) and the rest
  (``env.step``'s own code, ``info``, wrappers); the timers add a little, so the parts sum to a
  bit more than the plain run's;
  ``outside_us_parts_warm``: each of those parts (but the episode end) called again
  back to back on its last step's arguments, caches warm: what it costs when the
  simulator has not just evicted its code and data (the gap to ``outside_us_parts`` is
  the cache refill after each ``Fabric.advance``);
* ``reset_s``: wall time of one ``reset`` (new trace + new fabric);
* ``peak_rss_mb``: the largest peak resident set (VmHWM) of an env worker process;
* ``cpus``, ``load_avg_before``: the machine's CPUs and its 1-minute load average before the run
  (work of other processes depresses the 2-worker figures).

1- and 2-worker runs alternate over ``--rounds`` rounds and the figures are medians (this kind
of VM drifts by tens of percent over seconds). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from typing import Any

import numpy as np

from ecngym.markdown_page import add_markdown_option, open_page, page_console

ENV_ID = "ecngym/RoceLeafSpine-v0"


def _vm_hwm_mb(pid: int | str = "self") -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def _make(env_id: str) -> Any:
    import gymnasium as gym

    import ecngym.envs  # noqa: F401

    return gym.make(env_id)


def in_process(env_id: str, steps: int, changing: bool = False) -> dict[str, float]:
    """Step one env in this process; split time into simulator and everything else.

    Args:
        env_id: The env.
        steps: Steps to time.
        changing: Step with seeded random actions (a new ECN setting at most steps, as a
            learner's) instead of the static one.
    """
    from ecngym.envs.view import EnvView

    env = _make(env_id)
    static = env.unwrapped.static_action()
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(steps)] if changing else [static] * steps
    t0 = time.perf_counter()
    env.reset(seed=0)
    reset_s = time.perf_counter() - t0
    view = EnvView(env)
    sim = 0.0
    times = []
    outside, last = [], []  # outside-simulator seconds of each step; whether it ended its episode
    while len(times) < steps:
        before = view.sim_wall_s
        t = time.perf_counter()
        _, _, term, trunc, _ = env.step(actions[len(times)])
        times.append(time.perf_counter() - t)
        sim_step = view.sim_wall_s - before
        sim += sim_step
        outside.append(times[-1] - sim_step)
        last.append(term or trunc)
        if term or trunc:
            env.reset()
    env.close()
    total = float(np.sum(times))
    out, end = np.array(outside), np.array(last)
    ordinary = float(out[~end].mean())
    return {"steps_per_s": steps / total, "overhead_fraction": 1 - sim / total, "reset_s": reset_s,
            "step_time_cv": float(np.std(times) / np.mean(times)), "outside_us_per_step": ordinary * 1e6,
            "episode_end_us": float(out[end].mean() - ordinary) * 1e6 if end.any() else None}


#: Parts of a step outside the simulator that :func:`outside_parts` times: (part, owner, method).
_PARTS = (("telemetry_read", "fabric", "read_telemetry_block"), ("step_kernel", "kernel", "step"),
          ("action", "scenario", "apply"), ("episode_end", "scenario", "finish"))


def outside_parts(env_id: str, steps: int, repeats: int = 200) -> tuple[dict[str, float], dict[str, float]]:
    """Microseconds per step of each part outside the simulator (timers wrapped around them).

    Returns:
        (the parts in the stepping loop, the same parts repeated ``repeats`` times back to back
        on their last arguments: warm caches; the episode end and the rest left out).
    """
    from ecngym.envs.view import EnvView

    env = _make(env_id)
    static = env.unwrapped.static_action()
    view = EnvView(env)
    spent = dict.fromkeys([p for p, _, _ in _PARTS], 0.0)
    last: dict[tuple[str, Any], tuple[Any, ...]] = {}  # (part, function) -> its last arguments

    def timed(part: str, fn: Any) -> Any:
        def call(*args: Any) -> Any:
            last[part, fn] = args
            t = time.perf_counter()
            try:
                return fn(*args)
            finally:
                spent[part] += time.perf_counter() - t
        return call

    def instrument() -> None:  # a reset builds a new fabric: wrap its method again
        owners = view.step_parts()
        for part, owner, name in _PARTS:
            obj = owners[owner]
            setattr(obj, name, timed(part, getattr(type(obj), name).__get__(obj)))

    from ecngym.sim_backend.fabric import Telemetry

    env.reset(seed=0)
    instrument()
    as_dict = Telemetry.as_dict  # the info mapping of the telemetry: part of reading it
    Telemetry.as_dict = timed("telemetry_read", as_dict)
    sim = total = 0.0
    try:
        for i in range(steps):
            before = view.sim_wall_s
            t = time.perf_counter()
            _, _, term, trunc, _ = env.step(static)
            total += time.perf_counter() - t
            sim += view.sim_wall_s - before
            if (term or trunc) and i < steps - 1:  # (after the last step: its fabric, for the warm repeats)
                kept = dict(spent)
                env.reset()
                spent.update(kept)  # the reset's own calls are no step's
                last.clear()  # (calls on the closed fabric)
                instrument()
        warm = dict.fromkeys([p for p, _, _ in _PARTS if p != "episode_end"], 0.0)
        for (part, fn), args in last.items():
            if part in warm:
                t = time.perf_counter()
                for _ in range(repeats):
                    fn(*args)
                warm[part] += (time.perf_counter() - t) / repeats * 1e6
    finally:
        Telemetry.as_dict = as_dict
        env.close()
    parts = {p: s / steps * 1e6 for p, s in spent.items()}
    parts["rest"] = (total - sim) / steps * 1e6 - sum(parts.values())
    return parts, warm


def vectorised(env_id: str, n_envs: int, steps: int, same_seed: bool = False) -> dict[str, float]:
    """Total steps per second of an AsyncVectorEnv with ``n_envs`` worker processes.

    Worker ``i`` is reset with seed ``i``, or every worker with seed 0 if ``same_seed``.
    """
    from functools import partial

    from gymnasium.vector import AsyncVectorEnv

    venv = AsyncVectorEnv([partial(_make, env_id) for _ in range(n_envs)])
    try:
        venv.reset(seed=[0] * n_envs if same_seed else list(range(n_envs)))
        static = _make_static(env_id)
        actions = np.stack([static] * n_envs) if np.ndim(static) else np.full(n_envs, static)
        venv.step(actions)  # warm-up
        t = time.perf_counter()
        for _ in range(steps):
            venv.step(actions)
        elapsed = time.perf_counter() - t
        rss = max(_vm_hwm_mb(p.pid) for p in venv.processes)
    finally:
        venv.close()
    return {"steps_per_s": n_envs * steps / elapsed, "peak_rss_mb": rss}


def _free_worker(env_id: str, seed: int, steps: int, barrier: Any, results: Any) -> None:
    env = _make(env_id)
    static = env.unwrapped.static_action()
    env.reset(seed=seed)
    env.step(static)  # warm-up
    barrier.wait()
    t = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(static)
        if term or trunc:
            env.reset()
    results.put((time.perf_counter() - t, _vm_hwm_mb()))
    env.close()


def free_running(env_id: str, n_procs: int, steps: int) -> dict[str, float]:
    """Total steps per second of ``n_procs`` processes stepping their own env, started together."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(n_procs), ctx.Queue()
    procs = [ctx.Process(target=_free_worker, args=(env_id, i, steps, barrier, results)) for i in range(n_procs)]
    for p in procs:
        p.start()
    out = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return {"steps_per_s": n_procs * steps / max(e for e, _ in out), "peak_rss_mb": max(r for _, r in out)}


def _make_static(env_id: str) -> Any:
    env = _make(env_id)
    try:
        return env.unwrapped.static_action()
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench env``."""
    parser = argparse.ArgumentParser(prog="ecngym bench env", description=__doc__.split("\n")[0])
    parser.add_argument("--env", default=ENV_ID, help=f"env id (default {ENV_ID})")
    parser.add_argument("--steps", type=int, default=400, help="steps per measurement (default 400)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating 1/2-worker rounds (default 3)")
    parser.add_argument("--json-only", action="store_true")
    parser.add_argument("--ns3gym", action="store_true",
                        help="instead: the ns3-gym (OpenGym) protocol's cost per step vs in-process stepping")
    add_markdown_option(parser)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.steps < 10:
        parser.error("--steps must be >= 10")
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    import gymnasium as gym

    import ecngym.envs  # noqa: F401  (registers the ids)
    from ecngym.error import ConfigError

    if args.env not in gym.registry:
        known = sorted(k for k in gym.registry if k.startswith("ecngym/"))
        raise ConfigError("--env", f"unknown env id {args.env!r}; registered: {', '.join(known)}")
    title, intro = ("ns3-gym protocol cost", "The OpenGym (ns3-gym) protocol's cost per step against stepping "
                    "the env in-process.") if args.ns3gym else ("Env speed", parser.description)
    page = open_page(args.markdown, title, parser.prog, argv, intro)
    if args.ns3gym:
        from ecngym.perf.ns3gym import ns3gym_main

        return ns3gym_main(args.env, args.steps, args.rounds, args.json_only, page)
    from rich.console import Console
    from rich.table import Table

    load_before = os.getloadavg()[0]  # other work on the machine depresses the parallel figures
    with Console(stderr=True).status("measuring ...") as status:
        single = in_process(args.env, args.steps)
        status.update("outside the simulator with changing actions ...")
        changing = in_process(args.env, args.steps, changing=True)
        status.update("outside the simulator, part by part ...")
        parts, warm = outside_parts(args.env, args.steps)
        rounds: dict[tuple[str, int], list[dict[str, float]]] = {}
        for r in range(args.rounds):
            for kind, fn in (("vector", vectorised), ("free", free_running)):
                for n in (1, 2):
                    status.update(f"round {r + 1}/{args.rounds}: {kind}, {n} worker(s) ...")
                    rounds.setdefault((kind, n), []).append(fn(args.env, n, args.steps))
            status.update(f"round {r + 1}/{args.rounds}: vector, 2 workers on the same seed ...")
            rounds.setdefault(("same_seed", 2), []).append(vectorised(args.env, 2, args.steps, same_seed=True))
    med = {key: float(np.median([m["steps_per_s"] for m in ms])) for key, ms in rounds.items()}
    rss = max(m["peak_rss_mb"] for ms in rounds.values() for m in ms)
    result = {
        "steps_per_s_1": round(med["vector", 1], 1),
        "steps_per_s_2": round(med["vector", 2], 1),
        "overhead_fraction": round(single["overhead_fraction"], 4),
        "peak_rss_mb": round(rss, 1),
        "reset_s": round(single["reset_s"], 4),
        "speedup_2": round(med["vector", 2] / med["vector", 1], 3),
        "speedup_2_same_seed": round(med["same_seed", 2] / med["vector", 1], 3),
        "steps_per_s_1_free": round(med["free", 1], 1),
        "steps_per_s_2_free": round(med["free", 2], 1),
        "speedup_2_free": round(med["free", 2] / med["free", 1], 3),
        "steps_per_s_in_process": round(single["steps_per_s"], 1),
        "step_time_cv": round(single["step_time_cv"], 3),
        "outside_us_per_step": round(single["outside_us_per_step"], 1),
        "episode_end_us": None if single["episode_end_us"] is None else round(single["episode_end_us"], 1),
        "outside_us_per_step_changing": round(changing["outside_us_per_step"], 1),
        "outside_us_parts": {k: round(v, 1) for k, v in parts.items()},
        "outside_us_parts_warm": {k: round(v, 1) for k, v in warm.items()},
        "cpus": os.cpu_count(),
        "load_avg_before": round(load_before, 2),
    }
    if not args.json_only or page is not None:
        table = Table(title=f"{args.env}: env speed ({args.steps} steps per measurement)")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for key, label in [("steps_per_s_in_process", "steps/s, 1 env in-process"),
                           ("steps_per_s_1", "steps/s, AsyncVectorEnv 1 worker"),
                           ("steps_per_s_2", "steps/s, AsyncVectorEnv 2 workers (lockstep)"),
                           ("speedup_2", "  2 workers / 1 worker"),
                           ("speedup_2_same_seed", "  2 workers on the same seed / 1 worker"),
                           ("steps_per_s_1_free", "steps/s, 1 free-running process"),
                           ("steps_per_s_2_free", "steps/s, 2 free-running processes"),
                           ("speedup_2_free", "  2 processes / 1 process"),
                           ("step_time_cv", "step wall-time variation (std / mean)"),
                           ("overhead_fraction", "share of step time outside the simulator"),
                           ("outside_us_per_step", "  outside the simulator per ordinary step, us"),
                           ("episode_end_us", "  added by an episode's last step, us"),
                           ("outside_us_per_step_changing", "  per ordinary step with random actions, us"),
                           ("reset_s", "reset (new trace + fabric), s"),
                           ("peak_rss_mb", "peak RSS per env process, MB")]:
            table.add_row(label, str(result[key]))
        console = page_console(page, quiet=args.json_only)
        console.print(table)
        split = Table(title="outside the simulator, per step (instrumented run), us")
        split.add_column("part")
        split.add_column("us / step", justify="right")
        split.add_column("repeated, warm", justify="right")
        for part, us in result["outside_us_parts"].items():
            again = result["outside_us_parts_warm"].get(part)
            split.add_row(part, f"{us:.1f}", "" if again is None else f"{again:.1f}")
        console.print(split)
        if load_before > 0.5:
            console.print(f"[yellow]note:[/] the 1-minute load average was {load_before:.2f} on {os.cpu_count()} "
                          "CPUs before the run: other processes compete for the cores, so the 2-worker figures are low")
    print(json.dumps(result))
    if page is not None:
        page.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
