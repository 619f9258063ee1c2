"""Result and trace files written atomically: a reader (or a crash) never sees half a file.

Each writer writes a temporary file in the destination's folder, flushes it to disk, then renames
it over the destination (``os.replace``, atomic on POSIX): a kill during the write leaves the
previous version intact.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ecngym.error import ConfigError


def write_atomically(path: str | Path, write: Callable[[Path], Any], field: str = "path") -> Path:
    """Call ``write(tmp_path)`` on a temporary file next to ``path``, then rename it to ``path``.

    Missing parent folders are created. The file gets the usual mode of a new file (``0o666``
    less the umask), not ``mkstemp``'s private ``0o600``.

    Args:
        path: The file to write.
        write: Writes the content to the path it is given.
        field: The option that gave ``path``, named in the error.

    Returns:
        ``path``. On any error the temporary file is removed and ``path`` is left as it was.

    Raises:
        ConfigError: Naming ``field``, ``path`` (or the folder, :func:`make_directory`) and the
            system's reason if the folder, the temporary file or the rename cannot be made there
            (under a file, a read-only file system, no permission). An error of ``write`` itself
            passes through.
    """
    path = Path(path)
    make_directory(field, path.parent)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _unwritable(field, path, exc, f"creating a file in {os.fspath(path.parent)!r}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise _unwritable(field, path, exc, "renaming the written file to it") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text_atomically(path: str | Path, text: str, field: str = "path") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`write_atomically`)."""
    return write_atomically(path, lambda tmp: tmp.write_text(text), field)


def make_directory(field: str, path: str | Path) -> Path:
    """Make the directory ``path`` and its missing parents (nothing if it exists); return it.

    Raises:
        ConfigError: Naming ``field``, the folder and the system's reason if it cannot be made
            (under a file, under a folder that takes no new entries, a read-only file system).
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(field, f"cannot make the folder {os.fspath(exc.filename or path)!r}: "
                                 f"{exc.strerror or exc}") from None
    return path


def _unwritable(field: str, path: Path, exc: OSError, doing: str) -> ConfigError:
    """The error for a ``path`` that cannot be written: the system's reason and the step that failed."""
    return ConfigError(field, f"cannot write {os.fspath(path)!r}: {exc.strerror or exc} ({doing})")


def read_json(field: str, path: Path) -> Any:
    """The JSON value in the file at ``path`` (a run's ``agent.json``, a checkpoint's records).

    Raises:
        ConfigError: Naming ``field`` and ``path``, if the file cannot be read or holds no JSON.
    """
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(field, f"{str(path)!r} is not readable JSON ({exc})") from None


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

    The check tries what :func:`write_atomically` will do, so that a path that cannot be written
    fails before the work whose result goes there: a file can be created in the nearest existing
    folder above ``path`` (a probe file, removed at once; the missing folders are made by the
    writer).

    Raises:
        ConfigError: If ``path`` is not a string or path, is empty, ends in a path separator, is
            an existing directory, does not end in ``suffix``, lies under a file, or cannot be
            written (the system's reason: no such folder, a read-only file system, no permission).
    """
    text = _path_text(field, path, "the path of a file to write")
    if text.endswith(("/", os.sep)) or Path(text).is_dir():
        raise ConfigError(field, f"got {text!r}, which is a directory; expected the path of a file to write")
    if suffix is not None and Path(text).suffix != suffix:
        raise ConfigError(field, f"got {text!r}, expected a file name ending in {suffix!r}")
    _check_can_write_under(field, text, Path(text).absolute().parent, "the path of a file to write")
    return Path(text)


def check_writable_directory(field: str, path: Any, expected: str = "a directory") -> Path:
    """:func:`check_directory_path`, and a file can be made in it (or in the folder it will be made in).

    For a directory a command writes into at the end of its work (a results store, a logger's
    folder): checked before the work, as :func:`check_output_path` checks a file.

    Raises:
        ConfigError: As :func:`check_directory_path`, or naming ``field``, the path and the
            system's reason if nothing can be written there.
    """
    path = check_directory_path(field, path, expected).expanduser()
    _check_can_write_under(field, str(path), path.absolute(), expected)
    return path


def _check_can_write_under(field: str, text: str, folder: Path, expected: str) -> None:
    """Refuse a path under which no file can be made: a probe file in the nearest existing folder.

    Raises:
        ConfigError: If that nearest existing path is a file, or a file cannot be created there.
    """
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(field, f"got {text!r}, which lies under the file {str(folder)!r}; expected {expected}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".ecngym-probe.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _unwritable(field, Path(text), exc, f"creating a file in {str(folder)!r}") from None
    os.close(fd)
    os.unlink(probe)


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
