"""A trace's metadata (params, seed, version) is covered by a hash; damaged metadata is a named error."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from ecngym.error import ConfigError
from ecngym.workloads import Trace, generate_trace
from ecngym.workloads.cli import inspect_main


@pytest.fixture()
def saved(tmp_path):
    trace = generate_trace(load=0.4, hosts=8, duration="2ms", seed=5)
    return trace, trace.save(tmp_path / "t.parquet")


def _edit_metadata(path, key: bytes, value: bytes | None) -> None:
    table = pq.read_table(path)
    meta = dict(table.schema.metadata)
    if value is None:
        meta.pop(key)
    else:
        meta[key] = value
    pq.write_table(table.replace_schema_metadata(meta), path)


def test_round_trip_verifies_the_metadata_hash(saved):
    trace, path = saved
    back = Trace.load(path)
    assert back.params == trace.params and back.metadata_hash() == trace.metadata_hash()


@pytest.mark.parametrize("key,value", [
    (b"ecngym.params", None),  # edited below: a believable change of load
    (b"ecngym.seed", b"6"),
    (b"ecngym.version", b"9.9.9"),
])
def test_edited_metadata_fails_the_hash_check(saved, key, value):
    # was: a trace's params were not covered by its hash, so edited metadata was believed
    trace, path = saved
    if value is None:
        value = json.dumps({**trace.params, "load": 0.9}, sort_keys=True).encode()
    _edit_metadata(path, key, value)
    with pytest.raises(ConfigError, match=r"trace: .*metadata .* does not match its stored hash"):
        Trace.load(path)


@pytest.mark.parametrize("key,value", [
    (b"ecngym.params", b"{not json"), (b"ecngym.params", b"[1, 2]"), (b"ecngym.seed", b"\xff\xfe"),
    (b"ecngym.seed", b"true"), (b"ecngym.params", None), (b"ecngym.version", None),
    # the table's hash not UTF-8: was a UnicodeDecodeError (its decode was outside the check)
    (b"ecngym.hash", b"\xff\xfe"), (b"ecngym.version", b"\xff"),
])
def test_damaged_metadata_is_a_named_error(saved, key, value):
    # was: JSON / key errors as raw tracebacks
    _, path = saved
    _edit_metadata(path, key, value)
    with pytest.raises(ConfigError, match=r"^trace: .*damaged metadata"):
        Trace.load(path)


def test_older_traces_without_a_metadata_hash_get_a_clear_message(saved, tmp_path):
    trace, path = saved
    _edit_metadata(path, b"ecngym.meta_hash", None)
    with pytest.raises(ConfigError, match="older ecngym without a metadata hash.*unverified_metadata=True"):
        Trace.load(path)
    back = Trace.load(path, unverified_metadata=True)  # the table is still verified
    assert back.hash == trace.hash
    back.save(path)
    assert Trace.load(path).metadata_hash() == trace.metadata_hash()


def test_save_is_atomic_and_leaves_no_temporary_file(saved, tmp_path):
    trace, path = saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]

    class Boom(Exception):
        pass

    import ecngym.workloads.trace as trace_module

    def failing_write(*args, **kwargs):
        raise Boom

    original = trace_module.pq.write_table
    trace_module.pq.write_table = failing_write
    try:
        with pytest.raises(Boom):
            generate_trace(load=0.2, hosts=8, duration="1ms", seed=9).save(path)
    finally:
        trace_module.pq.write_table = original
    assert Trace.load(path).hash == trace.hash  # the previous file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_inspect_head_must_not_be_negative(saved, capsys):
    # was: --head -1 dropped the last flow
    _, path = saved
    with pytest.raises(SystemExit) as exc:
        inspect_main([str(path), "--head", "-1"])
    assert exc.value.code == 2 and "--head" in capsys.readouterr().err


def test_a_directory_is_not_a_trace(tmp_path):
    from ecngym.sim_backend.flows import as_flow_table

    with pytest.raises(ConfigError, match="flows: got .*, which is a directory"):
        as_flow_table(tmp_path)
    with pytest.raises(ConfigError, match="trace: got .*, which is a directory"):  # was "file not found"
        Trace.load(tmp_path)


def test_a_numpy_integer_seed_is_stored_as_an_int_and_round_trips(saved, tmp_path):
    # was: json.dumps' TypeError "Object of type int64 is not JSON serializable" in save
    trace, _ = saved
    seeded = Trace(trace.flows, params=trace.params, seed=np.int64(3))
    assert type(seeded.seed) is int
    back = Trace.load(seeded.save(tmp_path / "np_seed.parquet"))
    assert back.seed == 3 and back.metadata_hash() == seeded.metadata_hash()


@pytest.mark.parametrize("seed", ["abc", 2.5, True, [3]])
def test_a_seed_that_is_no_whole_number_is_refused_at_construction(saved, seed):
    # was: accepted and saved, then refused by load as "damaged metadata"
    trace, _ = saved
    with pytest.raises(ConfigError) as err:
        Trace(trace.flows, seed=seed)
    assert err.value.field == "seed" and "expected a whole number" in err.value.message
