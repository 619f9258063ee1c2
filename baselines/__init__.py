"""Non-learning controllers: static settings (this release); PRED, ECN#, R-AQM, ByteTuning next."""

from ecngym.baselines.controller import Controller
from ecngym.baselines.static import STATIC_SETTINGS, StaticEcnController, StaticEcnSetting, dctcp_k_bytes

__all__ = ["STATIC_SETTINGS", "Controller", "StaticEcnController", "StaticEcnSetting", "dctcp_k_bytes"]
