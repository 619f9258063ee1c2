"""Learning controllers: SB3 policies and RLlib multi-agent PPO (this release); ACC and LAECN next."""

from ecngym.agents.sb3 import ALGORITHMS, SB3Controller, algorithm_class, train

__all__ = ["ALGORITHMS", "SB3Controller", "algorithm_class", "train"]
