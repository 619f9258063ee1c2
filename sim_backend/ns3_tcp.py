"""A reference no one here wrote: the same topology and flows on ns-3's own TCP/IP stack.

Our DCTCP hosts are validated against this run (``ecngym bench tcp``). It uses the ``ns3`` wheel's
stock modules only (``_ns3tcp``, built from ``helper/ns3-tcp-reference.cc``): point-to-point links,
the internet stack with global routing (one shortest path per destination: no ECMP), on every
switch egress a ``RedQueueDisc`` doing DCTCP step marking (``UseEcn``, ``MinTh = MaxTh = K``,
``Gentle`` off, ``QW = 1``: the instantaneous queue; Alizadeh et al., SIGCOMM 2010, §3.1) over a
per-port buffer, a FIFO queue disc on hosts, and one ``TcpDctcp`` connection per flow (SYN /
SYN-ACK, slow start from the initial window, RTO from SRTT / RTTVAR with a minimum, delayed ACKs,
SACK, timestamps: as ns-3 implements them) into a ``PacketSink`` on each receiver.

Measured: each flow's FCT (start to the sender's receipt of the ACK of its last byte, as the
fabric's) and slowdown (FCT over the HPCC ideal: base RTT + (size + header x packets) x 8 /
bottleneck rate, with this stack's 54 B per segment: IPv4 20, TCP 20, timestamps 12, PPP 2), the
retransmission timeouts (entries into ``CA_LOSS``) and fast recoveries per flow, and per switch
egress the peak and time-average queue (queue disc plus the device's 1-packet TX queue) from the
first flow's start to the last flow's end, ECN marks, drops and bytes sent. Deterministic: fixed
``RngSeed`` / ``RngRun`` (:class:`Ns3TcpSettings`).

Example:
    >>> from ecngym.sim_backend import ns3_tcp, topology
    >>> flows = {"src": [1, 2], "dst": [0, 0], "size_bytes": [500_000] * 2, "start_ns": [0, 0]}
    >>> res = ns3_tcp.run_reference(topology.incast_star(hosts=3), flows)
    >>> res.bottleneck()["mean_queue_bytes"]
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import ConfigError
from ecngym.sim_backend.flows import as_flow_table
from ecngym.sim_backend.topology import Topology
from ecngym.validation import Bytes, ConfigModel, Duration, Flag, OneOf, Real, Whole

#: Wire bytes of a data segment beyond its payload on this stack: IPv4 20 + TCP 20 + timestamp
#: option 12 (10, padded) + point-to-point 2; without timestamps 12 fewer.
HEADER_BYTES = 54
TIMESTAMP_OPTION_BYTES = 12


class Ns3TcpSettings(ConfigModel):
    """The settings of a reference run (ns-3 attribute in brackets); human units accepted.

    Defaults: Linux's initial window of 10 segments (RFC 6928) and delayed ACK every 2nd segment;
    a 1 ms minimum RTO (Linux: 200 ms; datacenter DCTCP deployments lower it, and 1 ms is our
    fabric's ``retransmit_timeout``, so a timeout costs the same in both) with a 1 us clock
    granularity; a 200 us delayed-ACK timeout (Linux's 40 ms scaled by the same 1/200 as the RTO);
    DCTCP g = 1/16 and initial alpha 1 (Alizadeh et al. §3.1, as the ``dctcp`` preset); 1000 B
    segments (the fabric's ``mtu_payload``).

    Attributes:
        segment_size: Payload bytes per segment (``TcpSocket::SegmentSize``).
        initial_cwnd_segments: Initial window (``TcpSocket::InitialCwnd``).
        min_rto: Minimum retransmission timeout (``TcpSocketBase::MinRto``).
        clock_granularity: The G of RTO = SRTT + max(G, 4 RTTVAR) (``TcpSocketBase::ClockGranularity``).
        conn_timeout: SYN / SYN-ACK retransmission timeout (``TcpSocket::ConnTimeout``).
        delayed_ack_count: Segments per ACK (``TcpSocket::DelAckCount``; 1 = no delayed ACKs).
        delayed_ack_timeout: ``TcpSocket::DelAckTimeout``.
        send_buffer, receive_buffer: Socket buffers (``SndBufSize``, ``RcvBufSize``; window scaling on).
        timestamps, sack: TCP options (``TcpSocketBase::Timestamp``, ``Sack``).
        recovery: Loss and ECN (CWR) recovery (``TcpL4Protocol::RecoveryType``): ``"prr"``
            (ns-3's default, proportional rate reduction, RFC 6937) or ``"classic"`` (RFC 5681).
        g, initial_alpha: DCTCP's gain and initial alpha (``TcpDctcp::DctcpShiftG``, ``DctcpAlphaOnInit``).
        k: Marking threshold on every switch egress (``RedQueueDisc::MinTh`` = ``MaxTh``, bytes);
            at least 1 B (0 would make RED choose its own thresholds).
        buffer: Buffer of every switch egress (``RedQueueDisc::MaxSize``, bytes): arrivals beyond it drop.
        window_floor_segments: Linux's DCTCP window floor: the window an ECN echo or a loss
            reduces to (the slow-start threshold) is at least this many segments (Linux's
            ``dctcp_ssthresh``: 2; a ``TcpDctcp`` subclass, ``ns3::ecngym::TcpDctcpWithFloor``);
            0 = ``TcpDctcp`` as is, without a floor.
        host_marking: Whether hosts' NIC queues mark as the switches do (with ``buffer``); else
            they are FIFOs of 10^6 packets. On by default: ns-3's TCP queues all its window below
            the socket (no TSQ, Linux's TCP small queues), so several flows of one host would grow
            into an unmarked NIC queue of megabytes, with RTTs and spurious timeouts no Linux host has.
        device_queue_packets: The device TX queue below the queue disc (``DropTailQueue``), packets.
        seed, run: ``RngSeedManager::SetSeed`` / ``SetRun``.
    """

    segment_size: Bytes(1, 65_000) = 1000
    initial_cwnd_segments: Whole(1, 10_000) = 10
    min_rto: Duration(1) = "1ms"
    clock_granularity: Duration(1) = "1us"
    conn_timeout: Duration(1) = "1ms"
    delayed_ack_count: Whole(1, 1000) = 2
    delayed_ack_timeout: Duration(1) = "200us"
    send_buffer: Bytes(1, 2**31 - 1) = "16MiB"
    receive_buffer: Bytes(1, 2**30) = "16MiB"
    timestamps: Flag = True
    sack: Flag = True
    recovery: OneOf("prr", "classic") = "prr"
    g: Real(0, 1, low_open=True) = 1.0 / 16
    initial_alpha: Real(0, 1) = 1.0
    k: Bytes(1) = "65KB"
    buffer: Bytes(1) = "2MB"
    window_floor_segments: Whole(0, 1000) = 0
    host_marking: Flag = True
    device_queue_packets: Whole(1, 1_000_000) = 1
    seed: Whole(1, 2**32 - 1) = 1
    run: Whole(1, 2**63 - 1) = 1

    def header_bytes(self) -> int:
        """Wire bytes per data segment beyond its payload."""
        return HEADER_BYTES - (0 if self.timestamps else TIMESTAMP_OPTION_BYTES)

    def to_cpp(self, limit_ns: int) -> Any:
        """The C++ settings (``_ns3tcp.Settings``), stopping at ``limit_ns``."""
        from ecngym.sim_backend import _ns3tcp

        s = _ns3tcp.Settings()
        s.segment_bytes = self.segment_size
        s.initial_cwnd_segments = self.initial_cwnd_segments
        s.min_rto_ns = self.min_rto
        s.clock_granularity_ns = self.clock_granularity
        s.conn_timeout_ns = self.conn_timeout
        s.delack_count = self.delayed_ack_count
        s.delack_timeout_ns = self.delayed_ack_timeout
        s.snd_buf_bytes = self.send_buffer
        s.rcv_buf_bytes = self.receive_buffer
        s.timestamps = self.timestamps
        s.sack = self.sack
        s.classic_recovery = self.recovery == "classic"
        s.dctcp_g = self.g
        s.dctcp_initial_alpha = self.initial_alpha
        s.k_bytes = self.k
        s.buffer_bytes = self.buffer
        s.window_floor_segments = self.window_floor_segments
        s.host_marking = self.host_marking
        s.device_queue_packets = self.device_queue_packets
        s.rng_seed = self.seed
        s.rng_run = self.run
        s.stop_ns = limit_ns
        return s


@dataclass
class Ns3TcpResult:
    """What a reference run measured.

    Attributes:
        records: One row per flow: ``flow_id, src, dst, size_bytes, start_ns, finish_ns`` (-1 if
            unfinished), ``finished``, ``fct_ns``, ``ideal_fct_ns``, ``slowdown`` (NaN if
            unfinished), ``handshake_ns`` (SYN sent to SYN-ACK received), ``rto_count``,
            ``fast_recovery_count``, ``min_cwnd_bytes`` (the smallest congestion window the flow
            had: its window floor where ECN or losses pushed it there; -1 if never traced).
        ports: One row per switch egress port: ``node, peer, peak_queue_bytes, mean_queue_bytes,
            marked_packets, dropped_packets, tx_bytes``.
        window_start_ns, end_ns: The window of the time averages (first start, last finish or the limit).
        events: ns-3 events executed; packet_hops: packets (data and control) sent on any link.
        wall_s: Wall time of the simulation (build, run, teardown).
        settings: The settings used.
    """

    records: pd.DataFrame
    ports: pd.DataFrame
    window_start_ns: int
    end_ns: int
    events: int
    packet_hops: int
    wall_s: float
    settings: Ns3TcpSettings

    def bottleneck(self) -> pd.Series:
        """The switch egress port that sent the most bytes (the incast receiver's, the dumbbell's core link)."""
        return self.ports.loc[self.ports["tx_bytes"].idxmax()]

    def goodput_bps(self) -> float:
        """Payload bytes of finished flows x 8 over the first start to the last finish."""
        done = self.records[self.records["finished"]]
        if done.empty:
            return 0.0
        span = float(done["finish_ns"].max() - self.records["start_ns"].min())
        return float(done["size_bytes"].sum()) * 8e9 / span if span > 0 else 0.0


def _topology(topology: Topology | dict[str, Any]) -> Topology:
    if isinstance(topology, Topology):
        return topology
    if not isinstance(topology, dict):
        raise ConfigError("topology", f"expected a Topology or a mapping with a 'kind' key, got {topology!r}")
    return Topology.from_config(dict(topology))


def path_facts(topology: Topology, src: int, dst: int) -> tuple[list[int], float]:
    """The links of one shortest path from host ``src`` to host ``dst`` and its slowest rate.

    Returns:
        (link indices in path order, bottleneck rate in bit/s).
    """
    adj: dict[int, list[tuple[int, int]]] = {}
    for link, (a, b) in enumerate(zip(topology.link_a.tolist(), topology.link_b.tolist(), strict=True)):
        adj.setdefault(a, []).append((b, link))
        adj.setdefault(b, []).append((a, link))
    came: dict[int, tuple[int, int]] = {src: (-1, -1)}
    todo = deque([src])
    while todo and dst not in came:
        v = todo.popleft()
        for w, link in adj.get(v, []):
            if w not in came and (w == dst or w >= topology.num_hosts):
                came[w] = (v, link)
                todo.append(w)
    if dst not in came:
        raise ConfigError("topology", f"no path from host {src} to host {dst}")
    links = []
    v = dst
    while v != src:
        v, link = came[v]
        links.append(link)
    links.reverse()
    return links, float(min(topology.rate_bps[links]))


def ideal_fct_ns(topology: Topology, flows: pd.DataFrame, payload_bytes: int, header_bytes: int) -> np.ndarray:
    """The HPCC ideal FCT of each flow: base RTT + (size + header x packets) x 8 / bottleneck rate.

    Base RTT = 2 x the path's propagation delay + one payload's serialisation per hop (the
    definition of the HPCC model's reference runs, Li et al., SIGCOMM 2019, §5, as the fabric's).
    """
    cache: dict[tuple[int, int], tuple[float, float]] = {}
    out = np.empty(len(flows))
    for i, (s, d, size) in enumerate(zip(flows["src"].tolist(), flows["dst"].tolist(), flows["size_bytes"].tolist(),
                                         strict=True)):
        if (s, d) not in cache:
            links, bottleneck = path_facts(topology, int(s), int(d))
            serial = sum(payload_bytes * 8e9 / float(topology.rate_bps[link]) for link in links)
            base_rtt = 2 * float(topology.delay_ns[links].sum()) + round(serial)
            cache[(s, d)] = (base_rtt, bottleneck)
        base_rtt, bottleneck = cache[(s, d)]
        packets = -(-int(size) // payload_bytes)
        out[i] = base_rtt + (size + header_bytes * packets) * 8e9 / bottleneck
    return out


def run_reference(
    topology: Topology | dict[str, Any],
    flows: Any,
    settings: Ns3TcpSettings | dict[str, Any] | None = None,
    *,
    limit: Any = "1s",
) -> Ns3TcpResult:
    """Run ``flows`` over ``topology`` on ns-3's TCP stack until every flow finished or ``limit``.

    Args:
        topology: A :class:`Topology` or a topology config mapping (``{"kind": "incast_star", ...}``).
        flows: A flow table as the fabric takes it (Trace, DataFrame, mapping of columns, path).
        settings: :class:`Ns3TcpSettings` or a mapping of its fields (checked, named ``ns3_tcp.<field>``).
        limit: Simulated time at which to stop if flows are still running.

    Returns:
        The measurements (:class:`Ns3TcpResult`).

    Raises:
        ConfigError: Naming the field: ``topology`` / ``topology.kind`` for an unknown or unbuildable
            topology, ``flows`` for an empty or bad flow table, ``ns3_tcp.<field>`` for a bad
            setting (e.g. ``ns3_tcp.k`` < 1 B), ``limit`` for a bad time.
    """
    from ecngym.sim_backend import _ns3tcp
    from ecngym.units import parse_time_ns

    topo = _topology(topology)
    if settings is None:
        settings = Ns3TcpSettings()
    elif not isinstance(settings, Ns3TcpSettings):
        settings = Ns3TcpSettings.parse(settings, "ns3_tcp")
    limit_ns = parse_time_ns(limit, "limit")
    if limit_ns <= 0:
        raise ConfigError("limit", f"got {limit!r}, expected a simulated time > 0")
    table = as_flow_table(flows, num_hosts=topo.num_hosts, topology=topo)
    if len(table) == 0:
        raise ConfigError("flows", "the flow table is empty; give at least one flow (src, dst, size_bytes, start_ns)")
    topo.check_buildable()
    start = time.perf_counter()
    r = _ns3tcp.run(
        topo.is_switch(), topo.link_a, topo.link_b, topo.rate_bps, topo.delay_ns,
        table["src"].to_numpy(np.uint32), table["dst"].to_numpy(np.uint32),
        table["size_bytes"].to_numpy(np.uint64), table["start_ns"].to_numpy(np.int64),
        settings.to_cpp(limit_ns),
    )
    wall_s = time.perf_counter() - start
    records = table[["src", "dst", "size_bytes", "start_ns"]].reset_index(drop=True).copy()
    records.insert(0, "flow_id", np.arange(len(records)))
    finish = np.asarray(r["finish_ns"])
    finished = finish >= 0
    records["finish_ns"] = finish
    records["finished"] = finished
    records["fct_ns"] = np.where(finished, finish - records["start_ns"].to_numpy(), np.nan)
    records["ideal_fct_ns"] = ideal_fct_ns(topo, records, settings.segment_size, settings.header_bytes())
    records["slowdown"] = np.maximum(1.0, records["fct_ns"] / records["ideal_fct_ns"])
    est = np.asarray(r["established_ns"])
    records["handshake_ns"] = np.where(est >= 0, est - records["start_ns"].to_numpy(), np.nan)
    records["rto_count"] = np.asarray(r["rto_count"]).astype(np.int64)
    records["fast_recovery_count"] = np.asarray(r["fast_recovery_count"]).astype(np.int64)
    min_cwnd = np.asarray(r["min_cwnd_bytes"]).astype(np.int64)
    records["min_cwnd_bytes"] = np.where(min_cwnd == np.iinfo(np.uint32).max, -1, min_cwnd)
    ports = pd.DataFrame({
        "node": np.asarray(r["port_node"]).astype(np.int64), "peer": np.asarray(r["port_peer"]).astype(np.int64),
        "peak_queue_bytes": np.asarray(r["peak_queue_bytes"]).astype(np.int64),
        "mean_queue_bytes": np.asarray(r["mean_queue_bytes"]),
        "marked_packets": np.asarray(r["marked_packets"]).astype(np.int64),
        "dropped_packets": np.asarray(r["dropped_packets"]).astype(np.int64),
        "tx_bytes": np.asarray(r["tx_bytes"]).astype(np.int64),
    })
    return Ns3TcpResult(records=records, ports=ports, window_start_ns=int(r["window_start_ns"]),
                        end_ns=int(r["end_ns"]), events=int(r["events"]), packet_hops=int(r["packet_hops"]),
                        wall_s=wall_s, settings=settings)
