"""The Python / C++ boundary: no public input crashes the process or silently changes meaning.

Regression tests for issue 7's crash and silent-change cases. Anything that crashed the process
before runs in a subprocess, so a regression fails the test instead of killing the test run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend import Fabric, FabricConfig, Topology, topology

FLOWS = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [10_000], "start_ns": [0]})
STAR = {"kind": "incast_star", "hosts": 2}


def run_isolated(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; return the finished process (never raises)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("rate", ["0.5bps", 0.5, "2e19bps", 2.0**64, "0bps"])
def test_link_rate_outside_range_is_a_named_error(rate):
    # was: SIGFPE with the hpcc preset (rate cast to an unsigned integer, then divided by)
    with pytest.raises(ConfigError, match=r"topology\.link_rate.*allowed range"):
        Fabric({**STAR, "link_rate": rate}, FLOWS, "hpcc")


@pytest.mark.parametrize("rate", [0.5, 2.0**64, float("nan")])
def test_bindings_refuse_unrepresentable_rates_without_crashing(rate):
    proc = run_isolated(f"""
        import numpy as np
        from ecngym.sim_backend import FabricConfig, _fabric
        sim = _fabric.Fabric(FabricConfig.preset("hpcc").to_cpp())
        try:
            sim.build(np.array([0, 0, 1], np.uint8), np.array([0, 1], np.uint32), np.array([2, 2], np.uint32),
                      np.array([{rate!r}, 1e9]), np.array([1000, 1000], np.int64))
        except ValueError as exc:
            print("refused:", exc)
        sim.destroy()
    """.replace("nan", "float('nan')"))
    assert proc.returncode == 0, proc.stderr
    assert "refused: links[0]: rate must be in [1, 1e15] bit/s" in proc.stdout


def test_every_binding_method_after_destroy_is_a_clear_error():
    # was: counters() and flow_records() segfaulted on a destroyed handle
    proc = run_isolated("""
        import numpy as np
        import pandas as pd
        from ecngym.sim_backend import Fabric
        fab = Fabric({"kind": "incast_star", "hosts": 2},
                     pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [1000], "start_ns": [0]}), "hpcc")
        sim = fab.sim
        fab.close()
        calls = {"counters": lambda: sim.counters(), "flow_records": lambda: sim.flow_records(),
                 "read_telemetry": lambda: sim.read_telemetry(), "port_info": lambda: sim.port_info(),
                 "get_aqm_values": lambda: sim.get_aqm_values(np.zeros(1, np.uint32), "ns3::ecngym::RedAqmPolicy",
                                                              ["Pmax"]),
                 "now_ns": lambda: sim.now_ns,
                 "num_hosts": lambda: sim.num_hosts, "num_switches": lambda: sim.num_switches,
                 "run_until": lambda: sim.run_until(10), "run_to_completion": lambda: sim.run_to_completion(10),
                 "set_pfc": lambda: sim.set_pfc(np.zeros(1, np.uint32), np.ones(1), np.zeros(1, np.uint64))}
        for name, call in calls.items():
            try:
                call()
                print(name, "NO ERROR")
            except RuntimeError as exc:
                print(name, "refused:", exc)
        sim.destroy()  # idempotent
        print("alive:", sim.alive)
    """)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 12 and lines[-1] == "alive: False"
    assert all("refused: this Fabric has been destroyed" in ln for ln in lines[:-1]), proc.stdout


def test_python_fabric_after_close_raises():
    fab = Fabric(STAR, FLOWS, "hpcc")
    fab.close()
    for call in (fab.counters, fab.flow_records, fab.read_telemetry):
        with pytest.raises(RuntimeError, match="closed"):
            call()


@pytest.fixture()
def fab():
    f = Fabric(STAR, FLOWS, "hpcc")
    yield f
    f.close()


def _switch_port(f: Fabric) -> int:
    return int(f.ports.switch_ports()[0])


@pytest.mark.parametrize("ports", [[1.9], [1.0], ["1"], "1", [True], np.array([1.5]), [2**70], [[1]]])
def test_set_red_port_ids_must_be_integers(fab, ports):
    # was: [1.9] set port 1; strings were parsed
    with pytest.raises(ConfigError, match="ports"):
        fab.set_red(ports, 1000, 2000, 0.1)


@pytest.mark.parametrize("kmin", [1e30, 2**70, float("inf"), "1e30B", np.array([1e30])])
def test_set_red_huge_thresholds_refused_not_wrapped(fab, kmin):
    # was: kmin=1e30 stored 0 (mark everything instead of never)
    before = fab.get_red()["kmin_bytes"].copy()
    with pytest.raises(ConfigError, match="kmin"):
        fab.set_red([_switch_port(fab)], kmin, 2**53, 0.1)
    assert np.array_equal(fab.get_red()["kmin_bytes"], before)


@pytest.mark.parametrize("pmax", ["0.5", True, [0.1, 0.2], None, float("nan")])
def test_set_red_pmax_must_be_one_number_per_port(fab, pmax):
    with pytest.raises(ConfigError, match="pmax"):
        fab.set_red([_switch_port(fab)], 1000, 2000, pmax)


def _typed(port, kmin, kmax, pmax):
    """set_red's arguments as the typed arrays its fast path takes (as the envs pass them)."""
    return (np.array([port], dtype=np.uint32), np.array([kmin], dtype=np.uint64),
            np.array([kmax], dtype=np.uint64), np.array([pmax], dtype=np.float64))


