"""Suites and their scenarios, as data: ``configs/suite/<suite>.yaml`` and ``configs/suite/scenarios/<name>.yaml``.

A **suite** (``core``, ``full``) is a versioned list of scenario names and how many of each
scenario's test seeds it scores. A **scenario** is one YAML file, its one home: the env id it is
registered under, the :class:`~ecngym.envs.EnvConfig` overrides of that env, and its protocol (train
seeds for tuning and training, disjoint test seeds for scoring, the score metric and its direction,
the large-flow second axis of the Pareto view, the traffic phases), plus optional per-scenario
controller overrides (``controllers: {bytetuning: {window_steps: 10}}``) for tuners whose default
schedule does not fit the scenario's episode. Every file is validated on load (typed models of
:mod:`ecngym.validation`); unknown keys are refused.

A user's own scenario file, anywhere on disk, is a suite of its own:
:mod:`ecngym.benchmark.scenario_file`.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from pydantic import model_validator

from ecngym.configs import CONFIG_DIR
from ecngym.envs.config import REWARDS
from ecngym.error import ConfigError
from ecngym.results.store import MAX_SEED
from ecngym.validation import ConfigModel, Duration, Flag, OneOf, Text, Whole, field_error
from ecngym.yaml_files import read_yaml

#: Where the suites live (``<name>.yaml``); scenarios and references are in subfolders of it.
SUITE_DIR = CONFIG_DIR / "suite"
SCENARIO_DIR = SUITE_DIR / "scenarios"
REFERENCE_DIR = SUITE_DIR / "references"
#: A registered env id (``ecngym/RoceStorageIncast-v1``).
_ENV_ID = re.compile(r"[A-Za-z0-9_]+/[A-Za-z0-9_]+-v[0-9]+")
_NAME = re.compile(r"[a-z0-9][a-z0-9_]*")

Seed = Whole(0, MAX_SEED)
#: Largest suite or scenario version: a version counts changes of results, one at a time.
MAX_VERSION = 999
Version = Whole(1, MAX_VERSION)


class Phase(ConfigModel):
    """One traffic phase of a scenario's episode (for the ``oracle_phase`` reference and the docs)."""

    name: Text
    start: Duration()


class Protocol(ConfigModel):
    """How a scenario is scored.

    Args:
        train_seeds: Seeds for tuning and training only (the references' searches, learners).
        test_seeds: Seeds for scoring only; disjoint from ``train_seeds``. A suite scores the first
            ``test_seeds`` of them (its own count).
        score: The episode-summary metric scored (:func:`~ecngym.envs.summary.summary_metric_names`).
        lower_is_better: The score's direction.
        second_axis: The large-flow metric of the Pareto view (an episode-summary metric too),
            lower is better (a slowdown).
        phases: The traffic phases, in order of start time.
        validation_seeds: Seeds of the learners' validation curves and stopping rules, drawn from the
            training distribution; disjoint from ``train_seeds`` and ``test_seeds`` (optional: suite
            v1's frozen files have theirs in ``configs/training/tiers.yaml``).
    """

    train_seeds: list[Seed]
    test_seeds: list[Seed]
    validation_seeds: list[Seed] = []
    score: Text
    lower_is_better: Flag = True
    second_axis: Text
    phases: list[Phase] = []

    @model_validator(mode="after")
    def _check(self) -> Protocol:
        for field in ("train_seeds", "test_seeds"):
            seeds = getattr(self, field)
            if not seeds:
                raise field_error(field, "got an empty list; give at least one seed")
            repeated = sorted({s for s in seeds if seeds.count(s) > 1})
            if repeated:
                raise field_error(field, f"seed(s) {repeated} given more than once")
        overlap = sorted(set(self.train_seeds) & set(self.test_seeds))
        if overlap:
            raise field_error("test_seeds", f"seed(s) {overlap} are also train_seeds: nothing may be scored on a "
                                            "trace used for tuning or training; make the two lists disjoint")
        repeated = sorted({s for s in self.validation_seeds if self.validation_seeds.count(s) > 1})
        if repeated:
            raise field_error("validation_seeds", f"seed(s) {repeated} given more than once")
        for other in ("train_seeds", "test_seeds"):
            overlap = sorted(set(self.validation_seeds) & set(getattr(self, other)))
            if overlap:
                raise field_error("validation_seeds", f"seed(s) {overlap} are also {other}: validation seeds are "
                                                      "disjoint from the train and test seeds")
        from ecngym.envs.summary import summary_metric_names

        known = summary_metric_names()
        for field in ("score", "second_axis"):
            if getattr(self, field) not in known:
                raise field_error(field, f"got {getattr(self, field)!r}, not an episode-summary metric; known: {known}")
        starts = [p.start for p in self.phases]
        if starts != sorted(starts) or len(set(starts)) != len(starts):
            raise field_error("phases", f"got starts {starts} ns; give the phases in order of strictly rising start")
        return self


