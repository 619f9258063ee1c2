"""Flow-size distributions: empirical CDFs shipped with the package, user CDF files, fixed size.

A CDF file has one ``size_bytes cdf`` pair per line, nothing else; ``#`` starts a comment. The CDF column is in
percent (HPCC ``traffic_gen`` format, last value 100) or a fraction (HKUST-SING TrafficGenerator
format, last value 1); sizes and CDF values must both be non-decreasing.

Sampling is inverse-CDF with *linear interpolation* between the points, as both generators do:
draw ``u ~ U[0, 1)``, find the segment ``cdf[i] <= u < cdf[i+1]`` and return
``size[i] + (u - cdf[i]) / (cdf[i+1] - cdf[i]) * (size[i+1] - size[i])``; a first point with a
CDF above 0 is an atom at that size. The size is then rounded *up* to whole bytes, at least 1.
So ``P(size <= k) = F(k)`` for every whole ``k >= 1``, with ``F`` the piecewise-linear CDF.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.error import ConfigError
from ecngym.files import check_input_file
from ecngym.units import MAX_BYTES
from ecngym.validation import Text, Whole, check

CDF_DIR = Path(__file__).parent / "cdf"

#: Workload name meaning "no background flows" (only the other arrival patterns of a trace).
NO_BACKGROUND = "none"

#: Built-in workloads: name -> CDF file in ``workloads/cdf`` (provenance in each file's header).
BUILTIN_CDFS: dict[str, str] = {
    "websearch": "websearch.txt",
    "datamining": "datamining.txt",
    "fb_hadoop": "fb_hadoop.txt",
    "alibaba_storage": "alibaba_storage.txt",
    "google_rpc": "google_rpc.txt",
    "pred_workload1": "pred_workload1.txt",
    "pred_workload2": "pred_workload2.txt",
}
#: The argument each workload reads besides its name (the flow size of ``fixed``, the CDF file of
#: ``custom``); the others read neither.
WORKLOAD_ARGUMENTS: dict[str, str] = {"fixed": "size", "custom": "cdf_file"}


@dataclass(frozen=True)
class FlowSizeDistribution:
    """A piecewise-linear flow-size CDF.

    Attributes:
        name: Workload name (or the CDF file's path).
        sizes_bytes: Support points, non-decreasing.
        cdf: Cumulative probability at each point, non-decreasing, ending at 1.
    """

    name: str
    sizes_bytes: np.ndarray
    cdf: np.ndarray

    @property
    def mean_bytes(self) -> float:
        """Mean flow size of the piecewise-linear CDF (exact: segment midpoints)."""
        s, p = self.sizes_bytes, self.cdf
        return float(p[0] * s[0] + np.sum(np.diff(p) * (s[1:] + s[:-1]) / 2))

    def cdf_at(self, size_bytes: np.ndarray | float) -> np.ndarray:
        """The CDF evaluated at ``size_bytes`` (for goodness-of-fit tests)."""
        return np.interp(size_bytes, self.sizes_bytes, self.cdf, left=0.0, right=1.0)

    def quantile(self, u: np.ndarray | float) -> np.ndarray:
        """The inverse CDF at probabilities ``u`` in [0, 1], in bytes (float).

        Linear between consecutive points: for ``cdf[i] <= u < cdf[i+1]`` the size is
        ``size[i] + (u - cdf[i]) * slope_i``. A flat CDF run (no flows between two sizes) is a
        jump: ``u`` equal to the run's value maps to its largest size. ``u`` below the first
        point's CDF maps to the first size (an atom there); ``u >= 1`` to the largest size.
        """
        s, p = self.sizes_bytes, self.cdf
        u = np.asarray(u, dtype=float)
        i = np.clip(np.searchsorted(p, u, side="right") - 1, 0, len(p) - 2)  # last point with cdf <= u
        p0, p1, s0, s1 = p[i], p[i + 1], s[i], s[i + 1]
        inside = (u >= p0) & (u < p1)  # then p1 > p0
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = (s1 - s0) / (p1 - p0)  # the same arithmetic as np.interp
            between = slope * (u - p0) + s0
        return np.where(inside, between, np.where(u < p[0], s[0], s[-1]))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` flow sizes by inverse-CDF sampling.

        Args:
            rng: The random generator (one uniform draw per flow).
            n: Number of flows.

        Returns:
            int64 sizes in bytes: ``max(1, ceil(quantile(u)))``.
        """
        return np.maximum(1, np.ceil(self.quantile(rng.random(n)))).astype(np.int64)


def fixed_size(size_bytes: int) -> FlowSizeDistribution:
    """A degenerate distribution: every flow has ``size_bytes`` bytes.

    Args:
        size_bytes: The flow size in bytes, a whole number in [1, 2^53] (:data:`~ecngym.units.MAX_BYTES`).

    Returns:
        The distribution.

    Raises:
        ConfigError: Naming ``workload.size`` if the size is not a whole number in that range (NaN,
            an infinity, ``None``, a boolean or a string included).
    """
    size = check("workload.size", size_bytes, Whole(1, MAX_BYTES))  # (2^53: exact as the float below)
    s = float(size)
    return FlowSizeDistribution(f"fixed({size}B)", np.array([s, s]), np.array([0.0, 1.0]))


def load_cdf_file(path: str | Path, name: str | None = None) -> FlowSizeDistribution:
    """Read and validate a CDF file (format in the module docstring).

    Args:
        path: The file.
        name: Name of the distribution (default: the path).

    Returns:
        The distribution, CDF scaled to end at 1.

    Raises:
        ConfigError: Naming ``workload.cdf_file`` if ``path`` is no path of a file; naming the file
            if it cannot be read as text, and the line of a malformed (not two numbers), negative or
            non-monotone entry.
    """
    path = check_input_file("workload.cdf_file", path, "a CDF file ('size_bytes cdf' lines)")
    field = f"workload.cdf_file ({path})"
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:  # a binary file is no CDF either
        raise ConfigError(field, f"cannot read as a CDF file: {exc}") from None
    sizes, probs, lines = [], [], []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:  # exactly size and probability: a third column is another format, or a typo
                raise ValueError
            size, prob = float(parts[0]), float(parts[1])
        except ValueError:
            raise ConfigError(field, f"line {line_no}: expected 'size_bytes cdf' (two numbers), got "
                                     f"{raw.strip()!r}") from None
        if not (np.isfinite(size) and np.isfinite(prob)) or size < 0 or prob < 0:
            raise ConfigError(field, f"line {line_no}: size and cdf must be finite and >= 0")
        if sizes and (size < sizes[-1] or prob < probs[-1]):
            raise ConfigError(field, f"line {line_no}: not monotone (size {size:g} cdf {prob:g} after "
                                     f"size {sizes[-1]:g} cdf {probs[-1]:g})")
        sizes.append(size)
        probs.append(prob)
        lines.append(line_no)
    if len(sizes) < 2:
        raise ConfigError(field, "needs at least two points")
    top = probs[-1]
    if abs(top - 100.0) < 1e-9:
        scale = 100.0
    elif abs(top - 1.0) < 1e-12:
        scale = 1.0
    else:
        raise ConfigError(field, f"line {lines[-1]}: the CDF must end at 100 (percent) or 1 (fraction), got {top:g}")
    if sizes[-1] <= 0:
        raise ConfigError(field, f"line {lines[-1]}: the largest flow size must be > 0")
    return FlowSizeDistribution(name or str(path), np.array(sizes), np.array(probs) / scale)


def known_workloads() -> list[str]:
    """Every workload name :func:`get_distribution` and the generator accept."""
    return [*BUILTIN_CDFS, "fixed", "custom", NO_BACKGROUND]


def suggest(name: str, known: list[str]) -> str:
    """A " Did you mean 'x'?" hint with the closest known name, or ``""``."""
    close = difflib.get_close_matches(str(name), known, n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def check_workload(workload: Any, **arguments: Any) -> str:
    """Check a workload name and the arguments given with it: the one check of both.

    Args:
        workload: The name as given.
        arguments: ``size`` and ``cdf_file`` as given (``None``: not given).

    Returns:
        The name.

    Raises:
        ConfigError: Naming ``workload.name`` if the name is no string or unknown (with the closest
            known one suggested); naming ``workload.<argument>`` if the workload does not read it
            (:data:`WORKLOAD_ARGUMENTS`): it would be ignored.
    """
    workload = check("workload.name", workload, Text)  # (a list would be unhashable below)
    known = known_workloads()
    if workload not in known:
        raise ConfigError("workload.name", f"unknown workload {workload!r}; known: {known}.{suggest(workload, known)}")
    for argument, value in arguments.items():
        if value is not None and WORKLOAD_ARGUMENTS.get(workload) != argument:
            reader = next(w for w, a in WORKLOAD_ARGUMENTS.items() if a == argument)
            raise ConfigError(f"workload.{argument}", f"got {value!r}, but workload {workload!r} does not read a "
                                                      f"{argument} (only workload {reader!r} does), so it would be "
                                                      f"ignored; leave workload.{argument} out")
    return workload


def get_distribution(
    workload: str, *, cdf_file: str | Path | None = None, size_bytes: int | None = None
) -> FlowSizeDistribution:
    """Resolve a workload name to its distribution.

    Args:
        workload: A built-in name (see :data:`BUILTIN_CDFS`), ``"fixed"`` (needs ``size_bytes``)
            or ``"custom"`` (needs ``cdf_file``). (``"none"``, no background, has no distribution.)
        cdf_file: A user CDF file for ``"custom"``.
        size_bytes: The flow size for ``"fixed"``.

    Returns:
        The distribution.

    Raises:
        ConfigError: On a name that is no string, an unknown name (with the closest known one
            suggested), a missing argument or one the workload does not read
            (:func:`check_workload`).
    """
    workload = check_workload(workload, size=size_bytes, cdf_file=cdf_file)
    if workload == "fixed":
        if size_bytes is None:
            raise ConfigError("workload.size", "workload 'fixed' needs a flow size (workload.size=64KB)")
        return fixed_size(size_bytes)
    if workload == "custom":
        if cdf_file is None:
            raise ConfigError("workload.cdf_file", "workload 'custom' needs a CDF file path")
        return load_cdf_file(cdf_file)
    if workload == NO_BACKGROUND:
        raise ConfigError("workload.name", "workload 'none' (no background flows) has no size distribution")
    return load_cdf_file(CDF_DIR / BUILTIN_CDFS[workload], name=workload)
