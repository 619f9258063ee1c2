"""``ecngym bench fabric``: the fabric's speed and fidelity against the HPCC reference runs.

Replays reference scenarios A (16 hosts, one switch) and C (4 x 4 leaf-spine) with the ``hpcc``
preset and prints, per scenario: data packet-hops per wall second (one data packet crossing one
link; control packets separately), simulated seconds per wall second, ns-3 events per second, peak
RSS, flows completed, and the FCT-slowdown table (median / p99 per size bucket) beside the
reference's; plus this machine's bare ns-3 event-loop rate, the ceiling the fabric is read
against. Each scenario runs in a fresh subprocess so that its peak RSS is its own.

The last line printed is one JSON object (keys documented in :func:`summarize`).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

from ecngym.sim_backend.metrics import SIZE_BUCKETS, slowdown_table

BARE_EVENTS = 5_000_000


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def run_scenario(name: str, repeats: int = 1) -> dict[str, Any]:
    """Replay one reference scenario ``repeats`` times in this process; return its figures."""
    from ecngym.sim_backend import Fabric
    from ecngym.sim_backend.hpcc_reference import scenario

    sc = scenario(name)
    topo, flows = sc.topology(), sc.flows()
    walls = []
    for _ in range(repeats):
        start = time.perf_counter()
        with Fabric(topo, flows, "hpcc") as fab:
            fab.run("1s")
            wall = time.perf_counter() - start
            counters = fab.counters()
            records = fab.flow_records()
            end_ns = fab.now_ns
        walls.append(wall)
    wall = float(np.median(walls))
    span_s = (end_ns - int(flows["start_ns"].min())) / 1e9
    ours = slowdown_table(records)
    ref = slowdown_table(sc.reference_fct())
    return {
        "scenario": sc.name,
        "description": sc.description,
        "wall_s": wall,
        "wall_s_all": walls,
        "data_packet_hops": counters["data_packet_hops"],
        "control_packet_hops": counters["control_packet_hops"],
        "events": counters["events"],
        "simulated_span_s": span_s,
        "flows_completed": int(records["finished"].sum()),
        "flows_total": len(records),
        "drops": counters["drops"],
        "peak_rss_mb": _peak_rss_mb(),
        "slowdown": ours[["median", "p99"]].to_dict(orient="index"),
        "reference_slowdown": ref[["median", "p99"]].to_dict(orient="index"),
        "reference": {
            "data_packet_hops": sc.data_packet_hops, "events": sc.events, "wall_s": sc.wall_s,
            "simulated_span_s": sc.simulated_span_s, "peak_rss_mb": sc.peak_rss_mb,
        },
    }


def bare_event_rate(events: int = BARE_EVENTS) -> dict[str, Any]:
    """Events per second of a bare ns-3 event loop on this machine."""
    from ecngym.sim_backend import _fabric

    return {"bare_events_per_s": _fabric.bare_event_loop_rate(events), "events": events}


def _in_subprocess(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "ecngym.sim_backend.bench", "--worker", *args],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The final JSON line.

    Keys: ``data_packet_hops_per_s`` (scenario A), ``data_packet_hops_per_s_c`` (C),
    ``sim_s_per_wall_s`` and ``events_per_s`` (A), ``peak_rss_mb`` (largest over scenarios),
    ``flows_completed`` / ``flows_total`` (summed over scenarios), ``slowdown_rel_err_median`` and
    ``slowdown_rel_err_p99`` (largest relative difference of a size bucket's median / p99 from the
    reference, over all scenarios), ``bare_events_per_s``.
    """
    by_name = {r["scenario"]: r for r in results if "scenario" in r}
    out: dict[str, Any] = {}
    a, c = by_name.get("A"), by_name.get("C")
    if a is not None:
        out["data_packet_hops_per_s"] = a["data_packet_hops"] / a["wall_s"]
    if c is not None:
        out["data_packet_hops_per_s_c"] = c["data_packet_hops"] / c["wall_s"]
    first = a or c
    if first is not None:
        out["sim_s_per_wall_s"] = first["simulated_span_s"] / first["wall_s"]
        out["events_per_s"] = first["events"] / first["wall_s"]
    scen = list(by_name.values())
    out["peak_rss_mb"] = max(r["peak_rss_mb"] for r in scen)
    out["flows_completed"] = sum(r["flows_completed"] for r in scen)
    out["flows_total"] = sum(r["flows_total"] for r in scen)
    for stat in ("median", "p99"):
        errs = [abs(r["slowdown"][b][stat] / r["reference_slowdown"][b][stat] - 1)
                for r in scen for b in SIZE_BUCKETS]
        out[f"slowdown_rel_err_{stat}"] = max(errs)
    bare = [r for r in results if "bare_events_per_s" in r]
    if bare:
        out["bare_events_per_s"] = bare[0]["bare_events_per_s"]
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def _print_tables(results: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    scen = [r for r in results if "scenario" in r]
    speed = Table(title="Fabric speed on one core: ecngym (HPCC model's figure in brackets)")
    speed.add_column("figure")
    for r in scen:
        speed.add_column(f"scenario {r['scenario']}", justify="right")

    def row(label: str, fmt: Any) -> None:
        speed.add_row(label, *[fmt(r, r["reference"]) for r in scen])

    row("data packet-hops / s", lambda r, f: f"{r['data_packet_hops'] / r['wall_s']:.3g} "
        f"({f['data_packet_hops'] / f['wall_s']:.2g})")
    row("data packet-hops", lambda r, f: f"{r['data_packet_hops']:,} ({f['data_packet_hops']:,})")
    row("control packet-hops", lambda r, f: f"{r['control_packet_hops']:,}")
    row("events / s", lambda r, f: f"{r['events'] / r['wall_s']:.3g} ({f['events'] / f['wall_s']:.2g})")
    row("simulated s / wall s", lambda r, f: f"{r['simulated_span_s'] / r['wall_s']:.4f} "
        f"({f['simulated_span_s'] / f['wall_s']:.4f})")
    row("wall s", lambda r, f: f"{r['wall_s']:.2f} ({f['wall_s']:.2f})")
    row("peak RSS MB", lambda r, f: f"{r['peak_rss_mb']:.0f} ({f['peak_rss_mb']:.0f})")
    row("flows completed", lambda r, f: f"{r['flows_completed']}/{r['flows_total']}")
    console.print(speed)
    for r in results:
        if "bare_events_per_s" in r:
            console.print(f"bare ns-3 event loop on this machine: {r['bare_events_per_s']:.3g} "
                          "events/s (self-rescheduling no-op events, PriorityQueueScheduler)")
    fid = Table(title="FCT slowdown median / p99: ecngym vs the HPCC model, same flows")
    for col in ("scen.", "flow size", "ecngym", "HPCC model", "rel. diff"):
        fid.add_column(col, justify="right" if col not in ("scen.", "flow size") else "left")
    for r in scen:
        for b in SIZE_BUCKETS:
            o, f = r["slowdown"][b], r["reference_slowdown"][b]
            fid.add_row(r["scenario"], b, f"{o['median']:.2f} / {o['p99']:.2f}",
                        f"{f['median']:.2f} / {f['p99']:.2f}",
                        f"{o['median'] / f['median'] - 1:+.0%} / {o['p99'] / f['p99'] - 1:+.0%}")
    console.print(fid)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench fabric``."""
    parser = argparse.ArgumentParser(prog="ecngym bench fabric", description=__doc__.split("\n")[0])
    parser.add_argument("--scenarios", default="A,C", help="comma-separated: A, C (default A,C)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per scenario; median wall time")
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        kind = args.worker[0]
        result = bare_event_rate() if kind == "bare" else run_scenario(kind, int(args.worker[1]))
        print(json.dumps(result))
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    names = [s.strip().upper() for s in args.scenarios.split(",") if s.strip()]
    bad = [n for n in names if n not in ("A", "C")]
    if bad or not names:
        parser.error(f"--scenarios: unknown {bad}; allowed A, C")
    from rich.console import Console

    results = []
    with Console(stderr=True).status("measuring ...") as status:
        status.update("bare ns-3 event loop ...")
        results.append(_in_subprocess(["bare"]))
        for name in names:
            status.update(f"replaying scenario {name} ({args.repeats}x) ...")
            results.append(_in_subprocess([name, str(args.repeats)]))
    if not args.json_only:
        _print_tables(results)
    print(json.dumps(summarize(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
