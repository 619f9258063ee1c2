"""``ecngym bench branch``: what a branch of a running episode costs (time, memory, throughput).

Per scenario, an episode is played to its middle with the static action, then:

* ``snapshot_ms``: wall time of :meth:`~ecngym.envs.branch.BranchHub.snapshot` (the driver forks,
  the copy connects back and reports), median over ``--repeats``;
* ``branch_ms``: wall time of a branch that does nothing (a snapshot forks again, the copy
  connects back and reports), median over ``--repeats``: the fixed cost of one branch;
* ``branches_per_s``: such branches per wall second with two in flight at once (two cores);
* ``private_mb_per_branch``: memory a live branch holds of its own after playing one window
  (``--window-steps`` steps) from the snapshot: its private pages (``Private_Clean`` +
  ``Private_Dirty`` of ``/proc/<pid>/smaps_rollup``), i.e. the copy-on-write pages it touched;
  the rest it shares with its parent. Mean over the held branches;
* ``driver_rss_mb``: the driver's resident set (what a full copy would cost instead);
* ``window_ms``: wall time of a branch that plays one window and holds there (simulation included).

Wall figures depend on the machine's load (``load_avg_before`` is printed); the memory figures do
not. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

from ecngym.markdown_page import add_markdown_option, open_page, page_console

#: The suite whose scenarios are measured by default (``--scenario`` names others).
DEFAULT_SUITE = "core"


def nothing(env: Any) -> tuple[None, bool]:
    """Branch function: report at once."""
    return None, False


def play_and_hold(env: Any, action: Any, steps: int) -> tuple[None, bool]:
    """Branch function: play ``steps`` steps of ``action``, then hold."""
    for _ in range(steps):
        env.step(action)
    return None, True


def private_mb(pid: int) -> float:
    """Private (copy-on-write touched) memory of a process in MB, from ``smaps_rollup``."""
    total_kb = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total_kb += int(line.split()[1])
    except OSError:
        return float("nan")
    return total_kb / 1024.0


def rss_mb() -> float:
    """This process's resident set in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def measure(scenario: str, repeats: int, window_steps: int, held: int) -> dict[str, Any]:
    """The figures of one scenario (see the module doc)."""
    from ecngym.benchmark.oracle import make_env
    from ecngym.benchmark.references import read_scenario
    from ecngym.envs.branch import BranchHub

    sc = read_scenario(scenario)
    env = make_env(sc["env"])
    env.reset(seed=int(sc["protocol"]["train_seeds"][0]))
    action = env.static_action()
    for _ in range(int(env.config.episode_steps) // 2):
        env.step(action)
    out: dict[str, Any] = {"scenario": scenario, "at_step": int(env.config.episode_steps) // 2}
    with BranchHub() as hub:
        snaps = []
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            snaps.append(hub.snapshot(env))
            times.append(time.perf_counter() - t0)
        out["snapshot_ms"] = 1e3 * statistics.median(times)
        for s in snaps[1:]:
            s.close()
        snap = snaps[0]
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            hub.wait([snap.branch(nothing)])
            times.append(time.perf_counter() - t0)
        out["branch_ms"] = 1e3 * statistics.median(times)
        t0 = time.perf_counter()
        running: list[int] = []
        for _ in range(repeats * 4):
            if len(running) >= 2:
                hub.wait([running.pop(0)])
            running.append(snap.branch(nothing))
        hub.wait(running)
        out["branches_per_s"] = repeats * 4 / (time.perf_counter() - t0)
        walls, mems = [], []
        for _ in range(held):
            t0 = time.perf_counter()
            ticket = snap.branch(play_and_hold, action, window_steps)
            child = hub.wait([ticket])[ticket]
            walls.append(time.perf_counter() - t0)
            mems.append(private_mb(child.pid))
        out["window_steps"] = window_steps
        out["window_ms"] = 1e3 * statistics.median(walls)
        out["private_mb_per_branch"] = statistics.mean(mems)
        out["driver_rss_mb"] = rss_mb()
    env.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """``ecngym bench branch``: print the figures per scenario; the last line is JSON."""
    parser = argparse.ArgumentParser(prog="ecngym bench branch", description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append",
                        help=f"a suite scenario (repeatable; default: suite {DEFAULT_SUITE}'s)")
    parser.add_argument("--repeats", type=int, default=20, help="snapshots and empty branches timed (default 20)")
    parser.add_argument("--window-steps", type=int, default=48, help="steps a held branch plays (default 48)")
    parser.add_argument("--held", type=int, default=5, help="held branches measured for memory (default 5)")
    add_markdown_option(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for name in ("repeats", "window_steps", "held"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: got {getattr(args, name)}; expected >= 1")
    page = open_page(args.markdown, "Branch cost", "ecngym bench branch", list(sys.argv[1:] if argv is None else argv),
                     __doc__.split("\n\n", 1)[1])
    console = page_console(page)
    load = os.getloadavg()[0]
    from ecngym.benchmark.references import suite_scenarios

    names = args.scenario or suite_scenarios(DEFAULT_SUITE)
    rows = [measure(s, args.repeats, args.window_steps, args.held) for s in names]
    from rich.table import Table

    table = Table()
    keys = ("scenario", "snapshot_ms", "branch_ms", "branches_per_s", "window_steps", "window_ms",
            "private_mb_per_branch", "driver_rss_mb")
    for head in ("scenario", "snapshot ms", "branch ms", "branches/s", "window steps", "window ms",
                 "private MB / branch", "driver RSS MB"):
        table.add_column(head)
    for r in rows:
        table.add_row(*(f"{r[k]:.2f}" if isinstance(r[k], float) else str(r[k]) for k in keys))
    console.print(table)
    if page is not None:
        page.write()
    print(json.dumps({"load_avg_before": load, "cpus": os.cpu_count(), "scenarios": rows}))
    return 0
