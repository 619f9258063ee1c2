"""``ecngym bench tcp-bisect``: which Linux-like host option moves the dumbbell's small-flow tail.

On the WebSearch dumbbell of ``ecngym bench tcp`` (4 + 4 hosts across one 100 Gbps core link), runs
our DCTCP host with option sets between the lean model and the Linux-like one (:data:`OPTION_SETS`:
the lean model plus one option group, the Linux-like host less one group, then the Linux-like host
with the fixes) and prints, per case, each set's small-flow (< 100 KB) slowdown median / p99, the
mid-size p99, the bottleneck's standing queue and peak, drops, retransmitted bytes, RTOs and the
largest window a flow ended with, beside ns-3's TcpDctcp on the same flows (``--no-ns3`` skips it).

``--trace NAMES`` follows the slowest small flow of each named option set on the first case: its FCT
against the rounds a window of its final size needs at the mean RTT, then per ``--trace-step``
the bottleneck queue, the flow's window and the largest window among the active flows (with its
alpha and retransmitted bytes): where the flow's time goes. The last line printed is JSON.

Each run is a fresh process (:func:`ecngym.perf.fabric._in_subprocess`); times are CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ecngym.markdown_page import add_markdown_option, open_page
from ecngym.perf import tcp
from ecngym.perf.fabric import _in_subprocess

WORKER_MODULE = "ecngym.perf.tcp_bisect"
DEFAULT_LOADS = (0.6, 0.3)
TRACE_ROWS = 15
SMALL = "<100KB"
MID = "100KB-1MB"

#: option group -> the ``fabric.dctcp`` keys of :func:`ecngym.perf.tcp.linux_overrides` it holds
GROUPS: dict[str, tuple[str, ...]] = {
    "slow start (IW 10)": ("slow_start", "initial_cwnd_packets"),
    "handshake": ("handshake",),
    "delayed ACK (200 us)": ("delayed_ack", "delayed_ack_timeout_ns"),
    "RTO estimate": ("rto_estimate", "min_rto_ns", "initial_rto_ns"),
    "floor 2 MSS": ("min_window",),
    "cwnd-limited growth": ("cwnd_limited_growth",),
}


def _linux(settings: Any) -> dict[str, Any]:
    return tcp.linux_overrides(settings)["dctcp"]


def _only(keys: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    return lambda s: {"dctcp": {k: v for k, v in _linux(s).items() if k in keys}}


def _without(keys: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    return lambda s: {"dctcp": {k: v for k, v in _linux(s).items() if k not in keys}}


def _with(extra: dict[str, Any]) -> Callable[[Any], dict[str, Any]]:
    return lambda s: {"dctcp": {**_linux(s), **extra}}


#: option set -> its fabric overrides given the reference's settings, in the table's order
OPTION_SETS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "lean": lambda s: {},
    **{f"lean + {g}": _only(keys) for g, keys in GROUPS.items()},
    "linux": lambda s: {"dctcp": _linux(s)},
    **{f"linux - {g}": _without(keys) for g, keys in GROUPS.items()},
    "linux + persistent connections": _with({"persistent_connections": True}),
}


def case_of(load: float, buffer: str, duration: str, settings: Any) -> dict[str, Any]:
    """A dumbbell case of ``ecngym bench tcp``."""
    return {"kind": "dumbbell", "load": load, "duration": duration, "buffer": buffer,
            "settings": settings.as_dict()}


def _run(case: dict[str, Any], overrides: dict[str, Any], trace_step_ns: int = 0) -> dict[str, Any]:
    """One option set on one case: the bench's summary plus retransmissions, windows and a trace."""
    from ecngym.sim_backend import Fabric
    from ecngym.sim_backend.ns3_tcp import Ns3TcpSettings
    from ecngym.units import parse_bytes, parse_time_ns

    settings = Ns3TcpSettings.parse(case["settings"], "ns3_tcp")
    topo, flows = tcp.case_inputs(case)
    cfg = tcp.fabric_config(settings, parse_bytes(case["buffer"], "--buffers"), overrides)
    limit = parse_time_ns(tcp.LIMIT, "limit")
    cpu = time.process_time()
    timeline: list[dict[str, Any]] = []
    with Fabric(topo, flows, cfg) as fab:
        switch_ports = np.flatnonzero(fab.ports.is_switch)
        fab.run_until(int(flows["start_ns"].min()))
        fab.read_telemetry()
        if trace_step_ns:
            timeline = _timeline(fab, switch_ports, trace_step_ns, limit)
        fab.run(limit)
        tel = fab.read_telemetry()
        rec = fab.flow_records()
        counters = fab.counters()
    cpu_s = time.process_time() - cpu
    p = switch_ports[int(np.argmax(tel["tx_bytes"][switch_ports]))]
    out = tcp._summary(rec, float(tel["mean_queue_bytes"][p]), float(tel["max_queue_bytes"][p]),
                       counters["retransmit_timeouts"], counters["drops"], int(tel["ecn_marked_packets"].sum()),
                       cpu_s, counters["events"], counters["data_packet_hops"] + counters["control_packet_hops"])
    out["cpu_s"] = cpu_s
    out["retransmitted_mb"] = float(rec["retransmitted_bytes"].sum()) / 1e6
    out["largest_final_window_kb"] = float(rec["window_bytes"].max()) / 1e3
    small = rec[rec["finished"] & (rec["size_bytes"] < 100_000)].sort_values("slowdown", ascending=False)
    if len(small):
        out["slowest_small"] = {k: _plain(small.iloc[0][k]) for k in
                                ("flow_id", "src", "dst", "size_bytes", "start_ns", "fct_ns", "slowdown",
                                 "ideal_fct_ns", "base_rtt_ns", "window_bytes")}
    if trace_step_ns:
        out["timeline"] = timeline
        out["flows"] = rec[["flow_id", "src", "dst", "size_bytes", "start_ns", "fct_ns", "slowdown",
                            "retransmitted_bytes"]].to_dict(orient="list")
    return out


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _timeline(fab: Any, switch_ports: np.ndarray, step_ns: int, limit_ns: int) -> list[dict[str, Any]]:
    """Per step until every flow finished: the bottleneck queue and each active flow's window.

    The bottleneck is the switch port that sent the most bytes over the whole trace (as the
    summary's), not per step: a step without a departure there would pick another port.
    """
    out = []
    queues = []
    tx = np.zeros(len(switch_ports))
    t = fab.now_ns
    while t < limit_ns:
        t += step_ns
        fab.run_until(t)
        tel = fab.read_telemetry()
        rec = fab.flow_records()
        tx += tel["tx_bytes"][switch_ports]
        queues.append((tel["mean_queue_bytes"][switch_ports] / 1e3, tel["max_queue_bytes"][switch_ports] / 1e3))
        act = rec[(rec["start_ns"] <= t) & ~rec["finished"]]
        out.append({"t_ns": t,
                    "active": {int(r.flow_id): [float(r.window_bytes) / 1e3, _nan_none(r.cc_alpha),
                                                float(r.retransmitted_bytes) / 1e3, float(r.delivered_bytes) / 1e3]
                               for r in act.itertuples()}})
        if rec["finished"].all():
            break
    p = int(np.argmax(tx))
    for row, (mean_q, max_q) in zip(out, queues, strict=True):
        row["mean_queue_kb"], row["max_queue_kb"] = float(mean_q[p]), float(max_q[p])
    return out