#: The source a learner's settings get on a scenario that lists none for it.
DEFAULT_SOURCE = "its own defaults (configs/agent/<name>.yaml; SB3's for an SB3 algorithm): this scenario lists none"


class AgentTraining(ConfigModel):
    """One learner's training settings on a scenario.

    Args:
        hyperparams: Overrides of the agent's config (``configs/agent/<name>.yaml``; for ``ppo`` /
            ``dqn`` the SB3 algorithm's keyword arguments).
        source: Where the values come from (a paper table, or ``[OURS]`` with the reason).
        reward: The env reward it trains on (a name of ``ecngym.envs.config.REWARDS``; ``score_dense``
            follows ``protocol.score``); None: its default (:mod:`ecngym.benchmark.learner_reward`).
    """

    hyperparams: dict[str, Any] = {}
    source: Text
    reward: OneOf(*REWARDS) | None = None


class Training(ConfigModel):
    """How the learners train on a scenario (``training:`` of its YAML).

    The traces they train on are the scenario's ``protocol.train_seeds`` (one per episode, in turn);
    they are scored on its test seeds like every controller.

    Args:
        budget_steps: Env steps (control intervals of the scenario) per training run, chosen before
            any score was seen ([OURS]).
        seeds: The training seeds (network initialisation, exploration); a suite trains the first
            ``training_seeds`` of them.
        long_budget_steps: A longer run's budget (one training seed per agent) that shows whether the
            learning curve has flattened at ``budget_steps``; None: none.
        agents: Per learner (:func:`~ecngym.agents.registry.learner_names`), its settings; a learner
            it does not list trains with its own defaults (:meth:`settings`), so a new learner needs no
            edit of any scenario file.
        tiers: Per budget tier (``configs/training/tiers.yaml``: ``100k``, ``converged``), this
            scenario's overrides of the tier's settings (:class:`~ecngym.benchmark.tiers.TierOverride`).
    """

    budget_steps: Whole(1, 10_000_000)
    seeds: list[Seed]
    long_budget_steps: Whole(1, 100_000_000) | None = None
    agents: dict[str, AgentTraining]
    tiers: dict[str, dict[str, Any]] = {}

    @model_validator(mode="after")
    def _check(self) -> Training:
        from ecngym.benchmark.tiers import check_tier_overrides

        check_tier_overrides(self.tiers)
        if not self.seeds:
            raise field_error("seeds", "got an empty list; give at least one training seed")
        repeated = sorted({s for s in self.seeds if self.seeds.count(s) > 1})
        if repeated:
            raise field_error("seeds", f"seed(s) {repeated} given more than once")
        from ecngym.agents.registry import learner_names

        unknown = sorted(set(self.agents) - set(learner_names()))
        if unknown:
            raise field_error("agents", f"unknown learner(s) {unknown}; known: {learner_names()}")
        if self.long_budget_steps is not None and self.long_budget_steps <= self.budget_steps:
            raise field_error("long_budget_steps", f"got {self.long_budget_steps}, not above budget_steps "
                                                   f"{self.budget_steps}")
        return self

    def learners(self) -> list[str]:
        """The learners that train here: those listed in ``agents`` (in order), then every other learner."""
        from ecngym.agents.registry import learner_names

        return [*self.agents, *(a for a in learner_names() if a not in self.agents)]

    def settings(self, agent: str) -> AgentTraining:
        """Learner ``agent``'s settings here: its entry of ``agents``, else its own defaults."""
        return self.agents.get(agent) or AgentTraining(source=DEFAULT_SOURCE)


class HeldOut(ConfigModel):
    """A held-out traffic family (``held_out:`` of a scenario): traffic the learners never trained on.

    Args:
        name: Its name (the board's second column).
        description: One plain sentence: what differs from the scenario's traffic.
        workload: Overrides of the scenario's ``env.workload`` (another flow-size distribution, load or
            incast degree); everything else (fabric, topology, interval, episode) is the scenario's.
        test_seeds: Its own test seeds, disjoint from the scenario's train seeds.
    """

    name: Text
    description: Text
    workload: dict[str, Any]
    test_seeds: list[Seed]


