"""The Trace: canonical table and hash, Parquet storage with tamper detection, HPCC format, user tables."""

import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ecngym.error import ConfigError
from ecngym.sim_backend.data import hpcc_reference_path
from ecngym.workloads import Trace, generate_trace

SHARED_FLOWS = Path("/work/shared/reference/hpcc-model/inputs/flow_ws50_16h_100g_10ms.txt")


def _reference_flow_file() -> Path:
    return SHARED_FLOWS if SHARED_FLOWS.exists() else hpcc_reference_path("flow_ws50_16h_100g_10ms.txt")


def test_hash_follows_the_documented_serialisation():
    t = Trace.from_flows(pd.DataFrame({"src": [2, 0], "dst": [1, 3], "size_bytes": [500, 70_000],
                                       "start_ns": [10, 5], "tag": ["incast", "background"]}))
    # written out by hand from content_hash's docstring: header, then little-endian values / NUL-joined tags
    h = hashlib.sha256()
    for header, payload in [
        ("flow_id:int64", (0).to_bytes(8, "little") + (1).to_bytes(8, "little")),
        ("src:int32", (0).to_bytes(4, "little") + (2).to_bytes(4, "little")),
        ("dst:int32", (3).to_bytes(4, "little") + (1).to_bytes(4, "little")),
        ("size_bytes:int64", (70_000).to_bytes(8, "little") + (500).to_bytes(8, "little")),
        ("start_ns:int64", (5).to_bytes(8, "little") + (10).to_bytes(8, "little")),
        ("priority:int8", bytes([3, 3])),
        ("tag:str", b"background\0incast"),
    ]:
        h.update(header.encode() + b"\n" + payload)
    assert t.hash == h.hexdigest()


def test_canonical_order_does_not_depend_on_input_order():
    t = generate_trace(load=0.5, hosts=8, duration="2ms", seed=2,
                       incast={"degree": 5, "size": "8KB", "interval": "500us", "arrival": "periodic"})
    shuffled = Trace.from_flows(t.flows.sample(frac=1, random_state=3).drop(columns="flow_id"))
    assert shuffled.hash == t.hash
    assert list(t.flows["flow_id"]) == list(range(len(t))) and t.flows["start_ns"].is_monotonic_increasing
    assert dict(t.flows.dtypes.astype(str)) | {"tag": "str"} == {
        "flow_id": "int64", "src": "int32", "dst": "int32", "size_bytes": "int64", "start_ns": "int64",
        "priority": "int8", "tag": "str"}


def test_parquet_round_trip(tmp_path):
    t = generate_trace(load=0.4, hosts=8, duration="3ms", seed=5, incast={"degree": 2, "interval": "1ms"})
    path = t.save(tmp_path / "sub" / "t.parquet")
    back = Trace.load(path)
    assert back.hash == t.hash and back.seed == 5 and back.version == t.version
    assert back.params == t.params
    pd.testing.assert_frame_equal(back.flows, t.flows)
    meta = pq.read_schema(path).metadata
    assert meta[b"ecngym.hash"].decode() == t.hash and b"ecngym.params" in meta


def _rewrite(path, table):
    pq.write_table(table, path)


@pytest.mark.parametrize("edit", ["size", "swap_rows", "flow_id", "drop_row"])
def test_an_altered_table_fails_the_hash_check(tmp_path, edit):
    path = generate_trace(load=0.4, hosts=8, duration="3ms", seed=5).save(tmp_path / "t.parquet")
    table = pq.read_table(path)
    meta = table.schema.metadata
    if edit == "size":
        sizes = table.column("size_bytes").to_numpy().copy()
        sizes[0] += 1
        table = table.set_column(table.schema.get_field_index("size_bytes"), "size_bytes", [sizes])
    elif edit == "swap_rows":
        order = np.arange(table.num_rows)
        order[[0, 1]] = order[[1, 0]]
        table = table.take(pa.array(order))
    elif edit == "flow_id":
        ids = table.column("flow_id").to_numpy().copy()
        ids[[0, 1]] = ids[[1, 0]]
        table = table.set_column(0, "flow_id", [ids])
    else:
        table = table.slice(1)
    _rewrite(path, table.replace_schema_metadata(meta))
    with pytest.raises(ConfigError, match="altered"):
        Trace.load(path)


