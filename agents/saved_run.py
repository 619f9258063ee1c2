"""A trained agent's run directory: its ``agent.json`` (written, read, checked) and its weights' loader.

A trained agent is a directory with the weights and ``agent.json`` (which agent, framework,
granularity, the env overrides that define its state / action / reward / Δt, and the episode seeds
and trace hashes it trained on: eval refuses those traces).
"""

from __future__ import annotations

import json
import os
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ecngym.agents.config import GRANULARITY
from ecngym.error import ConfigError
from ecngym.files import check_input_file, read_json
from ecngym.validation import Whole, check

AGENT_FILE = "agent.json"

#: What every saved agent's ``agent.json`` holds (what :class:`~ecngym.agents.controller.LearnedController` reads).
AGENT_META_KEYS = ("agent", "framework", "granularity", "env", "env_config", "n_actions")

#: The type of each scalar ``agent.json`` entry a controller reads (checked with its presence)
_META_KINDS = {"granularity": GRANULARITY, "n_actions": Whole(1, 65_535), "obs_dim": Whole(1, 1 << 20),
               "static_action": Whole(0, 65_534), "seed": Whole(0, None)}

#: The observation settings an ``agent.json``'s ``env_config.observation`` holds, which eval's env must match.
OBSERVATION_KEYS = ("features", "history", "queue_mapping")

#: What torch's, SB3's and RLlib's readers (and ours, on the saved state's keys and shapes) raise on
#: a file that is not the weights or checkpoint they expect: SB3 asserts, torch raises RuntimeError
#: on a zip of another layout and on a shape mismatch. It stays this broad because the readers
#: themselves raise these on files that are no checkpoint (tried: SB3 gives AttributeError and
#: KeyError for a zip whose 'data' is another JSON, AssertionError for a zip without it; a pickle
#: may raise any error of the constructors it names, TypeError included), so a narrower tuple would
#: turn such files into tracebacks. An ImportError is not among them: a file naming a module that
#: cannot be imported here (a missing dependency) may well be a checkpoint (:func:`load_saved`).
LOAD_ERRORS = (pickle.UnpicklingError, EOFError, OSError, RuntimeError, ValueError, KeyError, TypeError,
               AttributeError, AssertionError, zipfile.BadZipFile)


def save_agent_meta(out_dir: Path, meta: dict[str, Any]) -> Path:
    """Write ``agent.json`` next to the weights.

    NumPy numbers and arrays are written as the JSON numbers and lists they hold (an override
    given as ``np.int64(2)`` reads back as 2, not as the string ``"2"`` that eval would refuse);
    anything else JSON has no type for, as its ``str``.
    """
    path = Path(out_dir) / AGENT_FILE
    path.write_text(json.dumps(meta, indent=2, default=_json_value))
    return path