class Scenario(ConfigModel):
    """One scenario of the benchmark (``configs/suite/scenarios/<name>.yaml``).

    Args:
        name: Its name, the file's stem.
        id: The env id it runs as (``ecngym/RoceStorageIncast-v1``).
        version: Bumped whenever its results change.
        paper: The paper and section whose setting it follows.
        description: One plain sentence for the docs table.
        env: :class:`~ecngym.envs.EnvConfig` overrides given to ``gymnasium.make(id, **env)``.
        protocol: Seeds, score, second axis, phases.
        controllers: Per-controller config overrides for this scenario (controller name -> keys of
            its ``configs/controller/<name>.yaml``), e.g. a tuner's schedule fitted to the episode.
        training: How the learners train here (None: no learner trains on it).
        held_out: A held-out traffic family, scored like the test seeds (None: none).
    """

    name: Text
    id: Text
    version: Version
    paper: Text = ""
    description: Text = ""
    env: dict[str, Any] = {}
    protocol: Protocol
    controllers: dict[str, dict[str, Any]] = {}
    training: Training | None = None
    held_out: HeldOut | None = None

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        if not _NAME.fullmatch(self.name):
            raise field_error("name", f"got {self.name!r}; a scenario name is lower case letters, digits and '_'")
        if not _ENV_ID.fullmatch(self.id):
            raise field_error("id", f"got {self.id!r}, expected a registered env id such as ecngym/Name-v1")
        known = {p.stem for p in (CONFIG_DIR / "controller").glob("*.yaml")}
        unknown = sorted(set(self.controllers) - known)
        if unknown:
            raise field_error("controllers", f"unknown controller(s) {unknown}; known: {sorted(known)}")
        if self.held_out is not None:
            seeds = self.held_out.test_seeds
            if not seeds:
                raise field_error("held_out.test_seeds", "got an empty list; give at least one seed")
            repeated = sorted({s for s in seeds if seeds.count(s) > 1})
            if repeated:
                raise field_error("held_out.test_seeds", f"seed(s) {repeated} given more than once")
            overlap = sorted(set(seeds) & set(self.protocol.train_seeds))
            if overlap:
                raise field_error("held_out.test_seeds", f"seed(s) {overlap} are also protocol.train_seeds: nothing "
                                                         "may be scored on a seed used for tuning or training")
            overlap = sorted(set(seeds) & set(self.protocol.validation_seeds))
            if overlap:
                raise field_error("protocol.validation_seeds", f"seed(s) {overlap} are also held_out.test_seeds: "
                                                               "validation seeds are disjoint from every test seed")
        return self

    def held_out_env(self) -> dict[str, Any]:
        """The env overrides of the held-out family: the scenario's, its workload changed.

        Raises:
            ConfigError: Naming ``held_out``, if the scenario has none.
        """
        if self.held_out is None:
            raise ConfigError("held_out", f"scenario {self.name} declares no held-out traffic family")
        env = dict(self.env)
        env["workload"] = {**dict(env.get("workload", {})), **self.held_out.workload}
        return env

    def test_seeds(self, count: int) -> list[int]:
        """The first ``count`` test seeds (what a suite scoring ``count`` seeds runs)."""
        return list(self.protocol.test_seeds[:count])


def scenario_env(scenario: Scenario, held_out: bool = False) -> dict[str, Any]:
    """The resolved :class:`~ecngym.envs.EnvConfig` fields of a scenario (or its held-out family).

    Args:
        scenario: The scenario.
        held_out: Its held-out traffic family's env instead (:meth:`Scenario.held_out_env`).

    Raises:
        ConfigError: Naming ``scenarios.<name>.<field>`` for a bad env config.
    """
    import gymnasium as gym

    import ecngym.envs  # noqa: F401  (registers the ids)

    env_kwargs = scenario.held_out_env() if held_out else dict(scenario.env)
    try:
        env = gym.make(scenario.id, **env_kwargs)
    except ConfigError as exc:
        raise ConfigError(f"scenarios.{scenario.name}.{exc.field}", exc.message) from None
    try:
        return env.unwrapped.config.as_dict()
    finally:
        env.close()


