"""Normalise a flow table (a Trace, a DataFrame, a mapping, a Parquet / HPCC file) for the fabric.

pandas is imported only where a table is (or must become) a DataFrame: a process that builds a
fabric from a mapping of column arrays never loads it (its import costs more than the rest of the
fabric's together).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.error import ConfigError, shown
from ecngym.files import check_input_file
from ecngym.sim_backend.config import DelayClasses
from ecngym.sim_backend.flow_checks import check_columns_once, check_rows, whole_number_column
from ecngym.sim_backend.flow_columns import (
    DEFAULT_DPORT,
    DEFAULT_PRIORITY,
    DESCRIPTIVE_COLUMNS,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
)
from ecngym.sim_backend.hpcc_flow_file import parse_hpcc_flow_arrays, parse_hpcc_flow_file
from ecngym.units import MAX_BYTES, MAX_TIME_NS
from ecngym.validation import check

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import pandas as pd


def as_flow_table(flows: Any, num_hosts: int | None = None, topology: Any = None) -> pd.DataFrame:
    """Return a validated DataFrame with src, dst, size_bytes, start_ns, priority, dport columns.

    :func:`flow_table_arrays` as a DataFrame (the same checks and errors).
    """
    import pandas as pd

    return pd.DataFrame(flow_table_arrays(flows, num_hosts, topology), copy=False)


def flow_table_arrays(flows: Any, num_hosts: int | None = None, topology: Any = None) -> dict[str, np.ndarray]:
    """Return the validated flow table as int64 arrays: src, dst, size_bytes, start_ns, priority, dport.

    An optional ``extra_delay_ns`` column (>= 0) is kept: each flow's extra base delay (host
    processing, RTT variation; see :func:`with_delay_classes`).

    Args:
        flows: An ``ecngym.workloads.Trace`` (anything with a ``flows`` DataFrame), a DataFrame,
            a mapping of column arrays, or a path to a Parquet trace / HPCC flow file.
        num_hosts: If given, host indices must lie in ``[0, num_hosts)``.
        topology: The :class:`~ecngym.sim_backend.topology.Topology` an HPCC flow file's node ids
            refer to (mapped to our host indices); default: ids are host indices.

    Raises:
        ConfigError: Naming the column, the first bad row and how many more rows are bad
            (:func:`check_rows`); ``flows`` and each column's length if a mapping's columns are
            not flat arrays of one length; ``flows`` and the column for one named twice or one
            not in :data:`REQUIRED_COLUMNS`, :data:`OPTIONAL_COLUMNS` or :data:`DESCRIPTIVE_COLUMNS`.
    """
    if isinstance(flows, (str, Path)):
        flows = read_flows(flows, topology, as_arrays=True)
    if hasattr(flows, "flows") and _is_frame(flows.flows):
        flows = flows.flows
    source = _plain_columns(flows) if isinstance(flows, dict) else None
    if source is None:
        source = _frame_columns(_columns_frame(flows) if isinstance(flows, dict) else flows)
    names, n, frame_columns = source
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise ConfigError("flows", f"missing column(s) {missing}; need {list(REQUIRED_COLUMNS)}")
    if frame_columns is not None:  # (a mapping names each column once)
        check_columns_once(frame_columns)
    _check_column_names(names)
    given = {c: names[c]() for c in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if c in names}
    given.setdefault("priority", np.full(n, DEFAULT_PRIORITY))
    given.setdefault("dport", np.full(n, DEFAULT_DPORT))
    order = (*REQUIRED_COLUMNS, "priority", "dport", "extra_delay_ns")
    table = {col: whole_number_column(col, given[col]) for col in order if col in given}
    if "extra_delay_ns" in table:
        _check(table, "extra_delay_ns", table["extra_delay_ns"] < 0, "must be >= 0")
    _check(table, "size_bytes", table["size_bytes"] <= 0, "must be > 0")
    _check(table, "size_bytes", table["size_bytes"] > MAX_BYTES, "must be <= 2^53")
    _check(table, "start_ns", table["start_ns"] < 0, "must be >= 0")
    _check(table, "start_ns", table["start_ns"] > MAX_TIME_NS, "must be <= 2^62 ns")
    _check(table, "src", table["src"] < 0, "must be >= 0")
    _check(table, "dst", table["dst"] < 0, "must be >= 0")
    _check(table, "dst", table["src"] == table["dst"], "equals src")
    if num_hosts is not None:
        _check(table, "src", table["src"] >= num_hosts, f"must be < {num_hosts} (hosts)")
        _check(table, "dst", table["dst"] >= num_hosts, f"must be < {num_hosts} (hosts)")
    _check(table, "priority", (table["priority"] < 1) | (table["priority"] > 7), "must be in [1, 7]")
    _check(table, "dport", (table["dport"] < 0) | (table["dport"] > 65535), "must be in [0, 65535]")
    return table


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (never one if pandas was not imported: none was made)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


#: A table's columns by name (each read on demand, as a NumPy array), its number of rows, and a
#: DataFrame's column index (None for a mapping)
_Columns = tuple[dict[Any, Any], int, Any]


def _frame_columns(flows: Any) -> _Columns:
    """A DataFrame's columns, each read when asked (after :func:`check_columns_once`: a twice-named one is a table).

    Raises:
        ConfigError: Naming ``flows`` if it is no DataFrame (nor a Trace, mapping or path).
    """
    if not _is_frame(flows):
        raise ConfigError("flows", f"expected a Trace, DataFrame, mapping or path, got {type(flows).__name__}")
    return {c: (lambda c=c: flows[c].to_numpy()) for c in flows.columns}, len(flows), flows.columns


def _plain_columns(columns: dict[Any, Any]) -> _Columns | None:
    """A mapping's columns without pandas, if each is what a DataFrame would hold unchanged.

    That is a 1-D integer or float array, or a list / tuple of Python ints in int64's range, all of
    one length. Anything else (a Series, other types, scalars, unequal lengths) returns None: the
    mapping then becomes a DataFrame (:func:`_columns_frame`), whose conversions and errors apply.
    """
    arrays: dict[Any, np.ndarray] = {}
    for name, values in columns.items():
        if type(values) is np.ndarray and values.ndim == 1 and (values.dtype.kind in "iu" or values.dtype in _FLOATS):
            arrays[name] = values
        elif type(values) in (list, tuple) and all(type(v) is int and -(2**63) <= v < 2**63 for v in values):
            arrays[name] = np.array(values, dtype=np.int64)
        else:
            return None
    if len({len(a) for a in arrays.values()}) > 1:
        return None
    return {c: (lambda a=a: a) for c, a in arrays.items()}, len(next(iter(arrays.values()), ())), None


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def new_flow_table(flows: Any, topology: Any, now_ns: int, num_queues: int) -> pd.DataFrame:
    """``flows`` checked as flows to add to a fabric running at ``now_ns`` (``Fabric.replace_pending_flows``).

    Args:
        flows: A flow table (:func:`as_flow_table` reads it).
        topology: The fabric's :class:`~ecngym.sim_backend.topology.Topology`.
        now_ns: The fabric's time: no flow may start before it.
        num_queues: The fabric's queues (a priority needs a data queue, 1 .. num_queues - 1).

    Returns:
        The validated table.

    Raises:
        ConfigError: Naming ``flows.<column>`` and the first bad row (as :func:`as_flow_table`;
            a start before now; a priority without a queue).
    """
    table = as_flow_table(flows, num_hosts=topology.num_hosts, topology=topology)
    _check(table, "start_ns", table["start_ns"] < now_ns,
           f"ns is before now ({now_ns} ns): only flows that start from now on can replace the pending ones")
    _check(table, "priority", table["priority"] >= num_queues,
           f"has no data queue: the fabric has queues 1..{num_queues - 1} (fabric.num_queues = {num_queues})")
    return table


def joined_flow_tables(first: pd.DataFrame, then: pd.DataFrame) -> pd.DataFrame:
    """Two flow tables as one (row ids from 0), an ``extra_delay_ns`` column of one given 0 in the other."""
    import pandas as pd

    if ("extra_delay_ns" in first.columns) != ("extra_delay_ns" in then.columns):
        first, then = (t if "extra_delay_ns" in t.columns else t.assign(extra_delay_ns=np.zeros(len(t), np.int64))
                       for t in (first, then))
    return pd.concat([first, then], ignore_index=True)


def _check_column_names(columns: Any) -> None:
    """Refuse a column the fabric does not know (a misspelt ``priorty`` was dropped).

    Raises:
        ConfigError: Naming ``flows``, the column, and the columns a flow table may have.
    """
    import difflib

    known = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, *DESCRIPTIVE_COLUMNS)
    for c in columns:
        if c not in known:
            close = difflib.get_close_matches(str(c), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError("flows", f"unknown column {c!r}{hint}; the fabric reads {list(REQUIRED_COLUMNS)}, "
                                       f"optionally {list(OPTIONAL_COLUMNS)}, and allows {list(DESCRIPTIVE_COLUMNS)}")


def with_delay_classes(flows: pd.DataFrame, classes: Any, seed: int = 0) -> pd.DataFrame:
    """Return a copy of a flow table whose flows each get an extra base delay drawn from classes.

    This is how ECN#'s experiments create RTT variation (ECN#; docs: algorithms/ecn-sharp.md §8 note 3: the
    authors' code picks one of the host delay classes {1, 20, 50, 80, 160} us per flow). The
    receiver of a flow answers that much later, so the flow's base RTT, and the ideal FCT its
    slowdown is measured against, include it.

    Args:
        flows: A flow table (DataFrame with at least src, dst, size_bytes, start_ns).
        classes: Delay classes (ns or duration strings such as "20us"), picked uniformly: a list,
            tuple or 1-D array (:data:`~ecngym.sim_backend.config.DelayClasses`).
        seed: Seed of the per-flow choice.

    Raises:
        ConfigError: Naming ``delay_classes`` if ``classes`` is no list (a string, a set, a number)
            or an empty one, or ``delay_classes[i]`` for a negative or malformed delay.
    """
    if isinstance(classes, np.ndarray):
        classes = classes.tolist()
    values = check("delay_classes", classes, DelayClasses)
    out = flows.copy()
    rng = np.random.default_rng(seed)
    out["extra_delay_ns"] = np.asarray(values, dtype=np.int64)[rng.integers(0, len(values), len(out))]
    return out


def _columns_frame(columns: dict[Any, Any]) -> pd.DataFrame:
    """A mapping of column arrays as a DataFrame.

    Raises:
        ConfigError: Naming ``flows`` and each column's length (or shape, or scalar value) if the
            columns are not flat arrays of one length.
    """
    import pandas as pd

    try:
        return pd.DataFrame(columns)
    except ValueError:  # pandas: "All arrays must be of the same length", "If using all scalar values ..."
        sizes = ", ".join(f"{name}: {_size(values)}" for name, values in columns.items())
        raise ConfigError("flows", f"expected columns of one length (one entry per flow), got {sizes}") from None


def _size(values: Any) -> str:
    """How long a column is, for a message: its length, its shape if not flat, or the scalar given."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        return f"scalar {shown(values)}"
    shape = np.shape(values) if isinstance(values, np.ndarray) else (len(values),)
    return str(shape[0]) if len(shape) == 1 else f"shape {shape}"


