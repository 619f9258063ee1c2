"""ECN# (Zhang, Bai, Chen, IEEE TCC 2022): sojourn-time marking under RTT variation.

Two settings, both DCTCP on one 10 Gbps switch (5 us links), lossy (PFC off). RTT variation is a
long-tail distribution over the paper's range (its Fig. 1 shape; the paper states mean ~137 us and
p90 ~220 us over 80 - 240 us, §5.3): per-flow base RTTs at the deciles ``LONG_TAIL_SHAPE`` of the
range (min, then 4 %, 11 %, 18 %, 25 %, 32 %, 39 %, 50 %, 79 %, max of the way up: mean at 36 %,
the tenth decile at the top), so 80 - 240 us gives mean 137 us.

* RTT variation (ECN#; docs: algorithms/ecn-sharp.md §6.1 / §6.3, the testbed TB row): 7 senders -> 1 receiver,
  WebSearch flows (Poisson, 90% load of the receiver link), base RTTs 70 - 210 us (3x, long tail),
  2 MB buffer. DCTCP-RED-Tail: K = 250 KB (the testbed's p90-RTT threshold); ECN#: ins_target
  200 us, pst_interval 200 us, pst_target 85 us (the testbed's). As the paper: three runs (seeds
  1-3) averaged; short flows < 100 KB, large flows > 10 MB (the authors' fct_parser).
* Incast (§6.4, "other settings similar to §5.3"): 16 senders -> 1, data-mining background
  (Poisson, 90 % load: the authors' queue-track.cc) from t = 0, then N = 100 query flows
  U(3, 60) KB at t = 4 s; base RTTs 80 - 240 us (long tail); the §5.3 script's 1400 B packets,
  250-packet buffer, initial window 10 packets, 5 ms minimum RTO. RED-Tail K = C x p90 RTT =
  275 KB; ECN# ins_target = pst_interval = p90 RTT (220 us), pst_target 10 us (the authors'
  script); CoDel target 10 us, interval 240 us (§5.4.1). Standing queue: mean over the 5 ms before
  the queries (the paper samples 0.005 s); drops: the 10 ms from the queries on.
Flows run over persistent connections (``fabric.dctcp.persistent_connections``): the testbed's
traffic comes from the HKUST-SING TrafficGenerator (§5.1, refs [19], [32]), whose client sends each
flow over an idle connection of its host pair, and the simulations use "the same approach".
Thresholds follow the paper's values or rules of thumb; nothing is tuned to pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ecngym.reproduce.core import Claim

PAPER_ID = "ecn-sharp"
TITLE = "ECN# (Zhang et al., TCC 2022): standing queue and short-flow FCT under RTT variation; incast"

PACKET_BYTES = 1052
#: the authors' §5.3 script: 1400 B segments (+ our 52 B of headers per packet)
INCAST_MTU = 1400
INCAST_PACKET_BYTES = INCAST_MTU + 52
#: deciles of the long-tail RTT distribution, as fractions of (max - min) above min
LONG_TAIL_SHAPE = np.array([0, 5, 15, 25, 35, 45, 55, 70, 110, 140]) / 140
SEEDS = (1, 2, 3)


def long_tail_delays(rtt_min_us: float, rtt_max_us: float, base_rtt_us: float) -> list[str]:
    """Extra delay classes giving base RTTs at the long-tail deciles over [rtt_min, rtt_max]."""
    return [f"{round(rtt_min_us + (rtt_max_us - rtt_min_us) * x - base_rtt_us)}us" for x in LONG_TAIL_SHAPE]


def _fabric_config(buffer: Any, persistent: bool = True, **extra: Any) -> Any:
    """Lossy DCTCP; flows over persistent connections (the TrafficGenerator's, §5.1) unless ``persistent`` is off."""
    from ecngym.sim_backend import FabricConfig

    dctcp = {"persistent_connections": persistent, **extra.pop("dctcp", {})}
    return FabricConfig.preset("dctcp", retransmit_timeout="5ms",
                               buffer={"buffer": buffer, "reserve": 0, "headroom": 0, "pfc_enabled": False,
                                       "pfc_alpha": 64}, dctcp=dctcp, **extra)


def rtt_variation_trace(duration_ns: int, load: float = 0.9, senders: int = 7, seed: int = 1) -> pd.DataFrame:
    """WebSearch flows from ``senders`` hosts to host ``senders``, base RTTs 70 - 210 us (long tail)."""
    from ecngym.sim_backend.flows import with_delay_classes
    from ecngym.workloads.distributions import get_distribution

    rng = np.random.default_rng(seed)
    sizes = get_distribution("websearch")
    rate_per_ns = load * 10e9 / (8 * sizes.mean_bytes) / 1e9
    gaps = rng.exponential(1 / rate_per_ns, int(rate_per_ns * duration_ns * 1.5) + 10)
    start = np.cumsum(gaps)
    start = start[start < duration_ns].astype(np.int64)
    flows = pd.DataFrame({"src": rng.integers(0, senders, len(start)), "dst": senders,
                          "size_bytes": sizes.sample(rng, len(start)), "start_ns": start})
    return with_delay_classes(flows, long_tail_delays(70, 210, 20), seed=seed)


def run_rtt_variation(policy: str, flows: pd.DataFrame, senders: int = 7, persistent: bool = True,
                      **params: Any) -> dict[str, float]:
    """Run the trace with ``policy`` on every switch port; FCT statistics and the bottleneck queue."""
    from ecngym.sim_backend import Fabric, topology

    topo = topology.incast_star(hosts=senders + 1, link_rate="10Gbps", link_delay="5us")
    with Fabric(topo, flows, _fabric_config("2MB", persistent)) as fab:
        port = int(np.flatnonzero(fab.ports.is_switch & (fab.ports.peer_node == senders))[0])
        fab.set_aqm(fab.ports.switch_ports(), policy, **params)
        done = fab.run("20s")
        tel, rec = fab.read_telemetry(), fab.flow_records()
    small, large = rec[rec.size_bytes < 100_000], rec[rec.size_bytes > 10_000_000]
    return {"all_finished": bool(done), "mean_queue_kb": float(tel["mean_queue_bytes"][port]) / 1e3,
            "short_avg_us": float(small.fct_ns.mean()) / 1e3,
            "short_p99_us": float(np.percentile(small.fct_ns, 99)) / 1e3,
            "large_avg_us": float(large.fct_ns.mean()) / 1e3, "flows": len(rec)}


def incast_flows(queries: int = 100, senders: int = 16, at_ns: int = 4_000_000_000, seed: int = 1) -> pd.DataFrame:
    """Data-mining background (90 % load) from t = 0, then ``queries`` U(3, 60) KB flows at ``at_ns``."""
    from ecngym.sim_backend.flows import with_delay_classes
    from ecngym.workloads.distributions import get_distribution

    rng = np.random.default_rng(seed)
    sizes = get_distribution("datamining")
    rate_per_ns = 0.9 * 10e9 / (8 * sizes.mean_bytes) / 1e9
    start = np.cumsum(rng.exponential(1 / rate_per_ns, int(rate_per_ns * at_ns * 1.5) + 10))
    start = start[start < at_ns].astype(np.int64)
    background = pd.DataFrame({"src": rng.integers(0, senders, len(start)), "dst": senders,
                               "size_bytes": sizes.sample(rng, len(start)), "start_ns": start})
    query = pd.DataFrame({"src": rng.integers(0, senders, queries), "dst": senders,
                          "size_bytes": rng.integers(3000, 60_001, queries), "start_ns": at_ns})
    flows = pd.concat([background, query], ignore_index=True)
    return with_delay_classes(flows, long_tail_delays(80, 240, 20), seed=seed)


def run_incast(policy: str, flows: pd.DataFrame, at_ns: int, senders: int = 16, persistent: bool = True,
               buffer_pkts: int = 250, **params: Any) -> dict[str, float]:
    """Standing queue in the 5 ms before the queries and drops in the 10 ms from them, in packets."""
    from ecngym.sim_backend import Fabric, topology

    topo = topology.incast_star(hosts=senders + 1, link_rate="10Gbps", link_delay="5us")
    cfg = _fabric_config(buffer_pkts * INCAST_PACKET_BYTES, persistent, mtu_payload=f"{INCAST_MTU}B",
                         dctcp={"initial_window": f"{10 * INCAST_MTU}B"})
    with Fabric(topo, flows, cfg) as fab:
        port = int(np.flatnonzero(fab.ports.is_switch & (fab.ports.peer_node == senders))[0])
        fab.set_aqm(port, policy, **params)
        fab.advance(at_ns - 5_000_000)
        fab.read_telemetry()
        fab.advance("5ms")
        standing = float(fab.read_telemetry()["mean_queue_bytes"][port]) / INCAST_PACKET_BYTES
        drops_before = fab.counters()["drops"]
        fab.advance("10ms")
        return {"standing_queue_pkts": standing, "incast_drops": fab.counters()["drops"] - drops_before}


def run(quick: bool = False) -> list[Claim]:
    """Both settings with RED-Tail, ECN# and CoDel."""
    seeds = SEEDS[:1] if quick else SEEDS
    runs: dict[str, list[dict[str, float]]] = {"tail": [], "sharp": []}
    for seed in seeds:
        trace = rtt_variation_trace(300_000_000 if quick else 1_500_000_000, seed=seed)
        runs["tail"].append(run_rtt_variation("red", trace, kmin_bytes=250_000, kmax_bytes=250_000, pmax=1.0))
        runs["sharp"].append(run_rtt_variation("ecn_sharp", trace, ins_target_ns=200_000, pst_interval_ns=200_000,
                                               pst_target_ns=85_000))
    # the average over the runs, as the paper reports (§5.1)
    tail, sharp = ({k: float(np.mean([r[k] for r in rs])) for k in rs[0]} for rs in (runs["tail"], runs["sharp"]))
    at_ns = 500_000_000 if quick else 4_000_000_000
    flows = incast_flows(at_ns=at_ns)
    inc_tail = run_incast("red", flows, at_ns, kmin_bytes=275_000, kmax_bytes=275_000, pmax=1.0)
    inc_sharp = run_incast("ecn_sharp", flows, at_ns, ins_target_ns=220_000, pst_interval_ns=220_000,
                           pst_target_ns=10_000)
    inc_codel = run_incast("codel", flows, at_ns, target_ns=10_000, interval_ns=240_000)

    setting = (f"DCTCP 7-to-1, WebSearch 90% load, RTT 70-210 us (long tail), persistent connections, "
               f"{tail['flows']:.0f} flows, "
               f"mean of {len(seeds)} run(s)")
    q_ratio = sharp["mean_queue_kb"] / tail["mean_queue_kb"]
    p99_change = sharp["short_p99_us"] / tail["short_p99_us"] - 1
    avg_change = sharp["short_avg_us"] / tail["short_avg_us"] - 1
    large_change = sharp["large_avg_us"] / tail["large_avg_us"] - 1
    inc_ratio = inc_sharp["standing_queue_pkts"] / inc_tail["standing_queue_pkts"]
    queries = flows[flows.start_ns == at_ns]
    first_flight_kb = float(np.minimum(queries.size_bytes, 10 * INCAST_MTU).sum()) / 1e3
    inc_setting = (f"DCTCP 16-to-1, data-mining 90% + 100 queries U(3,60) KB at {at_ns / 1e9:g} s, RTT 80-240 us, "
                   "250 x 1400 B buffer, IW 10, persistent connections")
    small_note = ("our gain is smaller than the paper's; the testbed's pst_target of 85 us is itself 106 KB "
                  "of queue at 10 Gbps, so ECN#'s persistent rule holds the queue near that, not near empty, "
                  f"and RED-Tail's queue ({tail['mean_queue_kb']:.0f} KB) is only "
                  f"~{tail['mean_queue_kb'] - sharp['mean_queue_kb']:.0f} KB "
                  "longer: tens of us on short-flow FCTs of a few hundred us (the paper's are 964 us avg, "
                  "5242 us p99 under RED-Tail: more delay than any queue here gives)")
    return [
        Claim("queue", "ECN# keeps a shorter standing queue than RED-Tail", setting,
              "mean bottleneck queue ECN# / RED-Tail", "< 1", q_ratio, q_ratio < 1.0, q_ratio < 1.0,
              f"RED-Tail {tail['mean_queue_kb']:.0f} KB, ECN# {sharp['mean_queue_kb']:.0f} KB"),
        Claim("short_p99", "short-flow p99 FCT below RED-Tail (-37.2%, §6.1)", setting,
              "short (<100KB) p99 FCT change vs RED-Tail", -0.372, p99_change, p99_change < 0,
              abs(p99_change + 0.372) <= 0.3 * 0.372,
              f"RED-Tail {tail['short_p99_us']:.0f} us, ECN# {sharp['short_p99_us']:.0f} us"
              + ("" if abs(p99_change + 0.372) <= 0.3 * 0.372 else f"; {small_note}")),
        Claim("short_avg", "short-flow average FCT below RED-Tail (-23.4%, §6.1)", setting,
              "short avg FCT change vs RED-Tail", -0.234, avg_change, avg_change < 0,
              abs(avg_change + 0.234) <= 0.3 * 0.234,
              f"RED-Tail {tail['short_avg_us']:.0f} us, ECN# {sharp['short_avg_us']:.0f} us"
              + ("" if abs(avg_change + 0.234) <= 0.3 * 0.234 else "; as for p99")),
        Claim("large", "large-flow FCT about RED-Tail's (within 10%)", setting,
              "large (>10MB) avg FCT change vs RED-Tail", "~0 (|x| <= 0.10)", large_change,
              abs(large_change) <= 0.10, abs(large_change) <= 0.10),
        Claim("incast_queue", "incast: ECN#'s queue a small fraction of RED-Tail's (8 vs 182 pkts, §6.4)",
              inc_setting, "standing queue ECN# / RED-Tail", 8 / 182, inc_ratio, inc_ratio < 1.0,
              abs(inc_ratio - 8 / 182) <= 0.3 * 8 / 182,
              f"RED-Tail {inc_tail['standing_queue_pkts']:.0f} pkts, ECN# {inc_sharp['standing_queue_pkts']:.0f} pkts"),
        Claim("incast_drops", "incast: ECN# drops nothing where CoDel drops (0 vs 125, §6.4)", inc_setting,
              "packets dropped during the incast, ECN# / CoDel", "0 / 125",
              f"{inc_sharp['incast_drops']} / {inc_codel['incast_drops']}",
              inc_sharp["incast_drops"] < inc_codel["incast_drops"],
              inc_sharp["incast_drops"] == 0 and inc_codel["incast_drops"] > 0,
              "not reproduced: with the §5.3 script's initial window of 10 packets the 100 queries' first "
              f"windows (~{first_flight_kb:.0f} KB) reach the port within about one RTT, against a 250-packet "
              f"({250 * INCAST_PACKET_BYTES / 1e3:.0f} KB) buffer, so every policy drops; the paper gives no "
              "buffer for this run (its RED-Tail holds ~182 packets and still drops nothing, so its buffer "
              "must be far larger than the script's 250 packets)" if inc_sharp["incast_drops"] > 0 else ""),
    ]
