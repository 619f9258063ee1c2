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

from ecngym.bench.fabric import _in_subprocess, wide_console
from ecngym.markdown_page import add_markdown_option, open_page

WORKER_MODULE = "ecngym.bench.tcp"
DEFAULT_SENDERS = (2, 4, 8, 16, 32, 64, 128)
DEFAULT_BUFFERS = ("250KB", "2MB")
DEFAULT_INCAST_SIZE = "500KB"
DEFAULT_DUMBBELL_LOAD = 0.6
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
    return {"dctcp": {
        "slow_start": True, "initial_cwnd_packets": settings.initial_cwnd_segments, "handshake": True,
        "rto_estimate": True, "min_rto_ns": settings.min_rto, "initial_rto_ns": settings.conn_timeout,
        "delayed_ack": settings.delayed_ack_count > 1, "delayed_ack_timeout_ns": settings.delayed_ack_timeout,
        "min_window": 2 * settings.segment_size, "cwnd_limited_growth": True,
    }}


#: host-model variant -> its fabric overrides, given the reference's settings
VARIANTS: dict[str, Any] = {
    "lean": lambda settings: {},
    "linux": linux_overrides,
}


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


def run_ns3(case: dict[str, Any]) -> dict[str, Any]:
    """One case on ns-3's TCP stack."""
    from ecngym.sim_backend.ns3_tcp import Ns3TcpSettings, run_reference

    settings = Ns3TcpSettings.parse(case["settings"], "ns3_tcp")
    topo, flows = case_inputs(case)
    res = run_reference(topo, flows, settings.updated({"buffer": case["buffer"]}, "ns3_tcp"), limit=LIMIT)
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
        return run_ns3(job["case"])
    return run_ours(job["case"], job["overrides"])


def case_label(case: dict[str, Any]) -> str:
    """A case's short name."""
    if case["kind"] == "incast":
        return f"incast N={case['senders']} buf {case['buffer']}"
    return f"dumbbell {case['load']:.0%} buf {case['buffer']}"


def _metric_values(summary: dict[str, Any]) -> dict[str, float]:
    """Flat metric -> value of a run's summary (slowdowns as ``slowdown_median[bucket]``)."""
    out = {k: float(summary[k]) for k in ("standing_queue_kb", "peak_queue_kb", "goodput_gbps", "rto")}
    for bucket, s in summary["slowdown"].items():
        out[f"slowdown_median[{bucket}]"] = s["median"]
        out[f"slowdown_p99[{bucket}]"] = s["p99"]
    return out


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


