"""Traces: target load, exact incast, reproducible hashes, HPCC round trip, clear errors."""

import pandas as pd
import pytest

from ecngym import cli
from ecngym.error import ConfigError
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.workloads import Trace, generate_trace


def test_achieved_load_within_3_percent_of_target():
    trace = generate_trace("websearch", load=0.6, hosts=16, duration="1s", seed=4)
    assert len(trace) > 50_000
    assert trace.achieved_load(100e9) == pytest.approx(0.6, rel=0.03)


def test_load_phases_change_the_rate():
    trace = generate_trace("pred_workload2", load=0.3, hosts=8, duration="200ms", seed=2,
                           phases=[{"at": "100ms", "load": 0.7}])
    f = trace.flows
    first = f.loc[f["start_ns"] < 100_000_000, "size_bytes"].sum()
    second = f.loc[f["start_ns"] >= 100_000_000, "size_bytes"].sum()
    assert second / first == pytest.approx(0.7 / 0.3, rel=0.1)


def test_incast_flows_have_exactly_the_requested_degree_and_size():
    trace = generate_trace("websearch", load=0.3, hosts=32, duration="20ms", seed=9,
                           incast={"degree": 12, "size": "48KB", "interval": "2ms", "arrival": "periodic"})
    inc = trace.flows[trace.flows["tag"] == "incast"]
    bursts = inc.groupby("start_ns")
    assert len(bursts) == 10
    for _, burst in bursts:
        assert len(burst) == 12
        assert burst["dst"].nunique() == 1
        assert burst["src"].nunique() == 12
        assert (burst["src"] != burst["dst"]).all()
        assert (burst["size_bytes"] == 48_000).all()


def test_adding_incast_keeps_the_background():
    base = generate_trace("websearch", load=0.5, hosts=16, duration="5ms", seed=3)
    mixed = generate_trace("websearch", load=0.5, hosts=16, duration="5ms", seed=3,
                           incast={"degree": 4, "size": "10KB", "interval": "1ms"})
    cols = ["src", "dst", "size_bytes", "start_ns"]
    bg = mixed.flows[mixed.flows["tag"] == "background"][cols].reset_index(drop=True)
    pd.testing.assert_frame_equal(bg, base.flows[cols].reset_index(drop=True))


def test_permutation_all_to_all_and_long_lived():
    t = generate_trace("websearch", load=0.0, hosts=6, duration="1ms", seed=1,
                       permutation={"size": "1MB"}, all_to_all={"size": "10KB"},
                       long_lived={"flows": 3, "size": "1GB", "receiver": 0})
    perm = t.flows[t.flows["tag"] == "permutation"]
    assert sorted(perm["src"]) == list(range(6)) and sorted(perm["dst"]) == list(range(6))
    assert len(t.flows[t.flows["tag"] == "all_to_all"]) == 30
    ll = t.flows[t.flows["tag"] == "long_lived"]
    assert len(ll) == 3 and (ll["dst"] == 0).all() and ll["src"].nunique() == 3


def test_same_seed_same_hash_and_table_different_seed_or_param_different_hash():
    kw = dict(load=0.5, hosts=16, duration="5ms")
    a, b = generate_trace(seed=1, **kw), generate_trace(seed=1, **kw)
    assert a.hash == b.hash
    pd.testing.assert_frame_equal(a.flows, b.flows)
    assert generate_trace(seed=2, **kw).hash != a.hash
    assert generate_trace(seed=1, **{**kw, "load": 0.51}).hash != a.hash
    assert generate_trace("datamining", seed=1, **kw).hash != a.hash


def test_parquet_round_trip_and_tamper_detection(tmp_path):
    t = generate_trace(load=0.4, hosts=8, duration="3ms", seed=5)
    path = t.save(tmp_path / "t.parquet")
    back = Trace.load(path)
    assert back.hash == t.hash and back.seed == 5 and back.params["load"] == 0.4
    pd.testing.assert_frame_equal(back.flows, t.flows)
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    sizes = table.column("size_bytes").to_numpy().copy()
    sizes[0] += 1
    pq.write_table(table.set_column(table.schema.get_field_index("size_bytes"), "size_bytes",
                                    [sizes]).replace_schema_metadata(table.schema.metadata), path)
    with pytest.raises(ConfigError, match="altered"):
        Trace.load(path)


def test_hpcc_format_round_trips(tmp_path):
    ref = Trace.from_hpcc_flow_file(hpcc_reference_path("flow_ws50_16h_100g_10ms.txt"))
    assert len(ref) == 605
    assert ref.flows["size_bytes"].sum() == pytest.approx(876.5e6, rel=0.001)
    again = Trace.from_hpcc_flow_file(ref.to_hpcc_flow_file(tmp_path / "flows.txt"))
    assert again.hash == ref.hash
    gen = generate_trace(load=0.3, hosts=8, duration="2ms", seed=3)
    back = Trace.from_hpcc_flow_file(gen.to_hpcc_flow_file(tmp_path / "gen.txt"))
    cols = ["src", "dst", "size_bytes", "start_ns", "priority"]
    pd.testing.assert_frame_equal(back.flows[cols], gen.flows[cols])


@pytest.mark.parametrize(
    "kwargs,field",
    [({"load": 1.0}, "trace.load"), ({"load": -0.1}, "trace.load"), ({"hosts": 0}, "trace.hosts"),
     ({"duration": "-1ms"}, "trace.duration"), ({"duration": 0}, "trace.duration"),
     ({"workload": "websaerch"}, "workload.name"), ({"link_rate": "fast"}, "trace.link_rate"),
     ({"incast": {"degree": 16, "interval": "1ms"}, "hosts": 8}, "trace.incast.degree"),
     ({"phases": [{"at": "20ms", "load": 0.5}]}, r"trace.phases\[0\].at")],
)
def test_bad_parameters_name_the_field(kwargs, field):
    kwargs = {"duration": "10ms", **kwargs}
    with pytest.raises(ConfigError, match=field):
        generate_trace(**kwargs)


def test_user_table_validation():
    good = pd.DataFrame({"src": [0, 1], "dst": [1, 0], "size_bytes": [10, 20], "start_ns": [5, 0]})
    t = Trace.from_flows(good)
    assert list(t.flows["start_ns"]) == [0, 5] and list(t.flows["flow_id"]) == [0, 1]
    with pytest.raises(ConfigError, match="flows.dst"):
        Trace.from_flows(good.assign(dst=[0, 0]))
    with pytest.raises(ConfigError, match="flows.size_bytes"):
        Trace.from_flows(good.assign(size_bytes=[10, 0]))


def test_cli_generate_and_inspect(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    assert cli.main(["trace", "generate", "workload=fb_hadoop", "load=0.3", "hosts=8", "duration=2ms",
                     f"output={out}", "incast.degree=3", f"hydra.run.dir={tmp_path}/hydra"]) == 0
    trace = Trace.load(out)
    assert trace.params["workload"] == "fb_hadoop" and (trace.flows["tag"] == "incast").any()
    assert cli.main(["trace", "inspect", str(out)]) == 0
    printed = capsys.readouterr().out
    assert trace.hash[:20] in printed and "achieved load" in printed
    assert cli.main(["trace", "inspect", str(tmp_path / "missing.parquet")]) == 2
