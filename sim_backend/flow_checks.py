"""The checks of a flow table's rows and columns: the one form of their messages.

Shared by the fabric's flow table (:func:`~ecngym.sim_backend.flows.as_flow_table`), a trace
(:class:`~ecngym.workloads.Trace`) and the HPCC text readers (:mod:`ecngym.sim_backend.hpcc_flow_file`,
:mod:`ecngym.sim_backend.topology`); it imports neither, so each of them can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.error import ConfigError, first_offending, shown
from ecngym.validation import is_finite_number

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import pandas as pd


def check_columns_once(columns: pd.Index, read: tuple[str, ...] | None = None) -> None:
    """Refuse a column named more than once (of those ``read``, default every one): ``flows[c]`` would be a table.

    Raises:
        ConfigError: Naming ``flows``, the column and how often it appears.
    """
    counts = columns.value_counts()
    twice = [c for c in (read if read is not None else counts.index) if counts.get(c, 0) > 1]
    if twice:
        raise ConfigError("flows", f"column {twice[0]!r} appears {counts[twice[0]]} times; each column may appear once")


def whole_number_column(col: str, values: np.ndarray) -> np.ndarray:
    """A flow-table column as int64; whole-valued floats convert, anything else is refused.

    The one check of integer flow columns (:func:`~ecngym.sim_backend.flows.as_flow_table` and
    :class:`~ecngym.workloads.Trace`).
    A value int64 cannot hold (2^63 and beyond) is refused as given, never wrapped.

    Raises:
        ConfigError: Naming ``flows.<col>`` and the first row that is not a whole number in
            [-2^63, 2^63) (a fraction, NaN, a string, a boolean, a timestamp ...), and how many
            more are not (:func:`check_rows`).
    """
    if values.dtype.kind == "i":
        return values.astype(np.int64)
    if values.dtype.kind == "u":
        ok = values <= np.iinfo(np.int64).max  # beyond it, a cast to int64 would wrap negative
    elif values.dtype.kind == "f":
        ok = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**63)
    elif values.dtype == object:
        ok = np.array([_is_whole(v) for v in values], dtype=bool)
    else:  # strings, booleans, timestamps ...
        ok = np.zeros(len(values), dtype=bool)
    if not ok.all():
        check_rows(f"flows.{col}", ~ok, lambda row: f"expected a whole number in [-2^63, 2^63), "
                                                     f"got {shown(values[row])}")
    return values.astype(np.int64)


def _is_whole(value: Any) -> bool:
    return is_finite_number(value) and value == int(value) and -(2**63) <= int(value) < 2**63


def check_rows(field: str, bad: Any, message: Callable[[int], str]) -> None:
    """Refuse a flow table's bad rows: the one form of the message naming them.

    ``flows.dst: row 3 (and 2 more): 5 equals src``: the first bad row, what is wrong with it and
    how many more rows are bad (:func:`~ecngym.error.first_offending`). Nothing is computed unless
    a row is bad.

    Args:
        field: The column (``flows.dst``), or the file and column.
        bad: One flag per row (a boolean array or Series).
        message: What is wrong with a row, given its (0-based) index.

    Raises:
        ConfigError: Naming ``field``, if any row is bad.
    """
    mask = np.asarray(bad)
    if mask.any():
        row, more = first_offending(np.flatnonzero(mask))
        raise ConfigError(field, f"row {row}{more}: {message(row)}")


def check_has_flows(field: str, flows: Any, description: str) -> None:
    """Refuse a trace given to be replayed (``ecngym compare``'s ``trace``, ``env.trace``) that has no flows.

    The one check of both: an empty file ran an env's every episode without traffic, while
    compare refused it.

    Args:
        field: The option that gave the trace (``trace``, ``env.trace``).
        flows: The trace's flow table (a DataFrame) or the :class:`~ecngym.workloads.Trace`.
        description: The trace as the message names it (its path).

    Raises:
        ConfigError: Naming ``field``, if the trace has no flows.
    """
    if len(flows) == 0:
        raise ConfigError(field, f"{description} has no flows: replaying it would simulate no traffic; give a "
                                 "trace with at least one flow")
