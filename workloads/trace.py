"""A trace: the flow table every controller is judged on, with its provenance and content hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ecngym.error import ConfigError

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
_META_PREFIX = b"ecngym."


def content_hash(flows: pd.DataFrame) -> str:
    """SHA-256 of a canonical serialisation of the table (not of a file format).

    Each column contributes its name, dtype and little-endian bytes in :data:`COLUMNS` order;
    tags are UTF-8 joined by NUL. So the hash is the same on any machine and library version.
    """
    h = hashlib.sha256()
    for col, dtype in COLUMNS.items():
        h.update(f"{col}:{dtype}\n".encode())
        if dtype == "str":
            h.update("\0".join(flows[col].astype(str)).encode())
        else:
            little_endian = np.dtype(dtype).newbyteorder("<")
            h.update(np.ascontiguousarray(flows[col].to_numpy(dtype), dtype=little_endian).tobytes())
    return h.hexdigest()


def _canonical(flows: pd.DataFrame) -> pd.DataFrame:
    """Validated table with the canonical columns, sorted by start time, flow ids 0..n-1."""
    required = ["src", "dst", "size_bytes", "start_ns"]
    missing = [c for c in required if c not in flows.columns]
    if missing:
        raise ConfigError("flows", f"missing column(s) {missing}; a trace needs {required}")
    df = pd.DataFrame({c: flows[c].to_numpy() for c in required})
    df["priority"] = flows["priority"].to_numpy() if "priority" in flows.columns else 3
    df["tag"] = flows["tag"].astype(str).to_numpy() if "tag" in flows.columns else "custom"
    for col in ("src", "dst", "size_bytes", "start_ns", "priority"):
        values = df[col].to_numpy()
        if not np.issubdtype(values.dtype, np.integer):
            raise ConfigError(f"flows.{col}", f"expected integers, got dtype {values.dtype}")
    checks = [
        ("src", df["src"] < 0, "must be >= 0"),
        ("dst", df["dst"] < 0, "must be >= 0"),
        ("dst", df["src"] == df["dst"], "equals src"),
        ("size_bytes", df["size_bytes"] <= 0, "must be > 0"),
        ("start_ns", df["start_ns"] < 0, "must be >= 0"),
        ("priority", (df["priority"] < 1) | (df["priority"] > 7), "must be in [1, 7]"),
    ]
    for col, bad, msg in checks:
        mask = np.asarray(bad)
        if mask.any():
            row = int(np.flatnonzero(mask)[0])
            raise ConfigError(f"flows.{col}", f"row {row}: {df[col].iloc[row]!r} {msg}")
    df = df.sort_values(["start_ns", "src", "dst", "size_bytes"], kind="stable").reset_index(drop=True)
    df.insert(0, "flow_id", np.arange(len(df), dtype=np.int64))
    return df.astype({c: t for c, t in COLUMNS.items() if t != "str"})


@dataclass
class Trace:
    """A flow table plus what made it.

    Attributes:
        flows: Columns ``flow_id, src, dst, size_bytes, start_ns, priority, tag`` in start order.
        params: The generator's parameters (JSON-serialisable).
        seed: The generator's seed (``None`` for imported traces).
        version: The ecngym version that made it.
        hash: SHA-256 of the table (:func:`content_hash`).
    """

    flows: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    version: str = ""
    hash: str = ""

    def __post_init__(self) -> None:
        self.flows = _canonical(self.flows)
        if not self.version:
            from ecngym import __version__

            self.version = __version__
        self.hash = content_hash(self.flows)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_flows(cls, flows: pd.DataFrame, params: dict[str, Any] | None = None) -> Trace:
        """Wrap a user table (validated; errors name the column and the row)."""
        return cls(flows, params={"source": "user table", **(params or {})})

    @classmethod
    def from_hpcc_flow_file(cls, path: str | Path) -> Trace:
        """Import the HPCC flow format (``src dst priority dport size start_s`` per line)."""
        from ecngym.sim_backend.flows import read_hpcc_flow_file

        flows = read_hpcc_flow_file(path)
        flows["tag"] = "hpcc"
        return cls(flows, params={"source": f"hpcc flow file {Path(path).name}"})

    def to_hpcc_flow_file(self, path: str | Path, dport: int = 100) -> Path:
        """Export in the HPCC flow format (start in seconds with 9 decimals: exact to the ns)."""
        path = Path(path)
        lines = [str(len(self.flows))]
        for r in self.flows.itertuples(index=False):
            lines.append(f"{r.src} {r.dst} {r.priority} {dport} {r.size_bytes} "
                         f"{r.start_ns // 1_000_000_000}.{r.start_ns % 1_000_000_000:09d}")
        path.write_text("\n".join(lines) + "\n")
        return path

    # ------------------------------------------------------------------ storage
    def save(self, path: str | Path) -> Path:
        """Write Parquet; parameters, seed, version and hash go in the schema metadata."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pandas(self.flows, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta.update({
            _META_PREFIX + b"params": json.dumps(self.params, sort_keys=True, default=str).encode(),
            _META_PREFIX + b"seed": json.dumps(self.seed).encode(),
            _META_PREFIX + b"version": self.version.encode(),
            _META_PREFIX + b"hash": self.hash.encode(),
        })
        pq.write_table(table.replace_schema_metadata(meta), path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        """Read a Parquet trace and verify its hash.

        Raises:
            ConfigError: If the file is missing, not a trace, or its table no longer matches its hash.
        """
        path = Path(path)
        if not path.exists():
            raise ConfigError("trace", f"file not found: {path}")
        table = pq.read_table(path)
        meta = table.schema.metadata or {}
        if _META_PREFIX + b"hash" not in meta:
            raise ConfigError("trace", f"{path} is not an ecngym trace (no ecngym.hash metadata)")
        trace = cls(
            table.to_pandas(),
            params=json.loads(meta[_META_PREFIX + b"params"]),
            seed=json.loads(meta[_META_PREFIX + b"seed"]),
            version=meta[_META_PREFIX + b"version"].decode(),
        )
        stored = meta[_META_PREFIX + b"hash"].decode()
        if trace.hash != stored:
            raise ConfigError("trace", f"{path}: content hash {trace.hash[:12]} does not match the stored "
                                       f"{stored[:12]}: the table was altered")
        return trace

    # ------------------------------------------------------------------ facts
    @property
    def n_hosts(self) -> int:
        """Hosts referenced (largest host index + 1), or ``params['hosts']`` when recorded."""
        recorded = self.params.get("hosts")
        seen = int(max(self.flows["src"].max(), self.flows["dst"].max())) + 1 if len(self.flows) else 0
        return int(recorded) if recorded else seen

    @property
    def duration_ns(self) -> int:
        """Generation window if recorded, else first to last flow start."""
        if "duration_ns" in self.params:
            return int(self.params["duration_ns"])
        return int(self.flows["start_ns"].max() - self.flows["start_ns"].min()) if len(self.flows) else 0

    def achieved_load(self, link_rate_bps: float, n_hosts: int | None = None) -> float:
        """Offered bytes / (hosts x link rate x duration)."""
        hosts = n_hosts or self.n_hosts
        return float(self.flows["size_bytes"].sum() * 8e9 / (hosts * link_rate_bps * self.duration_ns))

    def __len__(self) -> int:
        return len(self.flows)

    def __repr__(self) -> str:
        return f"Trace({len(self.flows)} flows, hash={self.hash[:12]}, seed={self.seed})"