def test_load_refuses_what_is_not_a_trace(tmp_path):
    with pytest.raises(ConfigError, match="no file at"):
        Trace.load(tmp_path / "missing.parquet")
    with pytest.raises(ConfigError, match="which is a directory"):  # was "file not found" for a directory
        Trace.read(tmp_path)
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    with pytest.raises(ConfigError, match="not a readable Parquet file"):
        Trace.load(junk)
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"src": [0], "dst": [1]}), plain)
    with pytest.raises(ConfigError, match="not an ecngym trace"):
        Trace.load(plain)


def test_the_real_hpcc_flow_file():
    ref = Trace.from_hpcc_flow_file(_reference_flow_file())
    assert len(ref) == 605 and ref.n_hosts == 16
    assert ref.flows["size_bytes"].sum() == pytest.approx(876.5e6, rel=0.0001)
    first = ref.flows.iloc[0]  # "13 3 3 100 5101961 2.000000577"
    assert (first["src"], first["dst"], first["priority"], first["size_bytes"], first["start_ns"]) == (
        13, 3, 3, 5_101_961, 2_000_000_577)
    assert ref.achieved_load(100e9) == pytest.approx(0.44, abs=0.01)  # "realised load 0.44" (README)


def test_hpcc_format_round_trips(tmp_path):
    ref = Trace.from_hpcc_flow_file(_reference_flow_file())
    out = ref.to_hpcc_flow_file(tmp_path / "flows.txt")
    assert Trace.from_hpcc_flow_file(out).hash == ref.hash
    # byte-identical to the original apart from line endings / trailing blanks
    assert out.read_text().split() == _reference_flow_file().read_text().split()
    gen = generate_trace(load=0.3, hosts=8, duration="2ms", start="1500ms", seed=3, priority=5)
    lines = gen.to_hpcc_flow_file(tmp_path / "gen.txt").read_text().splitlines()
    assert lines[0] == str(len(gen)) and len(lines) == len(gen) + 1
    r = gen.flows.iloc[0]
    assert lines[1] == f"{r.src} {r.dst} 5 100 {r.size_bytes} 1.{r.start_ns - 1_000_000_000:09d}"
    back = Trace.from_hpcc_flow_file(tmp_path / "gen.txt")
    cols = ["src", "dst", "size_bytes", "start_ns", "priority"]
    pd.testing.assert_frame_equal(back.flows[cols], gen.flows[cols])


def test_a_trace_carries_each_flows_destination_port_and_priority(tmp_path):
    flows = pd.DataFrame({"src": [0, 1, 2], "dst": [3, 3, 3], "size_bytes": [1000, 2000, 3000],
                          "start_ns": [0, 10, 20], "priority": [3, 5, 3], "dport": [100, 200, 100]})
    trace = Trace.from_flows(flows)
    assert trace.flows["dport"].tolist() == [100, 200, 100] and trace.flows["priority"].tolist() == [3, 5, 3]
    # every port the default 100: the same trace (and hash) as without the column
    assert Trace.from_flows(flows.assign(dport=100)).hash == Trace.from_flows(flows.drop(columns="dport")).hash
    assert "dport" not in Trace.from_flows(flows.assign(dport=100)).flows.columns
    assert trace.hash != Trace.from_flows(flows.drop(columns="dport")).hash
    lines = trace.to_hpcc_flow_file(tmp_path / "flows.txt").read_text().splitlines()
    assert [line.split()[2:4] for line in lines[1:]] == [["3", "100"], ["5", "200"], ["3", "100"]]
    back = Trace.from_hpcc_flow_file(tmp_path / "flows.txt")
    assert back.hash == Trace.from_flows(flows.assign(tag="hpcc")).hash
    assert Trace.load(trace.save(tmp_path / "t.parquet")).flows["dport"].tolist() == [100, 200, 100]
    with pytest.raises(ConfigError, match=r"flows.dport.*row 1: 70000 must be in \[0, 65535\]"):
        Trace.from_flows(flows.assign(dport=[100, 70000, 100]))


def test_user_table_validation():
    good = pd.DataFrame({"src": [0, 1], "dst": [1, 0], "size_bytes": [10, 20], "start_ns": [5, 0]})
    t = Trace.from_flows(good)
    assert list(t.flows["start_ns"]) == [0, 5] and list(t.flows["flow_id"]) == [0, 1]
    assert set(t.flows["priority"]) == {3} and set(t.flows["tag"]) == {"custom"}
    assert t.params["source"] == "user table" and t.seed is None
    assert Trace.from_flows(good.astype({"size_bytes": float})).hash == t.hash  # whole floats are fine
    bad_cases = [
        (good.drop(columns="start_ns"), r"flows: missing column\(s\) \['start_ns'\]"),
        (good.assign(dst=[1, 1]), r"flows\.dst: row 1: .*equals src"),
        (good.assign(size_bytes=[10, 0]), r"flows\.size_bytes: row 1"),
        (good.assign(start_ns=[-1, 0]), r"flows\.start_ns: row 0"),
        (good.assign(src=[0, -2]), r"flows\.src: row 1"),
        (good.assign(size_bytes=[10.5, 20]), r"flows\.size_bytes: row 0: expected a whole number"),
        (good.assign(start_ns=[0, np.nan]), r"flows\.start_ns: row 1"),
        (good.assign(priority=[3, 9]), r"flows\.priority: row 1"),
    ]
    for table, message in bad_cases:
        with pytest.raises(ConfigError, match=message):
            Trace.from_flows(table)


