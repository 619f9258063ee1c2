"""The Hydra config tree, shipped as package data (``pkg://ecngym.configs``)."""

from pathlib import Path

#: The installed config tree (``configs/<group>/<option>.yaml``): the one place code finds it.
CONFIG_DIR = Path(__file__).resolve().parent
