"""Fabric.replace_pending_flows: the flows not yet started are dropped and new ones take their place."""

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import ecngym.envs  # noqa: F401
from ecngym.error import ConfigError
from ecngym.sim_backend import Fabric

STEPS = 40
SPLIT = 15  # steps before the replacement
RECORD_COLUMNS = ["src", "dst", "size_bytes", "start_ns", "finish_ns", "ideal_fct_ns", "base_rtt_ns",
                  "delivered_bytes", "retransmitted_bytes", "finished"]


@pytest.fixture
def make_env():
    """A fresh RoceIncast-v0 episode (seed 7); every env made is closed after the test."""
    made = []

    def make():
        env = gym.make("ecngym/RoceIncast-v0", episode_steps=STEPS).unwrapped
        made.append(env)
        env.reset(seed=7)
        return env

    yield make
    for env in made:
        env.close()


def _play(env, steps, action=0):
    for _ in range(steps):
        env.step(action)


def test_replacing_the_pending_flows_by_themselves_changes_nothing(make_env):
    """Each new flow gets the set-up a flow loaded at build time gets: same ids, hash, ports, path facts, window."""
    env = make_env()
    _play(env, STEPS)
    unreplaced = env.scenario.fabric.flow_records()
    env.close()  # (one fabric per process)

    env = make_env()
    _play(env, SPLIT)
    fab = env.scenario.fabric
    now = fab.now_ns
    pending = fab.flows[fab.flows["start_ns"] >= now]
    assert 0 < len(pending) < len(fab.flows)
    assert fab.replace_pending_flows(pending.reset_index(drop=True)) == len(pending)
    _play(env, STEPS - SPLIT)
    replaced = fab.flow_records()
    pd.testing.assert_frame_equal(replaced, unreplaced)


def test_on_a_leaf_spine_the_replaced_flows_take_the_same_paths():
    """ECMP hashes the flow's id and ports: a flow re-added under its own id is routed and run as before."""
    from ecngym.workloads import generate_trace

    topo = {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4}
    trace = generate_trace("websearch", load=0.5, hosts=8, duration="400us", seed=3)
    records = []
    for replace in (False, True):
        with Fabric(topo, trace, "hpcc", seed=5) as fab:
            fab.advance("150us")
            if replace:
                pending = fab.flows[fab.flows["start_ns"] >= fab.now_ns].reset_index(drop=True)
                assert len(pending) > 0
                fab.replace_pending_flows(pending)
            fab.run("5ms")
            records.append(fab.flow_records())
    pd.testing.assert_frame_equal(records[1], records[0])


def test_records_show_the_new_flows_and_none_of_the_dropped_ones(make_env):
    env = make_env()
    _play(env, SPLIT)
    fab = env.scenario.fabric
    now = fab.now_ns
    before = fab.flows.copy()
    started = int((before["start_ns"] < now).sum())
    new = pd.DataFrame({"src": [1, 2, 3], "dst": [0, 0, 5], "size_bytes": [5_000, 70_000, 12_345],
                        "start_ns": [now, now + 1_000, now + 50_000], "extra_delay_ns": [0, 0, 2_000]})
    dropped = fab.replace_pending_flows(new)
    assert dropped == len(before) - started
    assert len(fab.flows) == started + len(new)
    _play(env, STEPS - SPLIT)
    r = fab.flow_records()
    assert list(r["flow_id"]) == list(range(started + len(new)))
    # the started flows are the table's first rows, unchanged; the new ones follow in the given order
    cols = ["src", "dst", "size_bytes", "start_ns"]
    assert r[cols].iloc[:started].equals(before[cols].iloc[:started].reset_index(drop=True).astype(r[cols].dtypes))
    tail = r.iloc[started:].reset_index(drop=True)
    assert tail[cols].to_numpy().tolist() == new[cols].to_numpy().tolist()
    assert tail["finished"].all()
    # the extra delay joins the base RTT as at build time (every host pair of a star has one path)
    assert tail["base_rtt_ns"][2] - tail["base_rtt_ns"][0] == 2_000
    dropped_rows = {tuple(x) for x in before[cols].iloc[started:].to_numpy().tolist()}
    assert not dropped_rows & {tuple(x) for x in r[cols].to_numpy().tolist()}


def test_an_empty_replacement_drops_every_pending_flow(make_env):
    env = make_env()
    _play(env, SPLIT)
    fab = env.scenario.fabric
    started = int((fab.flows["start_ns"] < fab.now_ns).sum())
    fab.replace_pending_flows(pd.DataFrame({"src": [], "dst": [], "size_bytes": [], "start_ns": []}))
    _play(env, STEPS - SPLIT)
    assert len(fab.flow_records()) == started


@pytest.mark.parametrize(("column", "value", "message"), [
    ("size_bytes", 0, r"flows\.size_bytes: row 1: 0 must be > 0"),
    ("src", 99, r"flows\.src: row 1: 99 must be < 16 \(hosts\)"),
    ("dst", -1, r"flows\.dst: row 1: -1 must be >= 0"),
    ("start_ns", -5, r"flows\.start_ns: row 1: .* is before now \(312000 ns\)"),
    ("priority", 0, r"flows\.priority: row 1: 0 must be in \[1, 7\]"),
])
def test_bad_new_flows_are_refused_naming_the_field_and_nothing_changes(make_env, column, value, message):
    env = make_env()
    _play(env, SPLIT)
    fab = env.scenario.fabric
    now = fab.now_ns
    n = len(fab.flows)
    new = pd.DataFrame({"src": [1, 2], "dst": [0, 0], "size_bytes": [5_000, 7_000], "start_ns": [now, now + 10],
                        "priority": [3, 3]})
    new.loc[1, column] = value + (now if column == "start_ns" else 0)
    with pytest.raises(ConfigError, match=message):
        fab.replace_pending_flows(new)
    assert len(fab.flows) == n and len(fab.flow_records()) == n


def test_a_table_out_of_start_order_is_refused():
    flows = pd.DataFrame({"src": [1, 2], "dst": [0, 0], "size_bytes": [5_000, 5_000],
                          "start_ns": [100_000, 0]})
    with Fabric({"kind": "incast_star", "hosts": 4, "link_rate": "100Gbps", "link_delay": "1us"}, flows) as fab:
        fab.advance("50us")  # flow 1 has started, flow 0 (an earlier row) has not
        with pytest.raises(RuntimeError, match="start order"):
            fab.replace_pending_flows(flows.iloc[:0])
        assert np.array_equal(fab.flow_records()["size_bytes"], [5_000, 5_000])
