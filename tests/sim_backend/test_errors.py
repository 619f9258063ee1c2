"""Bad input raises an error that names the field; nothing is silently clamped."""

import re

import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import Fabric, FabricConfig, aqm, topology
from ecngym.units import parse_bytes, parse_rate_bps, parse_time_ns

FLOWS = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [1000], "start_ns": [0]})


@pytest.mark.parametrize(
    "parse,value,field",
    [(parse_bytes, "5XB", "kmin"), (parse_bytes, "-1KB", "kmin"), (parse_time_ns, "-1us", "interval"),
     (parse_time_ns, "0.5ns", "interval"), (parse_rate_bps, "0Gbps", "rate"), (parse_rate_bps, True, "rate"),
     (parse_bytes, "5 K B", "kmin"), (parse_bytes, None, "kmin"), (parse_bytes, 2.5, "kmin"),
     # non-finite values: no OverflowError, no infinite link
     (parse_bytes, "1e400KB", "kmin"), (parse_bytes, float("inf"), "kmin"), (parse_bytes, float("nan"), "kmin"),
     (parse_time_ns, float("inf"), "interval"), (parse_time_ns, "1e400s", "interval"),
     (parse_rate_bps, float("inf"), "rate"), (parse_rate_bps, "1e400Gbps", "rate")],
)
def test_units_reject_malformed_values(parse, value, field):
    with pytest.raises(ConfigError, match=field):
        parse(value, field)


def test_a_duration_in_rtts_becomes_whole_ns_or_is_refused_never_clamped():
    from ecngym.units import rtt_to_ns

    assert rtt_to_ns("1.25rtt", 4160, "t") == 5200 and rtt_to_ns(" 2 RTT", 0.75, "t") == 2
    for value, rtt_ns in (("1e-9rtt", 4160), ("0.4rtt", 1), ("0.000001rtt", 4160)):  # were 1 ns
        with pytest.raises(ConfigError, match=r"^t: got .* allowed range is \[1, 2\^62\] ns"):
            rtt_to_ns(value, rtt_ns, "t")
    for value in ("1e30rtt", "2e15rtt"):
        with pytest.raises(ConfigError, match="^t: got"):
            rtt_to_ns(value, 4160, "t")
    for value in ("0rtt", "-1rtt", "nanrtt", "infrtt", "xrtt"):
        with pytest.raises(ConfigError, match="^t: "):
            rtt_to_ns(value, 4160, "t")


def test_units_parse_human_values():
    assert parse_bytes("5KB") == 5000 and parse_bytes("32MiB") == 32 << 20 and parse_bytes(4000) == 4000
    assert parse_time_ns("10us") == 10_000 and parse_time_ns("0.001ms") == 1000
    assert parse_rate_bps("100Gbps") == 100e9


