"""ECN and PFC settings changed while the fabric runs take effect from that moment."""


from ecngym.sim_backend import FabricConfig, topology


def _no_backoff_incast(make_fabric, h, senders, **overrides):
    # DCQCN floored at line rate: senders never slow down, so only the switch settings matter.
    cfg = FabricConfig.preset("hpcc", dcqcn={"min_rate": "100Gbps"}, **overrides)
    flows = h.flows([(s, senders, 10**8, 0) for s in range(senders)])
    return make_fabric(topology.incast_star(hosts=senders + 1), flows, cfg)


def test_set_red_changes_marking_from_that_moment(make_fabric, h):
    fab = _no_backoff_incast(make_fabric, h, 2, ecn={"kmin": "20KB", "kmax": "200KB", "pmax": 0.5})
    b = h.port_towards(fab, 2)
    fab.advance("40us")
    before = fab.read_telemetry()["ecn_marked_packets"][b]
    assert before > 0
    fab.set_red([b], kmin="100MB", kmax="100MB", pmax=0.0)
    red = fab.get_red()
    assert red["kmin_bytes"][b] == 100_000_000 and red["pmax"][b] == 0.0
    fab.advance("40us")
    assert fab.read_telemetry()["ecn_marked_packets"][b] == 0
    fab.set_red([b], kmin=0, kmax=0, pmax=1.0)  # and back on: every packet marked
    fab.advance("10us")
    tel = fab.read_telemetry()
    assert tel["ecn_marked_packets"][b] == tel["tx_data_packets"][b] > 0


def _first_pause_ns(fab, step_ns=1_000, limit_ns=400_000):
    while fab.now_ns < limit_ns:
        fab.advance(step_ns)
        if fab.read_telemetry()["pfc_pause_sent"].sum() > 0:
            return fab.now_ns
    return None


def test_smaller_pfc_alpha_pauses_earlier(make_fabric, h):
    times = {}
    for alpha in (1.0, 0.125, 1 / 64):
        fab = _no_backoff_incast(make_fabric, h, 4, buffer={"buffer": "8MB", "pfc_alpha": alpha})
        times[alpha] = _first_pause_ns(fab)
        assert times[alpha] is not None
    assert times[1 / 64] < times[0.125] < times[1.0]


def test_set_pfc_mid_run_triggers_pauses(make_fabric, h):
    fab = _no_backoff_incast(make_fabric, h, 4, buffer={"buffer": "8MB", "pfc_alpha": 1.0})
    fab.advance("20us")
    assert fab.read_telemetry()["pfc_pause_sent"].sum() == 0
    fab.set_pfc([0], alpha=1 / 256, headroom="37.5KB")
    fab.advance("5us")
    assert fab.read_telemetry()["pfc_pause_sent"].sum() > 0
