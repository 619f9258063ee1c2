"""Non-learning controllers: the static family, PRED (QLA on FCS), ByteTuning; built by name from configs."""

from ecngym.baselines.controller import Controller
from ecngym.baselines.registry import build_controller
from ecngym.baselines.static import (
    FORMULA_SETTINGS,
    STATIC_SETTINGS,
    StaticEcnController,
    StaticEcnSetting,
    StaticPerLayerEcnController,
    dctcp_k_bytes,
    ecn_star_k_bytes,
)

__all__ = ["FORMULA_SETTINGS", "STATIC_SETTINGS", "Controller", "StaticEcnController", "StaticEcnSetting",
           "StaticPerLayerEcnController", "build_controller", "dctcp_k_bytes", "ecn_star_k_bytes"]
