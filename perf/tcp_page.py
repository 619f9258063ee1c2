"""The tables of ``ecngym bench tcp``: the console's (rich) and the docs page's (Markdown).

Each metric's table shows, per case, the value of every ns-3 reference that a variant is compared
with, then per variant of ours its value and its relative difference from its own reference
(``summary["reference_of"]``), with whether that is within the bar.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.perf.fabric import wide_console


def metric_values(summary: dict[str, Any]) -> dict[str, float]:
    """Flat metric -> value of a run's summary (slowdowns as ``slowdown_median[bucket]``)."""
    out = {k: float(summary[k]) for k in ("standing_queue_kb", "peak_queue_kb", "goodput_gbps", "rto")}
    for bucket, s in summary["slowdown"].items():
        out[f"slowdown_median[{bucket}]"] = s["median"]
        out[f"slowdown_p99[{bucket}]"] = s["p99"]
    return out


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


def used_references(summary: dict[str, Any]) -> list[str]:
    """The references the tables show: ns-3 as it is and those the variants are compared with."""
    used = {"ns3", *summary["reference_of"].values()}
    return [r for r in summary["references"] if r in used]


def reference_label(name: str) -> str:
    """A reference's column header: ``ns3`` is ns-3's TcpDctcp as it is."""
    return "ns-3 TcpDctcp" if name == "ns3" else f"ns-3 ({name})"


def _table_rows(summary: dict[str, Any], metric: str) -> list[tuple[str, list[str], list[tuple[str, str, float | None,
                                                                                               bool]]]]:
    """Per case (and bucket): label, each used reference's value, then per variant (value, diff text, diff, within)."""
    out = []
    refs = used_references(summary)
    for row in summary["cases"]:
        keys = sorted(k for k in metric_values(row["ns3"]) if k == metric or k.startswith(metric + "["))
        for key in keys:
            label = row["case"] + (f" {key[len(metric):]}" if "[" in key else "")
            ref_cells = [_fmt(metric_values(row["refs"][r]).get(key)) for r in refs]
            cells = []
            for v in summary["variants"]:
                if v not in row["ours"]:
                    cells.append(("-", "", None, False))
                    continue
                mine = metric_values(row["ours"][v]).get(key)
                d, ok = row["diff"][v].get(key, [None, False])
                cells.append((_fmt(mine), "" if d is None else f"{d:+.0%}", d, ok))
            out.append((label, ref_cells, cells))
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

    refs = used_references(summary)
    console = wide_console(110 + 40 * len(summary["variants"]) + 14 * len(refs))
    for title, metric in _TABLES:
        table = Table(title=title)
        table.add_column("case", no_wrap=True)
        for r in refs:
            table.add_column(reference_label(r), justify="right")
        for v in summary["variants"]:
            table.add_column(f"ours ({v})", justify="right")
            table.add_column(f"vs {summary['reference_of'][v]}", justify="right")
            table.add_column("", justify="left")
        for label, ref_cells, cells in _table_rows(summary, metric):
            out = [label, *ref_cells]
            for value, text, d, ok in cells:
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
    for line in within_lines(summary):
        console.print(line)
    for v in summary["variants"]:
        console.print(f"ours ({v}): median speed-up over ns-3 {summary['speedup'].get(v, float('nan')):.0f}x")
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
RTO estimate, delayed ACKs, all set to the reference's values, Linux's window floor of 2
segments, and the window grown only while it limits the sender, `cwnd_limited_growth`), the
start-up is ns-3's. It is compared with `ns3_floor_nosack`, ns-3 with the same floor and no SACK
(see the references above). What still differs, and the misses it explains:

- **A lone flow is never marked on our host.** ns-3's TCP hands its window to the host's NIC
  queue, which the reference marks at K (`host_marking`, without which its windows grow without
  bound, as ns-3 has no TSQ); ours paces each flow at line rate with no host queue, as Linux
  with TSQ and a fair-queueing qdisc would. So on the dumbbell an elephant alone on the core
  link leaves slow start in ns-3 (marked at its own NIC) but not here, and its alpha decays
  towards 0; when others arrive it takes one to two hundred microseconds to drain the queue it
  builds (`ecngym bench tcp-bisect --trace linux`). The 60 % dumbbell's misses: standing queue
  +40 %, the small and mid-size flows' p99 +50-65 % (the p99 of ~45 small flows is the
  second-slowest flow: the same flows are the slowest in ns-3), mid-size median +18 %; the large
  flows' p99 -49 % with 250 KB (~24 of them: one flow) is not traced. On the 30 % dumbbell the
  peak (+65 %) and the mid-size p99 (+62 %) are probably the same start-up overshoot (not traced).