@pytest.mark.parametrize("bad,field", [
    ({"port": 0}, "ports"),  # a host port
    ({"port": 10**6}, "ports"),  # no such port
    ({"kmin": 3000, "kmax": 2000}, "kmax"),
    ({"pmax": float("nan")}, "pmax"),
    ({"pmax": 1.5}, "pmax"),
    ({"kmin": 2**60, "kmax": 2**60}, "kmin"),  # beyond 2^53 B
])
def test_set_red_typed_arrays_are_checked_as_any_input(fab, bad, field):
    # the typed fast path goes straight to C++; a refusal still names the field and changes nothing
    args = {"port": _switch_port(fab), "kmin": 1000, "kmax": 2000, "pmax": 0.1, **bad}
    before = {k: v.copy() for k, v in fab.get_red().items()}
    with pytest.raises(ConfigError, match=field):
        fab.set_red(*_typed(**args))
    after = fab.get_red()
    assert all(np.array_equal(after[k], before[k]) for k in before)


def test_set_red_typed_arrays_set_what_lists_set(fab):
    port = _switch_port(fab)
    curve = ("kmin_bytes", "kmax_bytes", "pmax")
    fab.set_aqm_values(np.array([port], dtype=np.uint32), "red", curve, np.array([[1234, 5678, 0.25]]))  # the fast path
    typed = {k: v.copy() for k, v in fab.get_red().items()}
    fab.set_red([port], 1, 2, 0.5)
    fab.set_red([port], [1234], [5678], [0.25])
    assert all(np.array_equal(fab.get_red()[k], typed[k]) for k in typed)
    assert typed["kmin_bytes"][port] == 1234 and typed["kmax_bytes"][port] == 5678 and typed["pmax"][port] == 0.25
    assert fab.get_aqm_values([port], "red", curve).tolist() == [[1234, 5678, 0.25]]


def test_set_red_largest_threshold_is_stored_exactly(fab):
    port = _switch_port(fab)
    fab.set_red([port], 2**53, 2**53, 0.5)
    red = fab.get_red()
    assert red["kmin_bytes"][port] == 2**53 and red["kmax_bytes"][port] == 2**53


@pytest.mark.parametrize("switches,alpha,headroom,field", [
    ([0.0], 1.0, 0, "switches"), (["0"], 1.0, 0, "switches"), ([2**70], 1.0, 0, "switches"),
    ([0], "1", 0, "alpha"), ([0], True, 0, "alpha"), ([0], [1.0, 2.0], 0, "alpha"),
    ([0], 1.0, "lots", "headroom"), ([0], 1.0, 2**64, "headroom"), ([0], 1.0, None, "headroom")])