def _nan_none(x: float) -> float | None:
    return None if x != x else round(float(x), 3)


def _worker(spec: str) -> dict[str, Any]:
    job = json.loads(spec)
    if job["model"] == "ns3":
        return tcp.run_ns3(job["case"])
    return _run(job["case"], job["overrides"], job.get("trace_step_ns", 0))


def _row(name: str, s: dict[str, Any]) -> list[str]:
    sd = s["slowdown"]

    def get(bucket: str, stat: str) -> str:
        return f"{sd[bucket][stat]:.3g}" if bucket in sd else "-"

    return [name, get(SMALL, "median"), get(SMALL, "p99"), get(MID, "p99"), f"{s['standing_queue_kb']:.1f}",
            f"{s['peak_queue_kb']:.0f}", f"{s['drops']:,}", f"{s.get('retransmitted_mb', float('nan')):.2f}",
            f"{s['rto']}", f"{s.get('largest_final_window_kb', float('nan')):,.0f}"]


COLUMNS = ["option set", "small p50", "small p99", "mid p99", "standing KB", "peak KB", "drops",
           "retransmitted MB", "RTOs", "largest final window KB"]


def trace_lines(run: dict[str, Any], base_rtt_ns: float) -> list[str]:
    """Where the slowest small flow's time goes, in lines of text."""
    f = run["slowest_small"]
    start, end = f["start_ns"], f["start_ns"] + f["fct_ns"]
    during = [r for r in run["timeline"] if start <= r["t_ns"] <= end + 1]
    mean_q = float(np.mean([r["mean_queue_kb"] for r in during])) if during else float("nan")
    rtt_us = (base_rtt_ns + mean_q * 1e3 * 8 / 100) / 1e3  # queueing at the 100 Gbps core
    rounds = f["size_bytes"] / max(f["window_bytes"], 1)
    key = str(f["flow_id"])
    first = next((r["t_ns"] for r in run["timeline"] if r["t_ns"] >= start
                  and (r["active"].get(key) or [0, 0, 0, 0])[3] > 0), end)
    lines = [f"slowest small flow {f['flow_id']}: {f['size_bytes']:,} B, host {f['src']} -> {f['dst']}, "
             f"start {start / 1e6:.3f} ms, FCT {f['fct_ns'] / 1e3:.0f} us (slowdown {f['slowdown']:.1f}, ideal "
             f"{f['ideal_fct_ns'] / 1e3:.1f} us); final window {f['window_bytes']:,} B; mean bottleneck queue "
             f"during it {mean_q:.0f} KB -> RTT ~{rtt_us:.1f} us; {rounds:.0f} rounds of its final window "
             f"take ~{rounds * rtt_us:.0f} us; its first byte arrived within {(first - start) / 1e3:.0f} us "
             f"of its start (the trace's resolution)",
             "t ms | queue mean / max KB | the flow's window / delivered KB | largest window among active flows: "
             "flow window KB alpha retransmitted KB | active flows"]
    for r in run["timeline"]:
        if r["t_ns"] < start - 5 * (end - start) / 10 or r["t_ns"] > end + 1:
            continue
        act = r["active"]
        mine = act.get(str(f["flow_id"]), act.get(f["flow_id"]))
        big = max(act.items(), key=lambda kv: kv[1][0]) if act else None
        big_text = (f"{big[0]}: {big[1][0]:,.0f} a={big[1][1]} r={big[1][2]:,.0f}" if big else "-")
        lines.append(f"{r['t_ns'] / 1e6:.3f} | {r['mean_queue_kb']:.0f} / {r['max_queue_kb']:.0f} | "
                     f"{'-' if mine is None else f'{mine[0]:.0f} / {mine[3]:.0f}'} | {big_text} | {len(act)}")
    return lines


