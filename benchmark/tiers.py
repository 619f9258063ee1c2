"""The learners' budget tiers (``configs/training/tiers.yaml``) and what one tier means on one scenario.

A **tier** fixes a training run's budget in env steps, how often the policy is scored on the
scenario's validation seeds, an optional stopping rule on that validation curve, and per learner
the settings sized to the budget (SB3's exploration, warm-up and target updates, PPO's rollout,
ACC's ε in decisions per port, the env processes). ``100k`` trains exactly 100,000 env steps;
``converged`` up to 500,000, stopped by its rule. A scenario file may override a tier's settings in
``training.tiers.<tier>`` (:class:`TierOverride`); suite v1's frozen files do not, and take their
validation seeds from the tiers file too (:func:`validation_seeds`).

:func:`resolve_tier` gives a (scenario, learner, tier)'s :class:`TierPlan`; sizes written in units
of the scenario (``{episodes: k}``, ``{minibatches: m}``) are turned into numbers there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Real, Text, Whole, field_error

#: The tiers file.
TIERS_FILE = CONFIG_DIR / "training" / "tiers.yaml"


class StopRule(ConfigModel):
    """When a tier's run stops before its budget (:func:`ecngym.agents.plateau.plateaued` on the validation curve).

    Args:
        margin: Gain of the validation score's trailing mean (normalized units) that counts as one.
        patience: Validation points in a row without such a gain that stop the run.
        window: Points in the trailing mean.
        min_steps: Env steps before which the rule does not stop a run.
    """

    margin: Real(0, 1)
    patience: Whole(1, 1000)
    window: Whole(1, 1000) = 1
    min_steps: Whole(0) = 0


class LearnerTier(ConfigModel):
    """One learner's settings in a tier.

    Args:
        source: Where the values come from (``[OURS]`` with the reason).
        n_envs: Env processes of an SB3 learner (``SubprocVecEnv`` when > 1); the learning agents
            (ACC / LAECN / HAECN ...) step one parallel env of all ports and take no such count.
        hyperparams: Overrides of the learner's config (an agent's YAML fields; SB3's keyword
            arguments for ``ppo`` / ``dqn``), on top of its own defaults.
    """

    source: Text
    n_envs: Whole(1, 256) | None = None
    hyperparams: dict[str, Any] = {}


class Tier(ConfigModel):
    """A budget tier.

    Args:
        budget_steps: Env steps of a run (at most, with a stopping rule).
        eval_every_steps: Env steps between validation points (and state saves).
        stop: The stopping rule on the validation curve; None: the run trains its whole budget.
        learners: Per learner, its settings; a learner it does not list trains with its own defaults
            (:data:`DEFAULT_LEARNER`), so a new learner needs no edit of this file.
    """

    budget_steps: Whole(1, 100_000_000)
    eval_every_steps: Whole(1, 100_000_000)
    stop: StopRule | None = None
    learners: dict[str, LearnerTier]


#: A learner's settings in a tier that does not list it: its own config, one env process.
DEFAULT_LEARNER = LearnerTier(source="its own defaults (configs/agent/<name>.yaml; SB3's for an SB3 algorithm): "
                                     "the tier lists none")


class TierOverride(ConfigModel):
    """A scenario's overrides of one tier (``training.tiers.<tier>`` of a scenario file); None keeps the tier's."""

    budget_steps: Whole(1, 100_000_000) | None = None
    eval_every_steps: Whole(1, 100_000_000) | None = None
    stop: StopRule | None = None
    learners: dict[str, dict[str, Any]] = {}


class TiersFile(ConfigModel):
    """``configs/training/tiers.yaml``."""

    tiers: dict[str, Tier]
    validation_seeds: dict[str, list[Whole(0)]] = {}


def load_tiers() -> TiersFile:
    """The tiers file, validated (errors name ``tiers.<field>``)."""
    from ecngym.agents.registry import learner_names
    from ecngym.benchmark.suite import read_yaml

    doc = TiersFile.parse(read_yaml(TIERS_FILE, "tiers"), "tiers")
    for name, tier in doc.tiers.items():
        unknown = sorted(set(tier.learners) - set(learner_names()))
        if unknown:
            raise ConfigError(f"tiers.tiers.{name}.learners", f"unknown learner(s) {unknown}; known: {learner_names()}")
    return doc


def tier_names() -> list[str]:
    """The tiers' names (``100k``, ``converged``)."""
    return list(load_tiers().tiers)


def check_tier_overrides(overrides: dict[str, Any]) -> None:
    """Refuse a scenario's ``training.tiers`` that names an unknown tier or field.

    Raises:
        ValueError: A model validator's field error naming ``tiers.<tier>[.<field>]``.
    """
    if not overrides:
        return
    from ecngym.agents.registry import learner_names

    known = tier_names()
    for name, override in overrides.items():
        if name not in known:
            raise field_error(f"tiers.{name}", f"unknown tier; the tiers: {known}")
        try:
            parsed = TierOverride.parse(override, "")
        except ConfigError as exc:
            raise field_error(f"tiers.{name}.{exc.field}", exc.message) from None
        unknown = sorted(set(parsed.learners) - set(learner_names()))
        if unknown:
            raise field_error(f"tiers.{name}.learners", f"unknown learner(s) {unknown}; known: {learner_names()}")