def check_scenario_env(scenario: Scenario) -> None:
    """Build the scenario's env and its held-out family's (no fabric: nothing is simulated) to check them.

    What a scenario file alone cannot show: that its ``env`` and ``held_out.workload`` are configs
    the env takes (known keys and values), and that every traffic phase starts inside the episode
    (``interval`` x ``episode_steps``; an interval in base RTTs needs the topology).

    Raises:
        ConfigError: Naming ``scenarios.<name>.id`` for an id no env is registered under,
            ``scenarios.<name>.env.<field>`` / ``scenarios.<name>.held_out.workload.<key>`` with
            the env's message, or ``scenarios.<name>.protocol.phases[<i>].start`` for a phase that
            starts at or past the episode's end.
    """
    import gymnasium as gym

    import ecngym.envs  # noqa: F401  (registers the ids)
    from ecngym.envs.view import EnvView

    prefix = f"scenarios.{scenario.name}"
    families = [("env", dict(scenario.env))]
    if scenario.held_out is not None:
        families.append(("held_out", scenario.held_out_env()))
    for family, env_kwargs in families:
        try:
            env = gym.make(scenario.id, **env_kwargs)
        except ConfigError as exc:
            field = exc.field if family == "env" else "held_out." + exc.field.removeprefix("env.")
            raise ConfigError(f"{prefix}.{field}", exc.message) from None
        except gym.error.Error as exc:
            raise ConfigError(f"{prefix}.id", f"got {scenario.id!r}: {exc}") from None
        try:
            view = EnvView(env)
            interval_ns, steps = view.interval_ns, view.episode_steps
        finally:
            env.close()
        if family == "env":
            check_phases(scenario, interval_ns, steps)


def check_phases(scenario: Scenario, interval_ns: int, episode_steps: int) -> None:
    """Refuse a traffic phase that starts at or past the end of the episode (``interval_ns`` x ``episode_steps``).

    Raises:
        ConfigError: Naming ``scenarios.<name>.protocol.phases[<i>].start``, the phase and the episode's end.
    """
    end_ns = interval_ns * episode_steps
    for i, phase in enumerate(scenario.protocol.phases):
        if phase.start >= end_ns:
            raise ConfigError(f"scenarios.{scenario.name}.protocol.phases[{i}].start",
                              f"phase {phase.name!r} starts at {phase.start} ns, at or past the episode's end "
                              f"{end_ns} ns ({episode_steps} steps x {interval_ns} ns); a phase starts inside the "
                              "episode")


class SuiteSpec(ConfigModel):
    """A suite file (``configs/suite/<name>.yaml``).

    Args:
        name: Its name (``core``, ``full``).
        version: Bumped whenever its scenario list or seed count changes.
        test_seeds: How many of each scenario's test seeds it scores.
        scenarios: The scenario names, each a file of the scenario folder.
        training_seeds: How many of each scenario's training seeds (``training.seeds``) its learners
            train with.
        learners: Score the shipped checkpoints of the learners (``ecngym/benchmark/checkpoints``) on
            the board.
    """

    name: Text
    version: Version
    test_seeds: Whole(1)
    scenarios: list[Text]
    training_seeds: Whole(1) = 3
    learners: Flag = False

    @model_validator(mode="after")
    def _check(self) -> SuiteSpec:
        if not self.scenarios:
            raise field_error("scenarios", "got an empty list; a suite names at least one scenario")
        repeated = sorted({s for s in self.scenarios if self.scenarios.count(s) > 1})
        if repeated:
            raise field_error("scenarios", f"{repeated} given more than once")
        return self


class Suite:
    """A loaded suite: its spec and its scenarios (in the suite's order), every file validated.

    Args:
        spec: The suite file's contents.
        scenarios: Its scenarios by name.
        scenario_dir: The folder of their files.
        reference_dir: The folder of their references files (default: the package's).
        checkpoints_of: Per scenario, the scenario whose shipped learner checkpoints play it (None:
            none; default: each scenario its own).
    """

    def __init__(self, spec: SuiteSpec, scenarios: dict[str, Scenario], scenario_dir: Path,
                 reference_dir: Path | None = None, checkpoints_of: dict[str, Scenario | None] | None = None) -> None:
        self.spec = spec
        self.scenarios = scenarios
        self.scenario_dir = scenario_dir
        self.reference_dir = reference_dir if reference_dir is not None else REFERENCE_DIR
        self.checkpoints_of = checkpoints_of if checkpoints_of is not None else dict(scenarios)

    @property
    def name(self) -> str:
        """The suite's name."""
        return self.spec.name

    def test_seeds(self, scenario: str) -> list[int]:
        """The test seeds this suite scores on ``scenario``."""
        return self.scenarios[scenario].test_seeds(self.spec.test_seeds)

    def training_seeds(self, scenario: str) -> list[int]:
        """The training seeds this suite trains its learners with on ``scenario`` (none without ``training``)."""
        training = self.scenarios[scenario].training
        return [] if training is None else list(training.seeds[:self.spec.training_seeds])