def test_set_pfc_arguments_are_checked(fab, switches, alpha, headroom, field):
    with pytest.raises(ConfigError, match=field):
        fab.set_pfc(switches, alpha, headroom)


def test_set_pfc_refuses_a_headroom_larger_than_the_buffer(fab):
    # was accepted (1 GB on a 32 MiB buffer) and the simulation ran on; fabric.buffer.headroom is refused
    before = fab.get_port_pfc()
    with pytest.raises(ConfigError, match=r"^headroom: got 1000000000 B, more than the whole buffer "
                                          r"\(fabric\.buffer\.buffer = 33554432 B\)$"):
        fab.set_pfc(0, 1.0, "1GB")
    with pytest.raises(ConfigError, match=r"^headroom: got 33554433 B, more than the whole buffer"):
        fab.set_pfc([0], 1.0, [2**25 + 1])
    assert all(np.array_equal(fab.get_port_pfc()[k], v) for k, v in before.items())  # nothing changed
    fab.set_pfc(0, 1.0, 2**25)  # the whole buffer is allowed, as for fabric.buffer.headroom


@pytest.mark.parametrize("delay,headroom", [("1us", 37_500), ("200ms", None), ("1ms", None)])
def test_rate_delay_headroom_is_exact_and_never_more_than_the_buffer(delay, headroom):
    # 100 Gbps x 200 ms x 3 / 8 = 7.5 GB overflowed uint64's rate x delay product: it read 582470970 B;
    # 1 ms gave 37.5 MB on a 32 MiB buffer and was taken
    config = FabricConfig.preset("hpcc", buffer={"headroom_rule": "rate_delay"})
    star = topology.incast_star(hosts=2, link_rate="100Gbps", link_delay=delay)
    if headroom is None:
        with pytest.raises(ConfigError, match=r"^fabric\.buffer\.headroom_rule: 'rate_delay' gives switch port \d+ "
                                              r"\(1e\+11 bps x \d+ ns x 3\) \d+ B of headroom \(and 1 more\), more "
                                              r"than the whole buffer \(fabric\.buffer\.buffer = 33554432 B\)"):
            Fabric(star, FLOWS.iloc[:0], config)
        return
    f = Fabric(star, FLOWS.iloc[:0], config)
    try:
        pfc = f.get_port_pfc()["headroom_bytes"]
        assert set(pfc[f.ports.is_switch]) == {headroom}
    finally:
        f.close()


@pytest.mark.parametrize("call,field", [
    (lambda f, ids: f.set_red(ids, 1000, 2000, 0.1), "ports"), (lambda f, ids: f.set_aqm(ids, "red"), "ports"),
    (lambda f, ids: f.get_aqm(ids), "ports"), (lambda f, ids: f.set_pfc(ids, 1.0, 0), "switches"),
], ids=["set_red", "set_aqm", "get_aqm", "set_pfc"])
def test_an_id_beyond_int64_is_reported_as_given_not_wrapped(fab, call, field):
    # was: "got -9223372036854775803" (the uint64 cast to int64 before the range check)
    with pytest.raises(ConfigError) as err:
        call(fab, np.array([2**63 + 5], dtype=np.uint64))
    assert err.value.field == field and err.value.message.startswith(f"got {2**63 + 5}, ids must be in [0, ")


def test_a_0d_array_size_broadcasts_as_its_scalar_does(fab):
    # was: "kmin: expected 2 values (one per target), got shape ()" while a 0-d pmax / alpha broadcast
    ports = fab.ports.switch_ports()[:2]
    fab.set_red(ports, np.array(3000), np.array(6000.0), np.array(0.25))
    red = fab.get_red()
    assert list(red["kmin_bytes"][ports]) == [3000, 3000] and list(red["kmax_bytes"][ports]) == [6000, 6000]
    assert list(red["pmax"][ports]) == [0.25, 0.25]
    _, _, head = fab.set_pfc([0], np.array(0.5), np.array("10KB"))
    assert list(head) == [10_000]
    with pytest.raises(ConfigError, match=r"^headroom: expected a non-negative whole number of bytes, got 2\.5"):
        fab.set_pfc([0], 0.5, np.array(2.5))  # and checked as that scalar is


