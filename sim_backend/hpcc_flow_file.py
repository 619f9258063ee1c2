"""The HPCC simulator's flow file format (``flow.txt``): read into a flow table, every bad line named.

Also the whole-number token of HPCC text files, which the topology file reader
(:func:`~ecngym.sim_backend.topology.from_hpcc_file`) shares.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ecngym.error import ConfigError
from ecngym.files import check_input_file
from ecngym.units import MAX_TIME_NS

if TYPE_CHECKING:  # pragma: no cover - annotations only: the arrays' reader needs no pandas
    import pandas as pd

#: A whole-number column of an HPCC text file: digits, maybe a minus (the row checks name negatives).
INTEGER_TOKEN = re.compile(r"-?[0-9]+")
#: The most bad lines of an HPCC flow file one error quotes (the rest are counted).
MAX_REPORTED_LINES = 10
#: An HPCC flow file's start: whole seconds, then up to 9 decimals (ns); no sign, no exponent.
_START_S = re.compile(r"([0-9]+)(?:\.([0-9]{1,9}))?")


def whole_token(text: str) -> int | None:
    """A whole number of an HPCC text file (flow or topology file), or ``None`` if it is none.

    Digits, maybe after a minus (``int()`` also takes ``+5``, ``1_0`` and spaces), within a 64-bit
    signed integer (``int()`` is not asked to read thousands of digits, which it refuses).
    """
    digits = text.lstrip("-").lstrip("0") or "0"  # (leading zeros: int() refuses over 4300 digits)
    if not INTEGER_TOKEN.fullmatch(text) or len(digits) > 19:
        return None
    value = int(digits) * (-1 if text.startswith("-") else 1)
    return value if -(2**63) <= value < 2**63 else None


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
    return parse_hpcc_flow_file(check_input_file("flows", path, "an HPCC flow file"), topology)


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
    if not all(INTEGER_TOKEN.fullmatch(x) for x in parts[:5]):  # (int() also takes '1_0' and '+5')
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


#: The columns of an HPCC flow file's table, in order
FLOW_FILE_COLUMNS = ("src", "dst", "size_bytes", "start_ns", "priority", "dport")


def parse_hpcc_flow_file(path: Path, topology: Any = None) -> pd.DataFrame:
    """:func:`read_hpcc_flow_file` of a path already checked to name a file (:func:`~ecngym.files.check_input_file`)."""
    import pandas as pd

    rows = _flow_rows(path)
    table = pd.DataFrame(rows, columns=list(FLOW_FILE_COLUMNS))
    if topology is not None and len(table):
        for col in ("src", "dst"):
            table[col] = topology.hosts_of_node_ids(table[col].to_numpy(), f"flows ({path}).{col}")
    return table


def parse_hpcc_flow_arrays(path: Path, topology: Any = None) -> dict[str, np.ndarray]:
    """:func:`parse_hpcc_flow_file`'s table as int64 arrays by column, without pandas (the same checks and errors)."""
    rows = _flow_rows(path)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), len(FLOW_FILE_COLUMNS))
    arrays = {col: table[:, i].copy() for i, col in enumerate(FLOW_FILE_COLUMNS)}
    if topology is not None and len(rows):
        for col in ("src", "dst"):
            arrays[col] = topology.hosts_of_node_ids(arrays[col], f"flows ({path}).{col}")
    return arrays


def _flow_rows(path: Path) -> list[tuple[int, int, int, int, int, int]]:
    """An HPCC flow file's flows as ``(src, dst, size, start_ns, priority, dport)``, every bad line named.

    Raises:
        ConfigError: As :func:`read_hpcc_flow_file` says.
    """
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
    return rows
