"""The results store: atomic rows, parallel writers, schema versions (no simulation needed)."""

from __future__ import annotations

import json
import multiprocessing as mp
import re
import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest

from ecngym.error import ConfigError
from ecngym.results import SCHEMA_VERSION, ResultStore, StoreError, row_id
from ecngym.results.leaderboard_cli import main as leaderboard_main


def _row(i: int, trace: str = "t1", controller: str = "c", seed: int | None = None) -> dict:
    seed = i if seed is None else seed
    return {"row_id": row_id("eval", controller, "s", seed), "command": "eval", "controller": controller,
            "controller_params": "{}", "controller_hash": controller, "env_id": "e", "scenario": "s",
            "scenario_hash": "s", "scenario_config": "{}", "trace_hash": trace, "seed": seed,
            "ecngym_version": "0", "metrics": {"slowdown_p99_<100KB": 1.0 + i, "flows_total": 3}}


def test_rows_round_trip_with_metrics_and_parquet(tmp_path):
    store = ResultStore(tmp_path)
    rid = _row(1)["row_id"]
    flows = pd.DataFrame({"size_bytes": [1, 2], "slowdown": [1.0, 2.5], "finished": [True, True]})
    store.commit({**_row(1), "flows_path": store.write_frame("flows", rid, flows)})
    assert store.has(rid)  # in the inbox: committed, not yet ingested
    rows = store.episodes()
    assert len(rows) == 1 and rows["slowdown_p99_<100KB"][0] == 2.0 and rows["flows_total"][0] == 3
    pd.testing.assert_frame_equal(store.frame(rows["flows_path"][0]), flows)
    assert not list((tmp_path / "inbox").iterdir())  # ingested, then removed
    assert store.has(rid) and not store.has("nope")


def test_a_nan_metric_reads_back_as_float_nan(tmp_path):
    # a short episode where no small flow finished has NaN slowdowns: DuckDB stores NULL, and its list
    # of metric values came back as masked elements (object columns; a UserWarning in every leaderboard)
    store = ResultStore(tmp_path)
    store.commit({**_row(1), "metrics": {"slowdown_p99_<100KB": float("nan"), "flows_total": 3}})
    store.commit(_row(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = store.episodes()
    assert rows["slowdown_p99_<100KB"].dtype == np.float64 and rows["flows_total"].dtype == np.float64
    assert np.isnan(rows["slowdown_p99_<100KB"][0]) and rows["slowdown_p99_<100KB"][1] == 3.0


def test_a_half_written_row_is_never_read(tmp_path):
    store = ResultStore(tmp_path)
    store.commit(_row(1))
    # what a worker killed mid-write leaves: a hidden temporary file, never a *.json row
    (tmp_path / "inbox" / ".abc.json.123.tmp").write_text('{"row_id": "x", "comm')
    assert list(store.episodes()["seed"]) == [1]


def test_malformed_rows_are_refused_with_the_column_named(tmp_path):
    store = ResultStore(tmp_path)
    bad = _row(1)
    del bad["trace_hash"]
    with pytest.raises(StoreError, match="trace_hash"):
        store.commit(bad)
    with pytest.raises(StoreError, match="metric 'x'"):
        store.commit({**_row(1), "metrics": {"x": "high"}})
    with pytest.raises(StoreError, match="unknown column"):
        store.commit({**_row(1), "colour": "red"})


def test_the_same_episode_twice_is_one_row_and_reported(tmp_path):
    store = ResultStore(tmp_path)
    store.commit(_row(1))
    assert store.ingest().ingested == 1
    store.commit({**_row(1), "metrics": {"slowdown_p99_<100KB": 9.0}})
    assert store.ingest().duplicates == 1
    rows = store.episodes()
    assert len(rows) == 1 and rows["slowdown_p99_<100KB"][0] == 9.0  # the later replaces the earlier


def _writer(root: str, worker: int, n: int) -> None:
    store = ResultStore(root)
    for i in range(n):
        store.commit(_row(worker * 1000 + i))
        store.ingest()  # every job ingests at its end: writers contend for the database here


def test_parallel_writers_lose_and_duplicate_nothing(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 8)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    rows = ResultStore(tmp_path).episodes()
    assert len(rows) == 24 and rows["row_id"].is_unique
    assert sorted(rows["seed"]) == sorted(w * 1000 + i for w in range(3) for i in range(8))


def test_a_store_of_another_schema_version_is_refused(tmp_path):
    store = ResultStore(tmp_path)
    store.commit(_row(1))
    store.ingest()
    con = duckdb.connect(str(store.db_path))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    con.close()
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}; this ecngym reads version "
                                         f"{SCHEMA_VERSION}. Upgrade ecngym"):
        store.episodes()


