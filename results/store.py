"""The results store: one DuckDB database with a row per episode, per-flow records as Parquet beside it.

A store is a directory::

    results.duckdb            table ``episodes`` (one row per finished episode), table ``meta``
    flows/<row_id>.parquet    per-flow records of the episode (size, start, FCT, slowdown, ...)
    series/<row_id>.parquet   per-step series: queue of every controlled port, reward
    curves/<row_id>.parquet   training curve of a ``train`` row (episode returns over timesteps)
    inbox/<row_id>.json       rows committed by a job, not yet ingested into the database
    .lock                     the file lock every open of the database takes

Why an inbox. DuckDB lets one process at a time open a database for writing (another gets a lock
error), and sweep workers are parallel processes. So a job never writes the database while it
runs: it writes its Parquet files, then the row as JSON to a hidden temporary file, flushes it to
disk and renames it into ``inbox/``. A rename is atomic, so a row is either complete or absent: a
job killed with SIGKILL mid-write leaves at most a hidden temporary file that nothing reads.
Ingesting (done by every reader and at the end of every job) takes an exclusive ``flock``, moves
the inbox into the database in one transaction and deletes the ingested files only after the
commit; a crash in between re-ingests the same rows, which replace themselves.

Row ids are deterministic (:func:`row_id`: command kind, controller and its parameters, scenario
hash, seed), so the same episode written twice (two workers, or a rerun) is one row, the later
replacing the earlier (episodes are deterministic: same seed, trace and actions give bit-identical
results), and the number of such duplicates is reported; a rerun of a sweep skips episodes whose row
exists (:meth:`ResultStore.has`).

Every row and the database carry :data:`SCHEMA_VERSION`; a store or an inbox row of another version
is refused with a message that says which version wrote it and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import math
import numbers
import os
import re
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.error import EcnGymError
from ecngym.files import check_directory_path, write_atomically
from ecngym.validation import is_number

#: Version of the row layout and the database schema. Bump it when either changes and teach
#: :meth:`ResultStore._check_schema` to migrate (or refuse) the older one.
SCHEMA_VERSION = 1

#: The provenance columns of ``episodes``, in order (the metrics are a MAP column beside them).
COLUMNS: dict[str, str] = {
    "row_id": "VARCHAR PRIMARY KEY",
    "schema_version": "INTEGER NOT NULL",
    "created_at": "TIMESTAMP NOT NULL",
    "command": "VARCHAR NOT NULL",          # run | eval | train
    "controller": "VARCHAR NOT NULL",       # short name for tables (static_dcqcn, sb3_ppo, ...)
    "controller_params": "VARCHAR NOT NULL",  # JSON: the controller's resolved config
    "controller_hash": "VARCHAR NOT NULL",  # hash of the name and parameters (one leaderboard entry)
    "env_id": "VARCHAR NOT NULL",
    "scenario": "VARCHAR NOT NULL",         # short scenario name (the env config group)
    "scenario_hash": "VARCHAR NOT NULL",    # hash of the resolved env config
    "scenario_config": "VARCHAR NOT NULL",  # JSON: the resolved env config
    "trace_hash": "VARCHAR NOT NULL",
    "seed": "BIGINT NOT NULL",
    "ecngym_version": "VARCHAR NOT NULL",
    "git_commit": "VARCHAR",                # of the working directory's repository, when it is one
    "episode_return": "DOUBLE",
    "wall_s": "DOUBLE",
    "flows_path": "VARCHAR",                # relative to the store directory
    "series_path": "VARCHAR",
    "curve_path": "VARCHAR",
    "artifacts_path": "VARCHAR",            # run directory / trained model (absolute)
}
METRICS_COLUMN = "metrics"                  # MAP(VARCHAR, DOUBLE): the env's episode summary, inference cost
#: The largest episode seed a row can hold (the ``seed`` column is a signed 64-bit BIGINT).
MAX_SEED = 2**63 - 1


class StoreError(EcnGymError):
    """The results store is unreadable, of an unknown schema version, or a row is malformed."""


def canonical_hash(value: Any, length: int = 16) -> str:
    """SHA-256 (hex, first ``length`` digits) of ``value`` as canonical JSON (sorted keys)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def row_id(command: str, controller_hash: str, scenario_hash: str, seed: int) -> str:
    """The deterministic id of an episode's row (see the module docstring)."""
    kind = "train" if command == "train" else "episode"  # run and eval measure the same episodes
    return canonical_hash([SCHEMA_VERSION, kind, controller_hash, scenario_hash, int(seed)], 24)


