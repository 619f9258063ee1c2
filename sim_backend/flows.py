"""Normalise a flow table (a Trace, a DataFrame, a Parquet / HPCC file) for the fabric."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import ConfigError, first_offending, shown
from ecngym.files import check_input_file
from ecngym.sim_backend.config import DelayClasses
from ecngym.sim_backend.flow_columns import (
    DEFAULT_DPORT,
    DEFAULT_PRIORITY,
    DESCRIPTIVE_COLUMNS,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
)
from ecngym.units import MAX_BYTES, MAX_TIME_NS
from ecngym.validation import check, is_finite_number

#: A whole-number column of an HPCC flow line: digits, maybe a minus (the row checks name negatives).
_INTEGER = re.compile(r"-?[0-9]+")
#: The most bad lines of an HPCC flow file one error quotes (the rest are counted).
MAX_REPORTED_LINES = 10
#: An HPCC flow file's start: whole seconds, then up to 9 decimals (ns); no sign, no exponent.
_START_S = re.compile(r"([0-9]+)(?:\.([0-9]{1,9}))?")


def as_flow_table(flows: Any, num_hosts: int | None = None, topology: Any = None) -> pd.DataFrame:
    """Return a validated DataFrame with src, dst, size_bytes, start_ns, priority, dport columns.

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
        flows = read_flows(flows, topology)
    if hasattr(flows, "flows") and isinstance(flows.flows, pd.DataFrame):
        flows = flows.flows
    if isinstance(flows, dict):
        flows = _columns_frame(flows)
    if not isinstance(flows, pd.DataFrame):
        raise ConfigError("flows", f"expected a Trace, DataFrame, mapping or path, got {type(flows).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in flows.columns]
    if missing:
        raise ConfigError("flows", f"missing column(s) {missing}; need {list(REQUIRED_COLUMNS)}")
    _check_column_names(flows.columns)
    table = pd.DataFrame(
        {
            "src": flows["src"].to_numpy(),
            "dst": flows["dst"].to_numpy(),
            "size_bytes": flows["size_bytes"].to_numpy(),
            "start_ns": flows["start_ns"].to_numpy(),
            "priority": (
                flows["priority"].to_numpy() if "priority" in flows.columns
                else np.full(len(flows), DEFAULT_PRIORITY)
            ),
            "dport": (
                flows["dport"].to_numpy() if "dport" in flows.columns
                else np.full(len(flows), DEFAULT_DPORT)
            ),
        }
    )
    if "extra_delay_ns" in flows.columns:
        table["extra_delay_ns"] = flows["extra_delay_ns"].to_numpy()
    for col in table.columns:
        table[col] = whole_number_column(col, table[col].to_numpy())
    if "extra_delay_ns" in table.columns:
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


def check_columns_once(columns: pd.Index, read: tuple[str, ...] | None = None) -> None:
    """Refuse a column named more than once (of those ``read``, default every one): ``flows[c]`` would be a table.

    Raises:
        ConfigError: Naming ``flows``, the column and how often it appears.
    """
    counts = columns.value_counts()
    twice = [c for c in (read if read is not None else counts.index) if counts.get(c, 0) > 1]
    if twice:
        raise ConfigError("flows", f"column {twice[0]!r} appears {counts[twice[0]]} times; each column may appear once")


def _check_column_names(columns: pd.Index) -> None:
    """Refuse a column named twice or one the fabric does not know (a misspelt ``priorty`` was dropped).

    Raises:
        ConfigError: Naming ``flows``, the column, and the columns a flow table may have.
    """
    import difflib

    known = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, *DESCRIPTIVE_COLUMNS)
    check_columns_once(columns)
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


