"""Experiment loggers: Weights & Biases (the real ``wandb``, offline by default) and TensorBoard.

``logger=none|wandb|tensorboard`` in the ``run`` / ``eval`` / ``train`` configs picks one
(``configs/logger/``). Every logger records the same things:

* each episode's summary metrics (``episode/<metric>``, step = the episode's seed),
* a training curve (``train/episode_return`` and ``train/episode_length`` over timesteps),
* tables (the leaderboard; W&B as a ``wandb.Table``, TensorBoard as text).

W&B runs offline unless ``logger.mode=online`` (or ``WANDB_MODE=online``): the run directory
(``<logger.dir>/wandb/offline-run-*``) syncs later with ``wandb sync <dir>``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ecngym.files import make_directory

if TYPE_CHECKING:
    from ecngym.results.ranking import Ranking


class NullLogger:
    """Logs nothing (``logger=none``)."""

    run_dir: Path | None = None

    def log_metrics(self, metrics: Mapping[str, float], step: int, prefix: str = "episode") -> None:
        """Log scalar metrics at ``step`` under ``prefix/``."""

    def log_curve(self, curve: pd.DataFrame) -> None:
        """Log a training curve: every numeric column of each row at its ``timesteps``."""
        columns = [c for c in curve.select_dtypes("number").columns if c != "timesteps"]
        for row in curve.to_dict("records"):
            self.log_metrics({c: row[c] for c in columns}, step=int(row["timesteps"]), prefix="train")

    def log_table(self, name: str, table: pd.DataFrame) -> None:
        """Log a table (e.g. the leaderboard)."""

    def close(self) -> None:
        """Flush and finish the run."""

    def __enter__(self) -> NullLogger:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _finite(metrics: Mapping[str, float]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and math.isfinite(float(v))}


class WandbLogger(NullLogger):
    """A W&B run (offline by default)."""

    def __init__(self, project: str, run_name: str, directory: Path, config: dict[str, Any], mode: str = "offline",
                 entity: str | None = None, tags: list[str] | None = None) -> None:
        import wandb

        directory.mkdir(parents=True, exist_ok=True)
        self._wandb = wandb
        self.run = wandb.init(project=project, entity=entity, name=run_name, dir=str(directory), config=config,
                              mode=os.environ.get("WANDB_MODE", mode), tags=tags, reinit="create_new",
                              settings=wandb.Settings(
                                  silent=True, console="off", save_code=False, disable_code=True, disable_git=True,
                                  disable_job_creation=True, x_disable_stats=True, x_disable_meta=True,
                                  x_disable_machine_info=True, x_save_requirements=False))
        self.run_dir = Path(self.run.dir).parent  # .../wandb/offline-run-<date>-<id>

    def log_metrics(self, metrics: Mapping[str, float], step: int, prefix: str = "episode") -> None:
        """Log scalar metrics at ``step`` under ``prefix/``."""
        values = {f"{prefix}/{k}": v for k, v in _finite(metrics).items()}
        self.run.log({**values, f"{prefix}/step": step})

    def log_table(self, name: str, table: pd.DataFrame) -> None:
        """Log a ``wandb.Table``."""
        self.run.log({name: self._wandb.Table(dataframe=table.astype(str))})

    def close(self) -> None:
        """Finish the run (writes its files)."""
        self.run.finish()


class TensorBoardLogger(NullLogger):
    """TensorBoard event files in ``<dir>/tensorboard/<run_name>``."""

    def __init__(self, run_name: str, directory: Path) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.run_dir = directory / "tensorboard" / run_name
        self.writer = SummaryWriter(log_dir=str(self.run_dir))

    def log_metrics(self, metrics: Mapping[str, float], step: int, prefix: str = "episode") -> None:
        """Log scalar metrics at ``step`` under ``prefix/``."""
        for key, value in _finite(metrics).items():
            self.writer.add_scalar(f"{prefix}/{key}", value, global_step=step)

    def log_table(self, name: str, table: pd.DataFrame) -> None:
        """Log a table as markdown text."""
        self.writer.add_text(name, table.to_markdown(index=False))  # (pandas needs tabulate: a dependency)

    def close(self) -> None:
        """Flush the event file."""
        self.writer.close()


def make_logger(cfg: Mapping[str, Any] | None, run_name: str, run_dir: Path, config: dict[str, Any]) -> NullLogger:
    """The logger the ``logger`` config names.

    Args:
        cfg: The ``logger`` config (``name`` plus its options), or None for no logging.
        run_name: Name of the run (controller and seed, or the training run).
        run_dir: The job's output directory (the home of the logger's files when ``logger.dir``
            is null).
        config: The resolved job config, recorded with the run.

    Raises:
        ConfigError: On a bad ``logger`` config (naming ``logger.<field>``; ``logger.dir`` empty
            or naming a file), or a logger directory that cannot be made (naming ``logger.dir``,
            also when it is null and the run directory is used).
    """
    from ecngym.results.config import parse_logger

    lc = parse_logger(cfg)
    directory = Path(run_dir) if lc.dir is None else Path(lc.dir).expanduser()
    if lc.name != "none":
        make_directory("logger.dir", directory)  # (the loggers' own makedirs fail with a raw OSError)
    if lc.name == "wandb":
        return WandbLogger(project=lc.project, run_name=run_name, directory=directory, config=config, mode=lc.mode,
                           entity=lc.entity, tags=list(lc.tags))
    if lc.name == "tensorboard":
        return TensorBoardLogger(run_name, directory)
    return NullLogger()


def log_tables(logger: Any, rankings: list[Ranking]) -> None:
    """Log each ranking's table to ``logger`` (a :func:`make_logger` logger)."""
    for ranking in rankings:
        logger.log_table(f"leaderboard/{ranking.scenario}/{ranking.trace_set}",
                         ranking.table.drop(columns=["row_ids", "params"]))
