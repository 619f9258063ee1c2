"""The end-of-episode summary put in ``info`` (and printed by ``ecngym eval``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ecngym.sim_backend.metrics import SIZE_BUCKETS


def episode_summary(records: Mapping[str, Any], queue_samples: np.ndarray, util_samples: np.ndarray,
                    paused_ns: float, marked: int, packets: int, span_ns: int, n_ports: int) -> dict[str, Any]:
    """Flow and port statistics of one episode.

    Args:
        records: Flow records of the episode's fabric: a DataFrame or its columns
            (``Fabric.flow_columns``); ``finished``, ``size_bytes`` and ``slowdown`` are read.
        queue_samples: Per-step mean queue bytes of every controlled port (steps x ports).
        util_samples: Per-step utilisation of every controlled port.
        paused_ns: Total PFC-paused time over controlled ports.
        marked: CE-marked packets at controlled ports.
        packets: Data packets the marking decisions saw.
        span_ns: Episode length in simulated time.
        n_ports: Number of controlled ports.

    Returns:
        ``flows_finished``, ``flows_total``, per-bucket ``slowdown_{avg,p50,p99}_<bucket>`` (and
        ``_all``), ``queue_mean_bytes``, ``queue_p99_bytes``, ``utilization``,
        ``pfc_paused_fraction``, ``marked_fraction``.
    """
    finished = np.asarray(records["finished"], dtype=bool)
    sizes = np.asarray(records["size_bytes"])[finished]
    slowdown = np.asarray(records["slowdown"], dtype=np.float64)[finished]
    out: dict[str, Any] = {"flows_finished": int(finished.sum()), "flows_total": int(len(finished))}
    for name, (lo, hi) in [*SIZE_BUCKETS.items(), ("all", (0, float("inf")))]:
        s = slowdown[(sizes >= lo) & (sizes < hi)]
        if len(s):
            p50, p99 = np.percentile(s, [50, 99])
            out[f"slowdown_avg_{name}"], out[f"slowdown_p50_{name}"] = float(s.mean()), float(p50)
            out[f"slowdown_p99_{name}"] = float(p99)
        else:
            for stat in ("avg", "p50", "p99"):
                out[f"slowdown_{stat}_{name}"] = float("nan")
    q = queue_samples.reshape(-1)
    out["queue_mean_bytes"] = float(q.mean()) if q.size else 0.0
    out["queue_p99_bytes"] = float(np.percentile(q, 99)) if q.size else 0.0
    out["utilization"] = float(util_samples.mean()) if util_samples.size else 0.0
    out["pfc_paused_fraction"] = float(paused_ns / max(span_ns * n_ports, 1))
    out["marked_fraction"] = float(marked / max(packets, 1))
    return out


def summary_metric_names() -> list[str]:
    """The keys of every :func:`episode_summary`, in its order.

    Read off the summary of an empty episode (every key is always there), so the list cannot
    drift from what an episode reports.
    """
    empty = pd.DataFrame({"finished": np.zeros(0, dtype=bool), "size_bytes": np.zeros(0, dtype=np.int64),
                          "slowdown": np.zeros(0)})
    return list(episode_summary(empty, np.zeros((0, 0)), np.zeros(0), 0.0, 0, 0, 0, 0))
