"""The per-port telemetry the fabric returns each interval: one block of 64-bit words and its layout.

The C++ fabric's ``TELEMETRY_ROWS`` names each row of the block and the type its words hold
(uint64, int64 or float64); :func:`telemetry_rows` gives typed views of the rows by name, without
copying. :mod:`ecngym.sim_backend.fabric` re-exports these names.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np


class Telemetry(NamedTuple):
    """One interval's per-port telemetry (:meth:`~ecngym.sim_backend.fabric.Fabric.read_telemetry_block`).

    Attributes:
        start_ns: Start of the interval (the previous read).
        end_ns: End of the interval (now).
        block: ``(quantities, ports)`` uint64 array, one row per quantity of the C++ fabric's
            ``TELEMETRY_ROWS`` (rows of int64 / float64 quantities hold those types' bits).
        aqm: The per-policy arrays ``"<policy>.<name>"`` (empty when every port runs RED).
    """

    start_ns: int
    end_ns: int
    block: np.ndarray
    aqm: dict[str, np.ndarray]

    def as_dict(self) -> dict[str, Any]:
        """The mapping :meth:`Fabric.read_telemetry` returns (each array a view into ``block``)."""
        tel: dict[str, Any] = {"interval_start_ns": self.start_ns, "interval_end_ns": self.end_ns}
        rows = telemetry_rows(self.block)
        util = rows.pop("utilization")
        tel.update(rows)
        tel.update(self.aqm)
        tel["utilization"] = util  # last, as it always came (computed after the others)
        return tel

    def rows(self, keys: tuple[str, ...], ports: np.ndarray) -> dict[str, np.ndarray]:
        """The arrays ``keys`` (block rows or per-policy names) of ``ports`` only: one gather."""
        out = telemetry_rows(self.block.take(ports, axis=1), keys)
        for k in keys:
            if k not in out:
                out[k] = self.aqm[k][ports]
        return out


#: The type each kind of telemetry row holds in the block's 64-bit words (``TELEMETRY_ROWS``' kinds).
TELEMETRY_KIND_TYPES: dict[str, type] = {"u": np.uint64, "i": np.int64, "f": np.float64}
_KIND_INDEX = {kind: i for i, kind in enumerate(TELEMETRY_KIND_TYPES)}


@functools.cache
def _telemetry_layout() -> dict[str, tuple[int, int]]:
    """Each block row's key -> (row, index of its kind in :data:`TELEMETRY_KIND_TYPES`)."""
    from ecngym.sim_backend import _fabric

    return {name: (row, _KIND_INDEX[kind]) for row, (name, kind) in enumerate(_fabric.TELEMETRY_ROWS)}


def telemetry_layout() -> dict[str, tuple[int, str]]:
    """Each block row's key -> (row, kind): kind ``'u'`` uint64, ``'i'`` int64, ``'f'`` float64."""
    kinds = list(TELEMETRY_KIND_TYPES)
    return {name: (row, kinds[kind]) for name, (row, kind) in _telemetry_layout().items()}


def telemetry_rows(block: np.ndarray, keys: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """Typed row views of a telemetry ``block`` (or of its columns for some ports), by key.

    Args:
        block: A :attr:`Telemetry.block` (or columns of it).
        keys: The keys wanted (default: every row); keys that are no block row are left out.
    """
    layout = _telemetry_layout()
    views = [block.view(t) for t in TELEMETRY_KIND_TYPES.values()]
    if keys is None:
        return {k: views[kind][row] for k, (row, kind) in layout.items()}
    return {k: views[layout[k][1]][layout[k][0]] for k in keys if k in layout}