@pytest.mark.parametrize(
    "overrides,field",
    [({"aqm": {"all": {"kmin_bytes": "200KB", "kmax_bytes": "100KB"}}}, "fabric.aqm.all: kmax_bytes"),
     ({"aqm": {"all": {"pmax": 1.5}}}, "fabric.aqm.all.pmax"),
     ({"aqm": {"all": {"mark_at_dequeue": "sometimes"}}}, "fabric.aqm.all.mark_at_dequeue"),
     ({"cc": "reno"}, "fabric.cc"),
     ({"buffer": {"pfc_alpha": 0}}, "fabric.buffer.pfc_alpha"),
     ({"dcqcn": {"g": 2.0}}, "fabric.dcqcn.g"),
     ({"num_queues": 9}, "fabric.num_queues"),
     ({"mtu_payload": "10B"}, "fabric.mtu_payload"),
     ({"nic_pacing_wake": "sometimes"}, "fabric.nic_pacing_wake"),
     ({"no_such_field": 1}, "fabric.no_such_field"),
     ({"aqm": {"all": {"kmin_typo": 1}}}, "fabric.aqm.all.kmin_typo"),
     ({"aqm": {"all": {"kmin_bytes": "5XB"}}}, "fabric.aqm.all.kmin_bytes"),
     ({"aqm": {"all": {"kmin_bytes": "-1KB"}}}, "fabric.aqm.all.kmin_bytes"),
     ({"aqm": {"all": 5}}, "fabric.aqm.all"),
     # the section that aqm replaced is refused by name
     ({"ecn": {"kmin": "10KB"}}, "fabric.ecn"),
     ({"retransmit_timeout": "-1us"}, "fabric.retransmit_timeout"),
     ({"retransmit_timeout": 0}, "fabric.retransmit_timeout"),
     ({"dcqcn": {"ai_rate": "fast"}}, "fabric.dcqcn.ai_rate"),
     ({"dcqcn": {"min_rate": "0Gbps"}}, "fabric.dcqcn.min_rate"),
     ({"buffer": {"buffer": "-5MB"}}, "fabric.buffer.buffer"),
     ({"buffer": {"reserve": "64MiB"}}, "fabric.buffer.reserve"),
     ({"seed": -1}, "fabric.seed"),
     # malformed values of numeric / boolean fields name the field too (no bare ValueError / TypeError)
     ({"aqm": {"all": {"pmax": "high"}}}, "fabric.aqm.all.pmax"),
     ({"aqm": {"all": {"pmax": None}}}, "fabric.aqm.all.pmax"),
     ({"buffer": {"pfc_alpha": "big"}}, "fabric.buffer.pfc_alpha"),
     ({"dcqcn": {"g": [0.5]}}, "fabric.dcqcn.g"),
     ({"num_queues": "8x"}, "fabric.num_queues"),
     ({"seed": "x"}, "fabric.seed"),
     # ...and nothing is silently truncated or coerced
     ({"num_queues": 2.5}, "fabric.num_queues"),
     ({"seed": 1.5}, "fabric.seed"),
     ({"dcqcn": {"fast_recovery_steps": 1.5}}, "fabric.dcqcn.fast_recovery_steps"),
     ({"buffer": {"pfc_enabled": "false"}}, "fabric.buffer.pfc_enabled"),
     ({"dcqcn": {"cut_on_cnp": "no"}}, "fabric.dcqcn.cut_on_cnp"),
     # a number is a number: "0.5" is not read as 0.5 (only sizes, durations and rates take strings)
     ({"aqm": {"all": {"pmax": "0.5"}}}, "fabric.aqm.all.pmax"),
     ({"num_queues": "4"}, "fabric.num_queues")],
)
def test_bad_fabric_config_names_the_field(overrides, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        FabricConfig.preset("hpcc").updated(overrides).to_cpp()


@pytest.mark.parametrize("overrides,message", [
    # the buffer set too small: the part it cannot hold is named with the buffer beside it (not a range
    # of a field the user did not set)
    ({"buffer": "1B"}, "fabric.buffer.reserve: got 4096 B, more than the whole buffer (fabric.buffer.buffer = 1 B); "
                       "lower fabric.buffer.reserve or raise fabric.buffer.buffer"),
    ({"buffer": "10KB", "reserve": 0}, "fabric.buffer.headroom: got 37500 B, more than the whole buffer "
                                       "(fabric.buffer.buffer = 10000 B)"),
    ({"buffer": "2KB", "reserve": 0, "headroom": 0}, "fabric.buffer.resume_offset: got 3072 B, more than the whole "
                                                     "buffer (fabric.buffer.buffer = 2000 B)"),
    ({"reserve": "-1B"}, "fabric.buffer.reserve: expected a non-negative whole number of bytes, got '-1B'"),
])
def test_a_part_larger_than_the_buffer_names_the_buffer_too(overrides, message):
    with pytest.raises(ConfigError) as err:
        FabricConfig.preset("hpcc").updated({"buffer": overrides}).to_cpp()
    assert str(err.value).startswith(message), err.value



@pytest.mark.parametrize("overrides,message", [
    # the value as given: the check ran on its float (pmax=2 said "got 2.0") or its conversion
    ({"aqm": {"all": {"pmax": 2}}}, "fabric.aqm.all.pmax: got 2, allowed range is [0.0, 1.0]"),
    ({"aqm": {"all": {"pmax": 1.5}}}, "fabric.aqm.all.pmax: got 1.5, allowed range is [0.0, 1.0]"),
    ({"dcqcn": {"g": 0}}, "fabric.dcqcn.g: got 0, allowed range is (0, 1]"),
    ({"buffer": {"pfc_alpha": 100}}, "fabric.buffer.pfc_alpha: got 100, allowed range is (0, 64]"),
    ({"aqm": {"all": {"by_rate": {"100Gbps": {"kmin_bytes": 1, "kmax_bytes": 2, "pmax": 2}}}}},
     "fabric.aqm.all.by_rate.100Gbps.pmax: got 2, allowed range is [0.0, 1.0]"),
    ({"buffer": {"buffer": "0KB"}}, "fabric.buffer.buffer: got '0KB' = 0 B, allowed range is [1, inf) B"),
    ({"retransmit_timeout": "0us"}, "fabric.retransmit_timeout: got '0us' = 0 ns, allowed range is [1, inf) ns"),
])
def test_range_errors_show_the_value_as_given(overrides, message):
    with pytest.raises(ConfigError) as err:
        FabricConfig.preset("hpcc").updated(overrides).to_cpp()
    assert str(err.value) == message


def test_trace_load_and_aqm_parameter_errors_show_the_value_as_given():
    from ecngym.sim_backend import aqm
    from ecngym.workloads import generate_trace

    with pytest.raises(ConfigError, match=r"^trace\.load: got 2, allowed range is \(0\.0, 1\.0\)$"):
        generate_trace("websearch", load=2, hosts=4, duration="1ms", seed=1)
    with pytest.raises(ConfigError, match=r"^env\.aqm\.viq_capacity_packets: got 0\.0, allowed range is \[1, "):
        aqm.validate_params("r_aqm", {"viq_capacity_packets": 0.0}, "env.aqm")


@pytest.mark.parametrize("cc", ["dcqcn", "dctcp_rate", "timely", "hpcc"])
def test_a_rate_floor_above_the_slowest_host_link_is_refused_at_build(cc):
    # every rate cut is floored at min_rate: above line rate, congestion control would be off (was run as given)
    topo = topology.dumbbell(left_hosts=2, right_hosts=1, host_rate="10Gbps", bottleneck_rate="100Gbps")
    flows = pd.DataFrame({"src": [0], "dst": [2], "size_bytes": [10_000], "start_ns": [0]})
    extra = {"window": {"enabled": True}} if cc == "hpcc" else {}
    with pytest.raises(ConfigError) as err:
        Fabric(topo, flows, FabricConfig.preset("hpcc", cc=cc, **{cc: {"min_rate": "40Gbps"}}, **extra))
    assert str(err.value) == (f"fabric.{cc}.min_rate: got 4e+10 bps = 40 Gbps, above the slowest host link's 10 Gbps: "
                              f"every rate cut would land above line rate, which turns {cc} off; allowed: at most "
                              "10 Gbps")
    # at line rate it builds; the window-based DCTCP has no rate floor
    Fabric(topo, flows, FabricConfig.preset("hpcc", cc=cc, **{cc: {"min_rate": "10Gbps"}}, **extra)).close()
    Fabric(topo, flows, FabricConfig.preset("dctcp", dctcp_rate={"min_rate": "40Gbps"})).close()


def test_hpcc_on_more_link_rates_than_int_can_name_is_refused_naming_the_cc():
    # was the builder's bare ValueError "links: HPCC's INT records name a link rate in 3 bits ..."
    def star(rates):
        n = len(rates)
        return topology.Topology(name="rates", num_hosts=n, switch_layers=["tor"], link_a=list(range(n)),
                                 link_b=[n] * n, rate_bps=rates, delay_ns=[1000] * n)

    flows = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [10_000], "start_ns": [0]})
    hpcc = FabricConfig.preset("hpcc", cc="hpcc", window={"enabled": True})
    with pytest.raises(ConfigError, match=r"^fabric\.cc: got 'hpcc' on a topology of 9 different link rates \(10, 20, "
                                          r"30, 40, 50, 60, 70, 80, 90 Gbps\); HPCC's INT records name a link's rate "
                                          r"in 3 bits: at most 8 rates, or another congestion control$"):
        Fabric(star([g * 1e10 for g in range(1, 10)]), flows, hpcc)
    Fabric(star([g * 1e10 for g in range(1, 9)]), flows, hpcc).close()  # 8 rates build
    Fabric(star([g * 1e10 for g in range(1, 10)]), flows, "hpcc").close()  # as DCQCN does on 9