def load_scenario(name: str, scenario_dir: Path | str | None = None) -> Scenario:
    """Read and validate one scenario file.

    Args:
        name: The scenario's name (``<scenario_dir>/<name>.yaml``).
        scenario_dir: The folder of scenario files (default: the package's ``configs/suite/scenarios``).

    Raises:
        ConfigError: Naming ``scenarios.<name>`` for a missing file, or ``scenarios.<name>.<field>``
            for a bad field (train / test seeds that overlap name ``protocol.test_seeds``).
    """
    folder = Path(scenario_dir) if scenario_dir is not None else SCENARIO_DIR
    path = folder / f"{name}.yaml"
    prefix = f"scenarios.{name}"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        raise ConfigError(prefix, f"no scenario file {path}; scenarios there: {known}")
    scenario = Scenario.parse(read_yaml(path, prefix), prefix)
    if scenario.name != name:
        raise ConfigError(f"{prefix}.name", f"got {scenario.name!r}; a scenario's name is its file's stem {name!r}")
    return scenario


@functools.cache
def registered_scenario(env_id: str) -> Scenario | None:
    """The package's scenario registered under ``env_id`` (a file of ``configs/suite/scenarios``); None for ``-v0``.

    Raises:
        ConfigError: As :func:`load_scenario`, for a malformed scenario file of the package.
    """
    for path in sorted(SCENARIO_DIR.glob("*.yaml")):
        scenario = load_scenario(path.stem)
        if scenario.id == env_id:
            return scenario
    return None


def load_suite(suite: str | Path | dict[str, Any] | Any, scenario_dir: Path | str | None = None,
               reference_dir: Path | str | None = None) -> Suite:
    """Read and validate a suite and every scenario it names.

    Args:
        suite: The suite: a name (``core``: ``configs/suite/core.yaml``), a path to a suite file, or
            the suite's contents (a mapping or an OmegaConf node: ``ecngym run``'s ``suite`` group).
        scenario_dir: The folder of scenario files (default: the package's ``configs/suite/scenarios``).
        reference_dir: The folder of references files (default: the package's ``configs/suite/references``).

    Returns:
        The suite.

    Raises:
        ConfigError: Naming ``suite`` for an unknown suite, ``suite.<field>`` for a bad suite field,
            ``test_seeds`` for a suite scoring more seeds than a scenario has, or the scenario's
            field (:func:`load_scenario`, :func:`check_scenario_env`).
    """
    if isinstance(suite, (str, Path)):
        path = Path(suite)
        if path.suffix not in (".yaml", ".yml"):
            path = SUITE_DIR / f"{suite}.yaml"
        if not path.is_file():
            known = sorted(p.stem for p in SUITE_DIR.glob("*.yaml"))
            raise ConfigError("suite", f"got {str(suite)!r}: no suite file {path}; suites: {known}")
        data = read_yaml(path, "suite")
    else:
        data = suite
    spec = SuiteSpec.parse(data, "suite")
    folder = Path(scenario_dir) if scenario_dir is not None else SCENARIO_DIR
    scenarios = {name: load_scenario(name, folder) for name in spec.scenarios}
    for name, scenario in scenarios.items():
        have = len(scenario.protocol.test_seeds)
        if have < spec.test_seeds:
            raise ConfigError("suite.test_seeds", f"got {spec.test_seeds}, but scenario {name} has only {have} "
                                                  "test seeds; give fewer or add test seeds to the scenario")
        training = scenario.training
        if training is not None and len(training.seeds) < spec.training_seeds:
            raise ConfigError("suite.training_seeds", f"got {spec.training_seeds}, but scenario {name} has only "
                                                      f"{len(training.seeds)} training seeds (training.seeds); give "
                                                      "fewer or add training seeds to the scenario")
        check_scenario_env(scenario)
    return Suite(spec, scenarios, folder, Path(reference_dir) if reference_dir is not None else None)