def git_commit(path: Path | None = None) -> str | None:
    """The commit checked out at ``path`` (default: the working directory), or None outside git."""
    try:
        out = subprocess.run(["git", "-C", str(path or Path.cwd()), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@dataclass
class IngestReport:
    """What one :meth:`ResultStore.ingest` did."""

    ingested: int = 0
    duplicates: int = 0  # rows whose id was already in the database (replaced by the newer one)


class ResultStore:
    """A results store directory (created on first write).

    Args:
        root: The store directory (``results.dir`` in the configs; default ``outputs/results``).
        field: The option that gave ``root``, named in the errors.

    Raises:
        ConfigError: If ``root`` is not a path, is empty, or names a file.
    """

    DB_NAME = "results.duckdb"

    def __init__(self, root: str | os.PathLike[str], field: str = "results.dir") -> None:
        self.field = field
        self.root = check_directory_path(field, root, "a results store directory").expanduser().resolve()
        self.db_path = self.root / self.DB_NAME
        self.inbox = self.root / "inbox"

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"

    # ------------------------------------------------------------------ writing (any process)
    def write_frame(self, kind: str, rid: str, frame: pd.DataFrame) -> str:
        """Write a per-row Parquet file (``flows`` / ``series`` / ``curves``) atomically.

        Returns:
            Its path relative to the store directory (what the row records).

        Raises:
            ConfigError: Naming the store's option (``results.dir``) if the file cannot be written
                there (:func:`~ecngym.files.write_atomically`).
        """
        rel = f"{kind}/{rid}.parquet"
        write_atomically(self.root / rel, lambda tmp: frame.to_parquet(tmp, index=False), self.field)
        return rel

    def commit(self, row: Mapping[str, Any]) -> None:
        """Commit one row (atomically: it is complete in the inbox, or absent).

        Write the row's Parquet files first (:meth:`write_frame`), then commit the row.

        Raises:
            StoreError: If the row is not one the database can hold (:func:`check_row`): a
                provenance column missing, unknown or of the wrong type, a bad ``row_id``, a seed
                outside the BIGINT range, or a metric that is not a number.
            ConfigError: Naming the store's option (``results.dir``) if the row cannot be written
                there (:func:`~ecngym.files.write_atomically`).
        """
        checked = check_row(row, f"row {row.get('row_id')}" if isinstance(row, Mapping) else "row")
        record = {**checked, "schema_version": SCHEMA_VERSION,
                  "created_at": checked.get("created_at") or pd.Timestamp.now(tz="UTC").isoformat()}
        text = json.dumps(record, default=str, allow_nan=True)
        write_atomically(self.inbox / f"{checked['row_id']}.json", lambda tmp: tmp.write_bytes(text.encode()),
                         self.field)

    # ------------------------------------------------------------------ the database
    @contextlib.contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        """Hold the store's lock file (shared to read, exclusive to write) for the block.

        A store whose lock file cannot be made (a read-only mount, a copy published without write
        permission) is read without the shared lock; DuckDB's own file lock still keeps a reader
        out while a writer holds the database (:meth:`_connect` then names it).

        Raises:
            StoreError: If the lock file cannot be made (naming the store and the system's reason),
                unless reading an existing database in a store that cannot be written.
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            lock = open(self.root / ".lock", "a+")  # noqa: SIM115 (closed below, after the block)
        except OSError as exc:
            if not exclusive and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) and self.db_path.is_file():
                yield
                return
            raise StoreError(f"cannot use the results store {self.root} ({self.field}): cannot make its lock file "
                             f"({exc.strerror or exc})") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _connect(self, read_only: bool) -> Any:
        import duckdb

        try:
            return duckdb.connect(str(self.db_path), read_only=read_only)
        except duckdb.Error as exc:
            raise StoreError(f"cannot open the results database {self.db_path}: {exc}") from None

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Any]:
        """A read-only connection to the database for the block: shared lock, schema checked.

        Raises:
            StoreError: If the database cannot be opened or is not an ecngym store of this schema.
        """
        with self._locked(exclusive=False):
            con = self._connect(read_only=True)
            try:
                self._check_schema(con, create=False)
                yield con
            finally:
                con.close()

    def _check_schema(self, con: Any, create: bool) -> None:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if not tables and create:
            cols = ", ".join(f'"{c}" {kind}' for c, kind in COLUMNS.items())
            con.execute(f'CREATE TABLE episodes ({cols}, "{METRICS_COLUMN}" MAP(VARCHAR, DOUBLE))').fetchall()
            con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)").fetchall()
            con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)]).fetchall()
            return
        if "meta" not in tables or "episodes" not in tables:
            raise StoreError(f"{self.db_path} is not an ecngym results store (no 'meta' / 'episodes' tables)")
        found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        version = int(found[0][0]) if found else None
        if version != SCHEMA_VERSION:
            raise StoreError(_version_message(str(self.db_path), version))

    def ingest(self) -> IngestReport:
        """Move every committed inbox row into the database (one transaction); safe to call anytime.

        Raises:
            StoreError: On a database or an inbox row of another schema version.
        """
        report = IngestReport()
        if not self.inbox.is_dir() or not any(self.inbox.glob("*.json")):
            return report
        with self._locked(exclusive=True):
            files = sorted(self.inbox.glob("*.json"))  # hidden .tmp files are never matched
            if not files:
                return report
            rows = [_read_inbox_row(f) for f in files]
            con = self._connect(read_only=False)
            try:
                self._check_schema(con, create=True)
                frame = pd.DataFrame([{c: r.get(c) for c in COLUMNS} for r in rows])
                frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, format="ISO8601")
                frame["metric_keys"] = [list(r[METRICS_COLUMN]) for r in rows]
                frame["metric_values"] = [[float(v) for v in r[METRICS_COLUMN].values()] for r in rows]
                frame = frame.drop_duplicates("row_id", keep="last")
                con.register("new_rows", frame)
                con.execute("BEGIN TRANSACTION").fetchall()
                report.duplicates = con.execute(
                    "SELECT count(*) FROM episodes WHERE row_id IN (SELECT row_id FROM new_rows)").fetchall()[0][0]
                report.duplicates += len(rows) - len(frame)
                con.execute("DELETE FROM episodes WHERE row_id IN (SELECT row_id FROM new_rows)").fetchall()
                cols = ", ".join(f'"{c}"' for c in COLUMNS)
                con.execute(f'INSERT INTO episodes ({cols}, "{METRICS_COLUMN}") '
                            f"SELECT {cols}, map(metric_keys, metric_values) FROM new_rows").fetchall()
                con.execute("COMMIT").fetchall()
            finally:
                con.close()
            for f in files:  # only after the commit: a crash before this re-ingests the same rows
                f.unlink(missing_ok=True)
            report.ingested = len(frame)
        return report

    def check_readable(self) -> None:
        """Open an existing database once and check its schema (nothing to do before the first row).

        Raises:
            StoreError: If it cannot be opened or is not an ecngym results store of this schema.
        """
        if self.db_path.is_file():
            with self._reading():
                pass

    def has(self, rid: str) -> bool:
        """Whether the row ``rid`` is committed (in the inbox or the database)."""
        if (self.inbox / f"{rid}.json").is_file():
            return True
        if not self.db_path.is_file():
            return False
        with self._reading() as con:
            return con.execute("SELECT count(*) FROM episodes WHERE row_id = ?", [rid]).fetchall()[0][0] > 0

    def episodes(self, ingest: bool = True) -> pd.DataFrame:
        """Every row as a DataFrame: provenance columns, then one column per metric.

        Args:
            ingest: Ingest the inbox first (so rows of running jobs appear as they finish).

        Raises:
            StoreError: If there is no store at ``root`` or it is of another schema version.
        """
        if ingest:
            self.ingest()
        if not self.db_path.is_file():
            raise StoreError(f"no results store at {self.root} (no {self.DB_NAME}); run 'ecngym run' or "
                             "'ecngym eval' first, or point results.dir / --store at one")
        with self._reading() as con:
            cols = ", ".join(f'"{c}"' for c in COLUMNS)
            frame = con.execute(f'SELECT {cols}, map_keys("{METRICS_COLUMN}") AS k, '
                                f'map_values("{METRICS_COLUMN}") AS v FROM episodes '
                                "ORDER BY created_at, row_id").df()
        # a NaN metric (e.g. no small flow finished) is stored as NULL, and DuckDB hands a list holding
        # NULL over as a masked array: back to float NaN here, so every metric column is float64
        metrics = pd.DataFrame([dict(zip(k, np.ma.filled(np.ma.asarray(v, dtype=np.float64), np.nan), strict=True))
                                for k, v in zip(frame.pop("k"), frame.pop("v"), strict=True)],
                               index=frame.index)
        return pd.concat([frame, metrics], axis=1)

    def query(self, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
        """Run a read-only SQL query on the database (table ``episodes``) and return a DataFrame."""
        self.ingest()
        with self._reading() as con:
            return con.execute(sql, params or []).df()

    def frame(self, rel_path: str | None) -> pd.DataFrame | None:
        """Read one row's Parquet file (``flows_path`` / ``series_path`` / ``curve_path``), or None."""
        if not rel_path or (isinstance(rel_path, float) and math.isnan(rel_path)):
            return None
        path = self.root / rel_path
        return pd.read_parquet(path) if path.is_file() else None


def _version_message(where: str, version: int | None) -> str:
    if version is None:
        return f"{where} has no schema version: not written by ecngym, or damaged"
    if version > SCHEMA_VERSION:
        return (f"{where} was written with results schema version {version}; this ecngym reads version "
                f"{SCHEMA_VERSION}. Upgrade ecngym to read it, or write to another store (results.dir=...)")
    return (f"{where} has results schema version {version}, older than this ecngym's {SCHEMA_VERSION}, "
            "and no migration exists for it; read it with the ecngym version that wrote it")


def _read_inbox_row(path: Path) -> dict[str, Any]:
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise StoreError(f"inbox row {path} is unreadable: {exc}") from None
    version = row.get("schema_version")
    if version != SCHEMA_VERSION:
        raise StoreError(_version_message(f"inbox row {path}", version if isinstance(version, int) else None))
    return check_row(row, f"inbox row {path} (move it out of the inbox to go on)")


#: A row id: what :func:`row_id` makes, and a plain file name (``inbox/<row_id>.json``, ``flows/<row_id>.parquet``).
_ROW_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def check_row(row: Any, what: str) -> dict[str, Any]:
    """The row as the database will hold it, or :class:`StoreError` naming the column.

    Checked before a row is committed and again when an inbox row is ingested, so that a row the
    database would refuse (a NULL in a NOT NULL column, text in a DOUBLE column, a time that is
    not ISO 8601) never reaches the inbox, where it would fail every later ingest of every row.

    Args:
        row: The row: the provenance columns of :data:`COLUMNS` and ``metrics`` (name -> number).
        what: The row, for the message (``"row 'ab12...'"``, ``"inbox row <path>"``).

    Returns:
        A copy of the row, the seed as an ``int`` and the metrics and DOUBLE columns as floats.

    Raises:
        StoreError: If a required column is missing, a column is unknown or holds the wrong type,
            ``row_id`` is not a plain name, the seed is outside [0, 2^63 - 1], ``created_at`` is
            not an ISO 8601 time, or a metric is not a number.
    """
    if not isinstance(row, Mapping):
        raise StoreError(f"{what}: expected a mapping of columns, got {row!r}")
    missing = [c for c, kind in COLUMNS.items() if "NOT NULL" in kind or "PRIMARY" in kind
               if c not in row and c not in ("schema_version", "created_at")]
    if missing:
        raise StoreError(f"{what} lacks the column(s) {missing}")
    unknown = set(row) - set(COLUMNS) - {METRICS_COLUMN}
    if unknown:
        raise StoreError(f"{what} has unknown column(s) {sorted(unknown, key=str)}; allowed: {list(COLUMNS)}, "
                         f"{METRICS_COLUMN!r}")
    out = dict(row)
    rid = row["row_id"]
    if not isinstance(rid, str) or not _ROW_ID.fullmatch(rid):
        raise StoreError(f"{what}: column 'row_id': got {rid!r}, expected a name of letters, digits, '_' and '-' "
                         "(as row_id() makes)")
    for column, kind in COLUMNS.items():
        value = row.get(column)
        if column in ("row_id", "seed", "schema_version", "created_at") or (value is None and "NOT NULL" not in kind):
            continue
        if kind.startswith("VARCHAR") and not isinstance(value, str):
            raise StoreError(f"{what}: column {column!r}: got {value!r}, expected a string")
        if kind.startswith("DOUBLE"):
            out[column] = _number(value, f"{what}: column {column!r}")
    out["seed"] = _check_seed(row["seed"], what)
    created = row.get("created_at")
    if created is not None:
        try:
            pd.to_datetime(created, utc=True, format="ISO8601")
        except (TypeError, ValueError):
            raise StoreError(f"{what}: column 'created_at': got {created!r}, expected an ISO 8601 time") from None
    metrics = row.get(METRICS_COLUMN, {})
    if not isinstance(metrics, Mapping):
        raise StoreError(f"{what}: column {METRICS_COLUMN!r}: got {metrics!r}, expected a mapping of metric "
                         "names to numbers")
    for key in metrics:
        if not isinstance(key, str):
            raise StoreError(f"{what}: metric {key!r}: expected a metric name (a string)")
    out[METRICS_COLUMN] = {key: _number(value, f"metric {key!r}") for key, value in metrics.items()}
    return out


def _number(value: Any, what: str) -> float:
    """``value`` as a float if it is a real number (NaN and infinities included; not a bool or a string)."""
    if not is_number(value):
        raise StoreError(f"{what}: got {value!r}, expected a number")
    return float(value)


def _check_seed(seed: Any, what: str) -> int:
    """The seed as an int, or :class:`StoreError` if the BIGINT column cannot hold it (DuckDB would fail the ingest)."""
    if not (is_number(seed) and isinstance(seed, numbers.Integral)):
        raise StoreError(f"{what}: seed {seed!r} is not a whole number; the store's range is [0, 2^63 - 1]")
    if not 0 <= seed <= MAX_SEED:
        raise StoreError(f"{what}: seed {int(seed)!r} is outside the store's range [0, 2^63 - 1]")
    return int(seed)
