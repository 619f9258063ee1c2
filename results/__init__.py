"""Results: the store (DuckDB + Parquet), episode rows, the leaderboard and its page, loggers.

See :mod:`ecngym.results.store` for the layout and the atomicity rules.
"""

from ecngym.results.loggers import make_logger
from ecngym.results.record import Episode, curve_reward_column, episode_row, measure_episode
from ecngym.results.store import SCHEMA_VERSION, ResultStore, StoreError, row_id

__all__ = ["SCHEMA_VERSION", "Episode", "ResultStore", "StoreError", "curve_reward_column", "episode_row",
           "make_logger", "measure_episode", "row_id"]
