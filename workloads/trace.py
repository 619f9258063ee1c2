"""A trace: the flow table every controller is judged on, with its provenance and content hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ecngym.error import ConfigError
from ecngym.files import check_input_file, check_output_path, write_atomically, write_text_atomically

# a user table needs the required columns (the others get defaults: priority 3, tag "custom")
from ecngym.sim_backend.flow_checks import check_columns_once, check_has_flows, check_rows, whole_number_column
from ecngym.sim_backend.flow_columns import DEFAULT_DPORT, DEFAULT_PRIORITY, REQUIRED_COLUMNS
from ecngym.sim_backend.hpcc_flow_file import parse_hpcc_flow_file
from ecngym.validation import Rate, Whole, check, check_whole

#: Columns and dtypes of a trace table, in hashing order.
COLUMNS: dict[str, str] = {
    "flow_id": "int64",
    "src": "int32",
    "dst": "int32",
    "size_bytes": "int64",
    "start_ns": "int64",
    "priority": "int8",
    "tag": "str",
}
#: Optional columns, kept (and hashed, after :data:`COLUMNS`) only where they say something: ``dport``
#: (the destination port the HPCC ECMP hash reads) when some flow's differs from the default 100.
OPTIONAL_COLUMNS: dict[str, str] = {"dport": "int32"}
_META_PREFIX = b"ecngym."


def content_hash(flows: pd.DataFrame) -> str:
    r"""SHA-256 of a canonical byte serialisation of the table (never of a file format).

    For each column of :data:`COLUMNS`, then of :data:`OPTIONAL_COLUMNS` the table has, in that
    order, the hash takes the header
    ``"<name>:<dtype>\n"`` (UTF-8), then the values: numeric columns as little-endian
    fixed-width integers of that dtype; the ``tag`` column as the UTF-8 tags joined by NUL bytes.
    So the same table hashes the same on any machine, byte order and library version.

    Args:
        flows: A table with the columns of :data:`COLUMNS` (a :attr:`Trace.flows`).

    Returns:
        The hex digest (64 characters).
    """
    h = hashlib.sha256()
    for col, dtype in _columns(flows).items():
        h.update(f"{col}:{dtype}\n".encode())
        if dtype == "str":
            # "\0".join(tags).encode(), built from the (few) distinct tags: fast for millions of rows
            codes, uniques = pd.factorize(flows[col].astype(str), sort=False)
            pieces = np.array([str(u).encode() for u in uniques] or [b""], dtype=object)
            h.update(b"\0".join(pieces[codes].tolist()))
        else:
            little_endian = np.dtype(dtype).newbyteorder("<")
            h.update(np.ascontiguousarray(flows[col].to_numpy(dtype), dtype=little_endian).tobytes())
    return h.hexdigest()


def _columns(flows: pd.DataFrame) -> dict[str, str]:
    """The columns of a canonical table: :data:`COLUMNS`, then the optional ones it has."""
    return {**COLUMNS, **{c: t for c, t in OPTIONAL_COLUMNS.items() if c in flows.columns}}


def _provenance(params: Any) -> dict[str, Any]:
    """A trace's ``params`` as a dict, checked to be a mapping (what :meth:`Trace.load` reads back).

    Raises:
        ConfigError: Naming ``params`` if it is no mapping.
    """
    if not isinstance(params, Mapping):
        raise ConfigError("params", f"expected a mapping of provenance fields, got {params!r}")
    return dict(params)


def _start_order(start: np.ndarray, src: np.ndarray, dst: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Stable sort order by ``(start, src, dst, size)``.

    Equal to ``np.lexsort((size, dst, src, start))``, but only the rows sharing a start time
    (incast bursts, shuffles) are sorted on all four keys: ~5x faster on millions of flows.
    """
    order = np.argsort(start, kind="stable")
    s = start[order]
    tied = np.zeros(len(s), dtype=bool)
    same = s[1:] == s[:-1]
    tied[1:] |= same
    tied[:-1] |= same
    if tied.any():
        pos = np.flatnonzero(tied)  # whole blocks of equal start, in start order
        sub = order[pos]  # within a block: input order (the argsort is stable)
        order[pos] = sub[np.lexsort((size[sub], dst[sub], src[sub], start[sub]))]
    return order