#: The mechanism the tables and traces show (the page's last section)
MECHANISM = """\
## The mechanism

**Slow start alone moves the tail** (`lean + slow start` against `lean`; `linux - slow start` is
back near the lean model): the handshake, delayed ACKs, the RTO estimate and the 2-MSS floor
shift it only once slow start is on. What slow start does here that ns-3's does not: **its window
grows while it does not limit the sender.** Our NIC paces every flow at line rate; on the
dumbbell a lone flow's host link is as fast as the core link, so once its window exceeds the
path's BDP the pacing, not the window, limits it, no queue forms anywhere, no ECN echo comes back,
ssthresh stays unbounded and every ACK adds its bytes to the window: the trace's elephant reaches
megabytes within a millisecond (`largest final window`), while its alpha decays towards 0. When a
second elephant and a few small flows arrive, that window fills the bottleneck's buffer; the cut
W (1 - alpha / 2) with alpha near 0 barely dents it, and each cut waits for the end of the
window of data it began (CWR), which go-back-N keeps from coming (with a 250 KB buffer the
elephant drops, rewinds and resends its window: `retransmitted MB`). For one to two milliseconds
the queue sits at the buffer's size; the small flows that start then are cut to the window floor
at once and need one round trip of a full queue (~20 us) per 1-2 segments, or lose a SYN or a
tail segment and wait for the 1 ms RTO: that is the slowest small flow's time in the `before`
trace (no queue-pair scheduling and no delayed-ACK timer in it).

Linux does not grow such a window: `tcp_is_cwnd_limited` lets `snd_cwnd` grow only while the
window limited the sender in the current window of data, or, in slow start, while it is below twice
the most packets in flight (`tcp_cwnd_validate`). ns-3's TcpDctcp has no such rule
(`SetSuppressIncreaseIfCwndLimited(false)`), but it does not need one: it hands its whole window to
the host's NIC queue, which the reference marks at K (`host_marking`), so a lone flow's window is
held by marks at its own NIC (and with `host_marking` off its windows grow without bound and its
small-flow tail reaches ~75). `cwnd_limited_growth` (`fabric.dctcp`) is Linux's rule; the `linux`
rows have it, the `linux - cwnd-limited growth` rows are the Linux-like host before it.

**What remains** (the `linux` row against ns-3): a lone elephant of ours is still never marked
(no host queue), so it meets a newcomer with alpha near 0 and still in slow start (ssthresh
unbounded) and takes one to two hundred microseconds to drain the queue it builds; ns-3's left
slow start at its own NIC's marks. The small flows that start in that window are the p99 (with
~45 small flows in 20 ms, the p99 is the second-slowest flow): the same flows are the slowest in
ns-3, 1.2-2.3x faster there.
"""


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench tcp-bisect``."""
    parser = argparse.ArgumentParser(prog="ecngym bench tcp-bisect", description=__doc__.split("\n")[0])
    parser.add_argument("--loads", default=",".join(map(str, DEFAULT_LOADS)),
                        help="comma-separated WebSearch loads of the core link (default 0.6,0.3)")
    parser.add_argument("--buffers", default=",".join(tcp.DEFAULT_BUFFERS),
                        help="comma-separated switch buffer sizes per port (default 250KB,2MB)")
    parser.add_argument("--duration", default=tcp.DEFAULT_DUMBBELL_DURATION, help="arrival window (default 20ms)")
    parser.add_argument("--sets", default="", help="comma-separated option sets (default: all of " +
                        "; ".join(OPTION_SETS) + ")")
    parser.add_argument("--no-ns3", action="store_true", help="skip ns-3's reference runs")
    parser.add_argument("--trace", metavar="NAMES", default=None,
                        help="comma-separated option sets: follow each one's slowest small flow on the first case")
    parser.add_argument("--trace-step", default="auto",
                        help=f"the trace's step (default auto: the traced flow's FCT / {TRACE_ROWS})")
    add_markdown_option(parser)
    parser.add_argument("--worker", nargs=1, help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        print(json.dumps(_worker(args.worker[0])))
        return 0
    from ecngym.sim_backend.ns3_tcp import Ns3TcpSettings
    from ecngym.units import parse_time_ns

    try:
        loads = [float(x) for x in args.loads.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--loads: expected comma-separated numbers in (0, 1), got {args.loads!r}")
    if not loads or any(not 0 < x < 1 for x in loads):
        parser.error(f"--loads: expected comma-separated numbers in (0, 1), got {args.loads!r}")
    buffers = [b.strip() for b in args.buffers.split(",") if b.strip()]
    names = [n.strip() for n in args.sets.split(",") if n.strip()] or list(OPTION_SETS)
    traced = [n.strip() for n in (args.trace or "").split(",") if n.strip()]
    for n in [*names, *traced]:
        if n not in OPTION_SETS:
            parser.error(f"--sets/--trace: unknown option set {n!r}; known: {'; '.join(OPTION_SETS)}")
    settings = Ns3TcpSettings.parse({}, "ns3_tcp")
    page = open_page(args.markdown, "Bisecting the Linux-like host options on the dumbbell", "ecngym bench tcp-bisect",
                     list(sys.argv[1:] if argv is None else argv))
    result: dict[str, Any] = {"cases": []}
    lines: list[str] = []
    for load in loads:
        for buf in buffers:
            case = case_of(load, buf, args.duration, settings)
            label = tcp.case_label(case)
            rows = []
            entry: dict[str, Any] = {"case": label, "sets": {}}
            if not args.no_ns3:
                ref = _in_subprocess([json.dumps({"model": "ns3", "case": case})], WORKER_MODULE)
                entry["ns3"] = ref
                rows.append(_row("ns-3 TcpDctcp", ref))
            for name in names:
                s = _in_subprocess([json.dumps({"model": "ours", "case": case,
                                                "overrides": OPTION_SETS[name](settings)})], WORKER_MODULE)
                entry["sets"][name] = {k: v for k, v in s.items() if k not in ("slowdown",)} | {
                    "slowdown": s["slowdown"]}
                rows.append(_row(name, s))
            result["cases"].append(entry)
            lines.append(f"\n{label}")
            lines.append(" | ".join(COLUMNS))
            lines += [" | ".join(r) for r in rows]
            if page is not None:
                page.add_markdown(f"## {label}\n\n| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS)
                                  + "\n" + "\n".join("| " + " | ".join(r) + " |" for r in rows))
    result["traces"] = []
    for name in traced:
        case = case_of(loads[0], buffers[0], args.duration, settings)
        if args.trace_step == "auto":
            first = _in_subprocess([json.dumps({"model": "ours", "case": case,
                                                "overrides": OPTION_SETS[name](settings)})], WORKER_MODULE)
            step = max(1_000, int(first["slowest_small"]["fct_ns"] / TRACE_ROWS))
        else:
            step = parse_time_ns(args.trace_step, "--trace-step")
        run = _in_subprocess([json.dumps({"model": "ours", "case": case, "overrides": OPTION_SETS[name](settings),
                                          "trace_step_ns": step})], WORKER_MODULE)
        trace = trace_lines(run, run["slowest_small"]["base_rtt_ns"])
        lines += [f"\ntrace: {name} on {tcp.case_label(case)}", *trace]
        result["traces"].append({"set": name, "slowest_small": run["slowest_small"], "lines": trace})
        if page is not None:
            page.add_markdown(f"## Trace: {name} on {tcp.case_label(case)}\n\n```\n" + "\n".join(trace) + "\n```")
    print("\n".join(lines))
    if page is not None:
        page.add_markdown(MECHANISM)
        page.write()
    print(json.dumps(tcp._rounded(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
