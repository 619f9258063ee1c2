"""``ecngym bench scale``: how the fabric's cost grows with hosts and load.

Fat-trees k = 4, 8, 16 (16, 128, 1024 hosts; 20, 80, 320 switches; 100 Gbps links, 1 us each)
carry WebSearch background traffic at 30 % and 60 % of every host link (the ``hpcc`` preset:
DCQCN, PFC, ECN at dequeue) for a fixed simulated time (default 0.3 ms: flows arrive over the whole
window, so the fabric fills up as it goes). Each case runs in a fresh process, so its peak RSS is
its own, and prints: data packet-hops per wall second (one data packet crossing one link), ns-3
events per second, simulated seconds per wall second, the wall time per data packet-hop, the
time to generate the trace and to build the fabric (nodes, links, routes, flow table), peak
RSS (the whole process: interpreter, libraries, trace and fabric) and the fabric's own memory
(``fabric MB``: resident memory at the end of the run less that just before the build, so the
imports and the trace generator are not in it). The bare ns-3 event-loop rate of this machine,
measured in the same run, is the ceiling the rates are read against (the machine is shared, so
compare ratios within one run).

If the cost per packet-hop stayed constant, wall time would grow linearly with the packet-hops
simulated (hosts x load x time); the ``vs k=4`` column shows how far the per-hop rate falls as the
fabric grows (more pending events, routes and queue pairs to keep in cache).

The last line printed is one JSON object (keys documented in :func:`summarize`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ecngym.markdown_page import add_markdown_option, open_page, page_console
from ecngym.perf.fabric import _in_subprocess, _peak_rss_mb, bare_event_rate
from ecngym.sim_backend.topology import MAX_FAT_TREE_K

DEFAULT_KS = (4, 8, 16)
DEFAULT_LOADS = (0.3, 0.6)
DEFAULT_SIM_TIME = "0.3ms"
WORKER_MODULE = "ecngym.perf.scale"


def run_case(k: int, load: float, sim_time: str, scheduler: str = "timing_wheel", seed: int = 1) -> dict[str, Any]:
    """Build a k-ary fat-tree under WebSearch at ``load``, run ``sim_time`` and return its figures."""
    from ecngym.sim_backend import Fabric, FabricConfig, topology
    from ecngym.units import parse_time_ns
    from ecngym.workloads import generate_trace

    topo = topology.fat_tree(k)
    start = time.perf_counter()
    trace = generate_trace("websearch", load=load, hosts=topo.num_hosts, duration=sim_time, seed=seed,
                           progress=False)
    trace_s = time.perf_counter() - start
    rss_before_mb = _resident_mb()
    start = time.perf_counter()
    fab = Fabric(topo, trace, FabricConfig.preset("hpcc", scheduler=scheduler, seed=seed))
    build_s = time.perf_counter() - start
    with fab:
        start, start_cpu = time.perf_counter(), time.process_time()
        fab.run_until(parse_time_ns(sim_time, "--sim-time"))
        run_s, run_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu
        counters = fab.counters()
        event_list = fab.sim.event_list()
        fabric_mb = _resident_mb() - rss_before_mb
    return {
        "k": k, "hosts": topo.num_hosts, "switches": topo.num_switches, "load": load,
        "scheduler": scheduler, "sim_time_s": parse_time_ns(sim_time, "--sim-time") / 1e9,
        "flows": len(trace.flows), "flows_completed": counters["flows_completed"],
        "data_packet_hops": counters["data_packet_hops"], "control_packet_hops": counters["control_packet_hops"],
        "events": counters["events"], "trace_s": trace_s, "build_s": build_s, "run_s": run_s,
        "run_cpu_s": run_cpu_s, "packets_in_flight": counters["packets_in_flight"],
        "pending_events": event_list.get("pending_events"), "far_events": event_list.get("far_events"),
        "far_cancelled_events": event_list.get("far_cancelled_events"), "peak_rss_mb": _peak_rss_mb(),
        "fabric_mb": fabric_mb,
    }


def _resident_mb() -> float:
    """This process's resident memory now (Linux ``/proc/self/statm``), in MiB."""
    import os

    with open("/proc/self/statm", encoding="ascii") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def summarize(cases: list[dict[str, Any]], bare: dict[str, Any] | None) -> dict[str, Any]:
    """The final JSON line.

    Keys: ``cases`` (one object per (k, load): ``k``, ``hosts``, ``load``, ``data_packet_hops_per_s``,
    ``data_packet_hops_per_cpu_s`` (per second of the process's CPU time: what other processes on a
    shared machine take away from wall time does not count), ``events_per_s``, ``events_per_data_packet_hop``,
    ``sim_s_per_wall_s``, ``ns_per_data_packet_hop``, ``build_s``, ``trace_s``, ``peak_rss_mb``, ``fabric_mb``,
    ``flows``, ``flows_completed``, and at the end of the run ``packets_in_flight``, ``pending_events``,
    ``far_events`` (beyond the timing wheel's horizon), ``far_cancelled_events``), ``hops_per_s_vs_k4``
    (k -> the lowest ratio over loads of its packet-hop rate to k = 4's at the same load),
    ``hops_per_cpu_s_vs_k4`` (the same per CPU second), ``max_build_s``, ``max_peak_rss_mb``,
    ``sim_time_s``, ``bare_events_per_s``.
    """
    rows = []
    for c in cases:
        rows.append({
            "k": c["k"], "hosts": c["hosts"], "load": c["load"],
            "data_packet_hops_per_s": c["data_packet_hops"] / c["run_s"],
            "data_packet_hops_per_cpu_s": c["data_packet_hops"] / max(c["run_cpu_s"], 1e-9),
            "events_per_s": c["events"] / c["run_s"],
            "events_per_data_packet_hop": c["events"] / max(c["data_packet_hops"], 1),
            "sim_s_per_wall_s": c["sim_time_s"] / c["run_s"],
            "ns_per_data_packet_hop": c["run_s"] * 1e9 / max(c["data_packet_hops"], 1),
            "build_s": c["build_s"], "trace_s": c["trace_s"], "peak_rss_mb": c["peak_rss_mb"],
            "fabric_mb": c["fabric_mb"],
            "flows": c["flows"], "flows_completed": c["flows_completed"],
            "packets_in_flight": c["packets_in_flight"], "pending_events": c["pending_events"],
            "far_events": c["far_events"], "far_cancelled_events": c["far_cancelled_events"],
        })
    def vs_k4(key: str) -> dict[str, float]:
        base = {r["load"]: r[key] for r in rows if r["k"] == DEFAULT_KS[0]}
        ratios: dict[str, float] = {}
        for r in rows:
            if r["load"] in base:
                ratio = r[key] / base[r["load"]]
                ratios[str(r["k"])] = min(ratios.get(str(r["k"]), ratio), ratio)
        return ratios

    out: dict[str, Any] = {
        "cases": rows,
        "hops_per_s_vs_k4": vs_k4("data_packet_hops_per_s"),
        "hops_per_cpu_s_vs_k4": vs_k4("data_packet_hops_per_cpu_s"),
        "max_build_s": max(r["build_s"] for r in rows),
        "max_peak_rss_mb": max(r["peak_rss_mb"] for r in rows),
        "sim_time_s": cases[0]["sim_time_s"],
    }
    if bare is not None:
        out["bare_events_per_s"] = bare["bare_events_per_s"]

    def rounded(v: Any) -> Any:
        if isinstance(v, float):
            return float(f"{v:.4g}")
        if isinstance(v, dict):
            return {k: rounded(x) for k, x in v.items()}
        if isinstance(v, list):
            return [rounded(x) for x in v]
        return v

    return rounded(out)


