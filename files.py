"""Result and trace files written atomically: a reader (or a crash) never sees half a file.

Each writer writes a temporary file in the destination's folder, flushes it to disk, then renames
it over the destination (``os.replace``, atomic on POSIX): a kill during the write leaves the
previous version intact.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ecngym.error import ConfigError


def write_atomically(path: str | Path, write: Callable[[Path], Any]) -> Path:
    """Call ``write(tmp_path)`` on a temporary file next to ``path``, then rename it to ``path``.

    Returns:
        ``path``. On any error the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text_atomically(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`write_atomically`)."""
    return write_atomically(path, lambda tmp: tmp.write_text(text))


def check_input_file(field: str, path: Any, expected: str = "a file") -> Path:
    """Return ``path`` as a :class:`Path` if it names an existing file to read, else raise.

    Args:
        field: The option that gave the path (``trace``, ``env.trace``), named in the error.
        path: The path as given.
        expected: What the file should be, for the message (``"a Parquet trace"``).

    Raises:
        ConfigError: If ``path`` is not a string or path, names nothing, or names a directory.
    """
    text = _path_text(field, path, f"the path of {expected}")
    if Path(text).is_dir():
        raise ConfigError(field, f"got {text!r}, which is a directory; expected {expected}")
    if not Path(text).is_file():
        raise ConfigError(field, f"no file at {text!r}; expected {expected}")
    return Path(text)


def check_output_path(field: str, path: Any, suffix: str | None = None) -> Path:
    """Return ``path`` as a :class:`Path` if it can name a file to write, else raise.

    Args:
        field: The option that gave the path (``output``, ``--html``), named in the error.
        path: The path as given.
        suffix: The file suffix it must end in (``".parquet"``), or ``None`` for any.

    Raises:
        ConfigError: If ``path`` is not a string or path, is empty, ends in a path separator, is
            an existing directory, or does not end in ``suffix``.
    """
    text = _path_text(field, path, "the path of a file to write")
    if text.endswith(("/", os.sep)) or Path(text).is_dir():
        raise ConfigError(field, f"got {text!r}, which is a directory; expected the path of a file to write")
    if suffix is not None and Path(text).suffix != suffix:
        raise ConfigError(field, f"got {text!r}, expected a file name ending in {suffix!r}")
    return Path(text)


def check_directory_path(field: str, path: Any, expected: str = "a directory") -> Path:
    """Return ``path`` as a :class:`Path` if it can name a directory (existing, or to be made), else raise.

    Args:
        field: The option that gave the path (``results.dir``, ``--store``), named in the error.
        path: The path as given.
        expected: What the directory should be, for the message (``"a results store directory"``).

    Raises:
        ConfigError: If ``path`` is not a string or path, is empty, or names an existing file.
    """
    text = _path_text(field, path, f"the path of {expected}")
    if Path(text).expanduser().exists() and not Path(text).expanduser().is_dir():
        raise ConfigError(field, f"got {text!r}, which is a file; expected {expected}")
    return Path(text)


def _path_text(field: str, path: Any, expected: str) -> str:
    """``path`` as a string if it is a non-empty string or path, else :class:`ConfigError` naming ``field``."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ConfigError(field, f"got {path!r}, expected {expected}")
    return os.fspath(path)
