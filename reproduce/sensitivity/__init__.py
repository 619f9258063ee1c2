"""``ecngym reproduce <paper> --sensitivity``: sweeps of the settings a paper leaves open.

One module per paper (``reproduce/sensitivity/<id with underscores>.py``), registered by paper id
in :data:`SWEEPS`. A module defines ``TITLE`` and ``run(quick: bool = False, jobs: int = 1) ->
list[Sweep]``: it calls the reproduction's own scenario builders (``ecngym.reproduce.<paper>``)
over a grid and returns one :class:`~ecngym.reproduce.sensitivity.core.Sweep` per claim, each
row a grid point with the claim's figure and whether it holds there. ``quick`` is a tiny grid (for
tests); ``jobs`` (at most 2) runs grid points in that many worker processes at nice 10.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ecngym.error import ConfigError

#: paper id -> module under ecngym.reproduce.sensitivity
SWEEPS = {"ecn-sharp": "ecn_sharp", "pred": "pred", "r-aqm": "r_aqm"}


def sweep_module(paper: str) -> ModuleType:
    """The sensitivity module of ``paper``.

    Raises:
        ConfigError: Naming ``paper`` if it has no sensitivity sweep (listing those that have).
    """
    if paper not in SWEEPS:
        raise ConfigError("paper", f"no sensitivity sweep for {paper!r}; papers with one: {', '.join(SWEEPS)}")
    return importlib.import_module(f"ecngym.reproduce.sensitivity.{SWEEPS[paper]}")