def _print_table(summary: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    table = Table(title=f"Fabric cost vs size and load: fat-tree, WebSearch, {summary['sim_time_s'] * 1e3:g} ms "
                        "simulated, hpcc preset")
    for col in ("k (hosts)", "load", "flows", "data packet-hops/s", "vs k=4", "per CPU s", "vs k=4 (CPU)",
                "events / hop", "sim s / wall s", "ns / packet-hop", "in flight", "pending events (far, cancelled)",
                "trace s", "build s", "peak RSS MB", "fabric MB"):
        table.add_column(col, justify="right")
    base = {r["load"]: r for r in summary["cases"] if r["k"] == DEFAULT_KS[0]}
    for r in summary["cases"]:
        b = base.get(r["load"])
        ratio = r["data_packet_hops_per_s"] / b["data_packet_hops_per_s"] if b else float("nan")
        ratio_cpu = r["data_packet_hops_per_cpu_s"] / b["data_packet_hops_per_cpu_s"] if b else float("nan")
        pending = (f"{r['pending_events']:,} ({r['far_events']:,}, {r['far_cancelled_events']:,})"
                   if r.get("far_events") is not None else "-")
        table.add_row(f"{r['k']} ({r['hosts']})", f"{r['load']:.0%}", f"{r['flows']:,}",
                      f"{r['data_packet_hops_per_s']:.3g}", f"{ratio:.2f}", f"{r['data_packet_hops_per_cpu_s']:.3g}",
                      f"{ratio_cpu:.2f}", f"{r['events_per_data_packet_hop']:.2f}", f"{r['sim_s_per_wall_s']:.3g}",
                      f"{r['ns_per_data_packet_hop']:.0f}", f"{r['packets_in_flight']:,}", pending,
                      f"{r['trace_s']:.2f}", f"{r['build_s']:.2f}", f"{r['peak_rss_mb']:.0f}", f"{r['fabric_mb']:.1f}")
    console.print(table)
    if "bare_events_per_s" in summary:
        console.print(f"bare ns-3 event loop in this run: {summary['bare_events_per_s']:.3g} events/s")


def _floats(text: str, name: str, parser: argparse.ArgumentParser, kind: type) -> list[Any]:
    try:
        return [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        parser.error(f"{name}: expected comma-separated numbers, got {text!r}")
        raise  # unreachable: parser.error exits


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench scale``."""
    parser = argparse.ArgumentParser(prog="ecngym bench scale", description=__doc__.split("\n")[0])
    parser.add_argument("--k", default=",".join(map(str, DEFAULT_KS)),
                        help=f"comma-separated even fat-tree arities in [2, {MAX_FAT_TREE_K}] (default 4,8,16)")
    parser.add_argument("--loads", default=",".join(map(str, DEFAULT_LOADS)),
                        help="comma-separated WebSearch loads in (0, 1) (default 0.3,0.6)")
    parser.add_argument("--sim-time", default=DEFAULT_SIM_TIME,
                        help=f"simulated time per case (default {DEFAULT_SIM_TIME})")
    parser.add_argument("--scheduler", default="timing_wheel", help="fabric.scheduler (default timing_wheel)")
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line")
    add_markdown_option(parser)
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.worker:
        result = (bare_event_rate() if args.worker[0] == "bare"
                  else run_case(int(args.worker[0]), float(args.worker[1]), args.worker[2], args.worker[3]))
        print(json.dumps(result))
        return 0
    ks = _floats(args.k, "--k", parser, int)
    loads = _floats(args.loads, "--loads", parser, float)
    if not ks or any(k < 2 or k % 2 or k > MAX_FAT_TREE_K for k in ks):
        parser.error(f"--k: need even arities in [2, {MAX_FAT_TREE_K}], got {args.k!r}")
    if not loads or any(not 0 < x < 1 for x in loads):
        parser.error(f"--loads: need loads in (0, 1), got {args.loads!r}")
    from ecngym.sim_backend.config import SCHEDULERS
    from ecngym.units import parse_time_ns

    if args.scheduler not in SCHEDULERS:
        parser.error(f"--scheduler: got {args.scheduler!r}, allowed: {', '.join(SCHEDULERS)}")
    if parse_time_ns(args.sim_time, "--sim-time") <= 0:
        parser.error("--sim-time must be > 0")
    from rich.console import Console

    page = open_page(args.markdown, "Fabric cost vs size and load", parser.prog, argv, parser.description)
    cases = []
    with Console(stderr=True).status("measuring ...") as status:
        status.update("bare ns-3 event loop ...")
        bare = _in_subprocess(["bare"], WORKER_MODULE)
        for k in ks:
            for load in loads:
                status.update(f"fat-tree k={k}, load {load:.0%}, {args.sim_time} simulated ...")
                cases.append(_in_subprocess([str(k), str(load), args.sim_time, args.scheduler], WORKER_MODULE))
    summary = summarize(cases, bare)
    if not args.json_only or page is not None:
        _print_table(summary, page_console(page, 200, quiet=args.json_only))  # 16 columns
    print(json.dumps(summary))
    if page is not None:
        page.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
