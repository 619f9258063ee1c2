"""A forecast of a fabric's traffic from the flows seen so far: the look-ahead tuner's model of the future.

The forecast knows only flows that have **started** (start time before now), never the trace's
pending ones: it is given the rows that started inside a recent look-back window
(:meth:`ecngym.envs.view.EnvView.flows_started`) and reads nothing else. From them it resamples a
traffic of the same kind for the horizon ahead (a bootstrap, Efron 1979), keeping what a
flow-level model of the seed papers' traffic needs:

* **arrival groups**: flows that started at the same instant form one group (an incast's
  many-to-one reads start together; a WebSearch flow is a group of one), and a group is
  resampled whole, so an incast stays an incast of the same degree, sizes and host pairs;
* **inter-arrival times**: the gaps between the look-back window's groups, resampled; with fewer
  than two groups seen, exponential gaps with the window's group rate (one group per window);
* **sizes, host pairs, priorities, ports, extra delays**: those of the resampled group.

The first forecast group starts one resampled gap after now. Every draw comes from the given
generator, so a forecast is a deterministic function of (seen flows, now, seed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Columns a forecast flow carries (the fabric's flow-table columns; ``extra_delay_ns`` when the table has it)
FORECAST_COLUMNS = ("src", "dst", "size_bytes", "start_ns", "priority", "dport")


@dataclass(frozen=True)
class ArrivalModel:
    """The look-back window's traffic as arrival groups and gaps (see the module doc).

    Attributes:
        groups: Per group, its flows (rows of the seen table, start time dropped).
        gaps_ns: Inter-arrival times between consecutive groups (empty with fewer than two).
        window_ns: The look-back window's length actually seen (shorter at an episode's start).
    """

    groups: list[pd.DataFrame]
    gaps_ns: np.ndarray
    window_ns: int

    @classmethod
    def fit(cls, seen: pd.DataFrame, window_ns: int) -> ArrivalModel:
        """Group ``seen`` by start time and take the gaps between groups."""
        if seen.empty:
            return cls([], np.zeros(0, np.int64), window_ns)
        starts = seen["start_ns"].to_numpy(np.int64)
        order = np.argsort(starts, kind="stable")
        ordered = seen.iloc[order]
        times, first = np.unique(starts[order], return_index=True)
        bounds = [*first.tolist(), len(ordered)]
        body = ordered.drop(columns=["start_ns"])
        groups = [body.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        return cls(groups, np.diff(times), window_ns)

    def sample(self, now_ns: int, horizon_ns: int, rng: np.random.Generator) -> pd.DataFrame:
        """Resampled flows starting in ``[now, now + horizon)``, in start order.

        Args:
            now_ns: The forecast's start.
            horizon_ns: Its length.
            rng: The generator every draw comes from.

        Returns:
            A flow table (:data:`FORECAST_COLUMNS`, and ``extra_delay_ns`` if the seen flows
            have it); empty if no flow was seen.
        """
        columns = list(self.groups[0].columns) + ["start_ns"] if self.groups else list(FORECAST_COLUMNS)
        if not self.groups:
            return pd.DataFrame({c: np.zeros(0, np.int64) for c in columns})
        mean_gap = self.window_ns / len(self.groups)
        parts = []
        t = now_ns
        while True:
            gap = (int(self.gaps_ns[rng.integers(len(self.gaps_ns))]) if len(self.gaps_ns)
                   else int(rng.exponential(mean_gap)))
            t += max(gap, 1)  # (two groups at one instant are one group)
            if t >= now_ns + horizon_ns:
                break
            group = self.groups[int(rng.integers(len(self.groups)))]
            parts.append(group.assign(start_ns=np.full(len(group), t, np.int64)))
        if not parts:
            return pd.DataFrame({c: np.zeros(0, np.int64) for c in columns})
        return pd.concat(parts, ignore_index=True)[columns]


def forecast_flows(seen: pd.DataFrame, now_ns: int, window_ns: int, horizon_ns: int,
                   rng: np.random.Generator) -> pd.DataFrame:
    """A forecast of the flows that start in ``[now, now + horizon)``, resampled from ``seen``.

    Args:
        seen: The flows that started in the look-back window ``[now - window, now)``
            (:meth:`ecngym.envs.view.EnvView.flows_started`): nothing else is read.
        now_ns: The decision's time.
        window_ns: The look-back window's length (> 0; shorter at an episode's start).
        horizon_ns: The forecast's length.
        rng: The generator of every draw.

    Returns:
        The forecast flow table (:meth:`ArrivalModel.sample`).
    """
    keep = [c for c in (*FORECAST_COLUMNS, "extra_delay_ns") if c in seen.columns]
    return ArrivalModel.fit(seen[keep], max(window_ns, 1)).sample(now_ns, horizon_ns, rng)
