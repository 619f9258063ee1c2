"""A fixed port AQM policy (ECN#, CoDel, R-AQM, PRED's FCS alone, RED) on the controlled ports.

The seed systems that act per packet in the switch (ECN# §3, R-AQM §IV, PRED §IV-A; docs: algorithms/ecn-sharp.md §2,
algorithms/r-aqm.md §3, algorithms/pred.md §3.2) are compared as controllers: at reset the policy is installed on
the env's controlled ports (``Fabric.set_aqm``) and the controller then holds its action for the whole episode, so every
policy runs on the identical trace of the scenario. The policies and their parameters are those of
:mod:`ecngym.sim_backend.aqm`; a bad name or value raises ConfigError naming ``controller.<field>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ecngym.error import ConfigError
from ecngym.units import is_rtt, rtt_multiple, rtt_to_ns


class StaticAqmController:
    """Install one port AQM policy with fixed parameters; never act again.

    Args:
        policy: Policy name (``"ecn_sharp"``, ``"codel"``, ``"r_aqm"``, ``"pred"``, ``"red"``).
        params: The policy's parameters (human units allowed), e.g. ``{"ins_target_ns": "80us"}``;
            a duration may be given in base RTTs of the env (``"1.25rtt"``), resolved at reset.
        name: Name in tables (default: the policy's).

    Raises:
        ConfigError: On an unknown policy or parameter, or a value out of range.
    """

    def __init__(self, policy: str, params: dict[str, Any] | None = None, name: str | None = None) -> None:
        from ecngym.sim_backend import aqm

        self.policy, _ = aqm.resolve(policy, "controller.policy")
        if params is not None and not isinstance(params, Mapping):  # 0 and '' meant {}, [] too
            raise ConfigError("controller.params", f"expected a mapping of parameter -> value, got {params!r}")
        self.params = dict(params or {})
        # durations in base RTTs ("1.25rtt": PRED's T_FCS) resolve against the env at reset
        self.rtt_params = {k: v for k, v in self.params.items() if is_rtt(v)}
        for k, v in self.rtt_params.items():
            rtt_multiple(v, f"controller.params.{k}")
        fixed = {k: v for k, v in self.params.items() if k not in self.rtt_params}
        aqm.validate_params(self.policy, {**fixed, **dict.fromkeys(self.rtt_params, 1)}, "controller.params")
        bad = [k for k in self.rtt_params if not k.endswith("_ns")]
        if bad:
            raise ConfigError(f"controller.params.{bad[0]}", f"got {self.params[bad[0]]!r}; only durations "
                                                             "(*_ns parameters) may be given in base RTTs")
        self.name = name or self.policy
        self.interval_steps = 1
        self.log: list[dict[str, Any]] = []

    def reset(self, env: Any) -> None:
        """Install the policy on the controlled ports (after ``env.reset``)."""
        from ecngym.envs.view import EnvView

        view = EnvView(env)
        self._action = view.hold_action()  # before the policy replaces RED: the env's RED mirror
        self.interval_steps = view.episode_steps + 1
        params = {**self.params, **{k: rtt_to_ns(v, view.base_rtt_ns, f"controller.params.{k}")
                                    for k, v in self.rtt_params.items()}}
        view.set_aqm(view.ports, self.policy, **params)

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """Hold the action: the ports' policy decides per packet."""
        return self._action

