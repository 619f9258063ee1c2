"""Measured ECN marking follows the configured RED curve, at enqueue and at dequeue."""

import numpy as np
import pytest

from ecngym.sim_backend import FabricConfig, topology

# A wide linear region: ~1900 departures sample it (binomial noise shrinks with the count).
KMIN, KMAX = 100_000, 2_100_000


def _ramp(make_fabric, h, mark_at, pmax, kmin=KMIN, kmax=KMAX, steps=190):
    """Two senders that never slow down (DCQCN floor = line rate) fill one port at 100 Gbps.

    The queue then ramps through [Kmin, Kmax] at 12.5 KB/us, and marking has no feedback on it,
    so per-microsecond telemetry samples the marking curve directly.
    """
    cfg = FabricConfig.preset(
        "hpcc",
        dcqcn={"min_rate": "100Gbps"},
        aqm={"all": {"kmin_bytes": kmin, "kmax_bytes": kmax, "pmax": pmax, "mark_at_dequeue": mark_at == "dequeue"}},
    )
    fab = make_fabric(topology.incast_star(hosts=3), h.flows([(0, 2, 10**8, 0), (1, 2, 10**8, 0)]), cfg)
    b = h.port_towards(fab, 2)
    q, n, m = [], [], []
    for _ in range(steps):
        fab.advance("1us")
        tel = fab.read_telemetry()
        q.append(tel["mean_queue_bytes"][b])
        # marks decided at enqueue are per arriving packet, at dequeue per departing one
        n.append(tel["enqueued_data_packets" if mark_at == "enqueue" else "tx_data_packets"][b])
        m.append(tel["ecn_marked_packets"][b])
    return np.array(q), np.array(n), np.array(m)


@pytest.mark.parametrize("mark_at", ["enqueue", "dequeue"])
@pytest.mark.parametrize("pmax", [0.2, 0.6])
# a wide curve, and one whose Kmin is half its Kmax (a slope of pmax / Kmax instead of
# pmax / (Kmax - Kmin), or a curve starting at 0 instead of Kmin, would be off by 2x there)
@pytest.mark.parametrize("kmin,kmax", [(KMIN, KMAX), (1_000_000, 2_000_000)], ids=["wide", "high_kmin"])
def test_marking_fraction_follows_red_curve(make_fabric, h, mark_at, pmax, kmin, kmax):
    q, n, m = _ramp(make_fabric, h, mark_at, pmax, kmin=kmin, kmax=kmax)
    margin = 15_000  # the queue moves 12.5 KB per interval
    below = q < kmin - margin
    above = q > kmax + margin
    inside = (q > kmin + margin) & (q < kmax - margin)
    assert below.sum() >= 5 and inside.sum() >= 20 and above.sum() >= 3, "ramp did not cover the curve"
    assert m[below].sum() == 0
    assert m[above].sum() == n[above].sum()  # everything above Kmax is marked
    # inside: marks are Binomial(n_i, p(q_i)); compare the total with its expectation
    p = pmax * (q[inside] - kmin) / (kmax - kmin)
    expected = (n[inside] * p).sum()
    sigma = np.sqrt((n[inside] * p * (1 - p)).sum())
    assert abs(m[inside].sum() - expected) < 4 * sigma + 0.05 * expected
    # and the slope of the marked fraction against the queue is pmax / (Kmax - Kmin)
    frac = m[inside] / n[inside]
    slope = np.polyfit(q[inside], frac, 1, w=np.sqrt(n[inside]))[0]
    assert slope == pytest.approx(pmax / (kmax - kmin), rel=0.25)


@pytest.mark.parametrize("mark_at", ["enqueue", "dequeue"])
def test_pmax_zero_marks_nothing_between_kmin_and_kmax(make_fabric, h, mark_at):
    q, n, m = _ramp(make_fabric, h, mark_at, pmax=0.0, steps=150)
    assert (q > KMIN + 15_000).sum() >= 50 and q.max() < KMAX, "ramp did not stay inside the curve"
    assert n.sum() > 1_500  # ~12 data packets leave per microsecond
    assert m.sum() == 0


def test_no_marks_when_curve_is_out_of_reach(make_fabric, h):
    q, n, m = _ramp(make_fabric, h, "dequeue", pmax=1.0, kmin=10**9, kmax=10**9, steps=40)
    assert q.max() > 300_000 and n.sum() > 400
    assert m.sum() == 0


@pytest.mark.parametrize("mark_at", ["enqueue", "dequeue"])
def test_zero_threshold_marks_every_queued_packet(make_fabric, h, mark_at):
    q, n, m = _ramp(make_fabric, h, mark_at, pmax=1.0, kmin=0, kmax=0, steps=40)
    busy = q > 30_000  # from the third microsecond on the queue is never empty
    assert busy.sum() > 30
    np.testing.assert_array_equal(m[busy], n[busy])
    assert m.sum() <= n.sum()


@pytest.mark.parametrize("mark_at", ["enqueue", "dequeue"])
def test_step_marking_at_k(make_fabric, h, mark_at):
    # kmin = kmax = K, pmax = 1 (DCTCP-style): mark exactly when the queue exceeds K.
    k = 500_000
    q, n, m = _ramp(make_fabric, h, mark_at, pmax=1.0, kmin=k, kmax=k, steps=80)
    below = q < k - 15_000
    above = q > k + 15_000
    assert below.sum() >= 20 and above.sum() >= 20
    assert m[below].sum() == 0
    np.testing.assert_array_equal(m[above], n[above])
