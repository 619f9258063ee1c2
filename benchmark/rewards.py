"""Which RL reward agrees with the benchmark's score: rank correlations over the stored episodes.

Every episode row stores its return under each reward the envs offer (``return_acc``,
``return_pred``, ``return_fct``, ``return_score_dense``: :class:`~ecngym.envs.returns.RewardReturns`,
computed from the episode's own telemetry with the env's reward functions). For each scenario of a suite, the
Spearman rank correlation between a reward's return and the scenario's score over its stored
episodes says whether maximising that reward would rank controllers as the score does. The score
is lower-is-better for slowdowns, so the correlation is taken with the score's *goodness*
(``-score`` for a lower-is-better score): +1 means the reward orders episodes exactly as the score.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from rich.table import Table


def reward_correlations(board: Any) -> pd.DataFrame:
    """Spearman rank correlation of each reward's episode return with each scenario's score.

    Over the scenario's counted episodes (every controller and reference, every test seed), with
    the score oriented so that +1 means the reward orders episodes as the score does (higher
    return, better score).

    Args:
        board: The suite board (:class:`~ecngym.benchmark.board.SuiteBoard`).

    Returns:
        One row per scenario: ``scenario``, ``episodes``, ``score``, then one column per reward of
        :data:`~ecngym.envs.config.REWARDS` (NaN where a reward's returns are not stored, or constant).
    """
    from scipy.stats import spearmanr

    from ecngym.envs.returns import RETURN_METRIC
    from ecngym.envs.reward import REWARDS

    out = []
    for s in board.scores:
        rows = board.rows[s.scenario]
        goodness = (-1.0 if s.lower_is_better else 1.0) * rows[s.score].astype(float)
        entry: dict[str, Any] = {"scenario": s.scenario, "episodes": int(goodness.notna().sum()), "score": s.score}
        for name in REWARDS:
            column = RETURN_METRIC.format(name)
            if column not in rows:
                entry[name] = float("nan")
                continue
            both = pd.concat([rows[column].astype(float), goodness], axis=1).dropna()
            constant = len(both) < 3 or both.nunique().min() < 2
            entry[name] = float("nan") if constant else float(spearmanr(both.iloc[:, 0], both.iloc[:, 1])[0])
        out.append(entry)
    return pd.DataFrame(out)


def correlation_table(frame: pd.DataFrame, suite: str) -> Table:
    """The reward-correlation table for the terminal."""
    from ecngym.envs.reward import REWARDS

    table = Table(title=f"suite {suite}: Spearman rank correlation of each reward's episode return with the score "
                        "(+1: the reward orders episodes as the score does)")
    for label in ("scenario", "score", "episodes", *REWARDS):
        table.add_column(label, justify="left" if label in ("scenario", "score") else "right")
    for r in frame.itertuples(index=False):
        table.add_row(r.scenario, r.score, str(r.episodes),
                      *["—" if not np.isfinite(getattr(r, n)) else f"{getattr(r, n):+.2f}" for n in REWARDS])
    return table
