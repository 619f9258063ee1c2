"""Property-based tests (Hypothesis) of every bad-input surface: configs, set_* calls, flow tables, actions.

Each case asserts the contract of issue 7: the call runs correctly, or raises
:class:`~ecngym.error.ConfigError` naming a field / :class:`~ecngym.error.InvalidAction`; no other
exception, no crash, and nothing accepted with a changed meaning (a boolean read as a number, a
fraction truncated, a plain string read as a number, a value wrapped or clamped).

Config surfaces run in this process (pure Python up to the C++ config struct). Fabric and env cases
run in a child process (this file run as a script), so a crash (SIGSEGV / SIGFPE) fails the test
with the input that caused it instead of killing the test run. Generation is derandomized (same
cases in every run); ``PROPERTY_EXAMPLES=N`` sets the examples per test (default 150). Each test
prints the number of cases it ran (``pytest -s``).
"""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Examples per property test (PROPERTY_EXAMPLES=N overrides; the default keeps the suite's budget).
EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "150"))
#: Deterministic (CI-stable) example generation, no example database written to the repository.
PROPERTY_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(HealthCheck), print_blob=True)

#: Strings users type: unit strings (valid and not), numbers as text, words read as truth values.
TEXTS = ["5KB", "0B", "1e30B", "-1KB", "2.5B", "9007199254740993B", "0.5bps", "100Gbps", "2e19bps", "1e400s",
         "10us", "-1us", "0.5ns", "nan", "inf", "3", "0.5", "no", "yes", "false", "5rtt", "1e400rtt", "0rtt",
         "", " ", "dcqcn", "hpcc", "leaf_spine", "acc", "start", "random"]

SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-3, max_value=70_000),
    st.sampled_from([2**31, 2**32, 2**53 + 1, 2**63, 2**64, 2**70, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1.5, 1e30, -0.0, 1e-300, 3.0]),
    st.sampled_from(TEXTS), st.text(max_size=6),
)

#: Any JSON-like value: scalars, lists and mappings of them.
JUNK = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["kind", "name", "kmin", "x", "preset", "load"]) | st.text(max_size=4), inner, max_size=3),
    max_leaves=6)


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys / indices) into a nested dict / list, the containers included."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


def set_path(data: Any, path: tuple, value: Any) -> Any:
    """A deep copy of ``data`` with ``path`` set to ``value`` (a new key when the last step is new)."""
    data = copy.deepcopy(data)
    node = data
    for step in path[:-1]:
        node = node[step]
    if isinstance(node, list) and isinstance(path[-1], int) and path[-1] >= len(node):
        node.append(value)
    else:
        node[path[-1]] = value
    return data


@st.composite
def mutated(draw: Any, valid: dict[str, Any], extra_keys: tuple[str, ...] = ("no_such_field",)) -> tuple:
    """A valid config with 1-3 of its fields (or a new, unknown key) replaced by hostile values.

    Returns:
        (config, [(path, value), ...]) so a test can check what happened to each change.
    """
    data = copy.deepcopy(valid)
    changes = []
    for _ in range(draw(st.integers(1, 3))):
        candidates = paths(data)
        if draw(st.integers(0, 9)) == 0:  # an unknown key somewhere
            parents = [p for p in candidates if isinstance(_get(data, p), dict)] + [()]
            parent = draw(st.sampled_from(parents))
            path = (*parent, draw(st.sampled_from(extra_keys)))
        else:
            path = draw(st.sampled_from(candidates))
        value = draw(JUNK)
        data = set_path(data, path, value)
        changes.append((path, value))
    return data, changes


def _get(data: Any, path: tuple) -> Any:
    for step in path:
        data = data[step]
    return data


def dotted(prefix: str, path: tuple) -> str:
    """``env`` + ``("action", "templates", 2)`` -> ``env.action.templates[2]``."""
    name = prefix
    for step in path:
        name += f"[{step}]" if isinstance(step, int) else f".{step}"
    return name


