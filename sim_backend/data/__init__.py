"""Data shipped with the fabric: the HPCC reference runs' inputs and outputs (see PROVENANCE.txt)."""

from pathlib import Path

HPCC_REFERENCE_DIR = Path(__file__).parent / "hpcc_reference"


def hpcc_reference_path(name: str) -> Path:
    """Path of a file of the shipped HPCC reference runs (inputs, or ``outputs/...``).

    Raises:
        FileNotFoundError: If no such file is shipped.
    """
    path = HPCC_REFERENCE_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"no shipped HPCC reference file {name!r} in {HPCC_REFERENCE_DIR}")
    return path
