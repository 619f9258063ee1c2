"""A fixed port AQM policy (ECN#, CoDel, R-AQM, PRED's FCS alone, RED) on the controlled ports.

The seed systems that act per packet in the switch (specs/ecn_sharp.md §2, r_aqm.md §3, pred.md
§3.2) are compared as controllers: at reset the policy is installed on the env's controlled ports
(``Fabric.set_aqm``) and the controller then holds its action for the whole episode, so every
policy runs on the identical trace of the scenario. The policies and their parameters are those of
:mod:`ecngym.sim_backend.aqm`; a bad name or value raises ConfigError naming ``controller.<field>``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ecngym.error import ConfigError


class StaticAqmController:
    """Install one port AQM policy with fixed parameters; never act again.

    Args:
        policy: Policy name (``"ecn_sharp"``, ``"codel"``, ``"r_aqm"``, ``"pred"``, ``"red"``).
        params: The policy's parameters (human units allowed), e.g. ``{"ins_target_ns": "80us"}``.
        name: Name in tables (default: the policy's).

    Raises:
        ConfigError: On an unknown policy or parameter, or a value out of range.
    """

    def __init__(self, policy: str, params: dict[str, Any] | None = None, name: str | None = None) -> None:
        from ecngym.sim_backend import aqm

        self.policy, _ = aqm.resolve(policy, "controller.policy")
        try:
            self.params = dict(params or {})
        except (TypeError, ValueError):
            raise ConfigError("controller.params", f"expected a mapping, got {params!r}") from None
        aqm.validate_params(self.policy, self.params, "controller.params")
        self.name = name or self.policy
        self.interval_steps = 1
        self.log: list[dict[str, Any]] = []

    def reset(self, env: Any) -> None:
        """Install the policy on the controlled ports (after ``env.reset``)."""
        from ecngym.envs.view import EnvView

        view = EnvView(env)
        self._action = view.hold_action()  # before the policy replaces RED: the env's RED mirror
        self.interval_steps = view.episode_steps + 1
        view.set_aqm(view.ports, self.policy, **self.params)

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """Hold the action: the ports' policy decides per packet."""
        return self._action
