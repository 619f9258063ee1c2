"""Bad input raises an error that names the field; nothing is silently clamped."""

import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import Fabric, FabricConfig, topology
from ecngym.units import parse_bytes, parse_rate_bps, parse_time_ns

FLOWS = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [1000], "start_ns": [0]})


@pytest.mark.parametrize(
    "parse,value,field",
    [(parse_bytes, "5XB", "kmin"), (parse_bytes, "-1KB", "kmin"), (parse_time_ns, "-1us", "interval"),
     (parse_time_ns, "0.5ns", "interval"), (parse_rate_bps, "0Gbps", "rate"), (parse_rate_bps, True, "rate")],
)
def test_units_reject_malformed_values(parse, value, field):
    with pytest.raises(ConfigError, match=field):
        parse(value, field)


def test_units_parse_human_values():
    assert parse_bytes("5KB") == 5000 and parse_bytes("32MiB") == 32 << 20 and parse_bytes(4000) == 4000
    assert parse_time_ns("10us") == 10_000 and parse_time_ns("0.001ms") == 1000
    assert parse_rate_bps("100Gbps") == 100e9


@pytest.mark.parametrize(
    "overrides,field",
    [({"ecn": {"kmin": "200KB", "kmax": "100KB"}}, "fabric.ecn.kmax"),
     ({"ecn": {"pmax": 1.5}}, "fabric.ecn.pmax"),
     ({"ecn": {"mark_at": "sometimes"}}, "fabric.ecn.mark_at"),
     ({"cc": "reno"}, "fabric.cc"),
     ({"buffer": {"pfc_alpha": 0}}, "fabric.buffer.pfc_alpha"),
     ({"dcqcn": {"g": 2.0}}, "fabric.dcqcn.g"),
     ({"num_queues": 9}, "fabric.num_queues"),
     ({"mtu_payload": "10B"}, "fabric.mtu_payload"),
     ({"nic_pacing_wake": "sometimes"}, "fabric.nic_pacing_wake"),
     ({"no_such_field": 1}, "fabric.no_such_field"),
     ({"ecn": {"kmin_typo": 1}}, "fabric.ecn.kmin_typo")],
)
def test_bad_fabric_config_names_the_field(overrides, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        FabricConfig.preset("hpcc").updated(overrides).to_cpp()


def test_unknown_preset():
    with pytest.raises(ConfigError, match="fabric.preset"):
        FabricConfig.preset("hpcc2")


@pytest.mark.parametrize(
    "builder,kwargs,field",
    [(topology.incast_star, {"hosts": 1}, "topology.hosts"),
     (topology.fat_tree, {"k": 3}, "topology.k"),
     (topology.leaf_spine, {"spines": 0}, "topology.spines"),
     (topology.incast_star, {"link_rate": "fast"}, "topology.link_rate")],
)
def test_bad_topology_names_the_field(builder, kwargs, field):
    with pytest.raises(ConfigError, match=field):
        builder(**kwargs)


def test_unknown_topology_kind():
    with pytest.raises(ConfigError, match="topology.kind"):
        topology.Topology.from_config({"kind": "torus"})


@pytest.mark.parametrize(
    "column,value,field",
    [("dst", 0, "flows.dst"), ("dst", 9, "flows.dst"), ("size_bytes", 0, "flows.size_bytes"),
     ("start_ns", -5, "flows.start_ns"), ("priority", 0, "flows.priority"), ("size_bytes", 1.5, "flows.size_bytes")],
)
def test_bad_flows_name_the_column(column, value, field):
    flows = FLOWS.copy()
    flows["priority"] = 3
    flows[column] = value
    with pytest.raises(ConfigError, match=field):
        Fabric(topology.incast_star(hosts=2), flows, "hpcc")


def test_missing_flow_column():
    with pytest.raises(ConfigError, match="size_bytes"):
        Fabric(topology.incast_star(hosts=2), FLOWS.drop(columns="size_bytes"), "hpcc")


def test_bad_runtime_settings(make_fabric):
    fab = make_fabric(topology.incast_star(hosts=2), FLOWS, "hpcc")
    host_port = int((~fab.ports.is_switch).nonzero()[0][0])
    switch_port = int(fab.ports.is_switch.nonzero()[0][0])
    with pytest.raises(ConfigError, match="host port"):
        fab.set_red([host_port], "5KB", "10KB", 0.1)
    with pytest.raises(ConfigError, match="pmax"):
        fab.set_red([switch_port], "5KB", "10KB", 1.1)
    with pytest.raises(ConfigError, match="kmax"):
        fab.set_red([switch_port], "50KB", "10KB", 0.1)
    with pytest.raises(ConfigError, match="alpha"):
        fab.set_pfc([0], alpha=0, headroom="10KB")
    with pytest.raises(ConfigError, match="switches"):
        fab.set_pfc([3], alpha=0.5, headroom="10KB")
    fab.advance("10us")
    with pytest.raises(ConfigError, match="until"):
        fab.run_until("5us")


def test_one_fabric_per_process(make_fabric):
    fab = make_fabric(topology.incast_star(hosts=2), FLOWS, "hpcc")
    with pytest.raises(RuntimeError, match="another ecngym Fabric"):
        Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc")
    fab.close()
    fab.close()  # closing twice is safe
    with Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc") as again:
        assert again.run("1ms")
