"""Shipped learner checkpoints: weights only (safetensors), a model card, and the controller that plays one.

A checkpoint is a folder (``ecngym/benchmark/checkpoints/<scenario>/<agent>/seed<k>/``)::

    model.safetensors   the acting networks' weights, nothing else (no pickle: safetensors is a header
                        of names, dtypes and shapes plus raw numbers)
    card.json           the model card as data: what trained it (command, budget, training seeds,
                        trace seeds and hashes), the ecngym, env and library versions, the
                        observation layout, the networks' shapes, its learning curve's file, its scores
    card.md             the same card for people
    curve.csv           the learning curve (env steps, the trainer's reward, wall seconds)

Loading (:func:`load_checkpoint`) reads JSON and safetensors only, so nothing is unpickled; the card
is validated field by field and the weights file must be the one it describes (its sha256, tensor
names and shapes: :mod:`ecngym.benchmark.model_card`). A checkpoint made for another env id,
scenario, scenario version or observation layout, and a file that is not a checkpoint, are refused
with a :class:`~ecngym.error.ConfigError` that names both values.
:class:`CheckpointController` plays one on the scenario's env (``ecngym run suite=core``).
"""

from __future__ import annotations

import hashlib
import json
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ecngym.benchmark.model_card import ACTIVATIONS, check_weights, parse_card
from ecngym.error import ConfigError

#: The package's shipped checkpoints: ``<scenario>/<agent>/seed<k>/``.
CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
WEIGHTS_FILE = "model.safetensors"
CARD_FILE = "card.json"
CARD_MD = "card.md"
CURVE_FILE = "curve.csv"
#: ``card.json``'s ``format``; ``format_version`` bumps when the layout of the files changes.
FORMAT = "ecngym-checkpoint"
FORMAT_VERSION = 1
#: The observation settings a checkpoint records and an env must match.
OBSERVATION_KEYS = ("features", "history", "queue_mapping")


