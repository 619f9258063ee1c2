"""W&B (offline) and TensorBoard receive the episode metrics and training curves; read back from their files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from ecngym import cli
from ecngym.results import ResultStore


def _wandb_records(path: Path):
    """The protobuf records of an offline W&B run file (``run-<id>.wandb``).

    Its layout: a 7-byte header (``:W&B``, magic, version), then records in 32 KiB blocks, each
    fragment with a 7-byte header (CRC32C, little-endian length, type: 1 full, 2 first, 3 middle,
    4 last), the same log format as LevelDB's.
    """
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, buf = 7, 32768, b""
    while pos + 7 <= len(data):
        room = block - pos % block
        if room < 7:  # a block's tail too short for a header is padding
            pos += room
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if length == 0 and kind == 0:
            pos += room
            continue
        buf += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(buf)
            buf = b""
            yield record


def _wandb_history(run_dir: Path) -> list[dict]:
    (offline,) = run_dir.glob("wandb/offline-run-*/run-*.wandb")
    return [{(i.key or "/".join(i.nested_key)): json.loads(i.value_json) for i in r.history.item}
            for r in _wandb_records(offline) if r.WhichOneof("record_type") == "history"]


def test_wandb_offline_run_holds_every_episode_metric(tmp_path):
    run = tmp_path / "run"
    assert cli.main(["eval", "logger=wandb", "episodes=2", "env.kwargs.episode_steps=5",
                     f"results.dir={tmp_path / 'store'}", f"hydra.run.dir={run}"]) == 0
    history = _wandb_history(run)
    stored = ResultStore(tmp_path / "store").episodes().sort_values("seed")
    assert [h["episode/step"] for h in history] == [1, 2]  # one entry per episode, by seed
    for h, (_, row) in zip(history, stored.iterrows(), strict=True):
        assert h["episode/slowdown_p99_<100KB"] == pytest.approx(row["slowdown_p99_<100KB"])
        assert h["episode/flows_total"] == row["flows_total"] > 0


def test_tensorboard_event_files_hold_the_training_curve_and_episodes(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    train, ev = tmp_path / "train", tmp_path / "eval"
    assert cli.main(["train", "logger=tensorboard", "algorithm=ppo", "total_timesteps=64", "progress_bar=false",
                     "+hyperparams.n_steps=32", "+hyperparams.batch_size=32", "env.kwargs.episode_steps=16",
                     f"results.dir={tmp_path / 'store'}", f"hydra.run.dir={train}"]) == 0
    (logdir,) = (train / "tensorboard").iterdir()
    acc = EventAccumulator(str(logdir))
    acc.Reload()
    curve = acc.Scalars("train/episode_return")
    assert [e.step for e in curve] == [16, 32, 48, 64]  # four 16-step episodes
    store = ResultStore(tmp_path / "store")
    (row,) = store.episodes().itertuples()
    stored_curve = store.frame(row.curve_path)
    assert [e.value for e in curve] == pytest.approx(stored_curve["episode_return"].tolist())
    assert row.command == "train" and Path(row.artifacts_path).name == "model.zip"

    assert cli.main(["eval", "logger=tensorboard", "env.kwargs.episode_steps=5", f"results.dir={tmp_path / 'store'}",
                     f"hydra.run.dir={ev}"]) == 0
    (logdir,) = (ev / "tensorboard").iterdir()
    acc = EventAccumulator(str(logdir))
    acc.Reload()
    (event,) = acc.Scalars("episode/slowdown_p99_<100KB")
    assert event.step == 1 and event.value == pytest.approx(
        store.query("SELECT metrics['slowdown_p99_<100KB'] AS v FROM episodes WHERE command = 'eval'")["v"][0])


@pytest.mark.parametrize(("directory", "match"), [
    # '' was the run directory (a spelling of null nobody documents); a file was a NotADirectoryError
    ("", r"^logger\.dir: got '', expected the path of the logger's directory \(null: the run directory\)"),
    ("a_file", r"^logger\.dir: got '.*a_file', which is a file; expected the logger's directory"),
])
def test_a_logger_dir_that_is_empty_or_a_file_is_named(tmp_path, directory, match):
    from ecngym.error import ConfigError
    from ecngym.results import make_logger

    (tmp_path / "a_file").write_text("x")
    given = str(tmp_path / directory) if directory else directory
    with pytest.raises(ConfigError, match=match):
        make_logger({"name": "tensorboard", "dir": given}, "run", tmp_path / "run", {})
    assert not (tmp_path / "run").exists()


def test_a_logger_dir_is_expanded_like_the_store(tmp_path, monkeypatch):
    from ecngym.results import make_logger

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # (without the expansion, ./~/logs lands here)
    with make_logger({"name": "tensorboard", "dir": "~/logs"}, "run", tmp_path / "run", {}) as logger:
        assert logger.run_dir == tmp_path / "logs" / "tensorboard" / "run"  # not ./~/logs


@pytest.mark.parametrize("name", ["tensorboard", "wandb"])
def test_a_logger_dir_that_cannot_be_made_is_named(tmp_path, name):
    # was a raw NotADirectoryError / FileNotFoundError from the logger's own makedirs
    from ecngym.error import ConfigError
    from ecngym.results import make_logger

    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ConfigError, match=r"^logger\.dir: cannot make the folder '.*/a_file/logs': Not a directory"):
        make_logger({"name": name, "dir": str(tmp_path / "a_file" / "logs")}, "run", tmp_path / "run", {})
    with pytest.raises(ConfigError, match=r"^logger\.dir: cannot make the folder '.*/a_file/run': Not a directory"):
        make_logger({"name": name}, "run", tmp_path / "a_file" / "run", {})  # (null: the run directory)
