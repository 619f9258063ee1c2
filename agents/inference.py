"""Inference accounting of a learned controller: decisions, forward passes and their FLOPs."""

from __future__ import annotations

from typing import Any


class InferenceCounter:
    """Inference accounting of one controller (docs: algorithms/laecn.md §3.8 [OURS]: the "CPU overhead" proxy).

    Attributes:
        decisions: Agent decisions taken (one per agent per interval at which it acts).
        forward_passes: Network evaluations, counted per agent (a batch of n agents counts n).
        flops: Multiply-adds x 2 of those evaluations (dense layers).
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Zero every counter."""
        self.decisions = 0
        self.forward_passes = 0
        self.flops = 0
        # agent-specific counts (LAECN: policy_forward_passes), listed in the controller class's extra_metrics
        self.extra: dict[str, int] = {}

    def forward(self, rows: int, flops_per_row: int) -> None:
        """Count ``rows`` evaluations of a network costing ``flops_per_row`` each."""
        self.forward_passes += rows
        self.flops += rows * flops_per_row

    def as_dict(self) -> dict[str, int]:
        """The counters."""
        return {"decisions": self.decisions, "forward_passes": self.forward_passes, "flops": self.flops,
                **self.extra}


def mlp_flops(module: Any) -> int:
    """2 x multiply-adds of one input row through the linear layers of a torch module."""
    import torch.nn as nn

    return sum(2 * m.in_features * m.out_features for m in module.modules() if isinstance(m, nn.Linear))