def test_an_env_refuses_a_rate_floor_above_line_rate_when_made():
    import gymnasium as gym

    import ecngym.envs  # noqa: F401

    with pytest.raises(ConfigError, match=r"^fabric\.dcqcn\.min_rate: got 1e\+15 bps = 1e\+06 Gbps, above the slowest "
                                          r"host link's 100 Gbps"):
        gym.make("ecngym/RoceIncast-v0", fabric={"preset": "hpcc", "dcqcn": {"min_rate": "1e15bps"}})


def test_good_fabric_configs_convert():
    for name in ("hpcc", "dcqcn_paper", "dctcp"):
        FabricConfig.preset(name).to_cpp()
    c = FabricConfig.from_dict({"preset": "dctcp", "seed": 2**64 - 1, "num_queues": 4.0,
                                "aqm": {"all": {"pmax": 0.5, "kmin_bytes": "1KiB"}}}).to_cpp()
    born = dict(zip(c.aqm_attribute_names, c.aqm_attribute_values, strict=True))
    assert (c.seed, c.num_queues, born["Pmax"], born["KminBytes"]) == (2**64 - 1, 4, "0.5", "1024")


def test_keyword_construction_takes_a_section_as_a_mapping():
    # FabricConfig(dctcp={...}) overrides that section's defaults, like preset() and updated()
    c = FabricConfig(cc="dctcp", dctcp={"persistent_connections": True},
                     aqm={"all": {"policy": "red", "kmin_bytes": "1KiB"}})
    assert c.dctcp.persistent_connections and c.dctcp.g == FabricConfig().dctcp.g
    cpp = c.to_cpp()
    assert dict(zip(cpp.aqm_attribute_names, cpp.aqm_attribute_values, strict=True))["KminBytes"] == "1024"
    with pytest.raises(ConfigError, match=r"fabric\.dctcp: expected a mapping of its fields or a DctcpParams, got 3"):
        FabricConfig(dctcp=3)
    with pytest.raises(ConfigError, match=r"fabric\.dctcp\.nope: unknown field"):
        FabricConfig(dctcp={"nope": 1})


def test_unknown_preset():
    with pytest.raises(ConfigError, match=r"fabric\.preset"):
        FabricConfig.preset("hpcc2")
    with pytest.raises(ConfigError, match=r"fabric\.preset"):
        FabricConfig.from_dict({"preset": "hpcc2"})
    with pytest.raises(ConfigError, match=r"env\.fabric\.preset"):
        FabricConfig.from_dict({"preset": "hpcc2"}, "env.fabric")
    with pytest.raises(ConfigError, match=r"fabric\.preset"):
        Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc2")


@pytest.mark.parametrize("value", [[("cc", "dctcp")], "hpcc", 5])
def test_a_config_that_is_no_mapping_is_refused_naming_it(value):
    # were: from_dict a TypeError / ValueError from dict(), updated an AttributeError ('... has no
    # attribute items'), Fabric(config=5) an AttributeError ('int' object has no attribute 'to_cpp')
    with pytest.raises(ConfigError, match=r"^env\.fabric: expected a mapping of fields, got "):
        FabricConfig.from_dict(value, "env.fabric")
    with pytest.raises(ConfigError, match=r"^fabric: expected a mapping of fields, got "):
        FabricConfig().updated(value)
    with pytest.raises(ConfigError, match=r"^fabric: expected a FabricConfig, a preset name .* or a mapping"):
        Fabric(topology.incast_star(hosts=2), FLOWS, [value] if isinstance(value, str) else value)
    with pytest.raises(ConfigError, match=r"^fabric: expected a mapping of fields, got None"):
        FabricConfig().updated(None)


def _red(**params):
    return {"aqm": {"all": {"policy": "red", **params}}}