# ---------------------------------------------------------------------------------------- contract
def _unit_string(value: Any) -> bool:
    """Whether ``value`` is a size / duration / rate string (the documented string form of numbers)."""
    from ecngym.error import ConfigError
    from ecngym.units import parse_bytes, parse_rate_bps, parse_time_ns

    for parse in (parse_bytes, parse_time_ns, parse_rate_bps):
        try:
            parse(value, "x")
            return True
        except ConfigError:
            pass
    return isinstance(value, str) and value.strip().lower().endswith("rtt")


def _same_meaning(given: Any, stored: Any) -> bool:
    """Whether an accepted value kept its meaning: no bool -> number, no fraction -> int, no text -> number."""
    if isinstance(given, bool):
        return isinstance(stored, bool) and stored == given
    if isinstance(given, float) and math.isfinite(given) and given != int(given):
        return not isinstance(stored, int)
    if isinstance(given, str) and isinstance(stored, (int, float)) and not isinstance(stored, bool):
        return _unit_string(given)
    return True


def _stored(cfg: Any, path: tuple) -> Any:
    node = cfg
    for step in path:
        if isinstance(node, dict):
            node = node[step]
        elif isinstance(node, list):
            node = node[step]
        else:
            node = getattr(node, step)
    return node


def _declared_boolean(cfg: Any, path: tuple) -> bool:
    """Whether the model field at ``path`` is declared a boolean (``Flag``), for pydantic models."""
    from pydantic import BaseModel

    node = _stored(cfg, path[:-1])
    return isinstance(node, BaseModel) and type(node).model_fields[path[-1]].annotation is bool


class Counter:
    """Counts the cases a property test ran (printed with ``pytest -s``)."""

    def __init__(self, name: str) -> None:
        self.name, self.n = name, 0

    def report(self) -> int:
        """Print and return the number of cases run."""
        print(f"\n{self.name}: {self.n} cases")
        return self.n


# ---------------------------------------------------------------------------------------- configs (in process)
def test_env_config_property():
    from ecngym.envs import EnvConfig
    from ecngym.error import ConfigError

    valid = EnvConfig().as_dict()
    count = Counter("env config")

    @PROPERTY_SETTINGS
    @given(mutated(valid))
    def case(case_data):
        data, changes = case_data
        count.n += 1
        try:
            cfg = EnvConfig.from_dict(data)
        except ConfigError as exc:
            assert exc.field.startswith("env") and exc.message, exc
            return
        for path, value in changes:
            if path[0] in ("topology", "fabric", "workload"):
                continue  # free mappings, validated by their own layer (below)
            try:
                stored = _stored(cfg, path)
            except (KeyError, IndexError, AttributeError, TypeError):
                continue
            assert _same_meaning(value, stored), f"{dotted('env', path)}: {value!r} accepted as {stored!r}"
        assert EnvConfig.from_dict(cfg.as_dict()) == cfg  # what results record replays

    case()
    assert count.report() >= min(EXAMPLES, 50)


@pytest.mark.parametrize("preset", ["hpcc", "dcqcn_paper", "dctcp"])
def test_fabric_config_property(preset):
    from ecngym.error import ConfigError
    from ecngym.sim_backend import FabricConfig

    valid = {"preset": preset, **FabricConfig.preset(preset).as_dict()}
    count = Counter(f"fabric config ({preset})")

    @PROPERTY_SETTINGS
    @given(mutated(valid))
    def case(case_data):
        data, changes = case_data
        count.n += 1
        try:
            cfg = FabricConfig.from_dict(data)
            cpp = cfg.to_cpp()
        except ConfigError as exc:
            assert exc.field.startswith("fabric") and exc.message, exc
            return
        born = dict(zip(cpp.aqm_attribute_names, cpp.aqm_attribute_values, strict=True))
        assert cpp.num_queues >= 2 and int(born["KminBytes"]) <= int(born["KmaxBytes"])  # sane C++ values
        for path, value in changes:
            if path == ("preset",):
                continue
            try:
                stored = _stored(cfg, path)
            except (KeyError, IndexError, AttributeError, TypeError):
                continue
            # raw fields are checked when converted: a bool / fraction / text reaching the C++ config
            # would have to pass to_cpp, whose checks the contract below covers
            if isinstance(value, bool) and not _declared_boolean(cfg, path):
                raise AssertionError(f"{dotted('fabric', path)}: boolean {value!r} accepted as {stored!r}")

    case()
    assert count.report() >= min(EXAMPLES, 50)


