"""Checks of an experiment command's input before anything runs, and the one-line report of bad input."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from ecngym.commands.factories import logger_config, results_store
from ecngym.error import ConfigError, EcnGymError
from ecngym.validation import Text, check


def user_errors(task: Callable[[DictConfig], Any]) -> Callable[[DictConfig], Any]:
    """Report bad input (an :class:`~ecngym.error.EcnGymError`) in one line and exit with status 2.

    Hydra would otherwise print the traceback of any exception and exit with status 1. The task's
    return value (a sweep objective) is passed on to Hydra's sweeper.
    """

    @functools.wraps(task)
    def wrapper(cfg: DictConfig) -> Any:
        try:
            return task(cfg)
        except (EcnGymError, OmegaConfBaseException) as exc:
            if os.environ.get("HYDRA_FULL_ERROR") == "1":  # --debug
                traceback.print_exc()
            if isinstance(exc, OmegaConfBaseException):  # e.g. a mandatory value left at ??? (controller.path)
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                exc = ConfigError(getattr(exc, "full_key", None) or "config", first)
            print(f"ecngym {task.__name__.removesuffix('_main').replace('_', '-')}: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper


def check_outputs(cfg: DictConfig) -> None:
    """Refuse a results store or logger directory that cannot be written, before any simulation or training.

    Raises:
        ConfigError: Naming ``results.dir`` / ``logger.<field>`` (:func:`~ecngym.files.check_writable_directory`,
            :func:`~ecngym.results.config.parse_logger`), or ``results.dir`` if its database exists but
            cannot be read as a results store.
    """
    from ecngym.files import check_writable_directory
    from ecngym.results.config import parse_logger
    from ecngym.results.store import StoreError

    store = results_store(cfg)
    check_writable_directory("results.dir", store.root, "a results store directory")
    try:  # (a broken database failed at each controller's first row: ecngym run named it 'controllers')
        store.check_readable()
    except StoreError as exc:
        raise ConfigError("results.dir", str(exc)) from None
    logger = parse_logger(logger_config(cfg))
    if logger.name != "none" and logger.dir is not None:
        check_writable_directory("logger.dir", logger.dir, "the logger's directory")


def check_metric_name(field: str, score: Any, controllers: dict[str, DictConfig]) -> str:
    """A metric to rank or optimise by, checked before anything is simulated.

    ``run``'s ``leaderboard.score`` and ``eval``'s ``objective`` (a sweep's).

    Allowed: a metric every episode row stores (:func:`~ecngym.results.record.episode_metric_names`)
    or a count a chosen controller's class says it adds (its ``extra_metrics``, see
    :class:`~ecngym.baselines.controller.Controller`).

    Args:
        field: The option, named in the error.
        score: The metric name as configured.
        controllers: The chosen controller configs (:func:`~ecngym.commands.factories.benchmark_controllers`).

    Returns:
        The name.

    Raises:
        ConfigError: Naming ``field``, what was given and the allowed names.
    """
    from ecngym.baselines.registry import controller_class
    from ecngym.results.record import episode_metric_names

    name = check(field, score, Text)
    allowed = set(episode_metric_names())
    for ccfg in controllers.values():
        try:
            allowed.update(getattr(controller_class(ccfg), "extra_metrics", ()))
        except ConfigError:  # a bad _target_: evaluate() reports it, for that controller only
            continue
    if name not in allowed:
        raise ConfigError(field, f"got {score!r}, not a metric of these controllers' episodes; "
                                 f"known: {sorted(allowed)}")
    return name
