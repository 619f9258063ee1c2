"""R-AQM (Du et al., ToN 2022) sensitivity: initial window x window floor x N, Linux-like hosts.

The paper does not give its TCP's initial window, and DCTCP's window floor is 1 MSS in its model
(§II-C) but 2 packets in Linux. The sweep runs the reproduction's incast
(:func:`ecngym.reproduce.r_aqm.incast`: N senders x 3.2 MB -> 1 at 10 Gbps, 300-packet buffer,
K = 65 packets) with the Linux-like hosts (slow start from the initial window, the SYN / SYN-ACK
handshake whose SYN-ACKs R-AQM paces, §III, RFC 6298 RTO with the paper's RTO_min 100 ms) over
initial window {1, 2, 4, 5, 10} x floor {1, 2} x N, for ECN (step marking at K) and R-AQM. Per
(initial window, floor) it reports each scheme's collapse onset: the smallest N whose goodput is
below 0.95 x the payload line rate, and the smallest N with a retransmission timeout.
Claim (T1 / T3): R-AQM neither collapses nor times out up to N = 200, while ECN collapses beyond
~60 senders; it holds at a point where R-AQM's onsets are above 200 and ECN's goodput onset is at
most 200 (near the paper: ECN's onset at most 80).
"""

from __future__ import annotations

from typing import Any

from ecngym.reproduce import r_aqm as paper
from ecngym.reproduce.sensitivity.core import Sweep, run_points, where_holds

TITLE = "R-AQM (Du et al., ToN 2022): collapse onset over initial window x window floor x N (Linux-like hosts)"

SCHEMES = {"ECN": ("red", paper.ECN_PARAMS), "R-AQM": ("r_aqm", paper.R_AQM_PARAMS)}
INITIAL_WINDOWS = (1, 2, 4, 5, 10)
FLOORS = (1, 2)
SENDERS = (36, 60, 80, 120, 160, 200, 240, 320)
#: goodput bar: 0.95 x the payload line rate (1000 B of payload per 1052 B packet at 10 Gbps)
GOODPUT_BAR_GBPS = 0.95 * 10 * 1000 / paper.PACKET_BYTES
PAPER_LIMIT_N = 200


def point(scheme: str, iw: int, floor: int, senders: int, flow_bytes: int) -> dict[str, float]:
    """One incast run of ``scheme`` (the reproduction's builder, Linux-like hosts)."""
    policy, params = SCHEMES[scheme]
    return paper.incast(policy, senders, flow_bytes, initial_window_pkts=iw, min_window_pkts=floor,
                        linux_like=True, **params)


def _onset(runs: dict[int, dict[str, float]], collapsed: Any) -> int | str:
    """The smallest N at which ``collapsed(run)`` holds, or ``"none"``."""
    return next((n for n in sorted(runs) if collapsed(runs[n])), "none")


def run(quick: bool = False, jobs: int = 1) -> list[Sweep]:
    """The grid; ``quick``: IW {1, 10} x floor 2 x N {36, 320} with 200 KB flows."""
    iws, floors, ns = ((1, 10), (2,), (36, 320)) if quick else (INITIAL_WINDOWS, FLOORS, SENDERS)
    flow_bytes = 200_000 if quick else 3_200_000
    pts = [{"scheme": s, "iw": iw, "floor": fl, "senders": n, "flow_bytes": flow_bytes}
           for iw in iws for fl in floors for n in ns for s in SCHEMES]
    res = run_points(point, pts, jobs)
    sweep = Sweep("collapse_onset", "R-AQM holds ~9.8 Gbps without RTO up to 200 senders; ECN collapses beyond ~60 "
                  "(T1, T3)",
                  f"DCTCP incast N x {flow_bytes / 1e6:g} MB -> 1, 10 Gbps, 300-pkt buffer, K = 65 pkts, Linux-like "
                  f"hosts (slow start, handshake, RTO estimate >= 100 ms); N in {list(ns)}",
                  ["initial window", "floor"],
                  ["ECN goodput onset", "ECN RTO onset", "R-AQM goodput onset", "R-AQM RTO onset",
                   f"ECN Gbps at N={ns[-1]}", f"R-AQM Gbps at N={ns[-1]}"],
                  note=f"onset: the smallest N with goodput < {GOODPUT_BAR_GBPS:.2f} Gbps (0.95 x payload line "
                       "rate) or with a retransmission timeout; 'none': not within the grid. Holds: R-AQM's onsets "
                       f"above {PAPER_LIMIT_N} and ECN's goodput onset at most {PAPER_LIMIT_N}; near paper: ECN's "
                       "at most 80 as well")
    for iw in iws:
        for fl in floors:
            runs = {s: {p["senders"]: r for p, r in zip(pts, res, strict=True)
                        if p["scheme"] == s and p["iw"] == iw and p["floor"] == fl} for s in SCHEMES}
            low = {s: _onset(runs[s], lambda r: r["goodput_gbps"] < GOODPUT_BAR_GBPS) for s in SCHEMES}
            rto = {s: _onset(runs[s], lambda r: r["timeouts"] > 0) for s in SCHEMES}
            raqm_ok = all(o == "none" or o > PAPER_LIMIT_N for o in (low["R-AQM"], rto["R-AQM"]))
            ecn_collapses = low["ECN"] != "none" and low["ECN"] <= PAPER_LIMIT_N
            sweep.rows.append({"initial window": iw, "floor": fl, "ECN goodput onset": low["ECN"],
                               "ECN RTO onset": rto["ECN"], "R-AQM goodput onset": low["R-AQM"],
                               "R-AQM RTO onset": rto["R-AQM"],
                               f"ECN Gbps at N={ns[-1]}": runs["ECN"][ns[-1]]["goodput_gbps"],
                               f"R-AQM Gbps at N={ns[-1]}": runs["R-AQM"][ns[-1]]["goodput_gbps"],
                               "holds": bool(raqm_ok and ecn_collapses),
                               "near_paper": bool(raqm_ok and ecn_collapses and low["ECN"] <= 80)})
    sweep.summary = where_holds(sweep, "initial window", "floor")
    points = Sweep("points", "every run of the grid (the figures the onsets come from)", sweep.setting,
                   ["initial window", "floor", "N", "scheme"], ["goodput Gbps", "RTOs", "drops", "peak queue pkts"],
                   note="holds: goodput >= 0.95 x payload line rate and no RTO (no collapse at this point)")
    for p, r in zip(pts, res, strict=True):
        ok = bool(r["goodput_gbps"] >= GOODPUT_BAR_GBPS and r["timeouts"] == 0)
        points.rows.append({"initial window": p["iw"], "floor": p["floor"], "N": p["senders"], "scheme": p["scheme"],
                            "goodput Gbps": r["goodput_gbps"], "RTOs": r["timeouts"], "drops": r["drops"],
                            "peak queue pkts": r["peak_queue_pkts"], "holds": ok, "near_paper": ok})
    points.summary = f"{points.holds_at()} of {len(points.rows)} runs without collapse"
    return [sweep, points]