TOPOLOGIES = [
    {"kind": "incast_star", "hosts": 4, "link_rate": "100Gbps", "link_delay": "1us"},
    {"kind": "dumbbell", "left_hosts": 2, "right_hosts": 1, "host_rate": "100Gbps", "bottleneck_rate": "40Gbps",
     "link_delay": "1us"},
    {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 2, "host_rate": "100Gbps",
     "fabric_rate": "100Gbps", "host_delay": "1us", "fabric_delay": "1us"},
    {"kind": "fat_tree", "k": 4, "link_rate": "100Gbps", "link_delay": "1us"},
]


@pytest.mark.parametrize("valid", TOPOLOGIES, ids=[t["kind"] for t in TOPOLOGIES])
def test_topology_config_property(valid):
    from ecngym.error import ConfigError
    from ecngym.sim_backend import Topology

    count = Counter(f"topology ({valid['kind']})")

    @PROPERTY_SETTINGS
    @given(mutated(valid))
    def case(case_data):
        data, _ = case_data
        count.n += 1
        try:
            top = Topology.from_config(data)
            top.check_buildable(available_bytes=2 * 10**9)
        except ConfigError as exc:
            assert exc.field.startswith("topology") and exc.message, exc
            return
        assert top.num_hosts >= 1 and (top.rate_bps >= 1).all() and (top.delay_ns <= 10**9).all()

    case()
    assert count.report() >= min(EXAMPLES, 50)