@pytest.mark.parametrize("call,field", [
    (lambda f, p: f.set_red([p, p + 1, p], [1000, 2000, 3000], 9000, 0.1), "ports"),
    (lambda f, p: f.set_red(*(np.concatenate([a, a]) for a in _typed(p, 1000, 9000, 0.1))), "ports"),  # typed
    (lambda f, p: f.set_aqm([p, p], "red", kmin_bytes=1000), "ports"),
    (lambda f, p: f.set_pfc([0, 0], [0.5, 0.25], "10KB"), "switches"),
], ids=["set_red", "set_red_typed", "set_aqm", "set_pfc"])
def test_an_id_given_twice_in_one_call_is_refused_naming_it(fab, call, field):
    # was: accepted, the last setting of the repeated id won
    port = _switch_port(fab)
    before = {**fab.get_red(), **{f"pfc_{k}": v for k, v in fab.get_port_pfc().items()}}
    with pytest.raises(ConfigError) as err:
        call(fab, port)
    repeated = 0 if field == "switches" else port
    assert err.value.field == field and err.value.message.startswith(f"id {repeated} is given more than once")
    after = {**fab.get_red(), **{f"pfc_{k}": v for k, v in fab.get_port_pfc().items()}}
    assert all(np.array_equal(after[k], before[k]) for k in before)  # nothing changed


def test_repeated_ids_name_the_first_and_count_the_rest(fab):
    port = _switch_port(fab)
    with pytest.raises(ConfigError, match=rf"^ports: id {port} \(and 1 more\) is given more than once"):
        fab.set_red([port, port + 1, port, port + 1], 1000, 9000, 0.1)


def test_reset_with_bad_seed_keeps_the_fabric_open(fab):
    # was: reset(seed=-1) closed the fabric, then rejected the seed
    fab.run_until("10us")
    with pytest.raises(ConfigError, match="fabric.seed"):
        fab.reset(seed=-1)
    assert fab.now_ns == 10_000  # still open, untouched
    fab.reset(seed=2)
    assert fab.now_ns == 0


@pytest.mark.parametrize("delay", ["2s", 2_000_000_000, "1e400s"])
def test_huge_link_delays_refused(delay):
    # was: a sum of huge link delays overflowed into a negative base RTT
    with pytest.raises(ConfigError, match="topology.fabric_delay"):
        Fabric({"kind": "leaf_spine", "leaves": 2, "spines": 1, "hosts_per_leaf": 1, "fabric_delay": delay},
               FLOWS, "hpcc")


@pytest.mark.parametrize("when", [2**63, 2**62 + 1, "1e30s"])
def test_times_beyond_the_clock_refused(fab, when):
    with pytest.raises(ConfigError, match="until"):
        fab.run_until(when)


def test_advance_beyond_the_clock_refused(fab):
    # was: now + dt past int64 reached the C++ binding: a nanobind TypeError ("incompatible function arguments")
    fab.advance(2**62)
    for dt in (2**62, 1):
        with pytest.raises(ConfigError, match=r"^dt: got .*allowed: at most 0 ns"):
            fab.advance(dt)
    assert fab.now_ns == 2**62


def test_log_pfc_events_takes_a_boolean_only(fab):
    # was: bool(on), so log_pfc_events("no") switched logging on and None switched it off
    for bad in ("no", None, 1):
        with pytest.raises(ConfigError, match=rf"^on: expected true or false, got {bad!r}"):
            fab.log_pfc_events(bad)
    fab.log_pfc_events(np.bool_(False))


def test_num_queues_too_few_for_the_flows_names_num_queues():
    with pytest.raises(ConfigError, match=r"fabric\.num_queues.*priority 3"):
        Fabric(STAR, FLOWS, {"preset": "hpcc", "num_queues": 2})


def test_switch_beyond_65535_ports_refused_before_building():
    with pytest.raises(ConfigError, match=r"topology.*70000 ports"):
        Fabric({"kind": "incast_star", "hosts": 70_000}, FLOWS, "hpcc")


