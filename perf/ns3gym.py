"""``ecngym bench env --ns3gym``: the OpenGym protocol's cost per step against in-process stepping.

The same env, seeds and static action are stepped two ways, alternating over ``--rounds``
rounds (figures are medians):

* in-process: ``env.step`` in this process (``us_per_step_in_process``);
* over the protocol: ``OpenGymServer`` (what ``ecngym serve-ns3gym`` runs) in a spawned process,
  and an OpenGym agent (:class:`~ecngym.opengym.agent.OpenGymAgent`) in this one, over ZMQ on the
  loopback interface; ``us_per_step_ns3gym`` is the agent's wall time from sending an action to
  holding the next observation. In the same run the server measures its own ``env.step`` time
  (``us_per_step_env_in_server``), so ``overhead_us_per_step`` = round trip − env.step there is the
  protocol's cost: message encoding (observation, info JSON; ``encode_us_per_step`` measured in the
  server), ZMQ transport both ways, decoding, and the two process hand-overs (each waits for a
  core: on a loaded machine, ``load_avg_before``, that wait dominates).

Resets (a new trace and fabric, at every game over) are excluded from the step figures.
ns3-gym's own cost is known only qualitatively (docs: concepts/prior-art.md §1-2): its IPC per step
dominates wall time (users see wall time change ~10x with ``envStepTime``, tkn-tub/ns3-gym#52), and
ns3-ai claims > 15x fewer CPU cycles per message than ns3-gym. The last line is one JSON object.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from typing import Any

import numpy as np

NS3GYM_REFERENCE = ("ns3-gym: IPC per step dominates wall time (~10x wall-time change with envStepTime, "
                    "tkn-tub/ns3-gym#52); ns3-ai claims > 15x fewer CPU cycles per message than ns3-gym "
                    "(docs: concepts/prior-art.md §1-2)")


def _make(env_id: str) -> Any:
    import gymnasium as gym

    import ecngym.envs  # noqa: F401

    return gym.make(env_id)


def in_process(env_id: str, steps: int, seed: int) -> float:
    """Mean wall seconds of one ``env.step`` (static action) in this process; resets excluded."""
    env = _make(env_id)
    static = env.unwrapped.static_action()
    env.reset(seed=seed)
    total, done, episode = 0.0, 0, 0
    while done < steps:
        t = time.perf_counter()
        _, _, term, trunc, _ = env.step(static)
        total += time.perf_counter() - t
        done += 1
        if term or trunc:
            episode += 1
            env.reset(seed=seed + episode)
    env.close()
    return total / steps


def _server(env_id: str, port: int, episodes: int, seed: int, results: Any) -> None:
    from ecngym.opengym.server import OpenGymServer

    env = _make(env_id)
    server = OpenGymServer(env, port=port, timeout_s=120)
    step_s = [0.0]
    inner = env.step

    def timed_step(action: Any) -> Any:
        t = time.perf_counter()
        out = inner(action)
        step_s[0] += time.perf_counter() - t
        return out

    env.step = timed_step  # the server's env.step time alone (its env_s also counts resets)
    try:
        rows = server.serve(episodes, seed, log=lambda _: None)
    finally:
        env.close()
        server.close()
    results.put({"env_step_s": step_s[0], "steps": sum(r["steps"] for r in rows), "encode_s": server.encode_s,
                 "state_bytes": server.state_bytes, "states": server.states_sent})


def over_protocol(env_id: str, steps: int, seed: int) -> dict[str, float]:
    """Step the env through ``OpenGymServer`` in another process; per-step figures in seconds."""
    from ecngym.opengym.agent import OpenGymAgent

    probe = _make(env_id)
    static = probe.unwrapped.static_action()
    episode_steps = int(probe.unwrapped.config.episode_steps)
    probe.close()
    episodes = -(-steps // episode_steps)
    agent = OpenGymAgent(timeout_s=120)
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    proc = ctx.Process(target=_server, args=(env_id, agent.port, episodes, seed, results))
    proc.start()
    try:
        total, done = 0.0, 0
        for _ in range(episodes):
            agent.wait_init()
            action = int(static) if np.ndim(static) == 0 else tuple(int(a) for a in np.ravel(static))
            agent.recv_state()
            over = False
            while not over and done < steps:
                t = time.perf_counter()
                agent.send_action(action)
                _, _, over, _, _ = agent.recv_state()
                total += time.perf_counter() - t
                done += 1
            agent.send_stop()  # answers the game over (as ns3-gym's client does) or ends the last, partial episode
        server = results.get(timeout=300)
        proc.join(timeout=60)
    finally:
        if proc.is_alive():
            proc.kill()
        agent.close()
    return {"step_s": total / done, "env_step_s": server["env_step_s"] / server["steps"], "steps": done,
            "encode_s": server["encode_s"] / server["states"], "state_bytes": server["state_bytes"] / server["states"]}


def ns3gym_main(env_id: str, steps: int, rounds: int, json_only: bool = False, page: Any = None) -> int:
    """Entry point of ``ecngym bench env --ns3gym`` (called by :func:`ecngym.perf.env.main`).

    Args:
        env_id: The env to serve.
        steps: Steps per round.
        rounds: Alternating in-process / over-the-protocol rounds.
        json_only: Print only the JSON line.
        page: The :class:`ecngym.markdown_page.MarkdownPage` of ``--markdown`` (written here), or ``None``.
    """
    from rich.console import Console
    from rich.table import Table

    from ecngym.markdown_page import page_console

    load_before = os.getloadavg()[0]  # other work on the machine delays every message hand-over
    inproc, wire, server_env, encode, sizes, counted = [], [], [], [], [], 0
    with Console(stderr=True).status("measuring ...") as status:
        for r in range(rounds):
            status.update(f"round {r + 1}/{rounds}: in-process ...")
            inproc.append(in_process(env_id, steps, seed=r))
            status.update(f"round {r + 1}/{rounds}: over the OpenGym protocol ...")
            m = over_protocol(env_id, steps, seed=r)
            wire.append(m["step_s"])
            server_env.append(m["env_step_s"])
            encode.append(m["encode_s"])
            sizes.append(m["state_bytes"])
            counted = m["steps"]
    us = {k: float(np.median(v)) * 1e6 for k, v in (("in", inproc), ("wire", wire), ("server", server_env),
                                                       ("encode", encode))}
    overhead = float(np.median(np.array(wire) - np.array(server_env))) * 1e6
    result = {
        "env": env_id,
        "steps_per_round": counted,
        "rounds": rounds,
        "us_per_step_in_process": round(us["in"], 1),
        "us_per_step_ns3gym": round(us["wire"], 1),
        "us_per_step_env_in_server": round(us["server"], 1),
        "overhead_us_per_step": round(overhead, 1),
        "encode_us_per_step": round(us["encode"], 1),
        "overhead_fraction": round(overhead / us["wire"], 4),
        "slowdown_vs_in_process": round(us["wire"] / us["in"], 3),
        "state_msg_bytes": round(float(np.median(sizes)), 0),
        "load_avg_before": round(load_before, 2),
        "cpus": os.cpu_count(),
        "ns3gym_reference": NS3GYM_REFERENCE,
    }
    if not json_only or page is not None:
        table = Table(title=f"{env_id}: OpenGym (ns3-gym) protocol vs in-process, {counted} steps x {rounds} rounds")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for key, label in [("us_per_step_in_process", "µs per step, env.step in-process"),
                           ("us_per_step_ns3gym", "µs per step, agent round trip over serve-ns3gym"),
                           ("us_per_step_env_in_server", "  of which env.step in the server"),
                           ("overhead_us_per_step", "protocol overhead, µs per step"),
                           ("encode_us_per_step", "  of which building + serialising EnvStateMsg (server)"),
                           ("overhead_fraction", "protocol share of the round trip"),
                           ("slowdown_vs_in_process", "round trip / in-process step"),
                           ("state_msg_bytes", "EnvStateMsg size, bytes (mean)"),
                           ("load_avg_before", f"1-minute load average before the run ({os.cpu_count()} CPUs)")]:
            table.add_row(label, str(result[key]))
        console = page_console(page, quiet=json_only)
        console.print(table)
        console.print(f"for comparison, {NS3GYM_REFERENCE}")
    print(json.dumps(result))
    if page is not None:
        page.write()
    return 0
