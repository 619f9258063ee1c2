"""``ecngym bench env``: environment steps per second, overhead share, reset time, peak RSS.

Measured on ``ecngym/RoceLeafSpine-v0`` at its default interval with the static action:
* ``steps_per_s_1`` / ``steps_per_s_2``: total env steps per wall second of a Gymnasium
  ``AsyncVectorEnv`` with 1 and with 2 worker processes (one fabric each), medians of
  alternating rounds;
* ``overhead_fraction``: in one process, the share of step time spent outside the simulator's
  event loop (Python, bindings, feature building, reward);
* ``reset_s``: wall time of one ``reset`` (new trace + new fabric);
* ``peak_rss_mb``: the largest peak resident set (VmHWM) of an env worker process;
* ``cpus``, ``load_avg_before``: the machine's CPUs and its 1-minute load average before the run
  (work of other processes depresses the 2-worker figure).
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np

ENV_ID = "ecngym/RoceLeafSpine-v0"


def _vm_hwm_mb(pid: int) -> float:
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


def in_process(env_id: str, steps: int) -> dict[str, float]:
    """Step one env in this process; split time into simulator and everything else."""
    env = _make(env_id)
    static = env.unwrapped.static_action()
    t0 = time.perf_counter()
    env.reset(seed=0)
    reset_s = time.perf_counter() - t0
    total = sim = 0.0
    done_steps = 0
    while done_steps < steps:
        sc = env.unwrapped.scenario
        before = sc.sim_wall_s
        t = time.perf_counter()
        _, _, term, trunc, _ = env.step(static)
        total += time.perf_counter() - t
        sim += env.unwrapped.scenario.sim_wall_s - before
        done_steps += 1
        if term or trunc:
            env.reset()
    env.close()
    return {"steps_per_s": done_steps / total, "overhead_fraction": 1 - sim / total, "reset_s": reset_s}


def vectorised(env_id: str, n_envs: int, steps: int) -> dict[str, float]:
    """Total steps per second of an AsyncVectorEnv with ``n_envs`` worker processes."""
    from functools import partial

    from gymnasium.vector import AsyncVectorEnv

    venv = AsyncVectorEnv([partial(_make, env_id) for _ in range(n_envs)])
    try:
        venv.reset(seed=list(range(n_envs)))
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
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.steps < 10:
        parser.error("--steps must be >= 10")
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    import os

    from rich.console import Console
    from rich.table import Table

    load_before = os.getloadavg()[0]  # other work on the machine depresses the parallel figures
    with Console(stderr=True).status("measuring ...") as status:
        single = in_process(args.env, args.steps)
        # 1 and 2 workers alternate over several rounds (medians): this VM's speed drifts by tens of
        # percent over seconds, and back-to-back blocks would fold that drift into the ratio.
        rounds: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        for r in range(args.rounds):
            for n in (1, 2):
                status.update(f"round {r + 1}/{args.rounds}: {n} worker(s) ...")
                rounds[n].append(vectorised(args.env, n, args.steps))
        one, two = ({"steps_per_s": float(np.median([m["steps_per_s"] for m in rounds[n]])),
                     "peak_rss_mb": max(m["peak_rss_mb"] for m in rounds[n])} for n in (1, 2))
    result = {
        "steps_per_s_1": round(one["steps_per_s"], 1),
        "steps_per_s_2": round(two["steps_per_s"], 1),
        "overhead_fraction": round(single["overhead_fraction"], 4),
        "peak_rss_mb": round(max(one["peak_rss_mb"], two["peak_rss_mb"]), 1),
        "reset_s": round(single["reset_s"], 4),
        "speedup_2": round(two["steps_per_s"] / one["steps_per_s"], 3),
        "steps_per_s_in_process": round(single["steps_per_s"], 1),
        "cpus": os.cpu_count(),
        "load_avg_before": round(load_before, 2),
    }
    if not args.json_only:
        table = Table(title=f"{args.env}: env speed ({args.steps} steps per measurement)")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for key, label in [("steps_per_s_in_process", "steps/s, 1 env in-process"),
                           ("steps_per_s_1", "steps/s, AsyncVectorEnv 1 worker"),
                           ("steps_per_s_2", "steps/s, AsyncVectorEnv 2 workers"),
                           ("speedup_2", "2 workers / 1 worker"),
                           ("overhead_fraction", "share of step time outside the simulator"),
                           ("reset_s", "reset (new trace + fabric), s"),
                           ("peak_rss_mb", "peak RSS per env worker, MB")]:
            table.add_row(label, str(result[key]))
        Console().print(table)
        if load_before > 0.5:
            Console().print(f"[yellow]note:[/] the 1-minute load average was {load_before:.2f} on {os.cpu_count()} "
                            "CPUs before the run: other processes compete for the cores, so the 2-worker figure is low")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