def test_by_rate_keys_name_each_rate_once():
    entry = {"kmin_bytes": "1KB", "kmax_bytes": "2KB", "pmax": 0.1}
    # was: the second key silently replaced the first
    with pytest.raises(ConfigError, match=r"^fabric\.aqm\.all\.by_rate\.100000000000\.0: the same rate \(1e\+11 "
                                          r"bit/s\) as key '100Gbps'; give each rate once"):
        FabricConfig(**_red(by_rate={"100Gbps": entry, 1e11: entry})).aqm_settings()
    # was: TypeError "'<' not supported between instances of 'int' and 'str'" sorting the keys
    with pytest.raises(ConfigError, match=r"by_rate\.100Gbps\.5: red has no parameter 5; known: kmin_bytes, "
                                          r"kmax_bytes, pmax, mark_at_dequeue"):
        FabricConfig(**_red(by_rate={"100Gbps": {**entry, 5: 1}})).aqm_settings()


@pytest.mark.parametrize("value", [0, False, "", [], [["100Gbps", {"kmin_bytes": "1KB", "kmax_bytes": "2KB",
                                                                   "pmax": 0.1}]]])
def test_by_rate_and_aqm_that_are_no_mapping_are_refused_not_read_as_empty(value):
    # 'ecngym eval +fabric.ecn.by_rate=0' ran with no per-rate setting ('by_rate or {}'); a list of
    # pairs was read as a mapping
    with pytest.raises(ConfigError, match=rf"^fabric\.aqm\.all\.by_rate: expected a mapping of link rate -> "
                                          rf"\{{red parameters\}}, got {re.escape(repr(value))}$"):
        FabricConfig.from_dict(_red(by_rate=value)).to_cpp()
    with pytest.raises(ConfigError, match=rf"^fabric\.aqm: expected a mapping of layer -> policy, got "
                                          rf"{re.escape(repr(value))}$"):
        FabricConfig.from_dict({"aqm": value}).to_cpp()
    for empty in (None, {}):  # null: not given
        assert FabricConfig.from_dict(_red(by_rate=empty)).aqm_settings()["all"].by_rate == {}
        assert FabricConfig.from_dict({"aqm": empty}).aqm_settings() == {}


def test_the_ecn_section_is_refused_by_name_with_its_new_spelling():
    with pytest.raises(ConfigError) as err:
        FabricConfig.preset("hpcc", ecn={"kmin": "20KB", "kmax": "100KB", "mark_at": "dequeue"})
    assert str(err.value).startswith("fabric.ecn: removed: fabric.aqm sets every switch port's initial policy")
    assert ("fabric.aqm.all = {'policy': 'red', 'kmin_bytes': '20KB', 'kmax_bytes': '100KB', "
            "'mark_at_dequeue': True}") in str(err.value)
    for build in (lambda: FabricConfig(ecn={}), lambda: FabricConfig.from_dict({"ecn": {"by_rate": {}}}),
                  lambda: FabricConfig().updated({"ecn": 5})):
        with pytest.raises(ConfigError, match=r"^fabric\.ecn: removed"):
            build()


def test_a_layer_setting_of_the_same_policy_merges_and_another_replaces():
    base = FabricConfig.preset("hpcc")
    assert base.updated({"aqm": {"all": {"kmin_bytes": "1KB"}}}).initial_aqm() == (
        "red", {"kmin_bytes": 1000, "kmax_bytes": 1_600_000, "pmax": 0.2, "mark_at_dequeue": True})
    assert base.updated({"aqm": {"all": "codel"}}).initial_aqm()[0] == "codel"
    assert base.updated({"aqm": {"all": "codel"}}).initial_params("red") == aqm.policy_defaults("red")
    assert "all" not in base.updated({"aqm": {"all": None}}).aqm_settings()
    # a layer's RED setting is checked over the 'all' one it lands on: Kmin 2 MB above its Kmax 1.6 MB
    with pytest.raises(ConfigError, match=r"^fabric\.aqm\.leaf: kmax_bytes \(1600000\) must be >= kmin_bytes "):
        base.updated({"aqm": {"leaf": {"policy": "red", "kmin_bytes": "2MB"}}}).to_cpp()
    with pytest.raises(ConfigError, match=r"^fabric\.aqm\.all\.by_rate\.100Gbps: kmax_bytes \(1600000\) must "):
        base.updated({"aqm": {"all": {"by_rate": {"100Gbps": {"kmin_bytes": "2MB"}}}}}).to_cpp()


def test_fabric_rejects_a_bad_config_mapping_before_building():
    with pytest.raises(ConfigError, match=r"fabric\.aqm\.all\.kmin_bytes"):
        Fabric(topology.incast_star(hosts=2), FLOWS, {"preset": "hpcc", "aqm": {"all": {"kmin_bytes": "5XB"}}})
    with pytest.raises(ConfigError, match=r"fabric\.seed"):
        Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc", seed=-3)
    with Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc") as fab:  # nothing was left open
        assert fab.run("1ms")