def test_topology_that_cannot_fit_in_memory_refused_with_estimate(monkeypatch):
    # was: fat_tree(k=64) passed validation, then failed allocating ~18 GB (never build it here)
    top = Topology.from_config({"kind": "fat_tree", "k": 64})
    with pytest.raises(ConfigError, match=r"topology: fat_tree\(k=64\) needs at least ~38\.\d GB.*8\.0 GB"):
        top.check_buildable(available_bytes=8 * 10**9)
    from ecngym.sim_backend import topology_checks

    monkeypatch.setattr(topology_checks, "available_memory", lambda: 8 * 10**9)
    with pytest.raises(ConfigError, match="needs at least"):
        Fabric({"kind": "fat_tree", "k": 64}, FLOWS, "hpcc")
    Topology.from_config({"kind": "fat_tree", "k": 4}).check_buildable(available_bytes=8 * 10**9)


def test_a_leaf_spine_too_large_for_memory_is_refused_before_its_links_are_listed(monkeypatch):
    # each count in range, 10^4 leaves x 10^5 hosts each: the builder listed a billion links in
    # Python before the estimate ran, and the process was killed for memory
    from ecngym.sim_backend import topology_checks

    monkeypatch.setattr(topology_checks, "available_memory", lambda: 8 * 10**9)
    with pytest.raises(ConfigError, match=r"^topology: leaf_spine\(10000x4x100000\) needs at least ~4\d+\.\d GB"):
        Topology.from_config({"kind": "leaf_spine", "leaves": 10_000, "hosts_per_leaf": 100_000})


@pytest.mark.parametrize("cfg,field", [({"kind": "hpcc_file"}, "topology"),
                                       ({"kind": "hpcc_file", "path": "/"}, "topology.path")])
def test_hpcc_file_topology_without_a_readable_path(cfg, field):
    with pytest.raises(ConfigError, match=field):
        Topology.from_config(cfg)


@pytest.mark.parametrize("cfg,message", [
    (None, r"topology: expected a mapping"), (5, r"topology: expected a mapping"),
    ({"kind": ["leaf_spine"]}, r"topology\.kind: got \['leaf_spine'\], allowed"),
    ({"kind": "leaf_spine", "leaves": 2.5}, r"topology\.leaves: expected a whole number, got 2\.5"),
    ({"kind": "leaf_spine", "leaves": "2"}, r"topology\.leaves: expected a whole number"),
    ({"kind": "leaf_spine", "leaves": True}, r"topology\.leaves: expected a whole number"),
    ({"kind": "fat_tree", "k": 5}, r"topology\.k: got 5, must be even"),
    ({"kind": "fat_tree", "k": 66}, r"topology\.k: got 66, allowed range is \[2, 64\]"),
    ({"kind": "incast_star", "link_delay": "2s"}, r"topology\.link_delay: got '2s' = 2000000000 ns, allowed range"),
    ({"kind": "incast_star", "leaves": 2}, r"topology: bad arguments for 'incast_star'"),
    ({"kind": "hpcc_file", "path": 5}, r"topology\.path: expected a string"),
    ({"kind": "hpcc_file", "path": "t.txt", "host_layer": "host"}, r"topology\.host_layer: got 'host', a reserved "
                                                                     r"name"),
    ({"kind": "hpcc_file", "path": "t.txt", "host_layer": ""}, r"topology\.host_layer: got '', expected a layer "
                                                                 r"name"),
])
def test_topology_configs_are_typed(cfg, message):
    with pytest.raises(ConfigError, match=message):
        Topology.from_config(cfg)


def test_hpcc_topology_file_with_bad_switch_ids(tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text("3 1 2\n7\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n")
    with pytest.raises(ConfigError, match=r"topology\.path .*distinct switch ids in \[0, 3\)"):
        Topology.from_config({"kind": "hpcc_file", "path": str(path)})
    path.write_text("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n")
    assert Topology.from_config({"kind": "hpcc_file", "path": path}).num_hosts == 2
