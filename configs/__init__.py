"""The Hydra config tree, shipped as package data (``pkg://ecngym.configs``)."""