@pytest.mark.parametrize(
    "builder,kwargs,field",
    [(topology.incast_star, {"hosts": 1}, "topology.hosts"),
     (topology.fat_tree, {"k": 3}, "topology.k"),
     (topology.leaf_spine, {"spines": 0}, "topology.spines"),
     (topology.incast_star, {"link_rate": "fast"}, "topology.link_rate"),
     (topology.incast_star, {"link_rate": float("inf")}, "topology.link_rate"),
     (topology.incast_star, {"link_delay": "-1us"}, "topology.link_delay"),
     (topology.incast_star, {"hosts": 4.5}, "topology.hosts"),
     (topology.fat_tree, {"k": 0}, "topology.k"),
     (topology.dumbbell, {"left_hosts": 0}, "topology.left_hosts"),
     (topology.dumbbell, {"bottleneck_rate": "0Gbps"}, "topology.bottleneck_rate"),
     (topology.leaf_spine, {"hosts_per_leaf": 1.5}, "topology.hosts_per_leaf"),
     (topology.leaf_spine, {"fabric_delay": "1xs"}, "topology.fabric_delay")],
)
def test_bad_topology_names_the_field(builder, kwargs, field):
    with pytest.raises(ConfigError, match=field):
        builder(**kwargs)


def _custom_topology(link_a, link_b, hosts, layers):
    n = len(link_a)
    return topology.Topology("custom", hosts, layers, np.array(link_a, dtype=np.uint32),
                             np.array(link_b, dtype=np.uint32), np.full(n, 100e9), np.full(n, 1000, dtype=np.int64))


@pytest.mark.parametrize(
    "links,layers,message",
    [(([0, 0, 1], [2, 3, 2]), ["tor", "tor"], "topology.links[1]: a second link of host 0 (its first: links[0]); "
                                              "each host needs exactly one link (only switches have several)"),
     (([0, 1], [2, 3]), ["tor", "tor"], "topology: custom: host 1 cannot reach host 0: no path over the links "
                                        "(every host needs a path to every other)"),
     (([0, 1, 2], [2, 2, 2]), ["tor"], "topology.links[2]: got node 2 at both ends; a link joins two different "
                                       "nodes"),
     (([0, 1, 2, 3], [2, 2, 2, 3]), ["tor", "tor"], "topology.links[2]: got node 2 at both ends (and 1 more); a "
                                                    "link joins two different nodes"),
     (([0], [2]), ["tor"], "topology: custom: host 1 has no link; each host needs exactly one link"),
     (([0, 1], [2, 5]), ["tor"], "topology.link_b[1]: got 5, allowed range is [0, 2]")],
    ids=["host_with_two_links", "disconnected", "self_loop", "two_self_loops", "host_without_link",
         "node_out_of_range"],
)
def test_malformed_custom_topology_is_refused_by_the_fabric(links, layers, message):
    # hand-built tables skip the Python builders; the C++ builder refused these with a bare
    # ValueError in its own names ('nodes[0]: a host needs exactly one link, has 2', 'flows[0]: no
    # path from src to dst'); check_buildable names the link or the topology, before any C++
    with pytest.raises(ConfigError) as err:
        Fabric(_custom_topology(*links, hosts=2, layers=layers), FLOWS, "hpcc")
    assert str(err.value) == message
    with Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc") as fab:  # and nothing was left open
        assert fab.run("1ms")


#: A hand-built two-host star (node 2 the switch), its fields as plain Python values.
STAR_FIELDS = {"name": "custom", "num_hosts": 2, "switch_layers": ["tor"], "link_a": [0, 1], "link_b": [2, 2],
               "rate_bps": [100e9, 100e9], "delay_ns": [1000, 1000]}


def test_hand_built_topology_of_python_lists_builds_in_the_fabrics_dtypes():
    star = topology.Topology(**STAR_FIELDS, params={"node_ids": [0, 1, 2]})
    assert (star.link_a.dtype, star.rate_bps.dtype, star.delay_ns.dtype) == (np.uint32, np.float64, np.int64)
    with Fabric(star, FLOWS, "hpcc") as fab:
        assert fab.run("1ms")


def test_host_lookup_by_file_node_id_does_not_grow_with_the_largest_id():
    # the lookup was a table of max(node id) + 1 entries: an id near 2^32 asked for 32 GiB
    # (ids near 2^25 here: without the binary search this test allocates 256 MiB, not 32 GiB)
    import tracemalloc

    star = topology.Topology(**STAR_FIELDS, params={"node_ids": [2**25, 5, 2**25 + 2]})
    tracemalloc.start()
    try:
        hosts = star.hosts_of_node_ids(np.array([5, 2**25, 5]), "flows.src")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert hosts.tolist() == [1, 0, 1] and hosts.dtype == np.int64
    assert peak < 2**20
    for bad in ([5, 2**25 + 2, 5], [5, -1], [5, 2**25 + 1]):  # a switch's id, below and between the hosts'
        with pytest.raises(ConfigError, match=rf"^flows.src: row 1: node {bad[1]} is not a host of custom "
                                              rf"\(hosts: 5, {2**25}\)$"):
            star.hosts_of_node_ids(np.array(bad), "flows.src")


@pytest.mark.parametrize("extra,message", [
    # each was dropped without a word: the flow ran at the default priority / without its delay
    ({"priorty": 7}, r"unknown column 'priorty' \(did you mean 'priority'\?\); the fabric reads \['src', 'dst', "
                     r"'size_bytes', 'start_ns'\], optionally \['priority', 'dport', 'extra_delay_ns'\], and allows "
                     r"\['flow_id', 'tag'\]$"),
    ({"extra_delay": 5}, r"unknown column 'extra_delay' \(did you mean 'extra_delay_ns'\?\)"),
    ({"app": "web"}, r"unknown column 'app'; the fabric reads"),
])
def test_a_flow_table_column_the_fabric_does_not_know_is_refused(extra, message):
    from ecngym.sim_backend.flows import as_flow_table

    flows = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [10], "start_ns": [0]})
    with pytest.raises(ConfigError, match=r"^flows: " + message):
        as_flow_table(flows.assign(**extra))
    # a trace's own columns are allowed (the fabric does not read flow_id or tag)
    assert list(as_flow_table(flows.assign(flow_id=0, tag="web", extra_delay_ns=5)).columns) == [
        "src", "dst", "size_bytes", "start_ns", "priority", "dport", "extra_delay_ns"]


