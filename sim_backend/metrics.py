"""Flow-completion-time metrics shared by the benchmark, the envs and the results store."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Flow-size buckets used throughout (the HPCC / PRED convention), bytes: [low, high)
SIZE_BUCKETS: dict[str, tuple[float, float]] = {
    "<100KB": (0, 100_000),
    "100KB-1MB": (100_000, 1_000_000),
    ">1MB": (1_000_000, float("inf")),
}


def slowdown_table(records: pd.DataFrame) -> pd.DataFrame:
    """Median, p99 and mean FCT slowdown per size bucket (and ``all``), finished flows only.

    Args:
        records: Flow records with ``size_bytes``, ``slowdown`` and ``finished`` columns.

    Returns:
        A DataFrame indexed by bucket with columns ``flows``, ``median``, ``p99``, ``mean``.
    """
    done = records[records["finished"]]
    rows = {}
    for name, (lo, hi) in [*SIZE_BUCKETS.items(), ("all", (0, float("inf")))]:
        s = done.loc[(done["size_bytes"] >= lo) & (done["size_bytes"] < hi), "slowdown"].to_numpy()
        rows[name] = {
            "flows": len(s),
            "median": float(np.median(s)) if len(s) else float("nan"),
            "p99": float(np.percentile(s, 99)) if len(s) else float("nan"),
            "mean": float(np.mean(s)) if len(s) else float("nan"),
        }
    return pd.DataFrame.from_dict(rows, orient="index")