# ---------------------------------------------------------------------- writing
def _acting_nets(agent: str, weights: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The acting networks of a trainer's saved model (our own file, just written by the trainer)."""
    from ecngym.agents.acting_nets import learner_acting

    return learner_acting(agent).saved(weights)


def _versions() -> dict[str, str]:
    import gymnasium
    import safetensors
    import stable_baselines3
    import torch

    from ecngym import __version__

    return {"ecngym": __version__, "torch": torch.__version__, "stable_baselines3": stable_baselines3.__version__,
            "gymnasium": gymnasium.__version__, "safetensors": safetensors.__version__,
            "python": platform.python_version()}


def observation_layout(env_config: dict[str, Any], obs_dim: int) -> dict[str, Any]:
    """What a policy's input means: the observation settings and the width of one policy input."""
    obs = env_config["observation"]
    return {**{k: obs[k] for k in OBSERVATION_KEYS}, "obs_dim": int(obs_dim)}


def curve_frame(curve: pd.DataFrame) -> pd.DataFrame:
    """A trainer's learning curve as ``env_steps``, ``reward`` (its reward column) and ``wall_s``."""
    steps = "env_steps" if "env_steps" in curve else "timesteps"
    reward = next(c for c in ("episode_return", "mean_reward") if c in curve)
    out = pd.DataFrame({"env_steps": curve[steps].to_numpy(np.int64), "reward": curve[reward].to_numpy(float)})
    if "wall_s" in curve:
        out["wall_s"] = curve["wall_s"].to_numpy(float)
    return out


def write_checkpoint(out_dir: Path, scenario: Any, agent: str, seed: int, budget: int, weights: Path,
                     meta: dict[str, Any], curve: pd.DataFrame, cost: dict[str, float],
                     budget_default: bool = True) -> Path:
    """Write the checkpoint of a finished training run (:func:`ecngym.benchmark.training.train_run`).

    Args:
        out_dir: The checkpoint folder.
        scenario: The :class:`~ecngym.benchmark.suite.Scenario` trained on.
        agent: The learner.
        seed: The training seed.
        budget: Env steps trained.
        weights: The trainer's saved model.
        meta: The trainer's record (``agent.json`` of ACC / LAECN; hyperparameters and episodes of SB3).
        curve: The trainer's learning curve.
        cost: ``wall_s`` and ``cpu_s`` of the training.
        budget_default: Whether ``budget`` is the scenario's (the card's command then omits it).

    Returns:
        ``out_dir``.
    """
    from safetensors.numpy import save_file

    from ecngym.agents.acting_nets import learner_acting
    from ecngym.agents.registry import is_agent
    from ecngym.benchmark.suite import scenario_env

    out_dir = Path(out_dir)
    acting = learner_acting(agent)
    tensors, nets = acting.saved(weights)
    first = acting.nets[0]
    path = out_dir / WEIGHTS_FILE
    # no metadata: safetensors writes it in hash-map order, so the same weights would give other bytes
    # (the card holds what it would say); the tensors' header is sorted, so the file is a function of them
    save_file(tensors, str(path))
    frame = curve_frame(curve)
    frame.to_csv(out_dir / CURVE_FILE, index=False)
    base_env = scenario_env(scenario)
    obs_dim = int(nets[first]["layers"][0][0])
    if is_agent(agent):
        env_config = meta["env_config"]
        env_overrides = {**meta["env"], "action": {"scope": "port"}}
        if acting.player is not None:  # (its own acting: the first network's input need not be the policy input)
            obs_dim = int(meta["obs_dim"])
    else:
        env_config, env_overrides = base_env, meta.get("env_overrides", {})
    episodes = meta.get("episodes", [])
    traces = sorted({(int(s), e["trace_hash"]) for s, e in zip(_seed_of(episodes, scenario), episodes, strict=True)})
    training = scenario.training
    command = f"ecngym train suite=core scenario={scenario.name} agent={agent} seed={seed}"
    if not budget_default:
        command += f" budget_steps={budget}"
    card = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "agent": agent, "scenario": scenario.name,
        "scenario_version": scenario.version, "env_id": scenario.id, "seed": int(seed), "command": command,
        "budget_steps": int(budget), "budget_source": "[OURS] chosen before any score was seen "
                                                      "(docs/concepts/learning-agents.md)",
        "train_trace_seeds": list(scenario.protocol.train_seeds),
        "trace_hashes": {str(s): h for s, h in traces},
        "episodes_trained": len(episodes),
        "hyperparams": training.settings(agent).hyperparams, "hyperparams_source": training.settings(agent).source,
        "granularity": meta.get("granularity"), "n_actions": int(nets[first]["layers"][-1][1]),
        "static_action": meta.get("static_action"), "agent_config": meta.get("config"),
        "env_overrides": env_overrides, "observation": observation_layout(env_config, obs_dim),
        "nets": nets, "versions": _versions(),
        "training_cost": {k: round(float(v), 1) for k, v in cost.items()},
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "weights_sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "weights_bytes": path.stat().st_size,
        "curve": CURVE_FILE, "scores": {},
    }
    card["action"] = declared_action(base_env)
    write_card(out_dir, card)
    return out_dir


#: The files of a checkpoint folder that ship (the trainer's own run folder ``train/`` does not).
SHIPPED_FILES = (WEIGHTS_FILE, CARD_FILE, CARD_MD, CURVE_FILE)


def ship(src: Path, dest: Path, weights: bool = True) -> Path:
    """Copy a checkpoint's shipped files from ``src`` to ``dest`` (without weights: its card and curve only)."""
    import shutil

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in SHIPPED_FILES:
        if weights or name != WEIGHTS_FILE:
            shutil.copyfile(Path(src) / name, dest / name)
    return dest


def _seed_of(episodes: list[dict[str, Any]], scenario: Any) -> list[int]:
    """The reset seed of each training episode (the train seeds in turn, as the trainers drew them)."""
    seeds = list(scenario.protocol.train_seeds)
    return [seeds[i % len(seeds)] for i in range(len(episodes))]


def write_card(out_dir: Path, card: dict[str, Any]) -> None:
    """Write ``card.json`` and ``card.md`` (the card's scores included)."""
    from ecngym.agents.saved_run import _json_value

    (Path(out_dir) / CARD_FILE).write_text(json.dumps(card, indent=1, sort_keys=True, default=_json_value) + "\n")
    (Path(out_dir) / CARD_MD).write_text(card_markdown(card))