def test_a_flow_table_column_named_twice_is_refused():
    # was pandas' "Per-column arrays must each be 1-dimensional"
    from ecngym.sim_backend.flows import as_flow_table

    flows = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [10], "start_ns": [0]})
    with pytest.raises(ConfigError, match=r"^flows: column 'src' appears 2 times; each column may appear once$"):
        as_flow_table(pd.concat([flows, flows[["src"]]], axis=1))


def test_a_flow_table_error_counts_the_bad_rows_after_the_first():
    # named the first bad row only: a table with thousands of bad rows read like a one-row typo
    from ecngym.sim_backend.flows import as_flow_table

    flows = pd.DataFrame({"src": [0, 1, 1, 0, 1], "dst": [1, 1, 1, 1, 1], "size_bytes": [10, 20, 2.5, 3.5, 50],
                          "start_ns": [0, 0, 0, 0, 0]})
    with pytest.raises(ConfigError, match=r"^flows\.size_bytes: row 2 \(and 1 more\): expected a whole number "
                                          r"in \[-2\^63, 2\^63\), got 2\.5$"):
        as_flow_table(flows)
    flows["size_bytes"] = 100
    with pytest.raises(ConfigError, match=r"^flows\.dst: row 1 \(and 2 more\): 1 equals src$"):
        as_flow_table(flows)
    with pytest.raises(ConfigError, match=r"^flows\.dst: row 0 \(and 4 more\): 1 must be < 1 \(hosts\)$"):
        as_flow_table(flows.assign(src=0), num_hosts=1)
    with pytest.raises(ConfigError, match=r"^flows\.dst: row 4: 1 equals src$"):  # one bad row: no count
        as_flow_table(flows.assign(src=[0, 0, 0, 0, 1]))
    star = topology.Topology(**STAR_FIELDS, params={"node_ids": [4, 5, 6]})
    with pytest.raises(ConfigError, match=r"^flows\.src: row 1 \(and 2 more\): node 6 is not a host of custom "
                                          r"\(hosts: 4-5\)$"):
        star.hosts_of_node_ids(np.array([4, 6, 6, 7]), "flows.src")


@pytest.mark.parametrize("changes,message", [
    ({"link_a": [-1, 1]}, "topology.link_a[0]: got -1, allowed range is [0, 2]"),
    ({"link_a": [-1, 7]}, "topology.link_a[0]: got -1 (and 1 more), allowed range is [0, 2]"),
    ({"link_b": [2, 3]}, "topology.link_b[1]: got 3, allowed range is [0, 2]"),
    ({"link_a": [0.0, 1.0]}, "topology.link_a: expected a flat array of integers, got float64"),
    ({"link_b": [2]}, "topology.link_b: expected 2 entries (one per link), got 1"),
    ({"link_a": [[0, 1]]}, "topology.link_a: expected a flat array of integers, got int64 of shape (1, 2)"),
    ({"rate_bps": [100e9, 0.0]}, "topology.rate_bps[1]: got 0.0, allowed range is [1.0, 1000000000000000.0]"),
    ({"rate_bps": ["fast", "fast"]}, "topology.rate_bps: expected a flat array of numbers, got <U4"),
    ({"delay_ns": [1000, 1.5]}, "topology.delay_ns: expected a flat array of integers, got float64"),
    ({"delay_ns": [1000, -1]}, "topology.delay_ns[1]: got -1, allowed range is [0, 1000000000]"),
    ({"num_hosts": "2"}, "topology.num_hosts: expected a whole number, got '2'"),
    ({"switch_layers": "tor"}, "topology.switch_layers: got 'tor'"),
    # reserved and blank layer names were taken: a layer 'host' put host NIC ports into
    # switch_ports('host'), and fabric.aqm={'host': ...} failed in C++ ('port_ids[0]: 0 is not a
    # switch egress port'); a layer 'all' could not be named in fabric.aqm
    ({"switch_layers": ["host"]}, "topology.switch_layers[0]: got 'host', a reserved name ('host' is the layer of "
                                  "host ports, 'all' selects every switch layer, e.g. in fabric.aqm); allowed: any "
                                  "other name"),
    ({"switch_layers": ["all"]}, "topology.switch_layers[0]: got 'all', a reserved name"),
    ({"switch_layers": [""]}, "topology.switch_layers[0]: got '', expected a layer name (e.g. 'tor', 'spine')"),
    ({"switch_layers": [" "]}, "topology.switch_layers[0]: got ' ', expected a layer name"),
    ({"switch_layers": [5]}, "topology.switch_layers[0]: expected a string, got 5"),
    ({"params": {"node_ids": [-1, 1, 2]}}, "topology.params.node_ids[0]: got -1, allowed range is [0, 4294967295]"),
    ({"params": {"node_ids": [0, 1]}}, "topology.params.node_ids: expected 3 entries (one per node), got 2"),
    ({"params": {"node_ids": [4, 9, 4]}}, "topology.params.node_ids[2]: got 4, already the id of node 0; each node "
                                          "needs its own id"),
    ({"params": {"node_ids": [7, 7, 7]}}, "topology.params.node_ids[1]: got 7 (and 1 more), already the id of node 0"),
], ids=["negative_end", "two_bad_ends", "end_beyond_nodes", "float_ends", "short_array", "2d_array", "zero_rate",
        "string_rates", "fractional_delay", "negative_delay", "string_host_count", "layers_a_string",
        "layer_host", "layer_all", "layer_empty", "layer_blank", "layer_a_number",
        "negative_node_id", "node_ids_short", "repeated_node_id", "node_ids_all_one"])