def _check(table: dict[str, np.ndarray], col: str, bad: np.ndarray, message: str) -> None:
    check_rows(f"flows.{col}", bad, lambda row: f"{shown(table[col][row])} {message}")


def read_flows(path: Any, topology: Any = None, field: str = "flows",
               expected: str = "a Parquet trace or an HPCC flow file", *, as_arrays: bool = False) -> Any:
    """Read a Parquet trace (``.parquet``, a verified :class:`~ecngym.workloads.Trace`) or an HPCC flow file.

    The path's one check (:func:`~ecngym.files.check_input_file`); the table is read but not yet
    checked against a topology (:func:`as_flow_table` does that).

    Args:
        path: The file.
        topology: The topology an HPCC flow file's node ids refer to (:func:`read_hpcc_flow_file`).
        field: The option that gave the path, named if it names no file.
        expected: What the file should be, for that message.
        as_arrays: Return an HPCC file's table as arrays by column
            (:func:`~ecngym.sim_backend.hpcc_flow_file.parse_hpcc_flow_arrays`: no pandas).

    Returns:
        The :class:`~ecngym.workloads.Trace` or the HPCC file's flow table (a DataFrame, or its arrays).

    Raises:
        ConfigError: Naming ``field`` if ``path`` names no file, else as the reader raises it
            (the file and line of a malformed HPCC entry, ``trace`` for a Parquet trace).
    """
    path = check_input_file(field, path, expected)  # (the one check)
    if path.suffix == ".parquet":
        from ecngym.workloads import Trace

        return Trace.parse_parquet(path)
    return (parse_hpcc_flow_arrays if as_arrays else parse_hpcc_flow_file)(path, topology)
