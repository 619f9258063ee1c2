"""A training run's state on disk, to resume it when killed: JSON plus one ``.npz`` of arrays, no pickle.

A state is a tree of dicts, lists, numbers, strings and arrays (NumPy arrays and torch tensors).
:func:`save_state` writes it as ``state.json`` (the tree, each array replaced by a reference) and
``arrays.npz`` (the arrays, read back with ``allow_pickle=False``), into a folder that replaces the
previous state atomically: a run killed while saving keeps its last complete state.

:func:`sb3_state` / :func:`restore_sb3_state` take what an SB3 DQN / PPO (ACC's DoubleDQN too)
needs to go on exactly as an unbroken run would, at a point where every env has just finished an
episode and no rollout is half collected (:class:`~ecngym.agents.resumable.ResumeCallback` picks
those points): the policy's weights (online and target nets), its optimizer, the replay buffer,
the counters SB3's schedules read, and every random number generator the algorithm draws from
(Python's, NumPy's global one, torch's and the action space's).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ecngym.error import ConfigError

STATE_JSON = "state.json"
ARRAYS = "arrays.npz"
#: ``state.json``'s format tag; a state of another layout is refused, not misread.
FORMAT = "ecngym-training-state-1"
_ARRAY, _TENSOR, _INTKEYS, _TUPLE = "__array__", "__tensor__", "__intkeys__", "__tuple__"


def _flatten(node: Any, arrays: dict[str, np.ndarray]) -> Any:
    """``node`` with every array stored in ``arrays`` and replaced by a reference (JSON-able)."""
    try:
        import torch
    except ImportError:  # pragma: no cover (torch is a dependency)
        torch = None
    if torch is not None and isinstance(node, torch.Tensor):
        key = f"a{len(arrays)}"
        arrays[key] = node.detach().cpu().numpy().copy()
        return {_TENSOR: key}
    if isinstance(node, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = node
        return {_ARRAY: key}
    if isinstance(node, np.generic):
        return node.item()
    if isinstance(node, dict):
        if node and all(isinstance(k, int) for k in node):  # (an optimizer's state: parameter index -> tensors)
            return {_INTKEYS: [[k, _flatten(v, arrays)] for k, v in node.items()]}
        bad = [k for k in node if not isinstance(k, str)]
        if bad:
            raise TypeError(f"state keys must be strings or all integers, got {bad[:3]}")
        return {k: _flatten(v, arrays) for k, v in node.items()}
    if isinstance(node, tuple):
        return {_TUPLE: [_flatten(v, arrays) for v in node]}
    if isinstance(node, list):
        return [_flatten(v, arrays) for v in node]
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise TypeError(f"cannot store a {type(node).__name__} in a training state")


def _unflatten(node: Any, arrays: Any) -> Any:
    """The inverse of :func:`_flatten`."""
    if isinstance(node, dict):
        if set(node) == {_TENSOR}:
            import torch

            return torch.from_numpy(np.array(arrays[node[_TENSOR]]))
        if set(node) == {_ARRAY}:
            return np.array(arrays[node[_ARRAY]])
        if set(node) == {_INTKEYS}:
            return {int(k): _unflatten(v, arrays) for k, v in node[_INTKEYS]}
        if set(node) == {_TUPLE}:
            return tuple(_unflatten(v, arrays) for v in node[_TUPLE])
        return {k: _unflatten(v, arrays) for k, v in node.items()}
    if isinstance(node, list):
        return [_unflatten(v, arrays) for v in node]
    return node


def save_state(folder: Path, state: dict[str, Any]) -> Path:
    """Write ``state`` into ``folder``, replacing the state there only once the new one is complete.

    Args:
        folder: The state folder (``<run>/state``); its parent is created.
        state: The tree to save.

    Returns:
        ``folder``.
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(folder.name + ".tmp")
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    arrays: dict[str, np.ndarray] = {}
    tree = _flatten(state, arrays)
    np.savez(tmp / ARRAYS, **arrays)
    (tmp / STATE_JSON).write_text(json.dumps({"format": FORMAT, "state": tree}))
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.rename(folder, old)  # (a kill between the two renames leaves .old: load_state reads it)
    os.rename(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


def state_exists(folder: Path) -> bool:
    """Whether a complete state is saved in ``folder`` (or its ``.old`` copy of an interrupted save)."""
    folder = Path(folder)
    return any((f / STATE_JSON).is_file() for f in (folder, folder.with_name(folder.name + ".old")))


def load_state(folder: Path, field: str = "resume") -> dict[str, Any]:
    """The state saved by :func:`save_state` in ``folder``; arrays are read without pickle.

    Raises:
        ConfigError: Naming ``field`` if there is no state there or it is not one this module wrote.
    """
    folder = Path(folder)
    if not (folder / STATE_JSON).is_file():
        folder = folder.with_name(folder.name + ".old")
    try:
        doc = json.loads((folder / STATE_JSON).read_text())
        with np.load(folder / ARRAYS, allow_pickle=False) as arrays:
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                got = doc.get("format") if isinstance(doc, dict) else None
                raise ValueError(f"format {got!r}, expected {FORMAT!r}")
            return _unflatten(doc["state"], {k: arrays[k] for k in arrays.files})
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(field, f"{str(folder)!r} holds no training state ({type(exc).__name__}: {exc})") from None


# ------------------------------------------------------------------ random number generators
def rng_state() -> dict[str, Any]:
    """Python's, NumPy's global and torch's (CPU) generator states."""
    import torch

    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {"python": random.getstate(), "numpy": {"kind": kind, "keys": keys, "pos": int(pos),
                                                    "has_gauss": int(has_gauss), "cached": float(cached)},
            "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore :func:`rng_state`."""
    import torch

    py = state["python"]  # (version, tuple of ints, gauss_next): JSON made the inner tuple a tuple again
    random.setstate((py[0], tuple(py[1]), py[2]))
    n = state["numpy"]
    np.random.set_state((n["kind"], np.asarray(n["keys"], dtype=np.uint32), n["pos"], n["has_gauss"], n["cached"]))
    torch.set_rng_state(state["torch"].to(torch.uint8))


# ------------------------------------------------------------------ SB3 models
#: Counters of an SB3 model that its schedules and update rules read (those a model lacks are skipped).
_COUNTERS = ("num_timesteps", "_episode_num", "_n_updates", "_n_calls", "exploration_rate",
             "_current_progress_remaining", "_total_timesteps")
#: A replay buffer's arrays and counters.
_BUFFER_ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")


def sb3_state(model: Any) -> dict[str, Any]:
    """What an SB3 model needs to go on as if never stopped (taken at a clean point: see the module doc).

    Args:
        model: A DQN, PPO or :class:`~ecngym.agents.ddqn.DoubleDQN`.

    Returns:
        A tree for :func:`save_state`.
    """
    state: dict[str, Any] = {
        "policy": model.policy.state_dict(), "optimizer": model.policy.optimizer.state_dict(),
        "counters": {k: getattr(model, k) for k in _COUNTERS if hasattr(model, k)},
        "last_obs": np.asarray(model._last_obs), "rng": rng_state(),
        "action_space_rng": model.action_space.np_random.bit_generator.state,
    }
    buffer = getattr(model, "replay_buffer", None)
    if buffer is not None:
        state["replay"] = {k: getattr(buffer, k) for k in _BUFFER_ARRAYS if getattr(buffer, k, None) is not None}
        state["replay"].update(pos=int(buffer.pos), full=bool(buffer.full))
    return state


def restore_sb3_state(model: Any, state: dict[str, Any], obs: np.ndarray) -> None:
    """Put ``state`` (:func:`sb3_state`) into a freshly built model whose env was just reset to ``obs``.

    Args:
        model: A model built with the run's hyperparameters on the run's envs.
        state: The saved state.
        obs: The observation the envs' reset gave (the next episodes' first): it must be the saved one.

    Raises:
        RuntimeError: If ``obs`` differs from the saved next observation (the envs did not resume
            where the run stopped: another trace, or a simulator that is not deterministic).
    """
    if not np.array_equal(np.asarray(obs), state["last_obs"]):
        raise RuntimeError("the resumed envs' first observation differs from the saved run's: they did not resume "
                           "on the trace the run would have played next")
    model.policy.load_state_dict(state["policy"])
    model.policy.optimizer.load_state_dict(state["optimizer"])
    for key, value in state["counters"].items():
        setattr(model, key, value)
    model._last_obs = np.asarray(obs)
    model._last_episode_starts = np.ones((len(obs),), dtype=bool)
    buffer = getattr(model, "replay_buffer", None)
    if buffer is not None and "replay" in state:
        saved = state["replay"]
        for key in _BUFFER_ARRAYS:
            if key in saved:
                getattr(buffer, key)[...] = saved[key]
        buffer.pos, buffer.full = int(saved["pos"]), bool(saved["full"])
    set_rng_state(state["rng"])
    model.action_space.np_random.bit_generator.state = state["action_space_rng"]
