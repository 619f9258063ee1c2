"""DCQCN shares a bottleneck fairly and fills it; DCTCP holds the queue near K."""

import numpy as np
import pytest

from ecngym.sim_backend import FabricConfig, topology

LINE_RATE = 100e9


def _measure(fab, start, end):
    fab.run_until(start)
    fab.read_telemetry()
    fab.run_until(end)
    return fab.read_telemetry()


def test_dcqcn_two_flows_share_a_bottleneck_fairly(make_fabric, h):
    flows = h.flows([(0, 2, 10**9, 0), (1, 2, 10**9, 0)])
    fab = make_fabric(topology.incast_star(hosts=3), flows, "hpcc")
    tel = _measure(fab, "3ms", "8ms")
    span_s = 5e-3
    rates = [tel["tx_data_bytes"][h.host_port(fab, s)] * 8 / span_s for s in (0, 1)]
    for r in rates:
        assert 40e9 <= r <= 60e9, f"per-flow rate {r / 1e9:.1f} Gbps outside 50 +/- 10"
    assert tel["utilization"][h.port_towards(fab, 2)] >= 0.90


@pytest.mark.parametrize("preset", ["hpcc", "dcqcn_paper"])
def test_dcqcn_single_flow_reaches_line_rate(make_fabric, h, preset):
    fab = make_fabric(topology.incast_star(hosts=3), h.flows([(0, 2, 10**9, 0)]), preset)
    tel = _measure(fab, "1ms", "3ms")
    assert tel["tx_data_bytes"][h.host_port(fab, 0)] * 8 / 2e-3 >= 0.95 * LINE_RATE


@pytest.mark.parametrize("n,k", [(2, 65_000), (4, 100_000), (8, 200_000)])
def test_dctcp_step_marking_holds_queue_near_k(make_fabric, h, n, k):
    cfg = FabricConfig.preset("dctcp", ecn={"kmin": k, "kmax": k, "pmax": 1.0})
    flows = h.flows([(s, n, 10**9, 0) for s in range(n)])
    fab = make_fabric(topology.incast_star(hosts=n + 1), flows, cfg)
    tel = _measure(fab, "2ms", "6ms")
    b = h.port_towards(fab, n)
    assert k / 2 <= tel["mean_queue_bytes"][b] <= 2 * k
    assert tel["utilization"][b] >= 0.90
    # per-flow throughput is shared (no starvation)
    rates = np.array([tel["tx_data_bytes"][h.host_port(fab, s)] for s in range(n)])
    assert rates.min() > 0.5 * rates.mean()