def test_a_seed_the_bigint_column_cannot_hold_is_refused_at_commit_and_named_at_ingest(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(StoreError, match=r"seed 9223372036854775808 is outside the store's range \[0, 2\^63 - 1\]"):
        store.commit(_row(1, seed=2**63))
    store.commit(_row(1, seed=2**63 - 1))
    store.commit(_row(2))
    # a row an older ecngym let through (a seed beyond BIGINT) must not fail every later ingest with
    # DuckDB's traceback
    (path,) = [p for p in (tmp_path / "inbox").glob("*.json") if json.loads(p.read_text())["seed"] == 2]
    path.write_text(json.dumps({**json.loads(path.read_text()), "seed": 2**64 - 2}))
    with pytest.raises(StoreError, match=rf"inbox row {path} \(move it out of the inbox to go on\): seed"):
        store.ingest()
    path.unlink()
    assert list(store.episodes()["seed"]) == [2**63 - 1]


def test_an_inbox_row_of_another_schema_version_is_refused(tmp_path):
    store = ResultStore(tmp_path)
    store.commit(_row(1))
    (path,) = (tmp_path / "inbox").glob("*.json")
    path.write_text(json.dumps({**json.loads(path.read_text()), "schema_version": 99}))
    with pytest.raises(StoreError, match="schema version 99"):
        store.ingest()
    assert path.exists()  # refused rows stay for a newer ecngym to read


def test_a_missing_or_foreign_store_is_named(tmp_path):
    with pytest.raises(StoreError, match="no results store at"):
        ResultStore(tmp_path / "none").episodes()
    (tmp_path / "x").mkdir()
    duckdb.connect(str(tmp_path / "x" / "results.duckdb")).execute("CREATE TABLE t (a INT)").fetchall()
    with pytest.raises(StoreError, match="not an ecngym results store"):
        ResultStore(tmp_path / "x").episodes()


@pytest.mark.parametrize(("column", "value", "message"), [
    # each was accepted by commit, then failed every later ingest (every reader's) with a DuckDB or
    # pandas traceback, keeping the rows of every other job out of the store until removed by hand
    ("controller", None, "column 'controller': got None, expected a string"),
    ("trace_hash", 5, "column 'trace_hash': got 5, expected a string"),
    ("episode_return", "x", "column 'episode_return': got 'x', expected a number"),
    ("wall_s", [1], r"column 'wall_s': got \[1\], expected a number"),
    ("created_at", "yesterday", "column 'created_at': got 'yesterday', expected an ISO 8601 time"),
    ("metrics", [1, 2], r"column 'metrics': got \[1, 2\], expected a mapping"),
    ("metrics", {"a": "1.5"}, "metric 'a': got '1.5', expected a number"),
    ("metrics", {"a": True}, "metric 'a': got True, expected a number"),
    # a row id is a file name: '../x' wrote the row outside the inbox
    ("row_id", "../../x", r"column 'row_id': got '../../x', expected a name"),
    ("row_id", None, "column 'row_id': got None, expected a name"),
    ("seed", 2.5, "seed 2.5 is not a whole number"),
])
def test_a_row_the_database_cannot_hold_is_refused_at_commit_naming_the_column(tmp_path, column, value, message):
    store = ResultStore(tmp_path)
    store.commit(_row(1))
    with pytest.raises(StoreError, match=message):
        store.commit({**_row(2), column: value})
    assert list(store.episodes()["seed"]) == [1]  # the store still reads
    assert not (tmp_path.parent / "x.json").exists()


def test_a_numpy_integer_seed_is_a_seed(tmp_path):
    # was refused as "outside the store's range"
    store = ResultStore(tmp_path)
    store.commit(_row(3, seed=np.int64(3)))
    assert list(store.episodes()["seed"]) == [3]


def test_a_malformed_inbox_row_is_named_not_a_database_traceback(tmp_path):
    store = ResultStore(tmp_path)
    store.commit(_row(1))
    (path,) = (tmp_path / "inbox").glob("*.json")
    path.write_text(json.dumps({**json.loads(path.read_text()), "controller": None}))
    with pytest.raises(StoreError, match=rf"inbox row {path} \(move it out of the inbox to go on\): column "
                                         "'controller': got None"):
        store.ingest()


@pytest.mark.parametrize("root", [None, 5, "", "  "])
def test_a_store_root_that_is_no_path_is_named(root):
    # None and 5 were a TypeError from pathlib; '' silently meant the working directory
    with pytest.raises(ConfigError, match=rf"^results.dir: got {re.escape(repr(root))}, expected the path of a "
                                          "results store directory"):
        ResultStore(root)


def test_a_store_root_that_is_a_file_is_named(tmp_path):
    # commit failed with NotADirectoryError from deep inside
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match=r"^--store: got '.*/f', which is a file; expected a results store"):
        ResultStore(tmp_path / "f", "--store")
    with pytest.raises(ConfigError, match="^--store: got '.*/f', which is a file"):
        leaderboard_main(["--store", str(tmp_path / "f"), "--html", ""])


