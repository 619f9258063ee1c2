"""Persistent connections in the DCTCP host model (``fabric.dctcp.persistent_connections``).

The flows of one host pair share a pool of connections, as the HKUST-SING TrafficGenerator's
client keeps them: a flow takes the first idle connection (keeping its window and alpha) or opens
a new one. Off (the default), every flow is a fresh connection and results are unchanged.
"""

import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import FabricConfig, topology

K = "20KB"


def _cfg(persistent: bool, k: str = K):
    return FabricConfig.preset("dctcp", aqm={"all": {"kmin_bytes": k, "kmax_bytes": k, "pmax": 1.0}},
                               dctcp={"persistent_connections": persistent})


# Two long flows 0 -> 2 and 1 -> 2 share the bottleneck (marks cut their windows below one BDP);
# then host 0 sends again to host 2: two flows at once at 5 ms, one more at 8 ms.
FLOWS = [(0, 2, 2_000_000, 0), (1, 2, 2_000_000, 0), (0, 2, 100_000, 5_000_000), (0, 2, 100_000, 5_000_000),
         (0, 2, 100_000, 8_000_000)]


def _records(make_fabric, h, persistent: bool, at: str | None = None) -> pd.DataFrame:
    fab = make_fabric(topology.incast_star(hosts=3), h.flows(FLOWS), _cfg(persistent))
    if at is not None:
        fab.run_until(at)
        return fab.flow_records()
    assert fab.run("1s")
    return fab.flow_records()


def test_a_flow_on_an_idle_connection_starts_from_its_window(make_fabric, h):
    start = _records(make_fabric, h, True, at="5001us")  # just after the two flows of 5 ms started
    fresh = _records(make_fabric, h, False, at="5001us")
    bdp = int(fresh.loc[2, "window_bytes"])
    cut = int(start.loc[0, "window_bytes"])  # flow 0's window when it finished
    assert cut < 0.8 * bdp  # the long flows were marked: the window the connection carries is cut
    # flow 2 takes flow 0's idle connection and its window; flow 3 finds none idle and opens one
    assert start.loc[2, "connection"] == 0 and start.loc[2, "window_bytes"] == cut
    assert start.loc[3, "connection"] == 1 and start.loc[3, "window_bytes"] == bdp
    assert (fresh["connection"] == -1).all() and fresh.loc[3, "window_bytes"] == bdp

    done, alone = _records(make_fabric, h, True), _records(make_fabric, h, False)
    # at 8 ms both connections are idle again: the first one opened is taken, with the window
    # flow 2 left it; alone on the path, the 100 KB flow is slower with it than with a fresh BDP
    assert done.loc[4, "connection"] == 0 and done.loc[4, "window_bytes"] < bdp
    assert done.loc[4, "fct_ns"] > alone.loc[4, "fct_ns"]


def test_a_window_larger_than_the_flows_does_not_grow(make_fabric, h):
    # 200 flows of 5 KB in turn on one connection, no marks: without the cwnd-limited rule the
    # window would grow by ~MSS x 5 KB / W per flow; a connection that never fills it keeps it.
    flows = h.flows([(0, 1, 5_000, i * 50_000) for i in range(200)])
    fab = make_fabric(topology.incast_star(hosts=2), flows, _cfg(True, k="1MB"))
    assert fab.run("1s")
    rec = fab.flow_records()
    assert (rec["connection"] == 0).all()
    assert rec["window_bytes"].nunique() == 1


def test_off_is_the_per_flow_model(make_fabric, h):
    rng = np.random.default_rng(3)
    n = 200
    flows = pd.DataFrame({"src": rng.integers(0, 4, n), "dst": 4, "size_bytes": rng.integers(1_000, 200_000, n),
                          "start_ns": np.sort(rng.integers(0, 5_000_000, n))})
    aqm = {"all": {"kmin_bytes": "65KB", "kmax_bytes": "65KB", "pmax": 1.0}}
    out = {}
    for name, cfg in (("default", FabricConfig.preset("dctcp", aqm=aqm)),
                      ("off", FabricConfig.preset("dctcp", aqm=aqm, dctcp={"persistent_connections": False})),
                      ("on", FabricConfig.preset("dctcp", aqm=aqm, dctcp={"persistent_connections": True}))):
        fab = make_fabric(topology.incast_star(hosts=5), flows, cfg)
        assert fab.run("1s")
        out[name] = fab.flow_records()
    cols = ["finish_ns", "retransmitted_bytes", "window_bytes", "connection"]
    pd.testing.assert_frame_equal(out["default"][cols], out["off"][cols])
    # on: the same flows complete, sharing far fewer connections than flows
    assert out["on"]["finished"].all() and (out["on"]["connection"] >= 0).all()
    assert out["on"]["finish_ns"].tolist() != out["off"]["finish_ns"].tolist()
    assert out["on"].groupby("src")["connection"].max().max() < n / 8


@pytest.mark.parametrize("overrides,field", [
    ({"dctcp": {"persistent_connections": "yes"}}, "fabric.dctcp.persistent_connections"),
    ({"cc": "dcqcn", "dctcp": {"persistent_connections": True}}, "fabric.dctcp.persistent_connections"),
])
def test_bad_persistent_connections_is_a_named_error(overrides, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        FabricConfig.preset("dctcp", **overrides).to_cpp()


def test_marks_slow_small_flows_only_over_persistent_connections(make_fabric):
    # PRED's workload 1 (3-6 KB flows, 18 -> 1 at 10 Gbps, 80 % load; PRED §III-A; docs: algorithms/pred.md §2 Obs. 2):
    # a fresh connection sends such a flow in one window whatever the marking, so lambda cannot
    # touch its FCT; a persistent connection carries the cuts the marks made, so it can.
    from ecngym.reproduce.pred import LINK, workload_trace

    flows = workload_trace(["pred_workload1"], 20.0)
    p99 = {}
    for persistent in (False, True):
        for lam in (0.05, 2.0):
            cfg = FabricConfig.preset("dctcp", dctcp={"persistent_connections": persistent})
            fab = make_fabric(topology.incast_star(hosts=19, **LINK), flows, cfg)
            fab.set_aqm(fab.ports.switch_ports(), "pred", lambda_qla=lam)
            assert fab.run("1s")
            p99[persistent, lam] = np.percentile(fab.flow_records()["fct_ns"], 99)
    assert p99[False, 2.0] == p99[False, 0.05]
    assert p99[True, 2.0] > 1.2 * p99[True, 0.05]