def card_markdown(card: dict[str, Any]) -> str:
    """The model card for people."""
    obs = card["observation"]
    nets = "; ".join(f"{n}: {' -> '.join(str(layer[0]) for layer in d['layers'])} -> {d['layers'][-1][1]} "
                     f"({d['activation']})" for n, d in card["nets"].items())
    scores = "\n".join(f"| {k} | {v} |" for k, v in sorted(card.get("scores", {}).items())) or "| (not scored yet) | |"
    traces = ", ".join(f"{s}: `{h[:12]}`" for s, h in card["trace_hashes"].items())
    versions = ", ".join(f"{k} {v}" for k, v in card["versions"].items())
    layout = (f"features {obs['features']}, history {obs['history']}, queue mapping {obs['queue_mapping']}; "
              f"policy input {obs['obs_dim']}")
    cost = card["training_cost"]
    validation = card.get("validation")
    extra = ""
    if validation is not None:  # (a tier's run: its validation curve, normalized, on seeds disjoint from train / test)
        points = ", ".join(f"{s}: {v}" for s, v in validation["points"]) or validation.get("why", "none")
        extra = (f"| tier | {card['tier']['tier']} (stopped by its rule: {card['tier'].get('stopped', False)}) |\n"
                 f"| validation curve | `{validation['file']}`, seeds {validation['seeds']}; normalized mean per "
                 f"env steps: {points} |\n")
    return f"""# {card['agent']} on {card['scenario']} (training seed {card['seed']})

Reproduce: `{card['command']}`

| | |
|---|---|
| env | {card['env_id']} (scenario version {card['scenario_version']}) |
| budget | {card['budget_steps']} env steps ({card['budget_source']}); {card['episodes_trained']} episodes |
| training cost | {cost.get('wall_s')} s wall, {cost.get('cpu_s')} s CPU (the training process) |
| training traces | reset seeds {card['train_trace_seeds']} in turn; trace hashes {traces} |
| hyperparameters | {json.dumps(card['hyperparams'])} ({card['hyperparams_source']}) |
| observation | {layout} |
| networks | {nets} |
| weights | `{WEIGHTS_FILE}`, {card['weights_bytes']} bytes, sha256 `{card['weights_sha256'][:16]}` |
| versions | {versions} |
| learning curve | `{card['curve']}` |
{extra}
## Scores

| | |
|---|---|
{scores}
"""


# ---------------------------------------------------------------------- reading
def _refuse(field: str, path: Path, what: str) -> ConfigError:
    return ConfigError(field, f"{str(path)!r} is not an ecngym checkpoint: {what}")


