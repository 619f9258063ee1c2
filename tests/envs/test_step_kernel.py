"""The C++ step kernel (the env's one definition of its features and rewards) against the NumPy oracle, to the bit.

Whole episodes are played and, after every step, the kernel's frame, observation, per-port reward,
the env's reward, the return under every reward (``RewardReturns``) and the statistics rows are
compared with :mod:`reference_step`'s NumPy arithmetic on the same telemetry: every feature (RED's
and every policy's telemetry, ``aqm.<parameter>``), both queue mappings, every reward and action
scope.
"""

import importlib.util
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import ecngym.envs  # noqa: F401
from ecngym.envs import EcnTuningEnv
from ecngym.envs.config import FEATURES, ObservationConfig
from ecngym.envs.observation import FeatureBuilder
from ecngym.envs.returns import RewardReturns
from ecngym.envs.reward import REWARDS, pred_phi
from ecngym.sim_backend import _fabric
from ecngym.sim_backend._fabric import ColumnOp, FeatureColumn
from ecngym.sim_backend.aqm import telemetry
from ecngym.sim_backend.fabric import telemetry_layout


def _oracle() -> type:
    """:class:`reference_step.ReferenceStep`, from the file beside this one (the tests are no package)."""
    spec = importlib.util.spec_from_file_location("reference_step", Path(__file__).with_name("reference_step.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ReferenceStep


ReferenceStep = _oracle()

SMALL_LEAF_SPINE = {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4}
#: a small DCTCP leaf-spine with incasts, for the AQM policies (their telemetry moves)
SMALL_DCTCP = {
    "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2, "host_rate": "10Gbps",
                 "fabric_rate": "10Gbps", "host_delay": "2us", "fabric_delay": "2us"},
    "fabric": {"preset": "dctcp"},
    "workload": {"workload": "websearch", "load": 0.6,
                 "incast": {"degree": 3, "size": "64KB", "interval": "100us", "arrival": "periodic"}},
    "interval": "50us",
}


def _policy_features(policy: str, *tuned: str) -> list[str]:
    """``queue``, every telemetry feature ``policy`` declares, and ``aqm.<p>`` of the tuned parameters."""
    return ["queue", *(t.name for t in telemetry(policy)), *(f"aqm.{p}" for p in tuned)]


#: (env id or None for SMALL_DCTCP on EcnTuningEnv, overrides)
CASES = {
    "red-acc": ("ecngym/RoceLeafSpine-v0", {"topology": SMALL_LEAF_SPINE}),
    "red-pred": ("ecngym/RoceIncast-v0", {"reward": {"name": "pred"}}),
    "red-fct-hpcc-enqueue": ("ecngym/RoceIncast-v0", {
        "reward": {"name": "fct"}, "fabric": {"preset": "hpcc", "aqm": {"all": {"mark_at_dequeue": False}}}}),
    "red-every-feature-step-port": ("ecngym/RoceIncast-v0", {
        "observation": {"queue_mapping": "step", "features": list(FEATURES)}, "action": {"scope": "port"}}),
    # controlled ports of two rates: each port its own step-map breakpoints
    "red-two-rates-step-layer": ("ecngym/RoceLeafSpine-v0", {
        "topology": {**SMALL_LEAF_SPINE, "fabric_rate": "40Gbps"}, "action": {"scope": "layer"},
        "observation": {"queue_mapping": "step", "features": list(FEATURES)}}),
    # LAECN's adaptive interval: steps of two lengths (pred's reward scales by the step's share)
    "red-adaptive-interval-pred": ("ecngym/DctcpLeafSpine-v0", {
        "topology": SMALL_LEAF_SPINE, "interval": "15rtt", "interval_short": "5rtt", "reward": {"name": "pred"}}),
    "red-continuous-port": ("ecngym/RoceIncast-v0", {
        "action": {"type": "continuous", "scope": "port"}, "observation": {"features": list(FEATURES)}}),
    "ecn_sharp-linear-layer": (None, {
        "aqm": "ecn_sharp", "action": {"scope": "layer"},
        "observation": {"features": _policy_features("ecn_sharp", "ins_target_ns", "pst_target_ns")}}),
    "ecn_sharp-step-continuous-port": (None, {
        "aqm": "ecn_sharp", "action": {"type": "continuous", "scope": "port"}, "reward": {"name": "pred"},
        "observation": {"queue_mapping": "step",
                        "features": _policy_features("ecn_sharp", "ins_target_ns", "pst_target_ns")}}),
    "r_aqm-discrete-port": (None, {
        "aqm": "r_aqm", "action": {"scope": "port"},
        "observation": {"features": _policy_features("r_aqm", "kmin_bytes", "kmax_bytes")}}),
    "pred-discrete": (None, {"aqm": "pred", "observation": {"features": _policy_features("pred", "lambda_qla")}}),
    # (a target of 5 us: CoDel marks in this traffic)
    "codel-layer-fct": (None, {
        "aqm": {"policy": "codel", "target_ns": "5us", "interval_ns": "50us"}, "action": {"scope": "layer"},
        "reward": {"name": "fct"}, "observation": {"features": _policy_features("codel", "target_ns", "interval_ns")}}),
}


def _bits(a: np.ndarray) -> bytes:
    """The array's bytes: equal arrays of equal bits (a NaN's payload and a zero's sign count)."""
    return np.ascontiguousarray(a).tobytes()


def _play_both(env_id: str | None, overrides: dict, steps: int = 30) -> dict:
    """Play ``steps`` seeded random steps (12 a episode), comparing the kernel with the oracle after each.

    Returns:
        What moved, to check the comparison was not of constants: the distinct frames, rewards
        (the env's, and the sum under each reward) and the policies' telemetry values seen.
    """
    overrides = {"episode_steps": 12, **overrides}
    env = (gym.make(env_id, **overrides) if env_id else EcnTuningEnv(config={**SMALL_DCTCP, **overrides}))
    try:
        sc = env.unwrapped.scenario
        ref = ReferenceStep(sc)
        per_port: list[np.ndarray] = []
        kernel_step = sc.step_kernel.step
        sc.step_kernel.step = lambda *args: per_port.append(kernel_step(*args)) or per_port[-1]
        seen: dict = {"frames": set(), "rewards": set(), "policy": set()}

        def start(seed: int | None) -> tuple:
            env.reset(seed=seed)
            ref.reset(sc.telemetry, sc.red, sc.aqm_values)
            assert _bits(sc.features._frame) == _bits(ref.frame)
            assert _bits(sc.features.observation()) == _bits(ref.observation())
            return RewardReturns(env), dict.fromkeys(REWARDS, 0.0)

        returns, expected_totals = start(3)
        env.action_space.seed(3)
        for _ in range(steps):
            _, reward, _, truncated, info = env.step(env.action_space.sample())
            returns.step(info)
            span = info["interval_ns"]
            expected = ref.step(sc.telemetry, span, span / sc.interval_ns, sc.red, sc.aqm_values)
            assert _bits(sc.features._frame) == _bits(ref.frame), sc.features.cfg.features
            assert _bits(sc.features.observation()) == _bits(ref.observation())
            assert _bits(per_port[-1]) == _bits(expected[sc.reward.name])
            end = sc.end_reward(info["flow_records"]) if truncated else 0.0
            mine = expected[sc.reward.name]
            assert reward == float(mine.sum()) / len(mine) + sc.flow_term + end
            for name in REWARDS:
                expected_totals[name] += float(expected[name].sum()) / len(expected[name])
            seen["frames"].add(_bits(ref.frame))
            seen["rewards"].add((reward, *(float(expected[name].sum()) for name in REWARDS)))
            seen["policy"] |= {float(v) for k, a in sc.telemetry.aqm.items() for v in np.nan_to_num(a[sc.ports])}
            if truncated:
                stats = sc._stats.arrays()
                for key in ref.stats_keys:
                    assert _bits(stats[key]) == _bits(np.stack([row[key] for row in ref.stats])), key
                got = returns.finish(info["flow_records"], int(info["time_ns"]))
                for name, fn in returns._functions.items():
                    want = expected_totals[name] + fn.flow_return(info["flow_records"], int(info["time_ns"]))
                    assert got[f"return_{name}"] == want, name
                returns, expected_totals = start(None)
        return seen
    finally:
        env.close()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_kernel_plays_episodes_as_the_numpy_oracle_does(case):
    env_id, overrides = CASES[case]
    seen = _play_both(env_id, overrides)
    # the comparison would pass on constant output: the frames and rewards do move
    assert len(seen["frames"]) > 5 and len(seen["rewards"]) > 5
    if env_id is None:
        assert len(seen["policy"]) > 2, "the policy's telemetry never moved"


def test_every_policy_feature_is_covered_by_a_case():
    listed = {f for _, overrides in CASES.values() for f in overrides.get("observation", {}).get("features", [])}
    from ecngym.envs.config import aqm_features

    assert set(aqm_features()) <= listed and set(FEATURES) <= listed


def test_a_tuned_parameter_of_one_value_reads_zero():
    """``aqm.<parameter>`` over a range of one value (templates that all set it alike) is the ZERO column."""
    builder = FeatureBuilder(ObservationConfig(features=["queue", "aqm.k", "aqm.j"]), np.arange(2), np.ones(2), 1.0,
                             True, aqm_param_bounds={"j": (1.0, 3.0), "k": (5.0, 5.0)})
    columns = builder.kernel_program(telemetry_layout())["columns"]
    assert [c.op for c in columns] == [ColumnOp.SCALE_MIN, ColumnOp.ZERO, ColumnOp.UNIT]
    assert columns[2].operand_a == (0, "s")  # the setting's column of j: the bounds' order


def test_reward_returns_refuses_the_info_of_another_step():
    env = gym.make("ecngym/RoceIncast-v0", episode_steps=3)
    try:
        env.reset(seed=0)
        returns = RewardReturns(env)
        _, _, _, _, first = env.step(env.unwrapped.static_action())
        env.step(env.unwrapped.static_action())
        with pytest.raises(RuntimeError, match="the step the env just played"):
            returns.step(first)
    finally:
        env.close()


def test_pred_phi_is_the_kernels_phi_as_numpy_clips():
    queue = np.array([-0.0, 0.0, 1e3, 15e3, 15e3 + 1, 2.5e5, 5e5, 5e5 + 1, 1e9, np.nan, np.inf, -np.inf])
    want = np.clip((500_000 - queue) / (500_000 - 15_000), 0.0, 1.0)
    assert _bits(pred_phi(queue, 15_000, 500_000)) == _bits(want)
    assert pred_phi(queue.reshape(3, 4), 15_000, 500_000).shape == (3, 4)


EDGES = np.array([-0.0, 0.0, 0.25, 1.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 5e-324, 1.7976931348623157e308])


@np.errstate(all="ignore")
def test_the_setting_operations_round_and_clip_as_numpy_does():
    """Copy, DivMin and Unit (kmin / kmax / pmax, aqm.<parameter>) on edge values, against NumPy."""
    columns = [FeatureColumn(ColumnOp.COPY, 0, "s"), FeatureColumn(ColumnOp.DIV_MIN, 0, "s", scale=3.0),
               FeatureColumn(ColumnOp.UNIT, 0, "s", offset=0.5, scale=0.25),
               FeatureColumn(ColumnOp.UNIT, 0, "s", offset=0.0, scale=1.0), FeatureColumn(ColumnOp.ZERO)]
    kernel = _fabric.PortFeatureKernel(columns, [], [1.0], True, 1)
    n = len(EDGES)
    kernel.set_setting(EDGES.reshape(n, 1).copy())
    frame, hist = np.zeros((n, len(columns))), np.zeros((n, 1, len(columns)), dtype=np.float32)
    kernel.reset(np.zeros((1, n), dtype=np.uint64), [], np.arange(n, dtype=np.int64), frame, hist)
    assert _bits(frame[:, 0]) == _bits(EDGES)
    assert _bits(frame[:, 1]) == _bits(np.minimum(EDGES / 3.0, 1.0))
    assert _bits(frame[:, 2]) == _bits(np.clip((EDGES - 0.5) / 0.25, 0.0, 1.0))
    assert _bits(frame[:, 3]) == _bits(np.clip((EDGES - 0.0) / 1.0, 0.0, 1.0))
    assert _bits(frame[:, 4]) == _bits(np.zeros(n))
    assert _bits(hist[:, 0]) == _bits(frame.astype(np.float32))


@np.errstate(all="ignore")
def test_policy_operands_are_read_finite_and_scaled_per_port():
    """A per-policy operand as np.nan_to_num reads it, times each port's scale, then the step mapping."""
    n = len(EDGES)
    scale = [0.5 + i for i in range(n)]
    columns = [FeatureColumn(ColumnOp.SCALE_MIN, 0, "p", finite_a=True),
               FeatureColumn(ColumnOp.DIV_MIN, 0, "p", finite_a=True, scale=4.0, port_scale=scale),
               FeatureColumn(ColumnOp.STEP_MAP, 0, "p", finite_a=True, port_scale=scale),
               FeatureColumn(ColumnOp.RATIO_MIN, 0, "p", 1, "p", finite_a=True),
               FeatureColumn(ColumnOp.SATURATE, 0, "p", finite_a=True, scale=2.0)]
    breakpoints, levels = np.array([0.5, 2.0]), np.array([1.0, 0.5, 0.0])
    kernel = _fabric.PortFeatureKernel(columns, breakpoints.tolist(), levels.tolist(), True, 2)
    x, y = EDGES.copy(), EDGES[::-1].copy()
    frame, hist = np.zeros((n, len(columns))), np.zeros((n, 2, len(columns)), dtype=np.float32)
    ports = np.arange(n, dtype=np.int64)
    kernel.reset(np.zeros((1, n), dtype=np.uint64), [x, y], ports, frame, hist)
    finite = np.nan_to_num(x, nan=0.0)
    assert _bits(frame[:, 0]) == _bits(np.minimum(finite, 1.0))
    assert _bits(frame[:, 1]) == _bits(np.minimum(finite * np.array(scale) / 4.0, 1.0))
    assert _bits(frame[:, 2]) == _bits(levels[breakpoints.searchsorted(finite * np.array(scale), side="left")])
    assert _bits(frame[:, 3]) == _bits(np.minimum(finite / np.maximum(y, 1.0), 1.0))
    assert _bits(frame[:, 4]) == _bits(finite / (finite + 2.0))


def test_the_kernel_refuses_arrays_of_the_wrong_shape_or_operands_outside_its_inputs():
    kernel = _fabric.PortFeatureKernel([FeatureColumn(ColumnOp.SCALE_MIN, 0, "f")], [], [1.0], True, 2)
    kernel.set_stat_rows([0])
    block = np.zeros((3, 4), dtype=np.uint64)
    ports = np.array([0, 2], dtype=np.int64)
    frame, hist = np.zeros((2, 1)), np.zeros((2, 2, 1), dtype=np.float32)
    reward, stats = np.zeros(2), np.zeros((1, 2), dtype=np.uint64)
    block[0, 2] = np.float64(0.25).view(np.uint64)
    kernel.step(block, [], ports, 10, 1.0, frame, hist, reward, stats)
    assert frame[:, 0].tolist() == [0.0, 0.25] and hist[1, -1, 0] == 0.25
    with pytest.raises(ValueError, match="hist has the wrong shape"):
        kernel.step(block, [], ports, 10, 1.0, frame, np.zeros((2, 3, 1), dtype=np.float32), reward, stats)
    with pytest.raises(ValueError, match="not a column of the block"):
        kernel.step(block, [], np.array([0, 4], dtype=np.int64), 10, 1.0, frame, hist, reward, stats)
    with pytest.raises(ValueError, match="not a row of the block"):
        kernel.set_stat_rows([3])
        kernel.step(block, [], ports, 10, 1.0, frame, hist, reward, stats)
    with pytest.raises(ValueError, match="kind"):
        _fabric.PortFeatureKernel([FeatureColumn(ColumnOp.SCALE_MIN, 0, "x")], [], [1.0], True, 2)
    with pytest.raises(TypeError):  # an op that is no ColumnOp
        FeatureColumn(9, 0, "f")
    with pytest.raises(ValueError, match="breakpoints"):  # two levels need one breakpoint per row
        _fabric.PortFeatureKernel([], [1.0, 2.0, 3.0], [1.0, 0.0, 0.5], True, 2)
    # a per-policy operand needs its array, one value per port of the block
    one = np.zeros((2, 1, 1), dtype=np.float32)  # a history of one frame
    policy = _fabric.PortFeatureKernel([FeatureColumn(ColumnOp.COPY, 1, "p")], [], [1.0], True, 1)
    with pytest.raises(ValueError, match="per-policy operand"):
        policy.reset(block, [np.zeros(4)], ports, frame, one)
    with pytest.raises(ValueError, match="one value per port of the block"):
        policy.reset(block, [np.zeros(4), np.zeros(3)], ports, frame, one)
    # a setting operand needs a setting of one row per controlled port
    setting = _fabric.PortFeatureKernel([FeatureColumn(ColumnOp.COPY, 0, "s")], [], [1.0], True, 1)
    with pytest.raises(ValueError, match="setting"):
        setting.reset(block, [], ports, frame, one)
    setting.set_setting(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="setting"):
        setting.reset(block, [], ports, frame, one)
    scaled = _fabric.PortFeatureKernel([FeatureColumn(ColumnOp.COPY, 0, "f", port_scale=[1.0])], [], [1.0], True, 1)
    with pytest.raises(ValueError, match="port scale"):
        scaled.reset(block, [], ports, frame, one)
