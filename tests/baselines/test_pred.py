"""PRED's QLA (specs/pred.md §3.3) on the fabric's FCS policy: parameters, the A/B rule, real runs."""

import numpy as np
import pandas as pd
import pytest

from ecngym.baselines.pred import PredController
from ecngym.envs import EcnTuningEnv
from ecngym.envs.rollout import run_episode
from ecngym.error import ConfigError


@pytest.mark.parametrize(("field", "kwargs"), [
    ("controller.mode", {"mode": "fcs"}), ("controller.beta", {"beta": -0.1}),
    ("controller.delta_lambda_per_mb", {"delta_lambda_per_mb": 0.05}),  # not below lambda_min
    ("controller.lambda_init_per_mb", {"lambda_init_per_mb": 3.0}), ("controller.phi", {"phi": "cubic"}),
    ("controller.mink", {"mink": "600KB"}), ("controller.q_left", {"q_left": "1MB"}),
    ("controller.t_qla", {"t_qla": "fivertt"}), ("controller.t_fcs", {"t_fcs": "-1us"}),
    ("controller.scaling", {"scaling": "N3"}), ("controller.fcs_params.lambda_qla", {"fcs_params": {"lambda_qla": 1}}),
    ("controller.lambda_max_per_mb", {"mode": "only_qla", "lambda_max_per_mb": 3.0}),
])
def test_bad_parameters_name_the_field(field, kwargs):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        PredController(**kwargs)


def _decide(pred, u, lam, mink, in_mink):
    pred.lam, pred.mink, pred.in_mink_mode = np.array(lam), np.array(mink, float), np.array(in_mink)
    pred.utility = np.array(u, dtype=float).T  # (ports, 4) -> (4, ports)
    return pred._decide()


def test_lambda_moves_only_when_both_pairs_agree_and_falls_into_mink_mode():
    pred = PredController()
    # port 0: +dl better in both pairs; 1: -dl better in both; 2: pairs disagree; 3: at lambda_min, -dl better
    verdict = _decide(pred, [[2, 1, 1, 2], [1, 2, 2, 1], [2, 1, 2, 1], [1, 2, 2, 1]],
                      [0.1, 0.1, 0.1, 0.05], [10e3] * 4, [False] * 4)
    assert list(verdict) == ["up", "down", "keep", "down"]
    assert np.allclose(pred.lam, [0.125, 0.075, 0.1, 0.05])
    assert list(pred.in_mink_mode) == [False, False, False, True]  # below lambda_min: minK mode, lambda pinned


def test_mink_mode_raises_mink_on_lower_is_better_and_leaves_at_the_initial_mink():
    pred = PredController()
    _decide(pred, [[1, 2, 2, 1], [2, 1, 1, 2], [2, 1, 1, 2]], [0.05] * 3, [10e3, 20e3, 10e3], [True] * 3)
    assert list(pred.mink) == [15e3, 15e3, 10e3]          # down: +dminK; up: -dminK; up at the start: leave
    assert list(pred.in_mink_mode) == [True, True, False]
    assert np.allclose(pred.lam, [0.05, 0.05, 0.075])     # leaving resumes lambda += dl
