"""Topologies build, route every pair, and spread flows over equal-cost paths."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import topology
from ecngym.sim_backend.data import hpcc_reference_path


def _all_to_all(hosts, size=20_000):
    rows = [(s, d, size, 0) for s in range(hosts) for d in range(hosts) if s != d]
    return pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"])


@pytest.mark.parametrize(
    "topo,hosts,switches,links",
    [(topology.fat_tree(4), 16, 20, 48), (topology.leaf_spine(3, 2, 3), 9, 5, 15),
     (topology.dumbbell(3, 2), 5, 2, 6), (topology.incast_star(6), 6, 1, 6)],
    ids=["fat_tree4", "leaf_spine", "dumbbell", "star"],
)
def test_all_to_all_completes(make_fabric, topo, hosts, switches, links):
    assert topo.num_hosts == hosts and topo.num_switches == switches and len(topo.link_a) == links
    fab = make_fabric(topo, _all_to_all(hosts), "hpcc")
    assert len(fab.ports) == 2 * links
    assert fab.run("50ms")
    rec = fab.flow_records()
    assert rec["finished"].all()
    assert (rec["delivered_bytes"] == rec["size_bytes"]).all()
    assert fab.counters()["drops"] == 0


def test_fat_tree_structure():
    topo = topology.fat_tree(4)
    assert Counter(topo.switch_layers) == {"edge": 8, "agg": 8, "core": 4}
    degree = np.bincount(np.concatenate([topo.link_a, topo.link_b]), minlength=topo.num_nodes)
    assert (degree[: topo.num_hosts] == 1).all()
    assert (degree[topo.num_hosts :] == 4).all()  # every switch has k = 4 ports
    big = topology.fat_tree(8)
    assert (big.num_hosts, big.num_switches) == (128, 80)


def test_leaf_spine_and_dumbbell_structure():
    ls = topology.leaf_spine(leaves=4, spines=2, hosts_per_leaf=8, host_rate="100Gbps", fabric_rate="200Gbps")
    assert ls.switch_layers == ["leaf"] * 4 + ["spine"] * 2
    assert ls.params["oversubscription"] == pytest.approx(2.0)  # 8 x 100 down, 2 x 200 up
    db = topology.dumbbell(left_hosts=3, right_hosts=2, bottleneck_rate="40Gbps")
    bottleneck = (db.link_a >= db.num_hosts) & (db.link_b >= db.num_hosts)
    assert bottleneck.sum() == 1 and db.rate_bps[bottleneck][0] == 40e9
    assert (db.rate_bps[~bottleneck] == 100e9).all()


def test_ecmp_spreads_flows_over_every_spine(make_fabric):
    topo = topology.leaf_spine(leaves=2, spines=4, hosts_per_leaf=8)
    rows = [(s, d, 200_000, 0) for s in range(8) for d in range(8, 16)]  # 64 flows leaf 0 -> leaf 1
    fab = make_fabric(topo, pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"]), "hpcc")
    assert fab.run("50ms")
    tel = fab.read_telemetry()
    spine_ports = fab.ports.switch_ports("spine")
    per_spine = pd.Series(tel["tx_data_bytes"][spine_ports]).groupby(fab.ports.node[spine_ports]).sum()
    assert len(per_spine) == 4 and (per_spine > 0).all(), "every spine should carry some flows"
    assert per_spine.max() <= 0.5 * per_spine.sum(), "one spine carries most of the traffic"
    # a flow keeps one path: each spine forwarded whole flows (multiples of one flow's wire bytes)
    assert (per_spine % (200_000 + 52 * 200) == 0).all()


def test_ecmp_uses_every_core_switch_of_a_fat_tree(make_fabric):
    topo = topology.fat_tree(4)
    rows = [(s, (s + 4 * p) % 16, 100_000, 0) for s in range(16) for p in (1, 2, 3)]  # to the other pods
    fab = make_fabric(topo, pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns"]), "hpcc")
    assert fab.run("50ms")
    tel = fab.read_telemetry()
    core = fab.ports.switch_ports("core")
    per_core = pd.Series(tel["tx_data_bytes"][core]).groupby(fab.ports.node[core]).sum()
    assert len(per_core) == 4 and (per_core > 0).all()
    # every inter-pod flow crosses exactly one core switch
    assert per_core.sum() == len(rows) * (100_000 + 52 * 100)


def test_hpcc_topology_files():
    star = topology.from_hpcc_file(hpcc_reference_path("topo_16h_1sw_100g.txt"))
    assert (star.num_hosts, star.num_switches, len(star.link_a)) == (16, 1, 16)
    assert (star.delay_ns == 1000).all() and (star.rate_bps == 100e9).all()
    ls = topology.from_hpcc_file(hpcc_reference_path("topo_16h_4leaf_4spine_100g.txt"))
    assert (ls.num_hosts, ls.num_switches, len(ls.link_a)) == (16, 8, 32)
    assert sorted(set(ls.switch_layers)) == ["spine", "tor"]


def test_hpcc_topology_file_renumbers_hosts_first(tmp_path, make_fabric, h):
    # node 0 is the switch in the file; hosts 1..3 become hosts 0..2
    path = tmp_path / "topo.txt"
    path.write_text("4 1 3\n0\n1 0 100Gbps 1us 0\n2 0 25Gbps 2us 0\n3 0 100Gbps 1us 0\n")
    topo = topology.from_hpcc_file(path)
    assert (topo.num_hosts, topo.switch_layers) == (3, ["tor"])
    fab = make_fabric(topo, h.flows([(1, 0, 100_000, 0)]), "hpcc")
    assert fab.run("10ms")
    assert fab.ports.rate_bps[h.host_port(fab, 1)] == 25e9
    rec = fab.flow_records().iloc[0]
    assert rec["base_rtt_ns"] == 2 * (2_000 + 1_000) + 320 + 80  # propagation + MTU per hop


def test_malformed_hpcc_topology_file_names_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("3 1 2\n0\n1 0 100Gbps 1us 0\n2 0 fast 1us 0\n")
    with pytest.raises(ConfigError, match="line 4"):
        topology.from_hpcc_file(path)
    with pytest.raises(ConfigError, match="cannot read"):
        topology.from_hpcc_file(tmp_path / "missing.txt")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="cannot read"):  # was a UnicodeDecodeError
        topology.from_hpcc_file(tmp_path / "binary.txt")



@pytest.mark.parametrize("switches,links,message", [
    ("0", ["1 0", "1 2"], "line 4: a second link of host 1 (its first: line 3); each host needs exactly one link"),
    ("0", ["1 0", "2 0", "0 0"], "line 5: got node 0 at both ends; a link joins two different nodes"),
    ("0", ["1 0", "2 0", "2 0"], "line 5: a second link between nodes 2 and 0 (the first is on line 4); the HPCC "
                                 "model routes over one link per pair of neighbours"),
    ("0 4", ["1 0", "2 0", "3 4", "0 4", "4 0"], "line 7: a second link between nodes 4 and 0 (the first is on "
                                                 "line 6)"),
    ("0 4", ["1 0", "2 0", "3 4"], "host 3 cannot reach host 1: no path over the links"),
    ("0 4", ["1 0", "2 0", "0 4"], "host 3 has no link; each host needs exactly one link"),
], ids=["host_to_host", "self_loop", "duplicate_host_link", "duplicate_switch_link", "disconnected", "lonely_host"])
def test_hpcc_topology_file_links_the_fabric_cannot_build_name_the_line(tmp_path, switches, links, message):
    # these reached the C++ builder, which raised a bare ValueError in its own numbering ('nodes[0]:
    # a host needs exactly one link, has 2'); a second switch-to-switch link built, and spread flows
    # over both links where the HPCC model routes over the last one only
    nodes = 3 if switches == "0" else 5
    path = tmp_path / "topo.txt"
    path.write_text(f"{nodes} {len(switches.split())} {len(links)}\n{switches}\n"
                    + "".join(f"{link} 100Gbps 1us 0\n" for link in links))
    with pytest.raises(ConfigError) as err:
        topology.from_hpcc_file(path)
    assert err.value.field == f"topology.path ({path})" and message in err.value.message


_LINKS = "1 0 100Gbps 1us 0\n2 0 100Gbps 1us 0\n"


@pytest.mark.parametrize("text,message", [
    ("3 1 2 99 junk\n0\n" + _LINKS, "line 1: expected 'nodes switches links', 3 whole numbers, got '3 1 2 99 junk'"),
    ("3 1 2\n0\n1 0 100Gbps 1us 0 extra\n2 0 100Gbps 1us 0\n", "line 3: expected 'src dst rate delay error' (the "
                                                               "error rate may be left out), got 6 columns"),
    ("3 1 2\n0\n" + _LINKS + "1 2 100Gbps 1us 0\n", "line 1: header says 2 links, file has 3 link lines"),
    ("3 1 -1\n0\n" + _LINKS, "line 1: links got -1, allowed range is [0, inf)"),
    ("3 1 1\n0\n" + _LINKS, "line 1: header says 1 links, file has 2 link lines"),
    ("3 1 2\n0\n+1 0 100Gbps 1us 0\n2 0 100Gbps 1us 0\n", "line 3: expected 'src dst rate delay error' (the error "
                                                          "rate may be left out) with whole-number node ids, got '+1"),
    ("3 1 2\n0\n1 0 100Gbps 1us 0\n1_0 0 100Gbps 1us 0\n", "line 4: expected 'src dst rate delay error' (the error "
                                                           "rate may be left out) with whole-number node ids"),
    ("+3 1 2\n0\n" + _LINKS, "line 1: expected 'nodes switches links', 3 whole numbers, got '+3 1 2'"),
    ("3 1 2\n0 1\n" + _LINKS, "line 2: expected the 1 switch ids the header announces (whole numbers), got '0 1'"),
    ("3 1 2\n\n0\n\n" + _LINKS.replace("2 0 100", "2 7 100"), "line 6: node 7 is not a node id in [0, 3)"),
    ("3 4 2\n0\n" + _LINKS, "line 1: switches got 4, allowed range is [0, 3]"),
    ("3 1 2\n0\n1 0 100Gbps 1us 0\n2 0 fast 1us 0\n", "line 4: rate: cannot parse 'fast' as a rate"),
    ("3 1 2\n0\n1 0 100Gbps 1us 0\n2 0 100Gbps 2s 0\n", "line 4: delay: got '2s' = 2000000000 ns, allowed range"),
    ("\n", "empty file"),
], ids=["header_extra_tokens", "link_sixth_column", "links_beyond_count", "negative_link_count", "short_count",
        "plus_sign", "underscore_digits", "plus_in_header", "switch_line_extra_id", "blank_lines_counted",
        "switches_beyond_nodes", "bad_rate", "delay_beyond_1s", "empty"])
def test_hpcc_topology_file_is_read_strictly(tmp_path, text, message):
    # extra header tokens and a 6th link column were ignored, link lines beyond the header's count
    # too, a negative count dropped lines (lines[2:2 + n]), int() read '+1' and '1_0' (node 10),
    # which the flow-file reader refuses, and line numbers skipped blank lines
    path = tmp_path / "topo.txt"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        topology.from_hpcc_file(path)
    assert err.value.field == f"topology.path ({path})" and message in err.value.message


def test_hpcc_topology_file_without_switches_or_error_rates(tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text("2 0 1\n0 1 100Gbps 1us 0\n")  # no switch line for no switches
    assert (topology.from_hpcc_file(path).num_hosts, topology.from_hpcc_file(path).switch_layers) == (2, [])
    path.write_text("3 1 2\n0\n1 0 100Gbps 1us\n2 0 100Gbps 1us\n")
    assert topology.from_hpcc_file(path).num_hosts == 2
