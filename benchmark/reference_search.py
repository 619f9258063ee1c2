"""The searches behind the static references of ``ecngym benchmark references``.

* the **grid extension**: ``static_tuned`` on an edge of the searched grid extends the grid past it,
  log-spaced, until the best setting is inside, a bound is reached or :data:`MAX_GRID_EXTENSIONS`;
* the **per-role coordinate descent** behind ``static_tuned_per_role``: one setting per switch layer,
  improved one role at a time from ``static_tuned`` on the train seeds (the full product of settings
  per role is too large to search);
* the **per-phase coordinate descent** behind ``phase_tuned``: one setting per traffic phase, the same
  schedule on every trace, improved one phase at a time from ``static_tuned`` on the train seeds
  (:func:`phase_tuned_reference`; the same descent, the phases as its roles).

Both take the episode runner as an argument, so they are tested on made-up scores as well as on
simulations; :mod:`ecngym.benchmark.references` runs them and writes what they found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ecngym.error import ConfigError

if TYPE_CHECKING:
    from ecngym.benchmark.oracle import Setting


def setting_key(setting: Sequence[Any]) -> str:
    """A setting's key in the references' score tables: ``"<kmin>/<kmax>/<pmax>"`` (bytes, bytes, probability)."""
    return f"{int(setting[0])}/{int(setting[1])}/{float(setting[2]):g}"


#: [OURS] The most extensions of the grid past an edge (:func:`extend_grid`): each halves or doubles Kmin
#: and Kmax, so the search reaches up to 2^4 = 16x beyond the templates' lowest / highest Kmin.
MAX_GRID_EXTENSIONS = 4
#: [OURS] What one extension multiplies (an extension past the highest Kmin) or divides (past the lowest)
#: Kmin and Kmax by: log-spaced, as the templates are.
GRID_EXTENSION_FACTOR = 2
#: [OURS] The most rounds of the per-role coordinate descent (:func:`coordinate_descent`); a round tries
#: every grid setting on every role once.
MAX_ROLE_ROUNDS = 3
#: The reasons :func:`extend_grid` stops, by name (the references file records the name and the sentence).
EXTENSION_STOPS = {
    "interior": "the best setting is inside the searched grid (neither its lowest nor its highest Kmin)",
    "kmin_floor": "the next setting's Kmin would be below one full data packet (MTU payload + header)",
    "kmax_ceiling": "the next setting's Kmax would be above the switch buffer (fabric.buffer.buffer)",
    "max_extensions": "the grid was extended the most times allowed (MAX_GRID_EXTENSIONS)",
    "disabled": "extend_grid=false: the grid is the templates",
}


def _better(lower: bool) -> Callable[[float, float], bool]:
    return (lambda a, b: a < b) if lower else (lambda a, b: a > b)


def best_of(items: Sequence[Any], scores: Sequence[float], lower: bool) -> Any:
    """The item of ``items`` with the best of ``scores`` (one per item; ties: the first in their order)."""
    pick = min if lower else max
    return items[pick(range(len(items)), key=list(scores).__getitem__)]


def grid_edges(setting: Sequence[Any], grid: Sequence[Sequence[Any]]) -> list[str]:
    """The edges of ``grid`` (ordered by Kmin) that ``setting`` is on: ``"low"``, ``"high"``, both or none.

    ``"low"``: ``setting`` has the grid's lowest Kmin; ``"high"``: its highest.
    """
    kmins = [int(g[0]) for g in grid]
    return [edge for edge, at in (("low", min(kmins)), ("high", max(kmins))) if int(setting[0]) == at]


def _stepped(setting: Setting, edge: str) -> Setting:
    """``setting`` one extension past ``edge``: Kmin and Kmax divided (low) or multiplied (high), Pmax kept."""
    f = GRID_EXTENSION_FACTOR
    if edge == "low":
        return int(round(setting[0] / f)), int(round(setting[1] / f)), float(setting[2])
    return int(setting[0]) * f, int(setting[1]) * f, float(setting[2])


@dataclass
class GridSearch:
    """The grid :func:`extend_grid` searched.

    Attributes:
        settings: Every setting searched: the templates, then the extensions in the order added.
        train_scores: Mean train-seed score of each (by ``setting_key``).
        added: One entry per extension setting: ``setting``, the ``edge`` it extends, the best
            setting it was made ``from`` and its ``train_score``.
        stopped: Why the extension stopped (a key of :data:`EXTENSION_STOPS`).
    """

    settings: list[Setting]
    train_scores: dict[str, float]
    added: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = "interior"


def extend_grid(grid: Sequence[Setting], train_scores: dict[str, float],
                evaluate: Callable[[list[Setting]], list[float]], lower: bool, kmin_floor_bytes: int,
                kmax_ceiling_bytes: int, max_extensions: int = MAX_GRID_EXTENSIONS) -> GridSearch:
    """Extend ``grid`` past the edge the best setting is on, until it is inside, a bound is hit or the limit is reached.

    Each extension takes the best setting so far; on the grid's lowest Kmin it adds that setting
    with Kmin and Kmax divided by :data:`GRID_EXTENSION_FACTOR`, on the highest multiplied by it
    (Pmax kept; a grid of one Kmin is on both edges and gets both), scores it and looks again. It
    stops when the best setting is on no edge (``interior``), when every next setting would cross a
    bound (``kmin_floor``: Kmin below ``kmin_floor_bytes``; ``kmax_ceiling``: Kmax above
    ``kmax_ceiling_bytes``), or after ``max_extensions`` extensions (``max_extensions``). An
    extension wins only by a strictly better score: on a tie the earlier setting stays best.

    Args:
        grid: The templates, in their order.
        train_scores: Their mean train-seed scores, by ``setting_key``.
        evaluate: Scores new settings (their mean train-seed scores, in order).
        lower: Whether a lower score is better.
        kmin_floor_bytes: The smallest Kmin allowed (one full data packet).
        kmax_ceiling_bytes: The largest Kmax allowed (the switch buffer).
        max_extensions: The most extensions.

    Returns:
        The grid searched, its scores, what was added and why it stopped.

    Raises:
        ConfigError: Naming ``references.max_extensions`` if it is not a whole number >= 0.
    """
    if isinstance(max_extensions, bool) or not isinstance(max_extensions, int) or max_extensions < 0:
        raise ConfigError("references.max_extensions", f"got {max_extensions!r}; expected a whole number >= 0")
    out = GridSearch(settings=[tuple(g) for g in grid], train_scores=dict(train_scores))
    for done in range(max_extensions + 1):
        best = best_of(out.settings, [out.train_scores[setting_key(g)] for g in out.settings], lower)
        edges = grid_edges(best, out.settings)
        if not edges:
            out.stopped = "interior"
            return out
        if done == max_extensions:
            out.stopped = "max_extensions"
            return out
        steps, blocked = [], []
        for edge in edges:
            nxt = _stepped(best, edge)
            if edge == "low" and nxt[0] < kmin_floor_bytes:
                blocked.append("kmin_floor")
            elif edge == "high" and nxt[1] > kmax_ceiling_bytes:
                blocked.append("kmax_ceiling")
            else:
                steps.append((edge, nxt))
        if not steps:
            out.stopped = blocked[0]
            return out
        scores = evaluate([s for _, s in steps])
        for (edge, s), value in zip(steps, scores, strict=True):
            out.settings.append(s)
            out.train_scores[setting_key(s)] = float(value)
            out.added.append({"setting": list(s), "edge": edge, "from": list(best), "train_score": float(value)})
    raise AssertionError("unreachable: the loop returns by its last pass")  # pragma: no cover


@dataclass
class RoleSearch:
    """What :func:`coordinate_descent` found.

    Attributes:
        setting: Role -> its setting.
        train_score: The mean train-seed score of ``setting``.
        rounds: Rounds run.
        stopped: ``"converged"`` (a round changed no role) or ``"max_rounds"``.
        moves: Each accepted change: ``round``, ``role``, the new ``setting`` and the ``train_score``.
        evaluated: Distinct per-role settings scored (each on every train seed).
    """

    setting: dict[str, Setting]
    train_score: float
    rounds: int = 0
    stopped: str = "converged"
    moves: list[dict[str, Any]] = field(default_factory=list)
    evaluated: int = 0


def coordinate_descent(roles: Sequence[str], grid: Sequence[Setting], start: Setting, start_score: float,
                       evaluate: Callable[[list[dict[str, Setting]]], list[float]], lower: bool,
                       max_rounds: int = MAX_ROLE_ROUNDS) -> RoleSearch:
    """The best setting per role by coordinate descent from ``start`` on every role.

    A round visits the roles in order; for each it scores every other grid setting on that role
    with the other roles held, and keeps the best if it is strictly better than the current score.
    It stops when a round changes nothing or after ``max_rounds`` rounds. Every accepted change
    lowers (raises) the score, so the result is never worse than ``start_score``. Settings already
    scored are not run again.

    Args:
        roles: The roles (switch layers), in order.
        grid: The settings each role may take.
        start: Every role's setting at the start (``static_tuned``'s).
        start_score: Its score (``static_tuned``'s mean train-seed score: the same ports' settings).
        evaluate: Scores per-role settings (their mean train-seed scores, in order).
        lower: Whether a lower score is better.
        max_rounds: The most rounds.

    Returns:
        The per-role setting, its score and the search's record.

    Raises:
        ConfigError: Naming ``references.max_role_rounds`` if ``max_rounds`` is not a whole number >= 1.
    """
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
        raise ConfigError("references.max_role_rounds", f"got {max_rounds!r}; expected a whole number >= 1")
    better = _better(lower)
    current = {r: tuple(start) for r in roles}
    memo: dict[tuple[Setting, ...], float] = {tuple(current[r] for r in roles): float(start_score)}
    out = RoleSearch(setting=dict(current), train_score=float(start_score), stopped="max_rounds")
    for n in range(1, max_rounds + 1):
        out.rounds = n
        changed = False
        for role in roles:
            candidates = [{**current, role: tuple(g)} for g in grid if tuple(g) != current[role]]
            keys = [tuple(c[r] for r in roles) for c in candidates]
            todo = [c for c, k in zip(candidates, keys, strict=True) if k not in memo]
            for c, value in zip(todo, evaluate(todo) if todo else [], strict=True):
                memo[tuple(c[r] for r in roles)] = float(value)
            if not candidates:
                continue
            i = best_of(range(len(candidates)), [memo[k] for k in keys], lower)
            if better(memo[keys[i]], out.train_score):
                current = candidates[i]
                out.train_score = memo[keys[i]]
                out.moves.append({"round": n, "role": role, "setting": list(current[role]),
                                  "train_score": out.train_score})
                changed = True
        if not changed:
            out.stopped = "converged"
            break
    out.setting = dict(current)
    out.evaluated = len(memo) - 1
    return out


def grid_bounds(scenario: dict[str, Any]) -> tuple[int, int]:
    """The bounds of the grid's extension on a scenario: (smallest Kmin, largest Kmax) in bytes.

    One full data packet on the wire (a Kmin below it marks every queued packet alike) and the
    switch's whole buffer (a Kmax above it is never reached).
    """
    from ecngym.benchmark.oracle import make_env
    from ecngym.envs.view import EnvView

    env = make_env(scenario["env"])
    try:
        view = EnvView(env)
        return int(view.packet_bytes), int(view.buffer_bytes)
    finally:
        env.close()


def switch_roles(scenario: dict[str, Any]) -> list[str]:
    """The roles of a scenario's controlled ports: their switch layers, sorted (the action units of scope ``layer``)."""
    from ecngym.benchmark.oracle import make_env
    from ecngym.envs.action import action_units
    from ecngym.envs.view import EnvView

    env = make_env(scenario["env"])
    try:
        view = EnvView(env)
        return list(action_units("layer", view.ports, view.port_layers)[1])
    finally:
        env.close()