- **Round-robin at the NIC against ns-3's FIFO host queue.** A small flow that starts on a host
  where an elephant runs waits behind the elephant's window in ns-3's host queue; ours shares the
  host's line rate with it at once. On the 30 % dumbbell (~20 small flows) ns-3's slowest small
  flow is one such (70 us: its host's 2.4 MB flow was running), so our small-flow p99 is 60 %
  lower; the standing queue there is below 1 KB in both (+250 % is 0.5 KB).
- **Loss recovery**: ours is go-back-N from the first gap: the receiver's NACK rewinds the sender,
  which resends the rest of its window within about one round trip. ns-3 without SACK (NewReno
  with PRR) repairs one hole per round trip, so several drops in a window end in a 1 ms timeout:
  at N = 32 and 64 with a 250 KB buffer it counts 32 and 79 timeouts where ours counts 0 and 23,
  and idles (goodput -30-40 % against ours, lower time-average queue, longer FCTs: our medians
  -32-38 %); at N = 128 (144 timeouts against 86) its queue stands 48 % lower. ns-3 with
  SACK (`ns3`, `ns3_floor`) repairs all holes in a round trip, as ours does, at a cost of the
  holes alone; the counts against both are on the page.
- **The window floor's queue at large N**: with 2 MSS per sender the queue cannot fall below
  about N x 2 segments. At N = 64 and 128 with a 2 MB buffer ns-3 with the floor holds more (its
  windows burst into the host queues and grow a segment per round trip from the floor; not traced
  further), ours about N x 2 segments minus the finished flows: standing queue -46 %.
- Not traced: the peak at N = 8 (-49 %: ours 98 KB; the other N are within 3 %), the standing
  queue at N = 4 (+17 %) and the medians at N = 32 and 64 with 2 MB (+16 %, +17 %).

Both mark at enqueue when the queue is at or above K (ns-3's RED with `MinTh = MaxTh = K`,
`Gentle` off and the instantaneous queue, `QW = 1`).
"""


def within_lines(summary: dict[str, Any]) -> list[str]:
    """Per variant: comparisons within the bar against its reference (and against ns-3 as it is)."""
    out = []
    for v, (ok, total) in summary["within"].items():
        ref = summary["reference_of"][v]
        line = f"ours ({v}): {ok} of {total} comparisons within the bar against {ref}"
        others = [f"{r}: {a} of {b}" for r, (a, b) in summary.get("within_by_reference", {}).get(v, {}).items()
                  if r != ref]
        out.append(line + (f" (against {'; '.join(others)})" if others else "") + ".")
    return out


def references_text(summary: dict[str, Any]) -> str:
    """The page's section on the references: what each is and which variant uses it, and why."""
    lines = ["## The references", "",
             "Each variant of ours is compared with the ns-3 reference whose host behaves as it does where "
             "the two can be made alike (ns-3 settings beyond the common ones above):", ""]
    for name, (overrides, why) in summary["references"].items():
        users = [v for v, r in summary["reference_of"].items() if r == name]
        settings = ", ".join(f"`{k}={v}`" for k, v in overrides.items()) or "the common settings"
        lines.append(f"- **{name}** ({settings}): {why}"
                     + (f" Used by: {', '.join(users)}." if users else " Run for comparison only."))
    return "\n".join(lines)


def page_intro(ns3_settings: dict[str, Any]) -> str:
    """The paragraphs under the page's stamp: what each table holds, and ns-3's settings."""
    return ("Each table: the value of each ns-3 reference a variant is compared with, ours per host model, the "
            "relative difference from that variant's reference (ours / reference - 1) and whether it is within "
            "issue 34's bar (standing queue and goodput 15 %, peak 30 %, slowdown median 15 %, p99 30 %, RTOs "
            "within 10x).\n\n"
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
    refs = used_references(summary)
    for title, metric in _TABLES:
        rows = []
        for label, ref_cells, cells in _table_rows(summary, metric):
            out = [label, *ref_cells]
            for value, text, _d, ok in cells:
                out += [value, _diff_text(value, text, ok)]
            rows.append(out)
        page.add(table(title, ["case", *map(reference_label, refs), *[c for v in variants
                                                for c in (f"ours ({v})", f"vs {summary['reference_of'][v]}")]], rows))
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
    page.add_markdown("\n".join([f"- {line}" for line in within_lines(summary)]
                                 + [f"- note: {note}" for note in summary["notes"]]))
    page.add_markdown(references_text(summary))
    page.add_markdown(MODEL_DIFFERENCES)


