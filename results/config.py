"""The typed configs of the harness: ``results`` and ``logger`` (validated with :mod:`ecngym.validation`)."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from ecngym.error import ConfigError
from ecngym.files import check_directory_path
from ecngym.validation import ConfigModel, Flag, OneOf, Text


class ResultsConfig(ConfigModel):
    """``results``: where the store is and whether stored episodes are simulated again."""

    dir: Text = "outputs/results"
    skip_existing: Flag = False

    @field_validator("dir")
    @classmethod
    def _a_directory(cls, value: str) -> str:
        """A directory path: not empty (that would spread a store over the current folder), not a file."""
        return _directory_path(value, "a results store directory")


class LoggerConfig(ConfigModel):
    """``logger``: ``none``, ``wandb`` (offline by default) or ``tensorboard``.

    ``dir`` is the directory of the logger's files, ``None`` (``null``) for the job's run directory.
    """

    name: OneOf("none", "wandb", "tensorboard") = "none"
    mode: OneOf("offline", "online", "disabled") = "offline"
    project: Text = "ecngym"
    entity: Text | None = None
    dir: Text | None = None
    tags: list[Text] = []

    @field_validator("dir")
    @classmethod
    def _a_directory(cls, value: str | None) -> str | None:
        """A directory path (existing or to be made): not empty (``null`` is the run directory), not a file."""
        return value if value is None else _directory_path(value, "the logger's directory (null: the run directory)")


def _directory_path(value: str, expected: str) -> str:
    """``value`` if it can name a directory (:func:`~ecngym.files.check_directory_path`), for a field validator.

    Raises:
        ValueError: Its message, which the model's ConfigError prefixes with the field's name.
    """
    try:
        check_directory_path("", value, expected)
    except ConfigError as exc:
        raise ValueError(exc.message) from None
    return value


def parse_results(data: Any) -> ResultsConfig:
    """Validate a ``results`` config (errors name ``results.<field>``)."""
    return ResultsConfig.parse(data, "results")


def parse_logger(data: Any) -> LoggerConfig:
    """Validate a ``logger`` config (errors name ``logger.<field>``)."""
    return LoggerConfig.parse(data or {}, "logger")