def validation_seeds(scenario: Any) -> list[int]:
    """The scenario's validation seeds: its ``protocol.validation_seeds``, else the tiers file's for it.

    Raises:
        ConfigError: Naming ``protocol.validation_seeds`` if there are none, or the tiers file's
            ``validation_seeds.<scenario>`` if they overlap the scenario's train, test or held-out
            seeds (a v1 file's are checked here; a scenario file's own, when it is loaded).
    """
    own = list(scenario.protocol.validation_seeds)
    if own:
        return own
    field = f"tiers.validation_seeds.{scenario.name}"
    seeds = list(load_tiers().validation_seeds.get(scenario.name, []))
    if not seeds:
        raise ConfigError(f"scenarios.{scenario.name}.protocol.validation_seeds",
                          "none given (nor in configs/training/tiers.yaml's validation_seeds): a tier's validation "
                          "curve needs seeds drawn from the training distribution, disjoint from train and test seeds")
    protocol = scenario.protocol
    others = {"protocol.train_seeds": protocol.train_seeds, "protocol.test_seeds": protocol.test_seeds}
    if scenario.held_out is not None:
        others["held_out.test_seeds"] = scenario.held_out.test_seeds
    for name, other in others.items():
        overlap = sorted(set(seeds) & set(other))
        if overlap:
            raise ConfigError(field, f"seed(s) {overlap} are also {scenario.name}'s {name}: validation seeds are "
                                     "disjoint from the train and test seeds")
    return seeds


@dataclass(frozen=True)
class TierPlan:
    """What one tier means for one learner on one scenario (every size a number).

    Args:
        tier: The tier's name.
        budget_steps: Env steps (at most, with ``stop``).
        eval_every_steps: Env steps between validation points.
        stop: The stopping rule, or None.
        n_envs: Env processes (SB3 learners; 1 for the agents).
        hyperparams: The learner's config overrides, resolved.
        source: Where they come from.
        validation_seeds: The scenario's validation seeds.
    """

    tier: str
    budget_steps: int
    eval_every_steps: int
    stop: StopRule | None
    n_envs: int
    hyperparams: dict[str, Any]
    source: str
    validation_seeds: list[int]


def _largest_divisor(n: int, at_most: int) -> int:
    return max(d for d in range(1, max(1, at_most) + 1) if n % d == 0)


def _resolve(key: str, value: Any, episode_steps: int, n_envs: int, hyper: dict[str, Any]) -> Any:
    """A size given in the scenario's units as a number (``{episodes: k}``, ``{minibatches: m}``)."""
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("episodes", "minibatches"):
        return value
    unit, amount = next(iter(value.items()))
    field = f"tiers.learners.hyperparams.{key}.{unit}"
    if unit == "episodes":
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
            raise ConfigError(field, f"got {amount!r}, expected a number of episodes > 0")
        return max(1, int(round(amount * episode_steps)))
    rollout = int(hyper["n_steps"]) * n_envs  # (minibatches: PPO's batch_size, from its resolved n_steps)
    if not isinstance(amount, int) or amount < 1:
        raise ConfigError(field, f"got {amount!r}, expected a whole number >= 1")
    return _largest_divisor(rollout, rollout // amount)


def resolve_tier(scenario: Any, agent: str, tier: str) -> TierPlan:
    """The :class:`TierPlan` of ``agent`` on ``scenario`` in ``tier`` (the tiers file, then the scenario's overrides).

    Raises:
        ConfigError: Naming ``tier`` for an unknown tier, or the field of a bad setting.
    """
    from ecngym.agents.registry import is_agent
    from ecngym.benchmark.suite import scenario_env

    doc = load_tiers()
    if tier not in doc.tiers:
        raise ConfigError("tier", f"got {tier!r}; the tiers: {list(doc.tiers)}")
    base = doc.tiers[tier]
    over = TierOverride.parse((scenario.training.tiers if scenario.training else {}).get(tier, {}),
                              f"scenarios.{scenario.name}.training.tiers.{tier}")
    learner = base.learners.get(agent, DEFAULT_LEARNER)
    mine = over.learners.get(agent, {})
    hyper = {**learner.hyperparams, **mine.get("hyperparams", {})}
    n_envs = 1 if is_agent(agent) else int(mine.get("n_envs", learner.n_envs or 1))
    episode_steps = int(scenario_env(scenario)["episode_steps"])
    resolved: dict[str, Any] = {}
    for key in sorted(hyper, key=lambda k: k == "batch_size"):  # (batch_size in minibatches reads n_steps)
        resolved[key] = _resolve(key, hyper[key], episode_steps, n_envs, {**hyper, **resolved})
    return TierPlan(tier=tier, budget_steps=int(over.budget_steps or base.budget_steps),
                    eval_every_steps=int(over.eval_every_steps or base.eval_every_steps),
                    stop=over.stop if over.stop is not None else base.stop, n_envs=n_envs,
                    hyperparams=resolved, source=str(mine.get("source", learner.source)),
                    validation_seeds=validation_seeds(scenario))
