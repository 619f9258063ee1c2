"""The port-AQM plug-in point: policies by name per port at run time, bounded parameters, hooks."""

import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import FabricConfig, topology
from ecngym.sim_backend.aqm import POLICIES, policy_spec


def _incast(n, size=10**8, rate="10Gbps", delay="10us"):
    flows = pd.DataFrame([(i, n, size, 0) for i in range(n)], columns=["src", "dst", "size_bytes", "start_ns"])
    return topology.incast_star(hosts=n + 1, link_rate=rate, link_delay=delay), flows


def _bottleneck(fab, host):
    return int(np.flatnonzero(fab.ports.is_switch & (fab.ports.peer_node == host))[0])


def test_every_port_starts_with_red_of_the_fabric_config(make_fabric):
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    for p in fab.ports.switch_ports():
        assert fab.get_aqm(int(p)) == {"policy": "red", "kmin_bytes": 65000, "kmax_bytes": 65000, "pmax": 1.0,
                                       "mark_at_dequeue": False}


def test_set_aqm_installs_per_port_and_reads_back(make_fabric):
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    b = _bottleneck(fab, 3)
    fab.set_aqm(b, "pred", lambda_qla=0.3, kmin_bytes="20KB", fcs_period_ns="80us", scaling="SqrtN")
    got = fab.get_aqm(b)
    assert got["policy"] == "pred" and got["lambda_qla"] == 0.3 and got["kmin_bytes"] == 20_000
    assert got["fcs_period_ns"] == 80_000 and got["scaling"] == "SqrtN" and got["kmax_bytes"] == 500_000
    others = [int(p) for p in fab.ports.switch_ports() if p != b]
    assert all(d["policy"] == "red" for d in fab.get_aqm(others))
    # same type again: only the given parameter changes (state and other parameters are kept)
    fab.set_aqm([b], "pred", lambda_qla=0.5)
    assert fab.get_aqm(b)["lambda_qla"] == 0.5 and fab.get_aqm(b)["kmin_bytes"] == 20_000
    # by C++ type name as well
    fab.set_aqm([b], POLICIES["red"], kmin_bytes=1000, kmax_bytes=2000, pmax=0.5)
    assert fab.get_aqm([b]) == [{"policy": "red", "kmin_bytes": 1000, "kmax_bytes": 2000, "pmax": 0.5,
                                 "mark_at_dequeue": False}]


@pytest.mark.parametrize("policy,params,field,words", [
    ("pred", {"lambda_qla": -0.1}, "aqm.pred.lambda_qla", ["-0.1", "[0.0, 1000000.0]"]),
    ("pred", {"index_size_bits": 25}, "aqm.pred.index_size_bits", ["25", "[1, 20]"]),
    ("pred", {"scaling": "cubic"}, "aqm.pred.scaling", ["'cubic'", "'N'", "'SqrtN'", "'NSquared'"]),
    ("pred", {"lambda": 0.1}, "aqm.pred.lambda", ["no parameter", "lambda_qla"]),
    ("pred", {"kmin_bytes": "500KB"}, "aqm.pred", ["kmax_bytes", "kmin_bytes"]),
    ("red", {"pmax": 1.5}, "aqm.red.pmax", ["1.5", "[0.0, 1.0]"]),
    ("red", {"mark_at_dequeue": "yes"}, "aqm.red.mark_at_dequeue", ["true or false"]),
    ("red", {"kmin_bytes": 2.5}, "aqm.red.kmin_bytes", ["2.5"]),
    ("blue", {}, "aqm.policy", ["'blue'", "pred", "red"]),
])
def test_bad_policy_or_parameter_names_field_and_range_and_changes_nothing(make_fabric, policy, params, field, words):
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    b = _bottleneck(fab, 3)
    fab.set_aqm(b, "pred", lambda_qla=0.2)
    before = fab.get_aqm(b)
    with pytest.raises(ConfigError) as err:
        fab.set_aqm(b, policy, **params)
    assert err.value.field == field
    for w in words:
        assert w in str(err.value)
    assert fab.get_aqm(b) == before