def test_hand_built_topology_refuses_a_bad_field_at_construction_naming_it(changes, message):
    # (lists reached the C++ binding as nanobind's TypeError; node id -1 wrapped to 2^32 - 1 and built;
    # a repeated node id built, and only the fabric's binding refused it, with a ValueError)
    with pytest.raises(ConfigError) as err:
        topology.Topology(**{**STAR_FIELDS, **changes})
    assert message in str(err.value)


def test_unknown_topology_kind_or_argument():
    with pytest.raises(ConfigError, match="topology.kind"):
        topology.Topology.from_config({"kind": "torus"})
    with pytest.raises(ConfigError, match="topology"):
        topology.Topology.from_config({"kind": "fat_tree", "kk": 4})
    with pytest.raises(ConfigError, match="topology.k"):
        Fabric({"kind": "fat_tree", "k": 5}, FLOWS, "hpcc")


@pytest.mark.parametrize(
    "column,value,field",
    [("dst", 0, "flows.dst"), ("dst", 9, "flows.dst"), ("size_bytes", 0, "flows.size_bytes"),
     ("start_ns", -5, "flows.start_ns"), ("priority", 0, "flows.priority"), ("size_bytes", 1.5, "flows.size_bytes"),
     ("src", 2, "flows.src"), ("src", -1, "flows.src"), ("priority", 8, "flows.priority"),
     ("size_bytes", -1000, "flows.size_bytes"), ("size_bytes", float("nan"), "flows.size_bytes"),
     ("src", "a", "flows.src"), ("start_ns", "1us", "flows.start_ns")],
)
def test_bad_flows_name_the_column(column, value, field):
    flows = FLOWS.copy()
    flows["priority"] = 3
    flows[column] = value
    with pytest.raises(ConfigError, match=field):
        Fabric(topology.incast_star(hosts=2), flows, "hpcc")


@pytest.mark.parametrize("column,value,message", [
    ("dst", 0, "flows.dst: row 0: 0 equals src"), ("size_bytes", 1.5, "got 1.5"),
    ("start_ns", -5, "flows.start_ns: row 0: -5 must be >= 0")])
def test_bad_flow_values_are_shown_as_given_not_as_numpy_reprs(column, value, message):
    flows = FLOWS.copy()
    flows[column] = value
    with pytest.raises(ConfigError) as info:
        Fabric(topology.incast_star(hosts=2), flows, "hpcc")
    assert message in str(info.value) and "np." not in str(info.value)


def test_priority_beyond_the_configured_queues():
    # 4 queues = control queue 0 + data priorities 1..3; the C++ check names the column
    flows = FLOWS.assign(priority=5)
    with pytest.raises(ValueError, match="priority"):
        Fabric(topology.incast_star(hosts=2), flows, FabricConfig.preset("hpcc", num_queues=4))


def test_missing_flow_column():
    with pytest.raises(ConfigError, match="size_bytes"):
        Fabric(topology.incast_star(hosts=2), FLOWS.drop(columns="size_bytes"), "hpcc")


@pytest.mark.parametrize("columns,sizes", [
    ({"src": [0, 1], "dst": [1], "size_bytes": [1000, 1000], "start_ns": [0, 0]},
     "src: 2, dst: 1, size_bytes: 2, start_ns: 2"),
    ({"src": 0, "dst": 1, "size_bytes": 1000, "start_ns": 0},
     "src: scalar 0, dst: scalar 1, size_bytes: scalar 1000, start_ns: scalar 0"),
    ({"src": np.zeros((2, 2), dtype=int), "dst": [1, 0], "size_bytes": [1000, 1000], "start_ns": [0, 0]},
     "src: shape (2, 2), dst: 2,"),
], ids=["unequal_lengths", "all_scalars", "2d_column"])
def test_a_mapping_of_flow_columns_of_unequal_lengths_names_each_length(columns, sizes):
    # was: pandas' ValueError "All arrays must be of the same length" (or "... must pass an index")
    from ecngym.sim_backend.flows import as_flow_table

    with pytest.raises(ConfigError) as err:
        as_flow_table(columns)
    assert err.value.field == "flows" and "expected columns of one length" in err.value.message
    assert sizes in err.value.message


