"""Build a controller from its config: ``configs/controller/<name>.yaml`` with a Hydra ``_target_``.

Every controller config names its class and its keyword arguments::

    # configs/controller/pred.yaml
    _target_: ecngym.baselines.pred.PredController
    delta_lambda_per_mb: 0.025

:func:`build_controller` checks the keys against the class's signature first (an unknown or
misspelt key is a :class:`~ecngym.error.ConfigError` naming ``controller.<key>``), then lets Hydra
instantiate it; a ``ConfigError`` raised by the constructor comes out as it is, not wrapped in
Hydra's ``InstantiationException``. There is no list of kinds to extend: a new controller is a
class plus a YAML file (its ``_target_`` may be any importable class, also outside ecngym).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import Any

from ecngym.error import ConfigError, EcnGymError
from ecngym.validation import Text, check, config_values


def build_controller(cfg: Mapping[str, Any] | Any) -> Any:
    """Instantiate the controller a ``controller`` config describes.

    Args:
        cfg: The ``controller`` node (a DictConfig or mapping) with ``_target_`` and keyword args.

    Returns:
        The controller (see :class:`~ecngym.baselines.controller.Controller`).

    Raises:
        ConfigError: On a missing or unimportable ``_target_``, an unknown key, a ``name`` that is not
            a non-empty string, or a bad value.
    """
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    if not OmegaConf.is_config(cfg):  # a plain mapping: "???" marks a mandatory value there too, as Hydra reads it
        cfg = OmegaConf.create(dict(cfg), flags={"allow_objects": True})
    node = config_values(cfg, "controller")  # a ??? left unset, at any depth, names controller.<key>
    cls = controller_class(node)
    target = node["_target_"]
    params = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    allowed = [k for k, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    for key in node:
        if not key.startswith("_") and key not in allowed and not takes_any:
            raise ConfigError(f"controller.{key}", f"unknown parameter of {target}; allowed: {allowed}")
    if node.get("name") is not None:  # every controller's display name (results rows, logger runs)
        if not check("controller.name", node["name"], Text).strip():
            raise ConfigError("controller.name", f"expected a non-empty name, got {node['name']!r}")
    missing = [k for k, p in params.items()
               if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and k not in node]
    if missing:
        raise ConfigError(f"controller.{missing[0]}", f"required by {target} but not given")
    try:
        return instantiate(node, _convert_="all")
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, EcnGymError):
            raise cause from None
        raise ConfigError("controller", f"{target}: {cause or exc}") from None


def controller_class(cfg: Mapping[str, Any]) -> type:
    """The class a controller config names in its ``_target_`` (imported, not instantiated).

    Args:
        cfg: The ``controller`` node (a DictConfig or mapping).

    Returns:
        The class.

    Raises:
        ConfigError: Naming ``controller._target_`` if it is missing or cannot be imported.
    """
    from hydra.utils import get_object

    target = cfg.get("_target_")
    if not isinstance(target, str) or not target:
        raise ConfigError("controller._target_", f"missing: every controller config names its class "
                                                 f"(e.g. ecngym.baselines.StaticEcnController), got {target!r}")
    hydra_log = logging.getLogger("hydra.utils")
    level = hydra_log.level
    hydra_log.setLevel(logging.CRITICAL)  # (get_object also logs the failure as an [ERROR] line: said once, below)
    try:
        obj = get_object(target)
    except Exception as exc:  # hydra raises ImportError / ValueError variants
        reason = " ".join(str(exc).split())
        raise ConfigError("controller._target_", f"cannot import {target!r}: {reason}") from None
    finally:
        hydra_log.setLevel(level)
    # the target must be a class with the contract's methods, checked here rather than failing at its first call
    missing = [m for m in ("reset", "act") if not callable(getattr(obj, m, None))]
    if not inspect.isclass(obj) or missing:
        what = f"a class without {' or '.join(missing)}" if inspect.isclass(obj) else f"a {type(obj).__name__}"
        raise ConfigError("controller._target_", f"{target!r} is {what}; expected a controller class (reset(env) "
                                                 "and act(obs, info), see ecngym.baselines.controller.Controller)")
    return obj