def test_an_empty_results_dir_is_refused():
    from ecngym.results.config import parse_results

    with pytest.raises(ConfigError, match=r"^results.dir: got '', expected the path of a results store directory"):
        parse_results({"dir": ""})


def test_a_store_that_cannot_be_written_is_named_and_loses_nothing(tmp_path):
    # commit / write_frame were a raw FileExistsError / NotADirectoryError from mkdir
    (tmp_path / "f").write_text("x")
    store = ResultStore(tmp_path / "f" / "store")
    with pytest.raises(ConfigError, match=r"^results.dir: cannot make the folder '.*/f/store/inbox': "):
        store.commit(_row(1))
    with pytest.raises(ConfigError, match=r"^results.dir: cannot make the folder '.*/f/store/flows': "):
        store.write_frame("flows", "x", pd.DataFrame({"a": [1]}))
    assert (tmp_path / "f").read_text() == "x"


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="no /proc")
def test_a_leaderboard_page_that_cannot_be_written_is_named_before_the_store_is_read(tmp_path, capsys):
    # was a raw FileNotFoundError from mkstemp, after the tables were printed
    store = ResultStore(tmp_path)
    store.commit(_row(1))
    with pytest.raises(ConfigError, match=r"^--html: cannot write '/proc/board.html': No such file or directory "
                                          r"\(creating a file in '/proc'\)$"):
        leaderboard_main(["--store", str(tmp_path), "--html", "/proc/board.html"])
    assert capsys.readouterr().out == ""  # nothing printed, nothing ingested
    assert len(list((tmp_path / "inbox").glob("*.json"))) == 1


def test_the_leaderboard_of_a_missing_store_makes_no_logs_folder_there(tmp_path):
    # the logger was made before the store was read: a typo in --store left <typo>/logs/tensorboard/... behind
    with pytest.raises(StoreError, match="no results store at"):
        leaderboard_main(["--store", str(tmp_path / "typo"), "--html", "", "--logger", "tensorboard"])
    assert not (tmp_path / "typo").exists()
    store = ResultStore(tmp_path / "store")
    store.commit(_row(1))
    assert leaderboard_main(["--store", str(tmp_path / "store"), "--html", "", "--logger", "tensorboard"]) == 0
    assert list((tmp_path / "store" / "logs" / "tensorboard" / "leaderboard").glob("events.out.tfevents.*"))


def test_a_store_whose_lock_file_cannot_be_made_is_read_without_it_and_named_for_writes(tmp_path, monkeypatch):
    # was a raw OSError from open(".lock", "a+") on a read-only mount, for readers as for writers
    import errno
    import io

    import ecngym.results.store as store_module

    store = ResultStore(tmp_path)
    store.commit(_row(1))
    assert len(store.episodes()) == 1  # ingested; the store now exists
    real_open = io.open

    def read_only_open(path, mode="r", *args, **kwargs):
        if str(path).endswith(".lock"):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(store_module, "open", read_only_open, raising=False)
    assert store.episodes(ingest=False)["seed"].tolist() == [1]  # read without the shared lock
    assert store.has(_row(1)["row_id"])
    store.commit(_row(2))  # the inbox is writable here; ingesting needs the exclusive lock
    with pytest.raises(StoreError, match=r"^cannot use the results store .* \(results.dir\): cannot make its lock "
                                         r"file \(Read-only file system\)$"):
        store.ingest()
    assert len(list((tmp_path / "inbox").glob("*.json"))) == 1  # the row waits in the inbox


def test_a_broken_database_is_named_before_any_controller_runs(tmp_path, capsys):
    # it failed at each controller's first row, and ecngym run named it 'controllers: static_dcqcn: ...'
    from ecngym import cli

    (tmp_path / "store").mkdir()
    (tmp_path / "store" / ResultStore.DB_NAME).write_text("garbage")
    for command in (["run", "suite=null", "controllers=[static_dcqcn]", "seeds=[1]"], ["eval"]):
        assert cli.main([*command, "env.kwargs.episode_steps=2", f"results.dir={tmp_path / 'store'}",
                         f"hydra.run.dir={tmp_path / command[0]}"]) == 2
        out, err = capsys.readouterr()
        assert f"ecngym {command[0]}: error: results.dir: cannot open the results database " in err
        assert "simulated" not in out and not list((tmp_path / "store").glob("inbox/*.json"))
    with pytest.raises(StoreError, match="cannot open the results database"):
        ResultStore(tmp_path / "store").check_readable()
    ResultStore(tmp_path / "new").check_readable()  # no database yet: nothing to check