def per_role_controller(settings: dict[str, Sequence[Any]]) -> dict[str, Any]:
    """The Hydra config of the ``static_tuned_per_role`` controller: one setting per switch layer."""
    return {"_target_": "ecngym.baselines.static.StaticPerLayerEcnController", "name": "static_tuned_per_role",
            "settings": {str(r): [int(s[0]), int(s[1]), float(s[2])] for r, s in settings.items()}}


def phase_tuned_controller(starts_ns: Sequence[int], settings: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The Hydra config of the ``phase_tuned`` controller: one setting per phase, the same on every trace.

    Played by :class:`~ecngym.benchmark.oracle.PhaseScheduleController`, which adds the settings that
    are not templates of its env to them (the grid's extension), the traffic kept.
    """
    return {"_target_": "ecngym.benchmark.oracle.PhaseScheduleController", "name": "phase_tuned",
            "starts": [int(s) for s in starts_ns],
            "settings": [[int(s[0]), int(s[1]), float(s[2])] for s in settings]}


#: The ``description`` line of every ``phase_tuned`` block of a references file.
PHASE_TUNED_DESCRIPTION = ("one setting per traffic phase, chosen on the train seeds only, the same schedule on every "
                           "trace (switched at the phase boundaries): what a phase-aware controller could follow")


def phase_tuned_reference(phases: Sequence[str], starts_ns: Sequence[int], grid: Sequence[Setting], tuned: Setting,
                          tuned_score: float, tuned_test: dict[str, Any],
                          run: Callable[[list[dict[str, Any]], list[int]], list[dict[str, Any]]],
                          train: Sequence[int], test: Sequence[int], lower: bool, field_prefix: str,
                          max_rounds: int = MAX_ROLE_ROUNDS) -> dict[str, Any]:
    """The references file's ``phase_tuned``: one schedule per phase, searched on the train seeds, played on the test.

    The search is :func:`coordinate_descent` with the phases as roles, from ``static_tuned`` in every
    phase, each candidate schedule scored by its mean train-seed score (played by
    :func:`phase_tuned_controller`); the found schedule is then played on every test seed. A
    scenario of one phase searches nothing: its block holds ``static_tuned``'s setting and scores.

    Args:
        phases: The scenario's phase names (``protocol.phases``), in order.
        starts_ns: Their start times (ns).
        grid: The settings each phase may take (the searched grid: templates and extension).
        tuned: ``static_tuned``'s setting.
        tuned_score: Its mean train-seed score.
        tuned_test: Its file block ``test`` (copied for one phase).
        run: Plays controller configs on seeds: one row (``score``, ``second_axis``) per config and
            seed, config-major.
        train: The train seeds.
        test: The test seeds.
        lower: Whether a lower score is better.
        field_prefix: The scenario's field (``scenarios.<name>``) for errors.
        max_rounds: The most rounds of the descent.

    Returns:
        The block: ``phases``, ``searched``, ``description``, ``schedule`` (one setting per phase),
        ``train_score``, ``test``, and where searched the descent's ``rounds``, ``stopped``, ``moves``.

    Raises:
        ConfigError: Naming ``<field_prefix>.protocol.phases`` if two phases share a name;
            ``references.max_role_rounds`` as :func:`coordinate_descent`.
    """
    import copy

    names = [str(p) for p in phases]
    if len(set(names)) != len(names):
        raise ConfigError(f"{field_prefix}.protocol.phases", f"got phase names {names}; phase_tuned needs each "
                                                             f"phase named once")
    base = {"phases": names, "phase_starts_ns": [int(s) for s in starts_ns], "description": PHASE_TUNED_DESCRIPTION}
    if len(names) == 1:
        return {**base, "searched": False, "same_as": "static_tuned",
                "note": "the scenario has one traffic phase: static_tuned is its schedule; nothing searched, "
                        "no extra reference played",
                "schedule": [list(tuned)], "train_score": float(tuned_score), "test": copy.deepcopy(tuned_test)}

    def config(assignment: dict[str, Setting]) -> dict[str, Any]:
        return phase_tuned_controller(starts_ns, [assignment[n] for n in names])

    def train_scored(assignments: list[dict[str, Setting]]) -> list[float]:
        rows = run([config(a) for a in assignments], list(train))
        n = len(train)
        return [sum(r["score"] for r in rows[i * n:(i + 1) * n]) / n for i in range(len(assignments))]

    found = coordinate_descent(names, grid, tuned, tuned_score, train_scored, lower, max_rounds)
    test_rows = run([config(found.setting)], list(test))
    return {**base, "searched": True,
            "method": f"coordinate descent over the phases from static_tuned in every phase: each round tries every "
                      f"grid setting ({len(grid)}) in one phase with the others held, scored by the mean over the "
                      f"train seeds, and keeps a strictly better one, until a round changes nothing or {max_rounds} "
                      f"rounds ran",
            "start": "static_tuned", "max_rounds": max_rounds, "rounds": found.rounds, "stopped": found.stopped,
            "moves": [{"round": m["round"], "phase": m["role"], "setting": m["setting"],
                       "train_score": m["train_score"]} for m in found.moves], "schedules_scored": found.evaluated,
            "schedule": [list(found.setting[n]) for n in names], "train_score": found.train_score,
            "test": {"score": {str(s): r["score"] for s, r in zip(test, test_rows, strict=True)},
                     "second_axis": {str(s): r["second_axis"] for s, r in zip(test, test_rows, strict=True)}}}