def whole_number_column(col: str, values: np.ndarray) -> np.ndarray:
    """A flow-table column as int64; whole-valued floats convert, anything else is refused.

    The one check of integer flow columns (:func:`as_flow_table` and :class:`~ecngym.workloads.Trace`).
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


def _check(table: pd.DataFrame, col: str, bad: pd.Series, message: str) -> None:
    check_rows(f"flows.{col}", bad, lambda row: f"{shown(table[col].iloc[row])} {message}")


def read_flows(path: Any, topology: Any = None, field: str = "flows",
               expected: str = "a Parquet trace or an HPCC flow file") -> Any:
    """Read a Parquet trace (``.parquet``, a verified :class:`~ecngym.workloads.Trace`) or an HPCC flow file.

    The path's one check (:func:`~ecngym.files.check_input_file`); the table is read but not yet
    checked against a topology (:func:`as_flow_table` does that).

    Args:
        path: The file.
        topology: The topology an HPCC flow file's node ids refer to (:func:`read_hpcc_flow_file`).
        field: The option that gave the path, named if it names no file.
        expected: What the file should be, for that message.

    Returns:
        The :class:`~ecngym.workloads.Trace` or the HPCC file's flow table (a DataFrame).

    Raises:
        ConfigError: Naming ``field`` if ``path`` names no file, else as the reader raises it
            (the file and line of a malformed HPCC entry, ``trace`` for a Parquet trace).
    """
    path = check_input_file(field, path, expected)  # (the one check)
    if path.suffix == ".parquet":
        from ecngym.workloads import Trace

        return Trace._load(path)
    return _read_hpcc_flow_file(path, topology)


def read_hpcc_flow_file(path: str | Path, topology: Any = None) -> pd.DataFrame:
    """Read the HPCC flow format: line 1 the count; then ``src dst priority dport size start_s``.

    Each flow line has exactly those 6 columns; ``start_s`` is a non-negative number of seconds
    with at most 9 decimals (parsed exactly to the ns). The count must equal the number of flow
    lines. Blank lines are skipped (line numbers in errors count them).

    ``src`` / ``dst`` are node ids of the topology file; given its ``topology``
    (:func:`~ecngym.sim_backend.topology.from_hpcc_file`), they become our host indices
    (:meth:`Topology.hosts_of_node_ids`); without it they are taken as host indices.

    Raises:
        ConfigError: If ``path`` names no file; naming the file and the line of a malformed header
            (not one whole number, or a count other than the number of flow lines), else every
            malformed flow line (the first :data:`MAX_REPORTED_LINES` quoted, the rest counted):
            a line without exactly 6 columns, a non-integer field or one beyond 64 bits, or a
            start that is negative, not ``S[.fffffffff]`` or beyond 2^62 ns.
    """
    return _read_hpcc_flow_file(check_input_file("flows", path, "an HPCC flow file"), topology)


def whole_token(text: str) -> int | None:
    """A whole number of an HPCC text file (flow or topology file), or ``None`` if it is none.

    Digits, maybe after a minus (``int()`` also takes ``+5``, ``1_0`` and spaces), within a 64-bit
    signed integer (``int()`` is not asked to read thousands of digits, which it refuses).
    """
    digits = text.lstrip("-").lstrip("0") or "0"  # (leading zeros: int() refuses over 4300 digits)
    if not _INTEGER.fullmatch(text) or len(digits) > 19:
        return None
    value = int(digits) * (-1 if text.startswith("-") else 1)
    return value if -(2**63) <= value < 2**63 else None


def _flow_line(ln_no: int, parts: list[str]) -> tuple[int, int, int, int, int, int]:
    """One flow line of an HPCC flow file as ``(src, dst, size, start_ns, priority, dport)``.

    Args:
        ln_no: Its line number (1-based, blank lines counted), named in the error.
        parts: Its whitespace-separated columns.

    Raises:
        ValueError: ``line N: what is wrong`` (the caller gathers every bad line into one error).
    """
    expected = f"line {ln_no}: expected 6 columns 'src dst priority dport size start_s'"
    if len(parts) != 6:
        raise ValueError(f"{expected}, got {len(parts)}: {' '.join(parts)!r}")
    if not all(_INTEGER.fullmatch(x) for x in parts[:5]):  # (int() also takes '1_0' and '+5')
        raise ValueError(f"{expected} with whole numbers, got {' '.join(parts)!r}")
    values = []
    for name, text in zip(("src", "dst", "priority", "dport", "size"), parts[:5], strict=True):
        value = whole_token(text)
        if value is None:  # (a 64-bit table could not hold it)
            digits = len(text.lstrip("-").lstrip("0"))
            shown_value = text if len(text) <= 40 else f"{text[:20]}... ({digits} digits)"
            raise ValueError(f"line {ln_no}: {name} got {shown_value}, allowed range is [-2^63, 2^63)")
        values.append(value)
    src, dst, prio, dport, size = values
    start = _START_S.fullmatch(parts[5])
    if start is None:
        raise ValueError(f"line {ln_no}: start_s must be seconds >= 0 with at most 9 decimals (S or S.fffffffff), "
                         f"got {parts[5]!r}")
    seconds = start[1].lstrip("0") or "0"
    # exact to the ns (no float rounding); past 12 digits of seconds it is beyond 2^62 ns anyway
    start_ns = (int(seconds) * 1_000_000_000 + int((start[2] or "").ljust(9, "0")) if len(seconds) <= 12
                else MAX_TIME_NS + 1)
    if start_ns > MAX_TIME_NS:
        shown_start = parts[5] if len(parts[5]) <= 40 else f"{parts[5][:20]}... ({len(seconds)} digits)"
        raise ValueError(f"line {ln_no}: start_s got {shown_start}, allowed: at most 2^62 ns "
                         f"(~{MAX_TIME_NS // 1_000_000_000} s)")
    return src, dst, size, start_ns, prio, dport


def _read_hpcc_flow_file(path: Path, topology: Any = None) -> pd.DataFrame:
    """:func:`read_hpcc_flow_file` of a path already checked to name a file."""
    field = f"flows ({path})"
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(field, f"cannot read as an HPCC flow file: {exc}") from None
    lines = [(no, ln.split()) for no, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if not lines:
        raise ConfigError(field, "empty file")
    header_no, header = lines[0]
    if len(header) != 1 or not re.fullmatch(r"[0-9]+", header[0]):
        raise ConfigError(field, f"line {header_no}: expected the flow count (one whole number >= 0), "
                                 f"got {' '.join(header)!r}")
    count = int(header[0])
    if count != len(lines) - 1:
        raise ConfigError(field, f"line {header_no}: header says {count} flows, file has "
                                 f"{len(lines) - 1} flow lines")
    rows, bad = [], []
    for ln_no, parts in lines[1:]:
        try:
            rows.append(_flow_line(ln_no, parts))
        except ValueError as exc:  # every bad line is reported, not only the first
            bad.append(str(exc))
    if bad:
        more = len(bad) - MAX_REPORTED_LINES
        raise ConfigError(field, "; ".join(bad[:MAX_REPORTED_LINES]) + (f" (and {more} more bad lines)" if more > 0
                                                                          else ""))
    table = pd.DataFrame(rows, columns=["src", "dst", "size_bytes", "start_ns", "priority", "dport"])
    if topology is not None and len(table):
        for col in ("src", "dst"):
            table[col] = topology.hosts_of_node_ids(table[col].to_numpy(), f"flows ({path}).{col}")
    return table