@pytest.mark.parametrize("policy,params,field,words", [
    # were: TypeError 'unhashable type' (a list or mapping as the policy name)
    (["red"], {}, "aqm.policy", ["expected a policy name (a string), got ['red']"]),
    ({"policy": "red"}, {}, "aqm.policy", ["expected a policy name (a string), got {'policy': 'red'}"]),
    # was: OverflowError 'int too large to convert to float'
    ("pred", {"lambda_qla": 10**400}, "aqm.pred.lambda_qla", ["allowed range is [0.0, 1000000.0]"]),
    # were: TypeError 'only 0-dimensional arrays can be converted to Python scalars'
    ("pred", {"lambda_qla": np.array([0.1])}, "aqm.pred.lambda_qla", ["expected a number, got array([0.1])"]),
    ("pred", {"index_size_bits": np.array([4, 5])}, "aqm.pred.index_size_bits", ["expected a number"]),
    # was: accepted as 1.0, the imaginary part dropped with a ComplexWarning
    ("pred", {"lambda_qla": np.complex128(1 + 1j)}, "aqm.pred.lambda_qla", ["expected a number, got (1+1j)"]),
])
def test_policy_names_and_numbers_of_any_type_are_config_errors(make_fabric, policy, params, field, words):
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    with pytest.raises(ConfigError) as err:
        fab.set_aqm(_bottleneck(fab, 3), policy, **params)
    assert err.value.field == field and all(w in str(err.value) for w in words), str(err.value)
    with pytest.raises(ConfigError) as err:  # the same in a fabric config, under its layer
        FabricConfig(aqm={"all": {"policy": policy, **params}}).to_cpp()
    assert err.value.field == "fabric.aqm.all." + field.split(".")[-1]
    assert all(w in str(err.value) for w in words), str(err.value)
    if not params:
        with pytest.raises(ConfigError, match="expected a policy name"):
            policy_spec(policy)
    # integers stay exact; numpy numbers are numbers
    assert fab.get_aqm(_bottleneck(fab, 3))["policy"] == "red"
    fab.set_aqm(_bottleneck(fab, 3), "pred", lambda_qla=np.float32(0.5), index_size_bits=np.uint8(4))
    assert fab.get_aqm(_bottleneck(fab, 3))["lambda_qla"] == 0.5


def test_set_aqm_refuses_host_ports_and_set_red_installs_red(make_fabric):
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    host_port = int(np.flatnonzero(~fab.ports.is_switch)[0])
    with pytest.raises(ConfigError, match="host port"):
        fab.set_aqm(host_port, "pred")
    b = _bottleneck(fab, 3)
    fab.set_aqm(b, "pred")
    fab.set_red(b, "10KB", "20KB", 0.1)  # set_aqm_per_port(b, "red", ...): RED again, with that curve
    assert fab.get_aqm(b) == {**fab.get_aqm(_bottleneck(fab, 3)), "policy": "red", "kmin_bytes": 10_000,
                              "kmax_bytes": 20_000, "pmax": 0.1}


def test_the_low_level_set_aqm_refuses_text_ns3_would_abort_on(make_fabric):
    # ns-3's UintegerValue / DoubleValue abort the process on text they cannot read (helper-19's fuzz:
    # fab.sim.set_aqm(..., ["TargetNs"], ["abc"]) ended the interpreter with SIGABRT)
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    b = _bottleneck(fab, 3)
    for policy, name, text in [("codel", "TargetNs", "abc"), ("codel", "TargetNs", "5 x"), ("codel", "TargetNs", ""),
                               ("r_aqm", "Alpha1", "abc"), ("r_aqm", "Alpha1", "nan"), ("r_aqm", "N1", "1.5")]:
        with pytest.raises(ValueError, match=f"::{name} = '{text}' is not a number"):
            fab.sim.set_aqm([b], POLICIES[policy], [name], [text])
    assert fab.get_aqm(b)["policy"] == "red"  # nothing changed


