"""Flow-completion-time metrics shared by the benchmark, the envs and the results store."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ecngym.error import ConfigError

#: Flow-size buckets used throughout (the HPCC / PRED convention), bytes: [low, high)
SIZE_BUCKETS: dict[str, tuple[float, float]] = {
    "<100KB": (0, 100_000),
    "100KB-1MB": (100_000, 1_000_000),
    ">1MB": (1_000_000, float("inf")),
}

#: Percentile estimators: numpy's linear interpolation, or the HPCC model's ``fct_analysis.py``
#: (``sorted(x)[int(len(x) * p)]``, no interpolation: with fewer than 100 flows its p99 is the
#: largest value). The reference tables in ``data/hpcc_reference/PROVENANCE.txt`` use the latter.
PERCENTILE_METHODS = ("linear", "hpcc")


def percentile(values: np.ndarray, p: float, method: str = "linear") -> float:
    """Return the ``p``-quantile (``p`` in [0, 1]) of ``values`` by ``method``.

    Raises:
        ConfigError: On an unknown method.
    """
    if method == "linear":
        return float(np.percentile(values, 100 * p))
    if method == "hpcc":
        s = np.sort(np.asarray(values))
        return float(s[min(int(len(s) * p), len(s) - 1)])
    raise ConfigError("percentile method", f"got {method!r}, allowed: {', '.join(PERCENTILE_METHODS)}")


def slowdown_table(records: pd.DataFrame, method: str = "linear") -> pd.DataFrame:
    """Median, p99 and mean FCT slowdown per size bucket (and ``all``), finished flows only.

    Args:
        records: Flow records with ``size_bytes``, ``slowdown`` and ``finished`` columns.
        method: Percentile estimator for the median and p99, ``"linear"`` or ``"hpcc"`` (see
            :data:`PERCENTILE_METHODS`).

    Returns:
        A DataFrame indexed by bucket with columns ``flows``, ``median``, ``p99``, ``mean``.
    """
    if method not in PERCENTILE_METHODS:
        percentile(np.zeros(1), 0.5, method)  # raises ConfigError
    done = records[records["finished"]]
    rows = {}
    for name, (lo, hi) in [*SIZE_BUCKETS.items(), ("all", (0, float("inf")))]:
        s = done.loc[(done["size_bytes"] >= lo) & (done["size_bytes"] < hi), "slowdown"].to_numpy()
        rows[name] = {
            "flows": len(s),
            "median": percentile(s, 0.5, method) if len(s) else float("nan"),
            "p99": percentile(s, 0.99, method) if len(s) else float("nan"),
            "mean": float(np.mean(s)) if len(s) else float("nan"),
        }
    return pd.DataFrame.from_dict(rows, orient="index")