def _json_value(value: Any) -> Any:
    """A JSON-able stand-in for a value ``json`` cannot write (``json.dumps``'s ``default``)."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()  # (a NumPy scalar's tolist() is its Python value)
    return str(value)


def load_agent_meta(path: str | Path, field: str = "controller.path") -> tuple[Path, dict[str, Any]]:
    """(run directory, ``agent.json``) of a saved agent, given the directory or a file in it.

    Args:
        path: The run directory, or a file in it.
        field: The option that gave ``path``, named in the error.

    Returns:
        The run directory and its ``agent.json`` (with at least the keys of :data:`AGENT_META_KEYS`,
        and the nested ones :class:`~ecngym.agents.controller.LearnedController` reads).

    Raises:
        ConfigError: If ``path`` is not a path or names nothing, there is no ``agent.json`` there, or
            it is not a JSON object with the keys every saved agent has (nested ones included:
            ``env_config.observation``, each of ``episodes``' ``trace_hash``).
    """
    expected = f"a trained agent's directory (with {AGENT_FILE}, as 'ecngym train agent=...' writes) or a file in it"
    if not (isinstance(path, (str, os.PathLike)) and Path(path).is_dir()):
        check_input_file(field, path, expected)
    p = Path(path)
    run_dir = p if p.is_dir() else p.parent
    meta_path = run_dir / AGENT_FILE
    if not meta_path.is_file():
        raise ConfigError(field, f"no trained agent at {str(path)!r} (expected a directory with {AGENT_FILE}, "
                                 "as 'ecngym train agent=...' writes)")
    meta = read_json(field, meta_path)
    check_agent_meta(meta_path, meta, AGENT_META_KEYS, field)
    _check_agent_layout(meta_path, meta, field)
    return run_dir, meta


def _check_agent_layout(meta_path: Path, meta: dict[str, Any], field: str) -> None:
    """Refuse an ``agent.json`` whose nested entries lack what a learned controller reads.

    A hand-edited file without ``episodes[i].trace_hash`` or ``env_config.observation`` was a raw
    ``KeyError`` when the controller was built or reset.

    Args:
        meta_path: The file, named in the error.
        meta: Its parsed content (holding every key of :data:`AGENT_META_KEYS`).
        field: The option that gave the run, named in the error.

    Raises:
        ConfigError: Naming ``field``, the file and the dotted key that is missing or not of its
            type: ``env`` (an object), ``env_config.observation`` and its :data:`OBSERVATION_KEYS`,
            or ``episodes`` (a list, when given) and each one's ``trace_hash`` (a string).
    """
    def refuse(what: str) -> NoReturn:
        raise ConfigError(field, f"{str(meta_path)!r} {what}: not the {AGENT_FILE} of an 'ecngym train agent=...' run")

    if not isinstance(meta["env"], dict):
        refuse(f"has env = {meta['env']!r}, expected an object (the agent's env overrides)")
    observation = meta["env_config"].get("observation") if isinstance(meta["env_config"], dict) else None
    if observation is None:
        refuse("lacks env_config.observation")
    if not isinstance(observation, dict):
        refuse(f"has env_config.observation = {observation!r}, expected an object (the observation settings)")
    missing = [f"env_config.observation.{key}" for key in OBSERVATION_KEYS if key not in observation]
    if missing:
        refuse(f"lacks {missing}")
    problem = episode_records_problem(meta.get("episodes", []))
    if problem is not None:
        refuse(problem)


def episode_records_problem(episodes: Any) -> str | None:
    """What is wrong with a run's list of training episodes, or ``None`` if nothing.

    One rule for ``agent.json``'s ``episodes`` and an RLlib checkpoint's ``ecngym_episodes.json``
    (whose records a resume copies into ``agent.json``): eval reads each record's ``trace_hash``.

    Returns:
        ``"has episodes = ..., expected a list ..."``, ``"lacks episodes[i].trace_hash"`` or ``"has
        episodes[i].trace_hash = ..., expected a string ..."`` (to follow the file's name), or ``None``.
    """
    if not isinstance(episodes, list):
        return f"has episodes = {episodes!r}, expected a list of {{episode_seed, trace_hash}} records"
    for i, episode in enumerate(episodes):
        trace_hash = episode.get("trace_hash") if isinstance(episode, dict) else None
        if trace_hash is None:
            return f"lacks episodes[{i}].trace_hash"
        if not isinstance(trace_hash, str):
            return f"has episodes[{i}].trace_hash = {trace_hash!r}, expected a string (the trace's hash)"
    return None


def check_agent_meta(meta_path: Path, meta: Any, keys: tuple[str, ...], field: str = "controller.path") -> None:
    """Refuse an ``agent.json`` that lacks one of ``keys`` (those every run has, or one kind's own).

    Args:
        meta_path: The file, named in the error.
        meta: Its parsed content.
        keys: The keys it must hold.
        field: The option that gave the run, named in the error.

    Raises:
        ConfigError: Naming ``field``, the file and the missing keys, if ``meta`` is not a JSON
            object holding every key.
    """
    missing = [key for key in keys if key not in meta] if isinstance(meta, dict) else list(keys)
    if missing:
        raise ConfigError(field, f"{str(meta_path)!r} lacks {missing}: not the {AGENT_FILE} of an 'ecngym train "
                                 "agent=...' run")
    for key in keys:  # (an edited value reached torch as a shape error, or a message naming no file)
        if key in _META_KINDS:
            try:
                check(key, meta[key], _META_KINDS[key])
            except ConfigError as exc:
                raise ConfigError(field, f"{str(meta_path)!r} has a bad {key} ({exc.message}): not the {AGENT_FILE} "
                                         "of an 'ecngym train agent=...' run") from None


def load_saved(field: str, path: str | Path, expected: str, load: Callable[[], Any], hint: str = "") -> Any:
    """``load()`` of a weights or checkpoint file, its readers' errors as one naming the file.

    Args:
        field: The option that gave the file (``controller.path``, ``resume``).
        path: The file (or checkpoint directory), named in the error.
        expected: What it should be (``"the laecn.pt of a LAECN / HAECN run"``).
        load: Reads it.
        hint: What to check, appended to the message.

    Returns:
        What ``load`` returns.

    Raises:
        ConfigError: Naming ``field`` and ``path``, if ``load`` raises one of :data:`LOAD_ERRORS`
            (the file is not ``expected``), or an ImportError (a module the file needs, which
            cannot be imported here: named, as missing, not the file as no checkpoint).
    """
    try:
        return load()
    except ImportError as exc:  # (ModuleNotFoundError too) a pickle names the classes it holds by module
        module = f"the module {exc.name!r}" if exc.name else "a module"
        raise ConfigError(field, f"{str(path)!r} needs {module} to load ({expected}); it cannot be imported here "
                                 f"({type(exc).__name__}: {exc}): install it, in the version that wrote the file"
                                 + (f"; {hint}" if hint else "")) from None
    except LOAD_ERRORS as exc:
        raise ConfigError(field, f"{str(path)!r} is not {expected} ({type(exc).__name__}: {exc})"
                                 + (f"; {hint}" if hint else "")) from None