@pytest.mark.parametrize("column,value", [
    ("src", np.array([2**63], dtype=np.uint64)),  # was reported as -9223372036854775808 (wrapped)
    ("size_bytes", np.array([2**64 - 1], dtype=np.uint64)),  # was "-1 must be > 0"
    ("size_bytes", np.array([1e19])),  # was "-9223372036854775808 must be > 0"
    ("size_bytes", np.array([2**64], dtype=object)),  # was OverflowError 'Python int too large to convert to C long'
    ("dport", np.array([2**64], dtype=object)),
    ("size_bytes", np.array([10**400], dtype=object)),  # was OverflowError 'int too large to convert to float'
])
def test_a_value_beyond_int64_is_refused_as_given(column, value):
    table = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [1000], "start_ns": [0]})
    table[column] = value
    shown = f"{int(value[0])}" if value.dtype != np.float64 else r"1e\+19"
    with pytest.raises(ConfigError, match=rf"^flows\.{column}: row 0: expected a whole number in \[-2\^63, 2\^63\), "
                                          rf"got {shown}$"):
        Trace.from_flows(table)


def test_facts():
    t = generate_trace(load=0.5, hosts=12, link_rate="25Gbps", duration="4ms", seed=8)
    assert t.n_hosts == 12 and t.duration_ns == 4_000_000
    expected = t.flows["size_bytes"].sum() * 8 / (12 * 25e9 * 4e-3)
    assert t.achieved_load(25e9) == pytest.approx(expected)
    assert t.achieved_load(25e9, n_hosts=24) == pytest.approx(expected / 2)
    one = Trace.from_flows(pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [1], "start_ns": [0]}))
    with pytest.raises(ConfigError, match="spans no time"):
        one.achieved_load(1e9)


@pytest.mark.parametrize("rate,n_hosts,message", [
    ("fast", None, r"^link_rate_bps: cannot parse 'fast' as a rate"),
    (0, None, r"^link_rate_bps: got 0, allowed range is \[1bps, 1e15bps\]"),
    (float("nan"), None, r"^link_rate_bps: expected a finite rate, got nan$"),
    (True, None, r"^link_rate_bps: expected a rate, got the boolean True$"),
    (25e9, "x", r"^n_hosts: expected a whole number, got 'x'$"),
    (25e9, 0, r"^n_hosts: got 0, allowed range is \[1, inf\)$"),
    (25e9, 2.5, r"^n_hosts: expected a whole number, got 2\.5$"),
])
def test_achieved_load_checks_its_rate_and_host_count(rate, n_hosts, message):
    # achieved_load('100Gbps') raised TypeError ("'>' not supported between 'str' and 'int'"), as did a
    # host count given as a string; the rate is a validation.Rate, as generate_trace's link_rate
    t = generate_trace(load=0.5, hosts=12, link_rate="25Gbps", duration="1ms", seed=8)
    assert t.achieved_load("25Gbps") == t.achieved_load(25e9) and t.achieved_load(25e9, 12.0) == t.achieved_load(25e9)
    with pytest.raises(ConfigError, match=message):
        t.achieved_load(rate, n_hosts)


@pytest.mark.parametrize("column", ["src", "start_ns", "priority", "tag", "dport"])
def test_a_repeated_column_is_refused(column):
    # a flow table with a column name twice (pd.concat([df, df[['src']]], axis=1)) raised IndexError /
    # ValueError ("Per-column arrays must each be 1-dimensional") from reading a table as a column
    flows = pd.DataFrame({"src": [0, 2], "dst": [1, 0], "size_bytes": [10, 20], "start_ns": [0, 5],
                          "priority": [3, 3], "tag": ["a", "b"], "dport": [100, 200]})
    with pytest.raises(ConfigError, match=rf"^flows: column '{column}' appears 2 times; each column may appear once$"):
        Trace.from_flows(pd.concat([flows, flows[[column]]], axis=1))
    unread = pd.concat([flows, pd.DataFrame({"note": [1, 2]}), pd.DataFrame({"note": [3, 4]})], axis=1)
    assert Trace.from_flows(unread).hash == Trace.from_flows(flows).hash  # an unread column is dropped