def test_get_aqm_reads_back_every_digit_so_set_aqm_of_it_changes_nothing(make_fabric):
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    b = _bottleneck(fab, 3)
    fab.set_aqm(b, "red", kmin_bytes=1, kmax_bytes=2, pmax=0.123456789)
    assert fab.get_aqm(b)["pmax"] == 0.123456789  # read 0.123457 (ns-3's DoubleValue string)
    fab.set_aqm(b, "r_aqm", alpha1=0.1234567891234, bucket_depth=10 + 1 / 3)
    got = fab.get_aqm(b)
    assert got["alpha1"] == 0.1234567891234 and got["bucket_depth"] == 10 + 1 / 3
    fab.set_aqm(b, "r_aqm", **{k: v for k, v in got.items() if k != "policy"})
    assert fab.get_aqm(b) == got


def test_an_enum_parameter_that_is_no_string_is_named(make_fabric):
    topo, flows = _incast(3)
    fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
    with pytest.raises(ConfigError, match=r"^aqm\.ecn_sharp\.control_law: got array\(\['RepoSqrt', 'X'\]"):
        fab.set_aqm(_bottleneck(fab, 3), "ecn_sharp", control_law=np.array(["RepoSqrt", "X"]))


def test_policy_parameters_come_from_the_cpp_checkers():
    spec = policy_spec("pred")
    assert spec["index_size_bits"].low == 1 and spec["index_size_bits"].high == 20
    assert spec["scaling"].choices == ("N", "SqrtN", "NSquared")
    assert policy_spec("red")["pmax"].high == 1.0


def test_fabric_config_chooses_the_policy_per_switch_layer(make_fabric):
    topo = topology.leaf_spine(leaves=2, spines=2, hosts_per_leaf=2)
    flows = pd.DataFrame([(0, 3, 10_000, 0)], columns=["src", "dst", "size_bytes", "start_ns"])
    cfg = FabricConfig.preset("dctcp", aqm={"all": {"policy": "pred", "lambda_qla": 0.2},
                                            "spine": {"policy": "red", "kmin_bytes": "30KB", "kmax_bytes": "60KB"}})
    fab = make_fabric(topo, flows, cfg)
    for p in fab.ports.switch_ports("leaf"):
        assert fab.get_aqm(int(p))["policy"] == "pred" and fab.get_aqm(int(p))["lambda_qla"] == 0.2
    for p in fab.ports.switch_ports("spine"):
        assert fab.get_aqm(int(p))["kmax_bytes"] == 60_000
    assert fab.run("10ms")
    with pytest.raises(ConfigError) as err:
        make_fabric(topo, flows, FabricConfig.preset("dctcp", aqm={"core": "pred"}))
    assert err.value.field == "fabric.aqm.core" and "'leaf'" in str(err.value)
    with pytest.raises(ConfigError) as err:
        FabricConfig.preset("dctcp", aqm={"leaf": {"policy": "pred", "lambda_qla": "x"}}).to_cpp()
    assert err.value.field == "fabric.aqm.leaf.lambda_qla"


def test_red_through_set_aqm_is_bit_identical_to_the_built_in_red(make_fabric):
    topo, flows = _incast(4, size=300_000, rate="100Gbps", delay="1us")
    cfg = FabricConfig.preset("hpcc", aqm={"all": {"kmin_bytes": "20KB", "kmax_bytes": "100KB", "pmax": 0.2}})
    runs = []
    for reinstall in (False, True):
        fab = make_fabric(topo, flows, cfg)
        if reinstall:  # a fresh RED object on every port, same curve: same seeds, same marks
            fab.set_aqm(fab.ports.switch_ports(), "pred")
            fab.set_aqm(fab.ports.switch_ports(), "red", kmin_bytes=20_000, kmax_bytes=100_000, pmax=0.2,
                        mark_at_dequeue=True)
        assert fab.run("50ms")
        runs.append((fab.flow_records(), fab.counters()))
    pd.testing.assert_frame_equal(runs[0][0], runs[1][0])
    assert runs[0][1]["data_packet_hops"] == runs[1][1]["data_packet_hops"]