def _canonical(flows: pd.DataFrame) -> pd.DataFrame:
    """The validated table: canonical columns and dtypes, sorted by start time, flow ids 0..n-1.

    Rows are ordered by ``(start_ns, src, dst, size_bytes)``, ties kept in input order.

    Raises:
        ConfigError: Naming the column and the (0-based, input-order) row of the first bad value,
            and how many more rows are bad (:func:`~ecngym.sim_backend.flow_checks.check_rows`); naming
            ``flows`` if a column the trace reads is missing or appears more than once.
    """
    if not isinstance(flows, pd.DataFrame):
        raise ConfigError("flows", f"expected a pandas DataFrame, got {type(flows).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in flows.columns]
    if missing:
        raise ConfigError("flows", f"missing column(s) {missing}; a trace needs {list(REQUIRED_COLUMNS)} "
                                   "(priority and tag optional)")
    # (of the columns it reads: the others are dropped, so their repeats do not matter)
    check_columns_once(flows.columns, tuple(c for c in (*COLUMNS, *OPTIONAL_COLUMNS) if c != "flow_id"))
    n = len(flows)
    data = {c: whole_number_column(c, flows[c].to_numpy()) for c in REQUIRED_COLUMNS}
    data["priority"] = (whole_number_column("priority", flows["priority"].to_numpy()) if "priority" in flows.columns
                        else np.full(n, DEFAULT_PRIORITY, dtype=np.int64))
    checks = [
        ("src", data["src"] < 0, "must be >= 0"),
        ("dst", data["dst"] < 0, "must be >= 0"),
        ("dst", data["src"] == data["dst"], "equals src (a flow needs two distinct hosts)"),
        ("src", data["src"] > np.iinfo(np.int32).max, "is too large for a host index"),
        ("dst", data["dst"] > np.iinfo(np.int32).max, "is too large for a host index"),
        ("size_bytes", data["size_bytes"] <= 0, "must be > 0"),
        ("start_ns", data["start_ns"] < 0, "must be >= 0"),
        ("priority", (data["priority"] < 1) | (data["priority"] > 7), "must be in [1, 7]"),
    ]
    if "dport" in flows.columns:
        dport = whole_number_column("dport", flows["dport"].to_numpy())
        checks.append(("dport", (dport < 0) | (dport > 65535), "must be in [0, 65535]"))
        if (dport != DEFAULT_DPORT).any():  # all default: the same trace as without the column
            data["dport"] = dport
    for col, bad, msg in checks:
        check_rows(f"flows.{col}", bad, lambda row, col=col, msg=msg: f"{int(data[col][row])} {msg}")
    tags = flows["tag"].astype(str).to_numpy() if "tag" in flows.columns else np.full(n, "custom", dtype=object)
    order = _start_order(data["start_ns"], data["src"], data["dst"], data["size_bytes"])
    out = {"flow_id": np.arange(n, dtype=np.int64)}
    for col, dtype in {**COLUMNS, **{c: t for c, t in OPTIONAL_COLUMNS.items() if c in data}}.items():
        if col == "flow_id":
            continue
        values = tags if col == "tag" else data[col]
        out[col] = values[order] if dtype == "str" else values[order].astype(dtype)
    df = pd.DataFrame(out)
    df["tag"] = df["tag"].astype(str)
    return df


@dataclass
class Trace:
    """A flow table plus what made it.

    Constructing a ``Trace`` validates and canonicalises the table (see :meth:`from_flows`) and
    computes its :func:`content_hash`.

    Attributes:
        flows: Columns ``flow_id`` (int64, 0..n-1 in start order), ``src``, ``dst`` (int32 host
            indices), ``size_bytes`` (int64), ``start_ns`` (int64), ``priority`` (int8, 1..7,
            default 3) and ``tag`` (str: ``"background"``, ``"incast"``, ...); ``dport`` (int32,
            the destination port) when some flow's is not the default 100.
        params: The generator's parameters (JSON-serialisable).
        seed: The generator's seed (``None`` for imported traces); a whole number (a NumPy integer
            is stored as a Python int, so that it can be saved).
        version: The ecngym version that made it.
        hash: SHA-256 of the table (:func:`content_hash`), hex.

    Raises:
        ConfigError: Naming the column and row of a bad flow (:meth:`from_flows`), ``seed`` if
            it is neither ``None`` nor a whole number, or ``params`` if it is no mapping (:meth:`load`
            could not read either back).
    """

    flows: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    version: str = ""
    hash: str = ""

    def __post_init__(self) -> None:
        if self.seed is not None:
            self.seed = check_whole("seed", self.seed)
        self.params = _provenance(self.params)
        self.flows = _canonical(self.flows)
        if not self.version:
            from ecngym import __version__

            self.version = __version__
        self.hash = content_hash(self.flows)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_flows(cls, flows: pd.DataFrame, params: dict[str, Any] | None = None) -> Trace:
        """Wrap and validate a user table.

        Args:
            flows: Columns ``src, dst, size_bytes, start_ns`` (whole numbers; floats that are whole
                are accepted), optionally ``priority`` (default 3), ``tag`` (default
                ``"custom"``) and ``dport`` (default 100). Other columns are dropped; rows are re-ordered by start time.
            params: Provenance to record, a mapping (merged with ``{"source": "user table"}``).

        Returns:
            The trace.

        Raises:
            ConfigError: Naming the column (``flows.dst``), the 0-based row of the first bad
                value and how many more rows are bad: a missing or repeated column, src == dst,
                size <= 0, start < 0, a non-integer; naming ``params`` if it is neither ``None`` nor a mapping.
        """
        given = {} if params is None else _provenance(params)
        return cls(flows, params={"source": "user table", **given})

    @classmethod
    def from_hpcc_flow_file(cls, path: str | Path) -> Trace:
        """Import the HPCC flow format.

        Line 1 is the flow count; then one ``src dst priority dport size_bytes start_s`` line per
        flow (``start_s`` in seconds, parsed exactly to the ns). Priority and ``dport`` are kept.

        Raises:
            ConfigError: Naming ``trace`` if ``path`` is no file; naming the file and line of a
                malformed entry.
        """
        return cls._from_hpcc_flow_file(check_input_file("trace", path, "an HPCC flow file"))

    @classmethod
    def _from_hpcc_flow_file(cls, path: Path) -> Trace:
        """:meth:`from_hpcc_flow_file` of a path already checked to name a file."""
        flows = parse_hpcc_flow_file(path)
        flows["tag"] = "hpcc"
        return cls(flows, params={"source": f"hpcc flow file {path.name}"})

    def to_hpcc_flow_file(self, path: str | Path) -> Path:
        """Export in the HPCC flow format, which :meth:`from_hpcc_flow_file` reads back exactly.

        Each flow's priority and destination port (``dport``, default 100; the HPCC ECMP hash
        reads it) are written as the trace has them.

        Args:
            path: File to write.

        Returns:
            ``path`` (parent folders are created).

        Raises:
            ConfigError: Naming ``path`` if it is no file name or names a directory, or it cannot be
                written (:func:`~ecngym.files.check_output_path`, as :meth:`save`).
        """
        path = check_output_path("path", path)
        f = self.flows
        start = f["start_ns"].to_numpy()
        seconds = pd.Series(start // 1_000_000_000).astype(str)
        nanos = pd.Series(start % 1_000_000_000).astype(str).str.zfill(9)

        dport = f["dport"].astype(str) if "dport" in f.columns else str(DEFAULT_DPORT)
        lines = (f["src"].astype(str) + " " + f["dst"].astype(str) + " " + f["priority"].astype(str)
                 + " " + dport + " " + f["size_bytes"].astype(str) + " " + seconds + "." + nanos)
        return write_text_atomically(path, "\n".join([str(len(f)), *lines.tolist()]) + "\n")

    # ------------------------------------------------------------------ storage
    def save(self, path: str | Path) -> Path:
        """Write Parquet; parameters, seed, version and hash go in the schema metadata.

        Returns:
            ``path`` (parent folders are created).

        Raises:
            ConfigError: Naming ``path`` if it is no file name ending in ``.parquet`` (what
                :meth:`read` takes for a Parquet trace) or names a directory.
        """
        path = check_output_path("path", path, ".parquet")
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pandas(self.flows, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta.update({
            _META_PREFIX + b"params": json.dumps(self.params, sort_keys=True, default=str).encode(),
            _META_PREFIX + b"seed": json.dumps(self.seed).encode(),
            _META_PREFIX + b"version": self.version.encode(),
            _META_PREFIX + b"hash": self.hash.encode(),
            _META_PREFIX + b"meta_hash": self.metadata_hash().encode(),
        })
        write_atomically(path, lambda tmp: pq.write_table(table.replace_schema_metadata(meta), tmp))
        return path

    def metadata_hash(self) -> str:
        """SHA-256 over the table's hash and the provenance (params, seed, version): what ``load`` verifies."""
        record = {"hash": self.hash, "params": self.params, "seed": self.seed, "version": self.version}
        return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()

    @classmethod
    def read(cls, path: str | Path, field: str = "trace", *, allow_empty: bool = False) -> Trace:
        """Read a Parquet trace (``.parquet``, :meth:`load`) or an HPCC flow file (any other path).

        Args:
            path: The file.
            field: The option that gave it, named in the errors.
            allow_empty: Accept a trace without flows (to look at it: ``ecngym trace inspect``); a
                trace read to be replayed (``env.trace``) must have one at least.

        Returns:
            The trace.

        Raises:
            ConfigError: Naming ``field`` if ``path`` is no file, or it has no flows and
                ``allow_empty`` is false (:func:`~ecngym.sim_backend.flow_checks.check_has_flows`), else
                as the reader raises it.
        """
        path = check_input_file(field, path, "a Parquet trace or an HPCC flow file")  # (the one check)
        trace = cls.parse_parquet(path) if path.suffix == ".parquet" else cls._from_hpcc_flow_file(path)
        if not allow_empty:
            check_has_flows(field, trace, str(path))
        return trace

    @classmethod
    def load(cls, path: str | Path, unverified_metadata: bool = False) -> Trace:
        """Read a Parquet trace written by :meth:`save` and verify its hashes.

        The hash is recomputed over the table exactly as stored (row order and flow ids
        included), so any edit of the flows makes the load fail; the metadata hash covers the
        params, seed and version, so an edit of those fails too.

        Args:
            path: The file.
            unverified_metadata: Accept a trace saved before metadata hashes existed (its table is
                still verified); re-``save`` it to add one.

        Raises:
            ConfigError: If the file is missing, unreadable, not an ecngym trace, or its table or
                metadata no longer match their stored hashes.
        """
        path = check_input_file("trace", path, "a Parquet trace ('ecngym trace generate')")
        return cls.parse_parquet(path, unverified_metadata)

    @classmethod
    def parse_parquet(cls, path: Path, unverified_metadata: bool = False) -> Trace:
        """:meth:`load` of a path already checked to name a file (:func:`~ecngym.files.check_input_file`)."""
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            raise ConfigError("trace", f"{path} is not a readable Parquet file: {exc}") from None
        meta = table.schema.metadata or {}
        if _META_PREFIX + b"hash" not in meta:
            raise ConfigError("trace", f"{path} is not an ecngym trace (no ecngym.hash metadata)")
        try:  # all the metadata read at once: any of it may be damaged (not UTF-8, not JSON, missing)
            stored_hash = meta[_META_PREFIX + b"hash"].decode()
            params = json.loads(meta[_META_PREFIX + b"params"])
            seed = json.loads(meta[_META_PREFIX + b"seed"])
            version = meta[_META_PREFIX + b"version"].decode()
        except (KeyError, ValueError) as exc:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise ConfigError("trace", f"{path}: damaged metadata ({type(exc).__name__}: {exc})") from None
        stored = table.to_pandas()
        if list(stored.columns) != list(_columns(stored)):
            raise ConfigError("trace", f"{path}: columns {list(stored.columns)} are not a trace's {list(COLUMNS)} "
                                       f"(+ optional {list(OPTIONAL_COLUMNS)})")
        try:
            actual = content_hash(stored)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ConfigError("trace", f"{path}: the table cannot be read as a trace: {exc}") from None
        if actual != stored_hash:
            raise ConfigError("trace", f"{path}: content hash {actual[:12]} does not match the stored "
                                       f"{stored_hash[:12]}: the table was altered")
        if not isinstance(params, dict) or not (seed is None or (isinstance(seed, int) and not isinstance(seed, bool))):
            raise ConfigError("trace", f"{path}: damaged metadata (params must be a mapping, seed an integer or null)")
        trace = cls(stored, params=params, seed=seed, version=version)
        if trace.hash != stored_hash:  # the stored table was not in canonical order
            raise ConfigError("trace", f"{path}: the table is not in canonical order (flow_id by start time)")
        stored_meta_hash = meta.get(_META_PREFIX + b"meta_hash")
        if stored_meta_hash is None:
            if not unverified_metadata:
                raise ConfigError("trace", f"{path} was saved by an older ecngym without a metadata hash, so its "
                                           f"params / seed cannot be verified; regenerate it, or re-save it with "
                                           f"Trace.load(path, unverified_metadata=True).save(path)")
        elif stored_meta_hash.decode(errors="replace") != trace.metadata_hash():
            raise ConfigError("trace", f"{path}: the metadata (params, seed, version) does not match its stored "
                                       f"hash: it was altered")
        return trace

    # ------------------------------------------------------------------ facts
    @property
    def n_hosts(self) -> int:
        """Hosts: ``params['hosts']`` when recorded, else the largest host index + 1."""
        recorded = self.params.get("hosts")
        if recorded:
            return int(recorded)
        return int(max(self.flows["src"].max(), self.flows["dst"].max())) + 1 if len(self.flows) else 0

    @property
    def duration_ns(self) -> int:
        """The generation window if recorded, else first to last flow start (0 for < 2 flows)."""
        if "duration_ns" in self.params:
            return int(self.params["duration_ns"])
        return int(self.flows["start_ns"].max() - self.flows["start_ns"].min()) if len(self.flows) else 0

    def achieved_load(self, link_rate_bps: float, n_hosts: int | None = None) -> float:
        """Offered load: total bytes x 8 / (hosts x link rate x :attr:`duration_ns`).

        Args:
            link_rate_bps: Host link rate in bit/s, or a rate string (``"100Gbps"``): a
                :func:`~ecngym.validation.Rate`, in [1 bit/s, 1 Pbit/s].
            n_hosts: Hosts sharing the load, a whole number >= 1 (default :attr:`n_hosts`).

        Raises:
            ConfigError: Naming ``link_rate_bps`` or ``n_hosts`` if it is no rate / whole number in
                range; naming ``achieved_load`` if the trace spans no time (fewer than two distinct
                start times and no recorded window) or has no hosts.
        """
        rate_bps = check("link_rate_bps", link_rate_bps, Rate())
        hosts = self.n_hosts if n_hosts is None else check("n_hosts", n_hosts, Whole(1))
        if hosts <= 0:  # (a trace without flows, hosts not recorded)
            raise ConfigError("achieved_load", "needs a host count: the trace records none and has no flows")
        if self.duration_ns <= 0:
            raise ConfigError("achieved_load", "the trace spans no time (no recorded window, < 2 start times)")
        return float(self.flows["size_bytes"].sum()) * 8e9 / (hosts * rate_bps * self.duration_ns)

    def __len__(self) -> int:
        return len(self.flows)

    def __repr__(self) -> str:
        return f"Trace({len(self.flows)} flows, hash={self.hash[:12]}, seed={self.seed})"
