"""``ecngym bench tcp``: our DCTCP hosts against ns-3's own TcpDctcp on the same cases.

Cases (each run in a fresh process, on both models, from the same flow table):

- **incast**: an incast star of N + 1 hosts (100 Gbps, 1 us links); hosts 1..N each send one flow
  of ``--incast-size`` to host 0 at t = 0, for N in ``--senders`` and each ``--buffers`` size;
- **dumbbell**: 4 + 4 hosts across one 100 Gbps core link; WebSearch flows (Poisson arrivals,
  ``--dumbbell-load`` of the core link, ``--dumbbell-duration`` of arrivals, seed 1) from the left
  hosts to the right ones, for each buffer size.

The reference is :mod:`ecngym.sim_backend.ns3_tcp` (ns-3's TCP/IP stack, RED step marking at K on
every switch egress, a per-port buffer). Ours is the fabric's ``dctcp`` preset with the same K, the
same segment and header bytes, its shared buffer set to the same size with PFC off and no reserve or
headroom (one congested port may take all of it, as ns-3's per-port buffer), and its retransmission
timeout at ns-3's minimum RTO; then each host-model variant's overrides: ``lean`` (the NIC-style
model as it is), ``linux`` (the Linux-like options, ``fabric.dctcp.slow_start`` ..., set to ns-3's
settings; skipped with a note where the fabric does not have them) and any ``--variant``.

Per case and model: the bottleneck (the switch egress that sent the most bytes) port's standing
queue (time average from the first start to the last finish) and peak, goodput (payload bytes over
first start to last finish), retransmission timeouts, drops, FCT slowdown median / p99 per size
bucket (:func:`ecngym.sim_backend.metrics.slowdown_table`), wall time, events and packet-hops per
second. The tables show ours beside ns-3's with the relative difference, a bar, and whether it is
within the cross-validation bar of issue 34 (:data:`TOLERANCES`). The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np
import pandas as pd

from ecngym.markdown_page import add_markdown_option, open_page
from ecngym.perf.fabric import _in_subprocess
from ecngym.perf.tcp_page import add_tables, metric_values, page_intro, print_tables

WORKER_MODULE = "ecngym.perf.tcp"
DEFAULT_SENDERS = (2, 4, 8, 16, 32, 64, 128)
DEFAULT_BUFFERS = ("250KB", "2MB")
DEFAULT_INCAST_SIZE = "500KB"
DEFAULT_DUMBBELL_LOADS = (0.6, 0.3)
DEFAULT_DUMBBELL_DURATION = "20ms"
DUMBBELL_SIDE_HOSTS = 4
LIMIT = "1s"

#: metric -> (largest relative difference counted as agreement, how it compares): issue 34's bar:
#: standing queue and goodput within 15 %, peak within 30 %, slowdown medians 15 %, p99 30 %;
#: RTO counts "of the same order": within a factor 10 (``"order"``), both 0 counts as equal.
TOLERANCES: dict[str, tuple[float, str]] = {
    "standing_queue_kb": (0.15, "rel"),
    "goodput_gbps": (0.15, "rel"),
    "peak_queue_kb": (0.30, "rel"),
    "slowdown_median": (0.15, "rel"),
    "slowdown_p99": (0.30, "rel"),
    "rto": (10.0, "order"),
}


def linux_overrides(settings: Any) -> dict[str, Any]:
    """The fabric overrides that set the Linux-like DCTCP host options to ns-3's settings.

    Keys of ``fabric.dctcp`` (the tcp-hosts options of issue 34). The window floor is 2 segments,
    as Linux's DCTCP (``max(cwnd (1 - alpha / 2), 2)``), and the window grows only while it limits
    the sender (Linux's ``tcp_is_cwnd_limited``).
    """
    from ecngym.sim_backend.tcp_hosts import linux_host_dctcp

    return {"dctcp": linux_host_dctcp(
        initial_cwnd_packets=settings.initial_cwnd_segments, min_rto_ns=settings.min_rto,
        initial_rto_ns=settings.conn_timeout, delayed_ack=settings.delayed_ack_count > 1,
        delayed_ack_timeout_ns=settings.delayed_ack_timeout, min_window=2 * settings.segment_size,
    )}


#: host-model variant -> its fabric overrides, given the reference's settings
VARIANTS: dict[str, Any] = {
    "lean": lambda settings: {},
    "linux": linux_overrides,
}

#: ns-3 reference -> (its settings beyond the common ones, what it is and why a variant uses it)
REFERENCES: dict[str, tuple[dict[str, Any], str]] = {
    "ns3": ({}, "ns-3's TcpDctcp as it is: SACK with PRR recovery, no window floor (a marked window may "
                "shrink below one segment). The lean model's reference: it shares none of the Linux-like "
                "behaviours, so no variant of ns-3 is more like it."),
    "ns3_floor": ({"window_floor_segments": 2}, "TcpDctcp with Linux's window floor (a subclass, "
                  "`TcpDctcpWithFloor`: the reduced window is at least 2 segments, as Linux's dctcp_ssthresh), "
                  "SACK and PRR kept: shows what the floor alone changes in ns-3."),
    "ns3_floor_nosack": ({"window_floor_segments": 2, "sack": False},
                         "TcpDctcp with Linux's window floor and without SACK (NewReno-style recovery with "
                         "PRR): the Linux-like host's reference, which has the same floor and no selective "
                         "recovery (go-back-N)."),
}

#: variant -> the reference it is compared with (a --variant of the caller's: ns3)
REFERENCE_OF: dict[str, str] = {"lean": "ns3", "linux": "ns3_floor_nosack"}


def fabric_config(settings: Any, buffer_bytes: int, overrides: dict[str, Any]) -> Any:
    """Our fabric's config for a case: the ``dctcp`` preset matched to the reference, then ``overrides``."""
    from ecngym.sim_backend import FabricConfig

    base = FabricConfig.preset(
        "dctcp",
        mtu_payload=settings.segment_size, data_header=settings.header_bytes(), ack_size=settings.header_bytes(),
        retransmit_timeout=settings.min_rto,
        aqm={"all": {"policy": "red", "kmin_bytes": settings.k, "kmax_bytes": settings.k, "pmax": 1.0,
                     "mark_at_dequeue": False}},
        buffer={"buffer": buffer_bytes, "pfc_enabled": False, "reserve": 0, "headroom": 0, "pfc_alpha": 64},
    )
    return base.updated(overrides) if overrides else base


def case_inputs(case: dict[str, Any]) -> tuple[Any, pd.DataFrame]:
    """The topology and flow table of a case (deterministic)."""
    from ecngym.sim_backend import topology
    from ecngym.units import parse_bytes
    from ecngym.workloads import generate_trace

    if case["kind"] == "incast":
        n = case["senders"]
        flows = pd.DataFrame({"src": np.arange(1, n + 1), "dst": 0,
                              "size_bytes": parse_bytes(case["size"], "--incast-size"), "start_ns": 0})
        return topology.incast_star(hosts=n + 1), flows
    side = DUMBBELL_SIDE_HOSTS
    topo = topology.dumbbell(left_hosts=side, right_hosts=side)
    # Left hosts' flows at load x (core / host rate) / side each load the core link at `load`.
    trace = generate_trace("websearch", load=case["load"] / side, hosts=side, duration=case["duration"],
                           seed=1, progress=False)
    f = trace.flows
    flows = pd.DataFrame({"src": f["src"].to_numpy(), "dst": side + f["dst"].to_numpy() % side,
                          "size_bytes": f["size_bytes"].to_numpy(), "start_ns": f["start_ns"].to_numpy()})
    return topo, flows


def _summary(records: pd.DataFrame, mean_q: float, peak_q: float, rto: int, drops: int, marks: int,
             wall_s: float, events: int, hops: int) -> dict[str, Any]:
    from ecngym.sim_backend.metrics import slowdown_table

    done = records[records["finished"]]
    span = float((done["start_ns"] + done["fct_ns"]).max() - records["start_ns"].min()) if len(done) else 0.0
    table = slowdown_table(records)
    return {
        "flows": len(records), "finished": int(len(done)),
        "standing_queue_kb": mean_q / 1e3, "peak_queue_kb": peak_q / 1e3,
        "goodput_gbps": float(done["size_bytes"].sum()) * 8 / span if span > 0 else 0.0,
        "rto": int(rto), "drops": int(drops), "marks": int(marks),
        "slowdown": {b: {"flows": int(row["flows"]), "median": float(row["median"]), "p99": float(row["p99"])}
                     for b, row in table.iterrows() if row["flows"] > 0},
        "wall_s": wall_s, "events": int(events), "packet_hops": int(hops),
        "events_per_s": events / wall_s, "packet_hops_per_s": hops / wall_s,
    }


def run_ns3(case: dict[str, Any], reference: dict[str, Any] | None = None) -> dict[str, Any]:
    """One case on ns-3's TCP stack, with a reference's settings (:data:`REFERENCES`) over the case's."""
    reference = reference or {}
    from ecngym.sim_backend.ns3_tcp import Ns3TcpSettings, run_reference

    settings = Ns3TcpSettings.parse(case["settings"], "ns3_tcp")
    topo, flows = case_inputs(case)
    res = run_reference(topo, flows, settings.updated({"buffer": case["buffer"], **reference}, "ns3_tcp"),
                        limit=LIMIT)
    b = res.bottleneck()
    rec = res.records
    return _summary(rec, float(b["mean_queue_bytes"]), float(b["peak_queue_bytes"]), int(rec["rto_count"].sum()),
                    int(res.ports["dropped_packets"].sum()), int(res.ports["marked_packets"].sum()), res.wall_s,
                    res.events, res.packet_hops) | {
        "fast_recoveries": int(rec["fast_recovery_count"].sum()),
        # the smallest window any flow had: ns-3's window floor where marks pushed flows down to it
        "min_cwnd_bytes": int(rec["min_cwnd_bytes"].max() if (rec["min_cwnd_bytes"] < 0).all()
                              else rec.loc[rec["min_cwnd_bytes"] >= 0, "min_cwnd_bytes"].min()),
    }


def run_ours(case: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """One case on our fabric with a host-model variant's ``overrides``."""
    from ecngym.sim_backend import Fabric
    from ecngym.sim_backend.ns3_tcp import Ns3TcpSettings
    from ecngym.units import parse_bytes, parse_time_ns

    settings = Ns3TcpSettings.parse(case["settings"], "ns3_tcp")
    topo, flows = case_inputs(case)
    cfg = fabric_config(settings, parse_bytes(case["buffer"], "--buffers"), overrides)
    start = time.perf_counter()
    with Fabric(topo, flows, cfg) as fab:
        fab.run_until(int(flows["start_ns"].min()))
        fab.read_telemetry()
        fab.run(parse_time_ns(LIMIT, "limit"))
        tel = fab.read_telemetry()
        rec = fab.flow_records()
        counters = fab.counters()
        switch_ports = np.flatnonzero(fab.ports.is_switch)
    wall_s = time.perf_counter() - start
    p = switch_ports[int(np.argmax(tel["tx_bytes"][switch_ports]))]
    return _summary(rec, float(tel["mean_queue_bytes"][p]), float(tel["max_queue_bytes"][p]),
                    counters["retransmit_timeouts"], counters["drops"], int(tel["ecn_marked_packets"].sum()),
                    wall_s, counters["events"], counters["data_packet_hops"] + counters["control_packet_hops"])


def _worker(spec: str) -> dict[str, Any]:
    job = json.loads(spec)
    if job["model"] == "ns3":
        return run_ns3(job["case"], job.get("reference"))
    return run_ours(job["case"], job["overrides"])


def case_label(case: dict[str, Any]) -> str:
    """A case's short name."""
    if case["kind"] == "incast":
        return f"incast N={case['senders']} buf {case['buffer']}"
    return f"dumbbell {case['load']:.0%} buf {case['buffer']}"


def compare(ours: float, ref: float, metric: str) -> tuple[float | None, bool]:
    """(ours / ns-3 - 1, within the metric's tolerance); the difference is None where ns-3's is 0."""
    tol, how = TOLERANCES[metric.split("[")[0]]
    if how == "order":
        if ref == 0 or ours == 0:
            return (None if ref == 0 else -1.0), max(ref, ours) <= 1 or (ref == 0 and ours == 0)
        return ours / ref - 1, 1 / tol <= ours / ref <= tol
    if ref == 0:
        return None, ours == 0
    d = ours / ref - 1
    return d, abs(d) <= tol


def _diffs(mine: dict[str, Any], ref: dict[str, Any]) -> dict[str, list[Any]]:
    """Per metric: [relative difference, within the bar] of one run against one reference run."""
    a, b = metric_values(mine), metric_values(ref)
    return {m: list(compare(a[m], r, m)) for m, r in b.items() if m in a and not (np.isnan(r) or np.isnan(a[m]))}


def summarize(rows: list[dict[str, Any]], variants: list[str], settings: Any, notes: list[str],
              senders: list[int], reference_of: dict[str, str] | None = None) -> dict[str, Any]:
    """The final JSON line.

    Keys: ``cases`` (one object per case: ``case``, ``ns3`` (ns-3 as it is), ``refs`` (reference
    name -> its summary, ``ns3`` among them), ``ours`` (variant -> summary: ``standing_queue_kb``,
    ``peak_queue_kb``, ``goodput_gbps``, ``rto``, ``drops``, ``marks``, ``slowdown`` (bucket ->
    ``flows, median, p99``), ``wall_s``, ``events_per_s``, ``packet_hops_per_s`` ...), ``diff``
    (variant -> metric -> [relative difference from the variant's reference, within])),
    ``within`` (variant -> [comparisons within the bar against its reference, comparisons]),
    ``within_by_reference`` (variant -> reference -> [within, comparisons], against every reference
    run), ``reference_of`` (variant -> reference),
    ``references`` (name -> [settings, why]), ``speedup`` (variant -> the median over cases of
    ns-3's wall time / ours), ``ns3_settings``, ``variants``, ``notes``, ``tolerances``.
    """
    reference_of = reference_of or {v: "ns3" for v in variants}
    within: dict[str, list[int]] = {v: [0, 0] for v in variants}
    by_ref: dict[str, dict[str, list[int]]] = {v: {} for v in variants}
    speed: dict[str, list[float]] = {v: [] for v in variants}
    for row in rows:
        row["diff"] = {}
        row.setdefault("refs", {"ns3": row["ns3"]})
        for v in variants:
            if v not in row["ours"]:
                continue
            diffs = _diffs(row["ours"][v], row["refs"][reference_of[v]])
            row["diff"][v] = diffs
            within[v][0] += sum(ok for _, ok in diffs.values())
            within[v][1] += len(diffs)
            for ref, ref_run in row["refs"].items():
                other = _diffs(row["ours"][v], ref_run)
                count = by_ref[v].setdefault(ref, [0, 0])
                count[0] += sum(ok for _, ok in other.values())
                count[1] += len(other)
            speed[v].append(row["ns3"]["wall_s"] / row["ours"][v]["wall_s"])
    return _rounded({
        "cases": rows, "within": within, "within_by_reference": by_ref, "reference_of": reference_of,
        "references": {name: list(REFERENCES[name]) for name in rows[0]["refs"]} if rows else {},
        "speedup": {v: float(np.median(s)) for v, s in speed.items() if s},
        "ns3_settings": settings.as_dict(), "variants": variants, "senders": senders, "notes": notes,
        "tolerances": {k: list(v) for k, v in TOLERANCES.items()},
    })


def _rounded(v: Any) -> Any:
    if isinstance(v, float):
        return None if np.isnan(v) else float(f"{v:.4g}")
    if isinstance(v, dict):
        return {k: _rounded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_rounded(x) for x in v]
    return v


def _variant_available(name: str, overrides: dict[str, Any], settings: Any) -> str | None:
    """None if the fabric accepts ``overrides``, else why not."""
    from ecngym.error import ConfigError

    try:
        fabric_config(settings, 1_000_000, overrides).to_cpp()
    except ConfigError as exc:
        return f"variant {name!r} skipped: this fabric refuses its options ({exc})"
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ecngym bench tcp``."""
    parser = argparse.ArgumentParser(prog="ecngym bench tcp", description=__doc__.split("\n")[0])
    parser.add_argument("--senders", default=",".join(map(str, DEFAULT_SENDERS)),
                        help="comma-separated incast sender counts (default 2,4,8,16,32,64,128)")
    parser.add_argument("--buffers", default=",".join(DEFAULT_BUFFERS),
                        help="comma-separated switch buffer sizes per port (default 250KB,2MB)")
    parser.add_argument("--incast-size", default=DEFAULT_INCAST_SIZE, help="bytes per incast sender (default 500KB)")
    parser.add_argument("--dumbbell-load", default=",".join(map(str, DEFAULT_DUMBBELL_LOADS)),
                        help="comma-separated WebSearch loads of the dumbbell's core link, each in (0, 1) "
                             "(default 0.6,0.3; 0: no dumbbell)")
    parser.add_argument("--dumbbell-duration", default=DEFAULT_DUMBBELL_DURATION,
                        help="arrival window of the dumbbell's flows (default 20ms)")
    parser.add_argument("--variants", default="lean,linux",
                        help=f"host-model variants of ours, comma-separated from {', '.join(VARIANTS)} "
                             "(default lean,linux)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=JSON",
                        help="another variant: a name and fabric overrides as JSON, e.g. "
                             "'ss={\"dctcp\": {\"slow_start\": true}}' (repeatable)")
    parser.add_argument("--reference", action="append", default=[], metavar="VARIANT=REF",
                        help=f"compare a variant with another ns-3 reference, one of {', '.join(REFERENCES)} "
                             "(default: lean=ns3, linux=ns3_floor_nosack, others ns3; repeatable)")
    parser.add_argument("--all-references", action=argparse.BooleanOptionalAction, default=True,
                        help="run every ns-3 reference per case and count each variant against each "
                             "(default; --no-all-references: only the references the variants use)")
    parser.add_argument("--ns3", default="{}", metavar="JSON",
                        help="ns-3 settings overrides as JSON (fields of ns3_tcp.Ns3TcpSettings, "
                             "e.g. '{\"k\": \"30KB\"}')")
    add_markdown_option(parser)
    parser.add_argument("--json-only", action="store_true", help="print only the JSON line")
    parser.add_argument("--worker", nargs=1, help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        print(json.dumps(_worker(args.worker[0])))
        return 0
    from ecngym.error import ConfigError
    from ecngym.sim_backend.ns3_tcp import Ns3TcpSettings
    from ecngym.units import parse_bytes, parse_time_ns

    try:
        senders = [int(x) for x in args.senders.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--senders: expected comma-separated whole numbers, got {args.senders!r}")
    if any(not 1 <= n <= 100_000 for n in senders):
        parser.error(f"--senders: each count must be in [1, 100000], got {args.senders!r}")
    buffers = [b.strip() for b in args.buffers.split(",") if b.strip()]
    if not buffers:
        parser.error("--buffers: give at least one size")
    try:
        for b in buffers:
            if parse_bytes(b, "--buffers") <= 0:
                raise ConfigError("--buffers", f"got {b!r}, expected a size > 0")
        if parse_bytes(args.incast_size, "--incast-size") <= 0:
            raise ConfigError("--incast-size", f"got {args.incast_size!r}, expected a size > 0")
        if parse_time_ns(args.dumbbell_duration, "--dumbbell-duration") <= 0:
            raise ConfigError("--dumbbell-duration", f"got {args.dumbbell_duration!r}, expected a time > 0")
        settings = Ns3TcpSettings.parse(json.loads(args.ns3), "--ns3")
    except (ConfigError, json.JSONDecodeError) as exc:
        parser.error(str(exc))
    page = open_page(args.markdown, "Our DCTCP hosts vs ns-3's TcpDctcp", "ecngym bench tcp",
                     list(sys.argv[1:] if argv is None else argv), page_intro(_rounded(settings.as_dict())))
    try:
        loads = [float(x) for x in args.dumbbell_load.split(",") if x.strip()]
    except ValueError:
        loads = [-1.0]
    if any(not 0 <= x < 1 for x in loads):
        parser.error(f"--dumbbell-load: expected comma-separated loads in [0, 1), got {args.dumbbell_load!r}")
    variants: dict[str, dict[str, Any]] = {}
    for name in (v.strip() for v in args.variants.split(",") if v.strip()):
        if name not in VARIANTS:
            parser.error(f"--variants: unknown variant {name!r}; known: {', '.join(VARIANTS)}")
        variants[name] = VARIANTS[name](settings)
    for text in args.variant:
        name, _, spec = text.partition("=")
        try:
            overrides = json.loads(spec)
        except json.JSONDecodeError:
            overrides = None
        if not name or not isinstance(overrides, dict):
            parser.error(f"--variant: expected NAME=JSON-mapping, got {text!r}")
        variants[name] = overrides
    notes = []
    for name in list(variants):
        why = _variant_available(name, variants[name], settings)
        if why:
            notes.append(why)
            del variants[name]
    if not variants:
        parser.error("no host-model variant left to run: " + "; ".join(notes))
    reference_of = {v: REFERENCE_OF.get(v, "ns3") for v in variants}
    for text in args.reference:
        name, _, ref = text.partition("=")
        if name not in variants or ref not in REFERENCES:
            parser.error(f"--reference: expected VARIANT=REF with a variant of this run ({', '.join(variants)}) "
                         f"and a reference of {', '.join(REFERENCES)}, got {text!r}")
        reference_of[name] = ref
    references = list(REFERENCES) if args.all_references else list(dict.fromkeys(["ns3", *reference_of.values()]))

    cases: list[dict[str, Any]] = []
    for buf in buffers:
        cases += [{"kind": "incast", "senders": n, "size": args.incast_size, "buffer": buf} for n in senders]
    for load in (x for x in loads if x > 0):
        cases += [{"kind": "dumbbell", "load": load, "duration": args.dumbbell_duration, "buffer": buf}
                  for buf in buffers]
    from rich.console import Console

    rows = []
    plain_settings = settings.as_dict()
    with Console(stderr=True).status("measuring ...") as status:
        for case in cases:
            case["settings"] = plain_settings
            label = case_label(case)
            refs = {}
            for ref in references:
                status.update(f"{label}: ns-3 ({ref}) ...")
                refs[ref] = _in_subprocess([json.dumps({"model": "ns3", "case": case,
                                                        "reference": REFERENCES[ref][0]})], WORKER_MODULE)
            row = {"case": label, "ns3": refs["ns3"], "refs": refs, "ours": {}}
            for name, overrides in variants.items():
                status.update(f"{label}: ours ({name}) ...")
                row["ours"][name] = _in_subprocess(
                    [json.dumps({"model": "ours", "case": case, "overrides": overrides})], WORKER_MODULE)
            rows.append(row)
    summary = summarize(rows, list(variants), settings, notes, senders, reference_of)
    if not args.json_only:
        print_tables(summary)
    if page is not None:
        add_tables(page, summary)
        page.write()
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