def load_card(path: str | Path, field: str = "controller.path") -> tuple[Path, dict[str, Any]]:
    """(checkpoint folder, card) of a checkpoint, given its folder or a file in it.

    Raises:
        ConfigError: Naming ``field`` if there is no ``card.json`` there, or it is not JSON or not
            an ecngym checkpoint's card (its ``format`` / ``format_version``, naming both values),
            or a field of the card is missing or malformed (naming it: :func:`parse_card`).
    """
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    card_path = folder / CARD_FILE
    if not card_path.is_file():
        raise _refuse(field, p, f"no {CARD_FILE} beside it")
    try:
        card = json.loads(card_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _refuse(field, card_path, f"not a JSON card ({exc})") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        got = card.get("format") if isinstance(card, dict) else type(card).__name__
        raise _refuse(field, card_path, f"format {got!r}, expected {FORMAT!r}")
    if card.get("format_version") != FORMAT_VERSION:
        raise ConfigError(field, f"{str(card_path)!r} has checkpoint format_version {card.get('format_version')!r}; "
                                 f"this ecngym reads {FORMAT_VERSION}")
    return folder, parse_card(card, card_path, field)


def load_checkpoint(path: str | Path, scenario: Any = None, field: str = "controller.path") -> tuple[
        dict[str, Any], dict[str, np.ndarray]]:
    """A checkpoint's card and weights; weights only (safetensors), nothing is unpickled.

    Args:
        path: The checkpoint folder (or a file in it).
        scenario: The :class:`~ecngym.benchmark.suite.Scenario` it is to play (None: not checked).
        field: The option that gave ``path``, named in errors.

    Raises:
        ConfigError: Naming ``field`` if the card is missing, malformed or not a checkpoint's, the
            weights file is missing, not a safetensors file (a pickle, say) or not the one the card
            describes (sha256, tensor names and shapes: :func:`check_weights`); or the checkpoint
            was made for another env id, scenario or scenario version than ``scenario``'s (both
            values named).
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load

    folder, card = load_card(path, field)
    weights = folder / WEIGHTS_FILE
    if not weights.is_file():
        raise _refuse(field, folder, f"no {WEIGHTS_FILE}")
    try:
        raw = weights.read_bytes()
        tensors = load(raw)
    except (SafetensorError, OSError, ValueError) as exc:
        raise _refuse(field, weights, f"not a safetensors file ({exc})") from None
    check_weights(card, weights, raw, tensors, field)
    from ecngym.agents.acting_nets import learner_acting

    try:
        expected = learner_acting(card.get("agent")).nets
    except ConfigError as exc:
        raise _refuse(field, weights, f"agent {card.get('agent')!r}: {exc.message}") from None
    missing = [n for n in expected if not any(k.startswith(n + ".") for k in tensors)]
    if missing:
        raise _refuse(field, weights, f"agent {card.get('agent')!r} with networks {missing} missing")
    if scenario is not None:
        check_scenario(card, scenario.id, scenario.name, scenario.version, field)
    return card, tensors


def check_scenario(card: dict[str, Any], env_id: str | None, scenario: str | None, scenario_version: int | None,
                   field: str = "controller.path") -> None:
    """Refuse a checkpoint of another env id (its ``-vN``), scenario or scenario version.

    Args:
        card: The checkpoint's card.
        env_id: The env it is to play (None: not checked).
        scenario: The scenario it is to play (None: not checked).
        scenario_version: That scenario's version (None: not checked).
        field: The option that gave the checkpoint, named in errors.

    Raises:
        ConfigError: Naming ``field`` and both values.
    """
    if env_id is not None and card.get("env_id") != env_id:
        raise ConfigError(field, f"the checkpoint was made for env {card.get('env_id')!r}, this env is {env_id!r}: "
                                 "retrain it on this env (its card's command)")
    if scenario is not None and card.get("scenario") != scenario:
        raise ConfigError(field, f"the checkpoint was made for scenario {card.get('scenario')!r}, this is scenario "
                                 f"{scenario!r}: play it on its own scenario or retrain it (its card's command)")
    if scenario_version is not None and card.get("scenario_version") != scenario_version:
        raise ConfigError(field, f"the checkpoint was made for version {card.get('scenario_version')!r} of scenario "
                                 f"{card.get('scenario')}, this scenario is version {scenario_version!r}: retrain it "
                                 "(its card's command)")


def check_observation(card: dict[str, Any], env_config: dict[str, Any], obs_dim: int,
                      field: str = "controller.path") -> None:
    """Refuse an env whose observation layout is not the checkpoint's.

    Raises:
        ConfigError: Naming ``field``, the setting and both values.
    """
    layout = observation_layout(env_config, obs_dim)
    for key, value in card["observation"].items():
        if layout.get(key) != value:
            raise ConfigError(field, f"the checkpoint's observation.{key} is {value!r}, this env's is "
                                     f"{layout.get(key)!r}: it plays only the observation layout it trained on")


class Mlp:
    """A Linear / activation stack from named arrays (``<net>.<index>.weight``), in numpy."""

    def __init__(self, tensors: dict[str, np.ndarray], net: str, activation: str) -> None:
        index = sorted({int(k.split(".")[1]) for k in tensors if k.startswith(net + ".")})
        self.layers = [(tensors[f"{net}.{i}.weight"], tensors[f"{net}.{i}.bias"]) for i in index]
        self.activation = ACTIVATIONS[activation]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The network's output for a batch of rows."""
        x = np.asarray(x, dtype=np.float32)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            if i < len(self.layers) - 1:
                x = self.activation(x)
        return x


class CheckpointController:
    """Plays a shipped checkpoint (any learner) on a scenario's env, greedily.

    A learner acts by the arg-max of its first acting network (ACC and SB3's DQN: the greedy Q;
    PPO: the arg-max logit, its deterministic action), or by its own ``player``
    (:class:`~ecngym.agents.acting_nets.ActingNets`: LAECN / HAECN run their decision module and,
    where it triggers, the policy generator, with the checkpoint's weights).

    Args:
        path: The checkpoint folder.
        name: The name its episodes are stored under (default: the card's agent).
        scenario: The scenario it is to play, checked against the card's (default: the package's
            scenario registered under the env's id, at :meth:`reset`; none for a ``-v0`` env).
        scenario_version: That scenario's version, checked against the card's (default: as ``scenario``).

    Raises:
        ConfigError: Naming ``controller.path`` for a folder that holds no checkpoint, a malformed
            card, weights that are not the card's (see :func:`load_checkpoint`), or a card of
            another scenario or scenario version (:func:`check_scenario`).
    """

    def __init__(self, path: str | Path, name: str | None = None, scenario: str | None = None,
                 scenario_version: int | None = None) -> None:
        from ecngym.agents.threads import limit_threads

        limit_threads()  # small nets: one BLAS / torch thread (a pool of spinning threads costs ms per call)
        self.card, tensors = load_checkpoint(path)
        self.scenario, self.scenario_version = scenario, scenario_version
        if scenario is not None:  # (the env id is checked at reset, against the env)
            check_scenario(self.card, None, scenario, scenario_version)
        self.path = Path(path)
        self.agent = self.card["agent"]
        self.name = name or self.agent
        self.trained_traces = set(self.card["trace_hashes"].values())
        nets = self.card["nets"]
        from ecngym.agents.acting_nets import learner_acting

        self._acting = learner_acting(self.agent)
        self._tensors = tensors
        self._player = None
        net = self._acting.nets[0]
        self._net = Mlp(tensors, net, nets[net]["activation"])
        from ecngym.agents.inference import InferenceCounter

        self.inference = InferenceCounter()
        self._flops = sum(2 * a * b for d in nets.values() for a, b in d["layers"])

    def env_overrides(self, env: Any = None) -> dict[str, Any]:
        """The env settings it trained with (observation, reward, Δt, per-port actions); none for PPO / DQN."""
        return json.loads(json.dumps(self.card["env_overrides"]))

    def reset(self, env: Any) -> None:
        """Check the env is the one it trained for (id, scenario, observation layout, actions); group the ports.

        Raises:
            ConfigError: Naming ``controller.path`` with both values of what differs.
        """
        from ecngym.envs.view import EnvView

        u = env.unwrapped
        # the suite plays a checkpoint on the scenario it names (checked whole); elsewhere the layout decides,
        # but the card's own scenario at another version is refused (the traffic it learned has changed)
        scenario, version = self.scenario, self.scenario_version
        spec = getattr(env, "spec", None) or getattr(u, "spec", None)
        if scenario is None and spec is not None:
            from ecngym.benchmark.suite import registered_scenario

            registered = registered_scenario(spec.id)
            if registered is not None and registered.name == self.card.get("scenario"):
                scenario, version = registered.name, registered.version
        if scenario is not None:
            check_scenario(self.card, None, scenario, version)
        view = EnvView(env)
        if self.card.get("granularity"):
            rows = list(view.agent_rows(self.card["granularity"]).values())
            from ecngym.envs.multi_agent import agent_observation

            table = np.zeros((len(view.ports), int(np.prod(env.observation_space.shape)) // len(view.ports)))
            obs_dim = len(agent_observation(table[rows[0]], self.card["granularity"], view.observation_history))
            self._rows, self._history, self._n_ports = rows, view.observation_history, len(view.ports)
            self._action_shape = view.action_space.shape
        else:
            obs_dim = int(np.prod(env.observation_space.shape))
        space = env.action_space
        self._action_space = space
        self._nvec = list(getattr(space, "nvec", [getattr(space, "n", 0)]))
        n = len(view.action_templates) if self.card.get("granularity") else int(sum(self._nvec))
        check_layout(self.card, u.config.as_dict(), obs_dim, n)
        if self._acting.player is not None:
            self._player = self._acting.player(self.card, self._tensors, obs_dim)
        from ecngym.agents.controller import HeldOutCheck

        self._held_out = HeldOutCheck(self.trained_traces, "checkpoint", "score it on held-out seeds")
        self.inference.reset()

    def act(self, observation: np.ndarray, info: dict[str, Any]) -> Any:
        """The greedy action (per port for the per-port agents)."""
        self._held_out(info)
        if not self.card.get("granularity"):
            self.inference.decisions += 1
            self.inference.forward(1, self._flops)
            out = self._net(np.asarray(observation).reshape(1, -1))[0]
            if len(self._nvec) == 1 and not hasattr(self._action_space, "nvec"):
                return int(out.argmax())
            # MultiDiscrete: one argmax per action unit (SB3's deterministic action)
            return np.array([part.argmax() for part in np.split(out, np.cumsum(self._nvec)[:-1])], dtype=np.int64)
        from ecngym.envs.multi_agent import agent_observation

        table = np.asarray(observation).reshape(self._n_ports, -1)
        obs = np.stack([agent_observation(table[r], self.card["granularity"], self._history) for r in self._rows])
        if self._player is not None:
            actions = self._player(obs, self.inference)
        else:
            actions = self._net(obs).argmax(axis=1)
            self.inference.decisions += len(obs)
            self.inference.forward(len(obs), self._flops)
        per_port = np.empty(self._n_ports, dtype=np.int64)
        for rows, a in zip(self._rows, actions, strict=True):
            per_port[rows] = a
        return per_port.reshape(self._action_shape)


# ---------------------------------------------------------------------- layouts (``ecngym eval controller=checkpoint``)
def declared_action(env_config: dict[str, Any]) -> dict[str, Any]:
    """The action settings a policy's output means: type, scope and templates as the env config declares them."""
    action = env_config.get("action") or {}
    return {"type": action.get("type", "discrete"), "scope": action.get("scope", "all"),
            "templates": json.loads(json.dumps(action.get("templates")))}


def card_action(card: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's action layout: its card's, or (a card written before cards recorded it) its scenario file's.

    The scope is the one the checkpoint played (its ``env_overrides`` set it for per-port agents and DQN).
    """
    action = card.get("action")
    if action is None:
        from ecngym.benchmark.suite import SCENARIO_DIR, load_scenario

        if not (SCENARIO_DIR / f"{card.get('scenario')}.yaml").is_file():
            return {"n_actions": card["n_actions"]}
        action = declared_action(load_scenario(card["scenario"]).env)
    scope = (card.get("env_overrides") or {}).get("action", {}).get("scope")
    return {**action, **({"scope": scope} if scope else {}), "n_actions": card["n_actions"]}


def check_layout(card: dict[str, Any], env_config: dict[str, Any], obs_dim: int, n_actions: int,
                 field: str = "controller.path") -> None:
    """Refuse an env whose observation or action layout is not the checkpoint's (any scenario, any trace else).

    Raises:
        ConfigError: Naming ``field`` and both layouts (observation: features, history, queue
            mapping, policy input; action: type, scope, templates, action count).
    """
    env_layout = {"observation": observation_layout(env_config, obs_dim),
                  "action": {**declared_action(env_config), "n_actions": int(n_actions)}}
    mine = {"observation": card["observation"], "action": card_action(card)}
    differs = [f"{part}.{key}" for part in ("observation", "action") for key in mine[part]
               if mine[part][key] != env_layout[part].get(key)]
    if differs:
        theirs = {p: {k: v for k, v in env_layout[p].items() if k in mine[p]} for p in mine}
        raise ConfigError(field, f"the checkpoint's layout {json.dumps(mine)} does not fit this env's "
                                 f"{json.dumps(theirs)} ({', '.join(differs)} differ): it plays only the layout "
                                 "it trained on")


def shipped(scenario: str, root: Path | None = None) -> dict[str, list[Path]]:
    """Agent -> its shipped checkpoint folders on ``scenario`` (sorted by training seed)."""
    folder = (root or CHECKPOINT_DIR) / scenario
    out: dict[str, list[Path]] = {}
    for card in sorted(folder.glob(f"*/seed*/{CARD_FILE}"), key=lambda p: (p.parent.parent.name,
                                                                             int(p.parent.name[4:]))):
        out.setdefault(card.parent.parent.name, []).append(card.parent)
    return out