def test_pred_counts_the_concurrent_flows_of_its_port(make_fabric):
    # a 2^16-slot bitmap has no slot collision among 12 flows here; a 2^2-slot one must have some,
    # and a slot shared by two flows is overwritten back and forth: an overcount (docs: algorithms/pred.md §3.2)
    for mode, bits, expect in (("Exact", 7, "exact"), ("Hashed", 16, "exact"), ("Hashed", 2, "over")):
        topo, flows = _incast(12)
        fab = make_fabric(topo, flows, FabricConfig.preset("dctcp"))
        b = _bottleneck(fab, 12)
        fab.set_aqm(b, "pred", fcs_period_ns="200us", counter_mode=mode, index_size_bits=bits)
        counts = []
        for _ in range(10):
            fab.advance("1ms")
            tel = fab.read_telemetry()
            counts.append(tel["pred.flow_count"][b])
            assert np.isnan(tel["pred.flow_count"][_bottleneck(fab, 0)])  # a RED port
            assert tel["pred.lambda_eff"][b] == pytest.approx(0.1 * tel["pred.flow_count"][b])
        if expect == "exact":
            assert counts == [12] * 10, (mode, bits, counts)
        else:
            assert min(counts) >= 12 and max(counts) > 12, (mode, bits, counts)


def test_policy_switch_mid_run_takes_effect_from_that_moment_and_runs_are_deterministic(make_fabric):
    def run():
        topo, flows = _incast(4)
        fab = make_fabric(topo, flows, FabricConfig.preset("dctcp", seed=7))
        b = _bottleneck(fab, 4)
        fab.set_aqm(b, "red", kmin_bytes="10MB", kmax_bytes="10MB", pmax=1.0)  # never marks
        marks = []
        for step in range(8):
            if step == 4:
                fab.set_aqm(b, "pred", lambda_qla=2.0, kmin_bytes=0)
            fab.advance("500us")
            marks.append(int(fab.read_telemetry()["ecn_marked_packets"][b]))
        return marks, fab.flow_records()

    marks, rec = run()
    assert marks[:4] == [0, 0, 0, 0] and all(m > 0 for m in marks[4:])
    marks2, rec2 = run()
    assert marks == marks2
    pd.testing.assert_frame_equal(rec, rec2)


def test_pred_fcs_queue_vs_concurrency_claims_hold():
    from ecngym.reproduce import pred_fcs

    claims = {c.id: c for c in pred_fcs.run(quick=True)}
    for cid in ("red_grows", "fcs_n_flat", "fcs_sqrt_grows", "fcs_square_shrinks", "fcs_n_throughput"):
        assert claims[f"{cid}_lean"].direction_holds and claims[f"{cid}_lean"].within_bar, claims[f"{cid}_lean"]


def test_the_policies_are_those_the_compiled_module_registers_with_ns3():
    # the policy list is read from ns-3's TypeId registry (the children of PortAqmPolicy), not kept by hand
    from ecngym.sim_backend import _fabric
    from ecngym.sim_backend.aqm import policies, resolve, short_name

    assert policies() == POLICIES == {"codel": "ns3::ecngym::CodelAqmPolicy",
                                      "ecn_sharp": "ns3::ecngym::EcnSharpAqmPolicy",
                                      "pred": "ns3::ecngym::PredFcsAqmPolicy", "r_aqm": "ns3::ecngym::RAqmPolicy",
                                      "red": "ns3::ecngym::RedAqmPolicy"}
    assert sorted(_fabric.aqm_types()) == sorted(POLICIES.values())
    assert "ns3::ecngym::PortAqmPolicy" not in _fabric.aqm_types()  # the abstract base is no policy
    # a new policy's short name follows from its class name alone
    assert short_name("ns3::ecngym::FairDropAqmPolicy") == "fair_drop"
    assert resolve("ns3::ecngym::RAqmPolicy") == ("r_aqm", "ns3::ecngym::RAqmPolicy")
    with pytest.raises(ConfigError, match=r"^aqm.policy: unknown AQM policy 'blue'; known: codel, ecn_sharp, pred, "
                                          r"r_aqm, red$"):
        resolve("blue")
