"""Thread pools of training processes: torch's and numpy's BLAS, one setting for both.

Why this exists: on a small machine (CI and our VMs have 2 cores), torch's intra-op pool and the
OpenBLAS / OpenMP pool that numpy loads each start one thread per core. A training process runs
both (numpy in the env, torch in the learner) and their spinning threads fight over the cores:
``ecngym train algorithm=ppo total_timesteps=512`` took ~70 s, ~34 s of them in 320 backward
passes of a 64x64 MLP at ~106 ms each; with one thread per pool it takes ~7.5 s. The networks of
ECN tuning are tiny (a few thousand to ~100 k weights, batches of 64), so one thread is also the
fastest setting on bigger machines, where parallelism comes from env processes instead.

The training entry points (``ecngym train``, ``ecngym bench train``, :func:`ecngym.agents.train`,
the ACC / LAECN trainers) call :func:`limit_threads` before building a model, and every vector-env
worker and RLlib env runner calls it when it starts (:func:`in_worker`). Override the default of
1 thread per pool with the ``threads`` config field (``ecngym train threads=4``) or the
``ECNGYM_THREADS`` environment variable; ``threads=0`` leaves the libraries' own defaults alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ecngym.error import ConfigError
from ecngym.validation import check_whole

#: Environment variable overriding the default thread count (config ``threads`` wins over it).
THREADS_ENV = "ECNGYM_THREADS"
#: Default threads per pool in a training process and in each env worker.
DEFAULT_THREADS = 1
#: The most threads per pool a setting may ask for.
MAX_THREADS = 4096
#: Variables read by BLAS / OpenMP libraries when they load (inherited by worker processes).
_POOL_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def resolve_threads(requested: Any = None) -> int:
    """The thread count to use: ``requested``, else ``$ECNGYM_THREADS``, else 1.

    Args:
        requested: The ``threads`` config value (``None`` = not given; 0 = library defaults).

    Returns:
        The count (0 = leave the libraries' defaults).

    Raises:
        ConfigError: If the value is not a whole number in [0, :data:`MAX_THREADS`] (naming
            ``threads`` or the variable); the variable's text is read as the number it spells,
            but the config's value must be a number (``threads="3"`` is refused, as a string is
            by every whole-number field).
    """
    field, value = "threads", requested
    if value is None:
        field, value = THREADS_ENV, os.environ.get(THREADS_ENV)
        if value is None or value == "":
            return DEFAULT_THREADS
    try:  # the variable is text; the config's value is a number, as every whole-number field ("3" is refused)
        return check_whole(field, int(value) if field == THREADS_ENV else value, 0, MAX_THREADS)
    except (ConfigError, ValueError):  # (int("x") is a ValueError)
        raise ConfigError(field, f"expected a whole number of threads in [0, {MAX_THREADS}] (0 = library "
                                 f"defaults), got {value!r}") from None


def limit_threads(requested: Any = None) -> int:
    """Set torch's and numpy's BLAS / OpenMP pools of this process (and of its future children).

    Sets ``torch.set_num_threads``, limits the already loaded BLAS / OpenMP libraries through
    ``threadpoolctl``, and exports ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` /
    ``MKL_NUM_THREADS`` and ``ECNGYM_THREADS`` so that worker processes started later (vector-env
    workers, Ray env runners on this machine) load their libraries with the same limit.

    Args:
        requested: Threads per pool (see :func:`resolve_threads`); 0 changes nothing.

    Returns:
        The thread count applied (0 = untouched).
    """
    n = resolve_threads(requested)
    if n == 0:
        return 0
    for var in (*_POOL_VARS, THREADS_ENV):
        os.environ[var] = str(n)
    from threadpoolctl import threadpool_limits

    threadpool_limits(n)
    import torch

    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


def in_worker(factory: Callable[[], Any], threads: int) -> Callable[[], Any]:
    """Wrap an env factory so the worker process limits its pools before building the env.

    Args:
        factory: Zero-argument env factory (pickled to the worker).
        threads: Threads per pool in the worker (the training process's setting).
    """
    return _WorkerFactory(factory, threads)


class _WorkerFactory:
    """A picklable factory that calls :func:`limit_threads` first (see :func:`in_worker`)."""

    def __init__(self, factory: Callable[[], Any], threads: int) -> None:
        self.factory = factory
        self.threads = threads

    def __call__(self) -> Any:
        limit_threads(self.threads)
        return self.factory()