@pytest.mark.parametrize("params", [[1], "source", 5])
def test_params_that_are_no_mapping_are_refused(params):
    # Trace.from_flows(df, params=[1]) raised TypeError ("'list' object is not a mapping"); Trace(df,
    # params=[1]) was taken, and saved a trace that load refused as damaged metadata
    flows = pd.DataFrame({"src": [0], "dst": [1], "size_bytes": [1], "start_ns": [0]})
    message = rf"^params: expected a mapping of provenance fields, got {re.escape(repr(params))}$"
    with pytest.raises(ConfigError, match=message):
        Trace.from_flows(flows, params=params)
    with pytest.raises(ConfigError, match=message):
        Trace(flows, params=params)
    assert Trace.from_flows(flows, params={"by": "hand"}).params == {"source": "user table", "by": "hand"}


def test_hpcc_flow_file_export_checks_its_path_as_save_does(tmp_path):
    # to_hpcc_flow_file('/some/dir') raised IsADirectoryError, None a TypeError, where save() gave a
    # ConfigError; it now checks the path with save's check (files.check_output_path) and writes atomically
    trace = generate_trace(load=0.2, hosts=4, duration="100us", seed=1)
    (tmp_path / "file").write_text("")
    for path, message in [(tmp_path, "which is a directory"), (None, "got None, expected the path of a file"),
                          (f"{tmp_path}/sub/", "which is a directory"),
                          (tmp_path / "file" / "t.txt", "which lies under the file")]:
        with pytest.raises(ConfigError, match=rf"^path: .*{message}"):
            trace.to_hpcc_flow_file(path)
    out = trace.to_hpcc_flow_file(tmp_path / "new" / "flows.txt")  # missing folders are made, as save's
    assert Trace.from_hpcc_flow_file(out).hash == Trace.from_hpcc_flow_file(trace.to_hpcc_flow_file(
        tmp_path / "flows.txt")).hash


@pytest.mark.parametrize("path,message", [
    (None, "path: got None, expected the path of a file to write"),  # was a TypeError from Path()
    ("/tmp", "path: got '/tmp', which is a directory"),  # was an IsADirectoryError
    ("t.csv", "path: got 't.csv', expected a file name ending in '.parquet'"),  # wrote Parquet named .csv
])
def test_save_refuses_a_path_that_is_no_parquet_file_name(path, message):
    trace = generate_trace(load=0.2, hosts=4, duration="100us", seed=1)
    with pytest.raises(ConfigError, match=re.escape(message)):
        trace.save(path)


def _count_path_checks(monkeypatch, *modules) -> list[str]:
    """The fields of every ``check_input_file`` call the ``modules`` make from now on (appended as they come)."""
    import ecngym.files

    fields: list[str] = []

    def counted(field, path, expected="a file"):
        fields.append(field)
        return ecngym.files.check_input_file(field, path, expected)

    for module in modules:
        monkeypatch.setattr(module, "check_input_file", counted, raising=False)
    return fields


def _saved_trace(tmp_path) -> tuple[Trace, Path, Path]:
    """A small trace, saved as Parquet and as an HPCC flow file."""
    trace = generate_trace(load=0.3, hosts=4, duration="1ms", seed=1)
    return trace, trace.save(tmp_path / "t.parquet"), trace.to_hpcc_flow_file(tmp_path / "t.txt")