# ------------------------------------------------------------------------------- fabric and env (child process)
def _run_child(surface: str, tmp_path: Any) -> int:
    """Run this file's ``surface`` harness in a fresh interpreter; return the cases it ran."""
    last = tmp_path / "last_case.txt"
    proc = subprocess.run([sys.executable, __file__, surface], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PROPERTY_LAST_CASE": str(last)})
    crashed = proc.returncode < 0 or proc.returncode > 1
    assert proc.returncode == 0, (
        f"{surface}: child {'crashed (signal ' + str(-proc.returncode) + ')' if crashed else 'failed'}; "
        f"last case: {last.read_text() if last.exists() else '?'}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    cases = int(proc.stdout.rsplit("CASES ", 1)[1].split()[0])
    print(f"\n{surface}: {cases} cases")
    return cases


def test_fabric_calls_property(tmp_path):
    assert _run_child("fabric", tmp_path) >= min(EXAMPLES, 50)


def test_flow_table_property(tmp_path):
    assert _run_child("flows", tmp_path) >= min(EXAMPLES, 50)


@pytest.mark.parametrize("kind", ["discrete", "continuous", "multi_discrete"])
def test_env_actions_property(kind, tmp_path):
    assert _run_child(f"actions_{kind}", tmp_path) >= min(EXAMPLES, 50)


def _note(case: Any) -> None:
    """Record the case about to run (read by the parent if this process dies)."""
    path = os.environ.get("PROPERTY_LAST_CASE")
    if path:
        with open(path, "w") as f:
            f.write(repr(case)[:2000])


IDS = st.one_of(JUNK, st.lists(st.integers(-2, 12), min_size=1, max_size=4),
                st.integers(0, 12), st.lists(st.sampled_from([1, 3, 5, 7]), min_size=1, max_size=4))
SIZES = st.one_of(JUNK, st.integers(0, 2**54), st.sampled_from(["5KB", "200KB", "1MB", 2**53, 2**53 + 1]))
PROBS = st.one_of(JUNK, st.floats(0, 1), st.floats(-1, 2))


def _child_fabric() -> int:
    import numpy as np
    import pandas as pd

    from ecngym.error import ConfigError
    from ecngym.sim_backend import Fabric

    flows = pd.DataFrame({"src": [0, 1, 2], "dst": [3, 3, 3], "size_bytes": [50_000] * 3, "start_ns": [0, 0, 1000]})
    fab = Fabric({"kind": "incast_star", "hosts": 4}, flows, "hpcc")
    count = Counter("fabric")

    @PROPERTY_SETTINGS
    @given(st.sampled_from(["set_red", "set_pfc", "run_until", "advance", "run", "reset"]), IDS, SIZES, SIZES, PROBS)
    def case(call, ids, a, b, p):
        count.n += 1
        _note((call, ids, a, b, p))
        before = fab.get_red() if fab._sim is not None else None
        try:
            if call == "set_red":
                fab.set_red(ids, a, b, p)
                red, ports = fab.get_red(), np.atleast_1d(np.asarray(ids))
                # accepted: stored exactly as given (sizes as whole bytes, no wrap, no truncation)
                assert ports.dtype.kind in "iu", ids
                for i, port in enumerate(ports.tolist()):
                    for key, given_value in (("kmin_bytes", a), ("kmax_bytes", b)):
                        gv = given_value[i] if isinstance(given_value, (list, np.ndarray)) else given_value
                        if isinstance(gv, (int, np.integer)) and not isinstance(gv, bool):
                            assert int(red[key][port]) == int(gv), (key, gv, red[key][port])
                    pv = p[i] if isinstance(p, list) else p
                    assert red["pmax"][port] == float(pv) and not isinstance(pv, (bool, str))
            elif call == "set_pfc":
                fab.set_pfc(ids, p, a)
            elif call == "run_until":
                fab.run_until(a if fab.now_ns <= 10**7 else fab.now_ns)
            elif call == "advance":
                fab.advance(b if not isinstance(b, int) or b < 10**7 else 10**6)
            elif call == "run":
                fab.run(a if not isinstance(a, int) or a < 10**7 else 10**6)
            else:
                fab.reset(seed=ids)
        except ConfigError as exc:
            assert exc.field and exc.message, exc
            if before is not None and fab._sim is not None:  # a refused call changes nothing
                after = fab.get_red()
                assert all(np.array_equal(before[k], after[k]) for k in before), "refused set_* changed state"
        if fab._sim is None:
            fab.reset()

    case()
    fab.close()
    return count.n


FLOW_VALUES = st.one_of(JUNK, st.integers(-1, 5), st.sampled_from([1000, 2**63, 2**64, 1.5, float("nan"), "3"]))


def _child_flows() -> int:
    import pandas as pd

    from ecngym.error import ConfigError
    from ecngym.sim_backend import Fabric

    count = Counter("flows")
    columns = ["src", "dst", "size_bytes", "start_ns", "priority"]
    valid = {"src": [0, 1, 2], "dst": [3, 3, 0], "size_bytes": [10_000, 20_000, 5_000],
             "start_ns": [0, 500, 1000], "priority": [3, 3, 3]}

    @PROPERTY_SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(columns), st.integers(0, 2), FLOW_VALUES), min_size=1, max_size=3),
           st.booleans())
    def case(edits, drop_column):
        count.n += 1
        table = {k: list(v) for k, v in valid.items()}
        for col, row, value in edits:
            table[col][row] = value
        if drop_column:
            table.pop(edits[0][0])
        _note(table)
        try:
            frame = pd.DataFrame(table)
        except (ValueError, TypeError):
            return  # not a table at all (pandas refuses it before we see it)
        try:
            with Fabric({"kind": "incast_star", "hosts": 4}, frame, "hpcc") as fab:
                fab.run("1ms")
                records = fab.flow_records()
                # accepted: the flows are the ones given, whole numbers unchanged
                for col in ("src", "dst", "size_bytes", "start_ns"):
                    if col in table:
                        assert [int(v) for v in records[col]] == [int(v) for v in table[col]], col
        except ConfigError as exc:
            assert exc.field.startswith("flows") or exc.field.startswith("fabric"), exc

    case()
    return count.n


#: Controlled ports of the default env with one action per port (the multi_discrete case: MultiDiscrete([13] * 16)).
PORTS = 16


def _one_entry_changed(values: list, index: int, value: Any) -> list:
    """``values`` with entry ``index`` replaced by ``value`` (one boolean among valid indices, ...)."""
    return [*values[:index], value, *values[index + 1:]]