def test_bad_runtime_settings(make_fabric):
    fab = make_fabric(topology.incast_star(hosts=2), FLOWS, "hpcc")
    host_port = int((~fab.ports.is_switch).nonzero()[0][0])
    switch_port = int(fab.ports.is_switch.nonzero()[0][0])
    before = fab.get_red()
    with pytest.raises(ConfigError, match="host port"):
        fab.set_red([host_port], "5KB", "10KB", 0.1)
    with pytest.raises(ConfigError, match="ports"):
        fab.set_red([len(fab.ports)], "5KB", "10KB", 0.1)
    with pytest.raises(ConfigError, match="pmax"):
        fab.set_red([switch_port], "5KB", "10KB", 1.1)
    with pytest.raises(ConfigError, match="pmax"):
        fab.set_red([switch_port], "5KB", "10KB", -0.1)
    with pytest.raises(ConfigError, match="pmax"):
        fab.set_red([switch_port], "5KB", "10KB", float("nan"))
    with pytest.raises(ConfigError, match="kmax"):
        fab.set_red([switch_port], "50KB", "10KB", 0.1)
    with pytest.raises(ConfigError, match="kmin"):
        fab.set_red([switch_port], "5XB", "10KB", 0.1)
    with pytest.raises(ConfigError, match="kmin"):
        fab.set_red([switch_port], ["5KB", "6KB"], "10KB", 0.1)  # one value per port
    with pytest.raises(ConfigError, match="kmin"):
        fab.set_red([switch_port], np.array([-1.0]), "10KB", 0.1)
    for key, value in fab.get_red().items():  # a refused setting changed nothing
        np.testing.assert_array_equal(value, before[key], err_msg=key)
    with pytest.raises(ConfigError, match="alpha"):
        fab.set_pfc([0], alpha=0, headroom="10KB")
    with pytest.raises(ConfigError, match="alpha"):
        fab.set_pfc([0], alpha=-0.5, headroom="10KB")
    with pytest.raises(ConfigError, match="alpha"):
        fab.set_pfc([0], alpha=float("nan"), headroom="10KB")
    with pytest.raises(ConfigError, match="alpha"):
        fab.set_pfc([0], alpha=65, headroom="10KB")
    with pytest.raises(ConfigError, match="headroom"):
        fab.set_pfc([0], alpha=0.5, headroom="-10KB")
    with pytest.raises(ConfigError, match="switches"):
        fab.set_pfc([3], alpha=0.5, headroom="10KB")
    fab.advance("10us")
    with pytest.raises(ConfigError, match="until"):
        fab.run_until("5us")
    with pytest.raises(ConfigError, match="dt"):
        fab.advance("-1us")
    with pytest.raises(ConfigError, match="limit"):
        fab.run("soon")
    assert fab.now_ns == 10_000


def test_a_closed_fabric_refuses_work():
    fab = Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc")
    fab.close()
    for call in (lambda: fab.advance("1us"), fab.read_telemetry, fab.flow_records, fab.counters,
                 lambda: fab.now_ns):
        with pytest.raises(RuntimeError, match="closed"):
            call()


def test_one_fabric_per_process(make_fabric):
    fab = make_fabric(topology.incast_star(hosts=2), FLOWS, "hpcc")
    with pytest.raises(RuntimeError, match="another ecngym Fabric"):
        Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc")
    fab.close()
    fab.close()  # closing twice is safe
    with Fabric(topology.incast_star(hosts=2), FLOWS, "hpcc") as again:
        assert again.run("1ms")


def test_a_per_port_error_names_the_first_bad_entry_and_counts_the_rest(make_fabric):
    # one bad value among many ports: a list was printed whole, and no message said how many were bad
    fab = make_fabric(topology.leaf_spine(4, 2, 6), FLOWS, "hpcc")
    ports = np.flatnonzero(fab.ports.is_switch)
    n = len(ports)
    pmax = np.full(n, 0.1)
    pmax[[7, 9, 10, 30]] = 1.5
    kmin = np.full(n, 1000.0)
    kmin[[3, 5]] = [-1.0, 0.5]
    strings = [0.1] * 7 + ["x", None] + [0.1] * (n - 9)
    cases = [
        ((ports, 1000, 2000, pmax), rf"^aqm\.red\.pmax\[7\]: port {ports[7]} \(and 3 more\): got 1.5, allowed range "
                                    r"is \[0\.0, 1\.0\]$"),
        ((ports, 1000, 2000, strings), rf"^aqm\.red\.pmax\[7\]: port {ports[7]} \(and 1 more\): expected a number, "
                                       r"got 'x'$"),
        ((ports, kmin, 2000, 0.1), rf"^aqm\.red\.kmin_bytes\[3\]: port {ports[3]} \(and 1 more\): expected a "
                                   r"non-negative whole number of bytes, got -1\.0$"),
        # the policy's consistency rule, checked per port in C++: the first port that breaks it
        ((ports, 3000, 2000, 0.1), rf"^aqm\.red: port {ports[0]}: kmax_bytes \(2000\) must be >= kmin_bytes \(3000\)$"),
        (([*ports[:4], 10**6, 10**7], 1000, 2000, 0.1), r"^ports\[4\]: got 1000000 \(and 1 more\), ids must be in "),
        (([ports[2]], 1000, 2000, 1.5), r"^aqm\.red\.pmax: got 1.5, allowed range is \[0\.0, 1\.0\]$"),  # no index
    ]
    for args, match in cases:
        with pytest.raises(ConfigError, match=match) as info:
            fab.set_red(*args)
        assert len(str(info.value)) < 160, str(info.value)  # never the whole array
    switches = np.arange(fab.topology.num_switches)
    with pytest.raises(ConfigError, match=r"^alpha\[1\]: got 100.0 \(and 2 more\), allowed range is \(0, 64\]$"):
        fab.set_pfc(switches, alpha=[0.5, 100, 0.5, 100, float("nan"), 0.5], headroom="10KB")
    with pytest.raises(ConfigError, match=r"^alpha: got 100.0, allowed range is \(0, 64\]$"):  # one: no index
        fab.set_pfc([0], alpha=100, headroom="10KB")