def test_reading_a_trace_checks_its_path_once_and_each_public_reader_checks_it(tmp_path, monkeypatch):
    # was: Trace.read checked an HPCC flow file's path 3 times (read, from_hpcc_flow_file,
    # read_hpcc_flow_file), a Parquet trace's twice; as_flow_table(path) twice
    from ecngym.sim_backend import flows as flows_module
    from ecngym.sim_backend import hpcc_flow_file as hpcc_module
    from ecngym.sim_backend.flows import as_flow_table
    from ecngym.sim_backend.hpcc_flow_file import read_hpcc_flow_file
    from ecngym.workloads import trace as trace_module

    trace, parquet, hpcc = _saved_trace(tmp_path)
    fields = _count_path_checks(monkeypatch, trace_module, flows_module, hpcc_module)
    calls = [(lambda: Trace.read(parquet, "env.trace"), "env.trace"),
             (lambda: Trace.read(hpcc, "env.trace"), "env.trace"),
             (lambda: Trace.load(parquet), "trace"), (lambda: Trace.from_hpcc_flow_file(hpcc), "trace"),
             (lambda: read_hpcc_flow_file(hpcc), "flows"), (lambda: as_flow_table(parquet), "flows"),
             (lambda: as_flow_table(hpcc), "flows")]
    for i, (call, field) in enumerate(calls):
        fields.clear()
        assert len(call()) == len(trace)
        assert fields == [field], f"call {i}"
    missing = tmp_path / "missing.txt"
    for reader, field in ((Trace.load, "trace"), (Trace.from_hpcc_flow_file, "trace"), (read_hpcc_flow_file, "flows")):
        with pytest.raises(ConfigError) as err:
            reader(missing)
        assert err.value.field == field and "no file at" in err.value.message


def test_compare_reads_its_trace_with_one_path_check_and_the_readers_errors(tmp_path, monkeypatch):
    # was: compare.load_trace checked the path and returned it, as_flow_table checked it again, and
    # a malformed file's error came wrapped as "trace: <file> does not fit the topology ...: ..."
    from ecngym.commands import compare
    from ecngym.sim_backend import flows as flows_module
    from ecngym.sim_backend.flows import as_flow_table

    trace, parquet, hpcc = _saved_trace(tmp_path)
    fields = _count_path_checks(monkeypatch, flows_module, compare)
    for path in (parquet, hpcc):
        fields.clear()
        flows, description = compare.load_trace(str(path))  # as compare_static_settings reads it
        assert len(as_flow_table(flows, num_hosts=4)) == len(trace) and description == str(path)
        assert fields == ["trace"], path
    bad = tmp_path / "bad.txt"
    bad.write_text("2\n0 1 3 100 1000 0\n0 1 3 100\n")
    with pytest.raises(ConfigError, match=rf"^flows \({re.escape(str(bad))}\): line 3: expected 6 columns"):
        compare.load_trace(str(bad))
    for missing, what in ((tmp_path / "missing.txt", "no file at"), (tmp_path, "which is a directory")):
        with pytest.raises(ConfigError, match=rf"^trace: .*{what}.*; expected 'hpcc_reference', a Parquet trace"):
            compare.load_trace(str(missing))


def test_a_trace_error_counts_the_bad_rows_after_the_first():
    # Trace's own row checks name the first bad row and count the rest, as as_flow_table's do
    flows = pd.DataFrame({"src": [0, 1, 2, 3], "dst": [1, 1, 2, 0], "size_bytes": [10, 20, 30, 0],
                          "start_ns": [0, 0, 0, 0]})
    with pytest.raises(ConfigError, match=r"^flows\.dst: row 1 \(and 1 more\): 1 equals src \(a flow needs two "
                                          r"distinct hosts\)$"):
        Trace.from_flows(flows)
    with pytest.raises(ConfigError, match=r"^flows\.size_bytes: row 3: 0 must be > 0$"):
        Trace.from_flows(flows.assign(dst=[1, 2, 3, 0]))
    with pytest.raises(ConfigError, match=r"^flows\.start_ns: row 0 \(and 3 more\): expected a whole number in "
                                          r"\[-2\^63, 2\^63\), got 'now'$"):
        Trace.from_flows(flows.assign(start_ns="now"))


def test_a_trace_without_flows_is_refused_where_it_is_replayed(tmp_path):
    # an HPCC flow file of 0 flows (or an empty Parquet trace) as env.trace ran every episode without
    # traffic, while ecngym compare refused it: both now refuse it with one check (flows.check_has_flows)
    from ecngym.envs import EcnTuningEnv

    hpcc = tmp_path / "none.txt"
    hpcc.write_text("0\n")
    empty = pd.DataFrame({"src": [], "dst": [], "size_bytes": [], "start_ns": []})
    parquet = Trace.from_flows(empty).save(tmp_path / "none.parquet")
    for path in (hpcc, parquet):
        message = (rf"^env\.trace: {re.escape(str(path))} has no flows: replaying it would simulate no traffic; "
                   r"give a trace with at least one flow$")
        with pytest.raises(ConfigError, match=message):
            Trace.read(path, "env.trace")
        with pytest.raises(ConfigError, match=message):
            EcnTuningEnv(trace=str(path), episode_steps=2)
        assert len(Trace.read(path, allow_empty=True)) == 0  # ecngym trace inspect still shows it