#: An action's entry: a number in or near the spaces' ranges, or a boolean (Python's or NumPy's) among them.
ACTION_ENTRIES = st.one_of(st.floats(-1.5, 1.5), st.integers(-1, 13), st.booleans(), st.sampled_from([np.True_,
                                                                                                       np.False_]))
ACTIONS = st.one_of(JUNK, st.integers(-2, 20), st.floats(-2, 2), st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3),
                    st.lists(st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3), min_size=1, max_size=2),
                    # booleans inside lists of the spaces' shapes: never read as 1 / 0
                    st.lists(ACTION_ENTRIES, min_size=1, max_size=3),
                    st.lists(st.lists(ACTION_ENTRIES, min_size=3, max_size=3), min_size=1, max_size=2),
                    st.builds(_one_entry_changed, st.lists(st.integers(0, 12), min_size=PORTS, max_size=PORTS),
                              st.integers(0, PORTS - 1),
                              st.sampled_from([True, False, np.True_, np.False_, 2.5, -1, 13, 2.0, 12, 0, 7.0, 5])),
                    # valid indices in another shape holding as many ((1, 16), (16, 1), (4, 4)): never reshaped
                    st.builds(lambda values, shape: np.array(values).reshape(shape),
                              st.lists(st.integers(0, 12), min_size=PORTS, max_size=PORTS),
                              st.sampled_from([(1, PORTS), (PORTS, 1), (4, 4)])))


def _child_actions(kind: str) -> int:
    import numpy as np

    from ecngym.envs import EcnTuningEnv
    from ecngym.error import InvalidAction

    # one fabric per process; multi_discrete: a template index per controlled port
    action = {"type": "discrete", "scope": "port"} if kind == "multi_discrete" else {"type": kind}
    env = EcnTuningEnv(action=action, episode_steps=6)
    assert kind != "multi_discrete" or env.action_space.shape == (PORTS,), env.action_space
    env.reset(seed=1)
    count = Counter("actions")

    @PROPERTY_SETTINGS
    @given(ACTIONS)
    def case(action):
        count.n += 1
        _note((kind, action))
        if env.unwrapped.scenario.done:
            env.reset(seed=1)
        try:
            arr = np.asarray(action)
        except (ValueError, TypeError):
            arr = None
        # a boolean anywhere is no number (np.asarray reads [True, 0.5, 0.2] as floats)
        contained = (arr is not None and arr.dtype.kind in "iuf" and not _has_boolean(action)
                     and _contains(env.action_space, arr))
        try:
            env.step(action)
        except InvalidAction as exc:
            assert str(exc) and not contained, f"valid action {action!r} refused: {exc}"
            return
        # accepted: the action is in the space (nothing clamped or truncated)
        assert contained, f"{kind}: {action!r} accepted but outside {env.action_space}"

    case()
    env.close()
    return count.n


def _has_boolean(value: Any) -> bool:
    """Whether ``value`` is, or (nested in lists / tuples) holds, a Python or NumPy boolean."""
    if isinstance(value, (bool, np.bool_)):
        return True
    return isinstance(value, (list, tuple)) and any(_has_boolean(v) for v in value)


def _contains(space: Any, arr: Any) -> bool:
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):  # a scalar, as Gymnasium's Discrete.contains (not [5], shape (1,))
        return arr.shape == () and float(arr).is_integer() and 0 <= arr < space.n
    if isinstance(space, spaces.MultiDiscrete):  # its shape, not just as many entries: (1, 16) is no element
        return (arr.shape == space.shape and bool(np.all(arr == np.round(arr)))
                and bool(np.all((arr >= 0) & (arr < space.nvec))))
    return arr.shape == space.shape and bool(np.all(np.isfinite(arr))) and bool(np.all(np.abs(arr) <= 1.0))


if __name__ == "__main__":  # the child process of the fabric / env property tests
    n = {"fabric": _child_fabric, "flows": _child_flows, "actions_discrete": lambda: _child_actions("discrete"),
         "actions_continuous": lambda: _child_actions("continuous"),
         "actions_multi_discrete": lambda: _child_actions("multi_discrete")}[sys.argv[1]]()
    print(f"CASES {n}")