def summarize(rows: list[dict[str, Any]], variants: list[str], settings: Any, notes: list[str],
              senders: list[int]) -> dict[str, Any]:
    """The final JSON line.

    Keys: ``cases`` (one object per case: ``case``, ``ns3`` and ``ours`` (variant -> summary:
    ``standing_queue_kb``, ``peak_queue_kb``, ``goodput_gbps``, ``rto``, ``drops``, ``marks``,
    ``slowdown`` (bucket -> ``flows, median, p99``), ``wall_s``, ``events_per_s``,
    ``packet_hops_per_s`` ...), ``diff`` (variant -> metric -> [relative difference, within])),
    ``within`` (variant -> [comparisons within the bar, comparisons]), ``speedup`` (variant -> the
    median over cases of ns-3's wall time / ours), ``ns3_settings``, ``variants``, ``notes``,
    ``tolerances``.
    """
    within: dict[str, list[int]] = {v: [0, 0] for v in variants}
    speed: dict[str, list[float]] = {v: [] for v in variants}
    for row in rows:
        row["diff"] = {}
        ref = _metric_values(row["ns3"])
        for v in variants:
            if v not in row["ours"]:
                continue
            mine = _metric_values(row["ours"][v])
            diffs = {}
            for m, r in ref.items():
                if m not in mine or np.isnan(r) or np.isnan(mine[m]):
                    continue
                d, ok = compare(mine[m], r, m)
                diffs[m] = [d, ok]
                within[v][0] += ok
                within[v][1] += 1
            row["diff"][v] = diffs
            speed[v].append(row["ns3"]["wall_s"] / row["ours"][v]["wall_s"])
    return _rounded({
        "cases": rows, "within": within,
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


def _bar(d: float | None, ok: bool, width: int = 12) -> str:
    if d is None:
        return ""
    n = min(width, round(abs(d) * width))  # full width = 100 % off
    body = ("+" if d > 0 else "-") * n
    return f"[{'green' if ok else 'red'}]{body or '|'}[/]"


#: table title -> metric prefix, unit
_TABLES = [
    ("Standing queue (time average at the bottleneck), KB", "standing_queue_kb"),
    ("Queue peak at the bottleneck, KB", "peak_queue_kb"),
    ("Goodput (first start to last finish), Gbps", "goodput_gbps"),
    ("Retransmission timeouts", "rto"),
    ("FCT slowdown median per size bucket", "slowdown_median"),
    ("FCT slowdown p99 per size bucket", "slowdown_p99"),
]


def _table_rows(summary: dict[str, Any], metric: str) -> list[tuple[str, list[tuple[str, str, float | None, bool]]]]:
    """Per case (and bucket): label, ns-3's value, then per variant (value, diff text, diff, within)."""
    out = []
    for row in summary["cases"]:
        ref = _metric_values(row["ns3"])
        keys = sorted(k for k in ref if k == metric or k.startswith(metric + "["))
        for key in keys:
            label = row["case"] + (f" {key[len(metric):]}" if "[" in key else "")
            cells = []
            for v in summary["variants"]:
                if v not in row["ours"]:
                    cells.append(("-", "", None, False))
                    continue
                mine = _metric_values(row["ours"][v]).get(key)
                d, ok = row["diff"][v].get(key, [None, False])
                cells.append((_fmt(mine), "" if d is None else f"{d:+.0%}", d, ok))
            out.append((label, [(_fmt(ref[key]), "", None, True), *cells]))
    return out


def _EVENT_COLUMNS(variants: list[str]) -> list[tuple[str, bool]]:  # noqa: N802 (a column list)
    cols = [("case", False), ("ns-3 drops", True), ("ns-3 marks", True), ("ns-3 fast recoveries", True),
            ("ns-3 smallest window B", True)]
    for v in variants:
        cols += [(f"ours ({v}) drops", True), (f"ours ({v}) marks", True)]
    return cols


def _event_rows(summary: dict[str, Any]) -> list[list[str]]:
    rows = []
    for row in summary["cases"]:
        n = row["ns3"]
        cells = [row["case"], f"{n['drops']:,}", f"{n['marks']:,}", f"{n['fast_recoveries']:,}",
                 f"{n['min_cwnd_bytes']:,}"]
        for v in summary["variants"]:
            o = row["ours"].get(v)
            cells += [f"{o['drops']:,}", f"{o['marks']:,}"] if o else ["-", "-"]
        rows.append(cells)
    return rows


def _diff_text(value: str, text: str, ok: bool) -> str:
    """The relative difference and the verdict ("n/a" where ns-3's value is 0)."""
    if value == "-":
        return ""
    return f"{text or 'n/a'} {'ok' if ok else 'off'}"


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def print_tables(summary: dict[str, Any]) -> None:
    """The comparison tables (rich), one per metric, then the speed table."""
    from rich.table import Table

    console = wide_console(110 + 40 * len(summary["variants"]))  # the speed table: 4 + 3 per variant columns
    for title, metric in _TABLES:
        table = Table(title=title)
        table.add_column("case", no_wrap=True)
        table.add_column("ns-3 TcpDctcp", justify="right")
        for v in summary["variants"]:
            table.add_column(f"ours ({v})", justify="right")
            table.add_column("vs ns-3", justify="right")
            table.add_column("", justify="left")
        for label, cells in _table_rows(summary, metric):
            out = [label, cells[0][0]]
            for value, text, d, ok in cells[1:]:
                out += [value, _diff_text(value, text, ok), _bar(d, ok)]
            table.add_row(*out)
        console.print(table)
    events = Table(title="Drops, ECN marks (all switch ports), ns-3's fast recoveries and smallest window")
    for col, right in _EVENT_COLUMNS(summary["variants"]):
        events.add_column(col, justify="right" if right else "left", no_wrap=not right)
    for cells in _event_rows(summary):
        events.add_row(*cells)
    console.print(events)
    speed = Table(title="Speed: wall time and rates per case (same machine, same run)")
    speed.add_column("case", no_wrap=True)
    speed.add_column("ns-3 wall s", justify="right")
    speed.add_column("ns-3 packet-hops/s", justify="right")
    speed.add_column("ns-3 events/s", justify="right")
    for v in summary["variants"]:
        speed.add_column(f"ours ({v}) wall s", justify="right")
        speed.add_column("packet-hops/s", justify="right")
        speed.add_column("x faster", justify="right")
    for row in summary["cases"]:
        n = row["ns3"]
        out = [row["case"], f"{n['wall_s']:.3g}", f"{n['packet_hops_per_s']:.3g}", f"{n['events_per_s']:.3g}"]
        for v in summary["variants"]:
            o = row["ours"].get(v)
            out += ([f"{o['wall_s']:.3g}", f"{o['packet_hops_per_s']:.3g}", f"{n['wall_s'] / o['wall_s']:.0f}"]
                    if o else ["-", "-", "-"])
        speed.add_row(*out)
    console.print(speed)
    for v, (ok, total) in summary["within"].items():
        console.print(f"ours ({v}): {ok} of {total} comparisons within issue 34's bar; median speed-up over "
                      f"ns-3 {summary['speedup'].get(v, float('nan')):.0f}x")
    for note in summary["notes"]:
        console.print(f"note: {note}")


#: What each model does that the other does not (the mechanisms behind the tables' differences)
MODEL_DIFFERENCES = """\
## How the two models differ

What ns-3's TcpDctcp does that our lean (NIC-style) DCTCP host does not:

- **Three-way handshake**: SYN / SYN-ACK take one round trip before the first data segment, so
  every flow's FCT carries one more RTT (most visible on small flows).
- **Slow start from an initial window of 10 segments** (10 KB here), doubling per RTT until the
  first ECN echo. Ours starts every flow at the path's bandwidth-delay product (~62 KB at 100 Gbps
  and ~5 us) at line rate: N senders put N x BDP into the bottleneck at once. So at small N ns-3's
  queue peak is slow-start overshoot (the window keeps doubling for the RTT the echo takes), while
  at large N ours overflows a small buffer on the first RTT where ns-3's N x 10 KB still fits.
- **Loss recovery**: SACK, fast retransmit and proportional rate reduction (RFC 6937) repair
  most losses within an RTT; ours resends go-back-N after a fixed 1 ms timeout, so at the same
  drops it counts more timeouts and loses more goodput.
- **RTO from SRTT / RTTVAR** (floor 1 ms, the same as our fixed timeout) and SYN retries after
  `conn_timeout`.
- **Delayed ACKs** (every 2nd segment, with DCTCP's CE-state rule), so the ACK clock releases
  2-segment bursts; ours ACKs every packet.
- **No window floor**: ns-3's TcpDctcp cuts the window by alpha / 2 per marked window down to a
  few bytes (the "smallest window" column: each flow's smallest, `min_cwnd_bytes`), where Linux
  keeps 2 segments and ours 1 (`fabric.dctcp.min_window`). A sender below one segment has at
  most one segment in flight, which the receiver's delayed ACK holds for `delayed_ack_timeout`
  (200 us): in the largest incasts the link idles and ns-3's goodput falls; rerun with
  `--ns3 '{"delayed_ack_count": 1}'` to see it recover.
- **Window-limited bursts into the host's NIC queue**: ns-3's TCP hands its whole window to the
  NIC (no TSQ, no pacing); the reference marks that queue at K too (`host_marking`), otherwise
  several flows of one host grow their windows into an unmarked NIC queue (spurious timeouts).

What ours does that ns-3's TCP does not:

- **Line-rate pacing per flow and round-robin between a host's flows** at the NIC: no host
  queue, no bursts beyond one packet.
- **ECMP** (a salted per-flow hash) on multi-path topologies; the reference routes every
  destination along one shortest path (ns-3's global routing, per-packet random ECMP off), which
  only matters on leaf-spine and fat-tree cases.
- **A shared-buffer switch**: the bench sets it to behave as one per-port buffer (PFC off, no
  reserve or headroom, dynamic threshold 64), which is exact for one congested port per switch.

With the Linux-like options on (the `linux` variant: slow start from 10 segments, handshake,
RTO estimate, delayed ACKs, all set to the reference's values, and Linux's window floor of 2
segments), the start-up is ns-3's; what still differs:

- **The window floor**: 2 segments where ns-3 has none. With N senders the queue cannot fall
  below about N x 2 segments (270 KB at N = 128, above K), while ns-3's windows shrink below a
  segment; in turn ns-3 pays delayed-ACK stalls that a host with a floor does not.
- **Loss recovery**: ours stays go-back-N from the first lost packet (no SACK), ns-3 repairs
  with SACK and PRR.
- **Line-rate pacing and round-robin at the NIC** (above) instead of window bursts.

Both mark at enqueue when the queue is at or above K (ns-3's RED with `MinTh = MaxTh = K`,
`Gentle` off and the instantaneous queue, `QW = 1`).
"""


def page_intro(ns3_settings: dict[str, Any]) -> str:
    """The paragraphs under the page's stamp: what each table holds, and ns-3's settings."""
    return ("Each table: ns-3's value, ours per host model, the relative difference (ours / ns-3 - 1) and whether "
            "it is within issue 34's bar (standing queue and goodput 15 %, peak 30 %, slowdown median 15 %, p99 "
            "30 %, RTOs within 10x).\n\n"
            "ns-3 settings (bytes, ns; the buffer is each case's): "
            + ", ".join(f"`{k}={v}`" for k, v in ns3_settings.items() if k != "buffer") + ".")


def add_tables(page: Any, summary: dict[str, Any]) -> None:
    """Add the comparison to a :class:`~ecngym.markdown_page.MarkdownPage`.

    The console's tables without their bars (the speed table without the rates of ours), the
    counts within the bar, the notes, and how the two models differ.
    """
    from rich.markup import escape
    from rich.table import Table

    def table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
        out = Table(title=escape(title))
        for c in columns:
            out.add_column(escape(c))
        for row in rows:
            out.add_row(*(escape(cell) for cell in row))
        return out

    variants = summary["variants"]
    for title, metric in _TABLES:
        rows = []
        for label, cells in _table_rows(summary, metric):
            out = [label, cells[0][0]]
            for value, text, _d, ok in cells[1:]:
                out += [value, _diff_text(value, text, ok)]
            rows.append(out)
        page.add(table(title, ["case", "ns-3", *[c for v in variants for c in (f"ours ({v})", "vs ns-3")]], rows))
    page.add(table("Drops, ECN marks, ns-3's fast recoveries and smallest window",
                   [c for c, _ in _EVENT_COLUMNS(variants)], _event_rows(summary)))
    speed = []
    for row in summary["cases"]:
        n = row["ns3"]
        out = [row["case"], f"{n['wall_s']:.3g}", f"{n['packet_hops_per_s']:.3g}"]
        for v in variants:
            o = row["ours"].get(v)
            out += [f"{o['wall_s']:.3g}", f"{n['wall_s'] / o['wall_s']:.0f}"] if o else ["-", "-"]
        speed.append(out)
    page.add(table("Speed", ["case", "ns-3 wall s", "ns-3 packet-hops/s",
                             *[c for v in variants for c in (f"ours ({v}) wall s", "x faster")]], speed))
    page.add_markdown("\n".join([f"- ours ({v}): {ok} of {total} comparisons within the bar."
                                  for v, (ok, total) in summary["within"].items()]
                                 + [f"- note: {note}" for note in summary["notes"]]))
    page.add_markdown(MODEL_DIFFERENCES)


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
    parser.add_argument("--dumbbell-load", type=float, default=DEFAULT_DUMBBELL_LOAD,
                        help="WebSearch load of the dumbbell's core link, in (0, 1) (default 0.6; 0: no dumbbell)")
    parser.add_argument("--dumbbell-duration", default=DEFAULT_DUMBBELL_DURATION,
                        help="arrival window of the dumbbell's flows (default 20ms)")
    parser.add_argument("--variants", default="lean,linux",
                        help=f"host-model variants of ours, comma-separated from {', '.join(VARIANTS)} "
                             "(default lean,linux)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=JSON",
                        help="another variant: a name and fabric overrides as JSON, e.g. "
                             "'ss={\"dctcp\": {\"slow_start\": true}}' (repeatable)")
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
    if not 0 <= args.dumbbell_load < 1:
        parser.error(f"--dumbbell-load: expected a load in [0, 1), got {args.dumbbell_load}")
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

    cases: list[dict[str, Any]] = []
    for buf in buffers:
        cases += [{"kind": "incast", "senders": n, "size": args.incast_size, "buffer": buf} for n in senders]
    if args.dumbbell_load > 0:
        cases += [{"kind": "dumbbell", "load": args.dumbbell_load, "duration": args.dumbbell_duration, "buffer": buf}
                  for buf in buffers]
    from rich.console import Console

    rows = []
    plain_settings = settings.as_dict()
    with Console(stderr=True).status("measuring ...") as status:
        for case in cases:
            case["settings"] = plain_settings
            label = case_label(case)
            status.update(f"{label}: ns-3 ...")
            row = {"case": label, "ns3": _in_subprocess([json.dumps({"model": "ns3", "case": case})], WORKER_MODULE),
                   "ours": {}}
            for name, overrides in variants.items():
                status.update(f"{label}: ours ({name}) ...")
                row["ours"][name] = _in_subprocess(
                    [json.dumps({"model": "ours", "case": case, "overrides": overrides})], WORKER_MODULE)
            rows.append(row)
    summary = summarize(rows, list(variants), settings, notes, senders)
    if not args.json_only:
        print_tables(summary)
    if page is not None:
        add_tables(page, summary)
        page.write()
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
