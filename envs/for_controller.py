"""The env a controller plays: made once, asked for the controller's overrides, made again if it has any.

A controller may need another env than the scenario's (a static setting that is not one of the
discrete templates joins them; a tuner that sets arbitrary thresholds asks for a continuous action
space; a trained agent sets the state, reward and Δt it was trained with): its
``env_overrides(env) -> dict`` says which ``EnvConfig`` keys to replace. Traces do not depend on any
of them, so the trace hash is unchanged. Every place that plays a controller makes its env here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def controller_overrides(controller: Any, env: Any) -> dict[str, Any]:
    """The ``EnvConfig`` overrides ``controller`` asks of ``env`` (``{}`` if it asks none).

    Args:
        controller: Any controller; one without ``env_overrides`` asks none.
        env: The env made without overrides (the controller may read its rates, RTT, templates).

    Returns:
        The top-level ``EnvConfig`` keys the controller replaces, with their values.
    """
    wants = getattr(controller, "env_overrides", None)
    return dict(wants(env)) if wants is not None else {}


def make_for_controller(make: Callable[[Mapping[str, Any]], Any], controller: Any) -> Any:
    """``make({})``; if ``controller`` asks for env overrides, close it and return ``make(overrides)``.

    Args:
        make: Makes the env with the given ``EnvConfig`` overrides on top of the scenario's (the
            caller's choice of ``gymnasium.make``, ``EcnTuningEnv`` or a reproduction's own env).
        controller: The controller to play on the env.

    Returns:
        The env the controller plays (the first one when it asks no overrides).
    """
    env = make({})
    try:
        extra = controller_overrides(controller, env)
    except BaseException:
        env.close()
        raise
    if not extra:
        return env
    env.close()
    return make(extra)
