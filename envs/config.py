"""The environment's configuration: scenario, observation, action and reward, in one dataclass.

Every field has a default, so ``EnvConfig()`` is a small RoCEv2 incast scenario; the registered
environments are presets of it. Unknown keys raise :class:`ecngym.error.ConfigError`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, model_serializer, model_validator

from ecngym.error import ConfigError
from ecngym.sim_backend.config import DelayClasses
from ecngym.units import is_rtt, rtt_multiple
from ecngym.validation import (
    MAX_SIMULATION_SEED,
    Bytes,
    ConfigModel,
    Duration,
    Flag,
    OneOf,
    Real,
    Text,
    Whole,
    check,
    convert,
    field_error,
    plain,
)

#: Per-port features an observation can hold (see :mod:`ecngym.envs.observation`).
FEATURES = ("queue", "max_queue", "utilization", "marked_rate", "kmin", "kmax", "pmax",
            "paused_fraction", "flows")
#: Per-port features from the telemetry of the controlled ports' AQM policy (``env.aqm``; the
#: telemetry keys of :mod:`ecngym.sim_backend.aqm`, mapped into [0, 1] in
#: :mod:`ecngym.envs.observation`). A feature needs its policy on the controlled ports.
#: Prefix of the features that show a parameter the action tunes (``"aqm.ins_target_ns"``).
AQM_PARAM_FEATURE = "aqm."


def aqm_features() -> tuple[str, ...]:
    """The policies' telemetry features (``"pred.flow_count"``, ...), as their C++ classes declare them.

    Read from the compiled fabric (:func:`ecngym.sim_backend.aqm.telemetry_specs`) when first used.
    """
    from ecngym.sim_backend.aqm import telemetry_specs

    return tuple(telemetry_specs())


def __getattr__(name: str) -> Any:
    """``AQM_FEATURES``: :func:`aqm_features`, read when first used (the C++ module loads then, not at import)."""
    if name == "AQM_FEATURES":
        return aqm_features()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _feature(value: Any) -> str:
    """One observation feature: from FEATURES or :func:`aqm_features`, or ``aqm.<tuned parameter>``."""
    policy_features = aqm_features()
    if isinstance(value, str) and (value in FEATURES or value in policy_features or (
            value.startswith(AQM_PARAM_FEATURE) and value[len(AQM_PARAM_FEATURE):].isidentifier())):
        return value
    raise ValueError(f"got {value!r}, allowed: {', '.join(map(repr, FEATURES + policy_features))} or "
                     f"'{AQM_PARAM_FEATURE}<parameter>' (a parameter env.action.params tunes)")


#: Reward names (formulas in :mod:`ecngym.envs.reward`).
REWARDS = ("acc", "pred", "fct", "score_dense")
#: Most intervals an episode may have (10^7 took ~80 s and ~7 GB to prepare its trace).
MAX_EPISODE_STEPS = 1_000_000
#: Largest seed of ``reset(seed=...)``: :data:`ecngym.validation.MAX_SIMULATION_SEED`.
MAX_EPISODE_SEED = MAX_SIMULATION_SEED
#: Most base RTTs one control interval may span.
MAX_INTERVAL_RTTS = 1e6
#: :func:`ecngym.workloads.generate_trace` arguments that the scenario sets itself (from its
#: topology, episode length and episode seed), so ``env.workload`` may not give them.
SCENARIO_WORKLOAD_KEYS = ("hosts", "link_rate", "duration", "seed")


@functools.cache
def workload_keys() -> tuple[str, ...]:
    """The keys ``env.workload`` takes: ``generate_trace``'s arguments less :data:`SCENARIO_WORKLOAD_KEYS`."""
    import inspect

    from ecngym.workloads import generate_trace

    return tuple(k for k in inspect.signature(generate_trace).parameters if k not in SCENARIO_WORKLOAD_KEYS)


def _interval(value: Any) -> str | int:
    """A control interval: a duration (> 0, stored in ns) or a number of base RTTs ("5rtt").

    An RTT count stays a string: the scenario turns it into ns (:func:`ecngym.units.rtt_to_ns`).
    """
    if is_rtt(value):
        try:
            rtt_multiple(value, high=MAX_INTERVAL_RTTS)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        return value.strip()
    try:
        return convert(value, Duration(low=1))
    except ValueError as exc:
        raise ValueError(f"{exc}; or a number of base RTTs, e.g. '5rtt'") from None


def _trace_window(value: Any) -> str | int:
    if value in ("start", "random"):
        return value
    try:
        return convert(value, Duration())
    except ValueError:
        raise ValueError(f"got {value!r}; allowed: 'start', 'random' or a duration") from None


Interval = Annotated[Any, BeforeValidator(_interval)]
TraceWindow = Annotated[Any, BeforeValidator(_trace_window)]


class ObservationConfig(ConfigModel):
    """What the agent sees.

    Attributes:
        features: Per-port features, from :data:`FEATURES` and :func:`aqm_features` (each at most
            once). With a non-RED ``env.aqm`` the default drops ``kmin``, ``kmax``, ``pmax`` (they
            describe the RED curve, which those ports do not run; listing them then is an error);
            ``aqm.<parameter>`` shows the current value of a parameter the action tunes, in [0, 1]
            over the action's range (continuous) or the templates' span (discrete).
        history: Number of past intervals stacked (k), 1..64.
        queue_mapping: ``"linear"`` (queue / queue_scale, clipped at 1) or ``"step"`` (ACC's step
            mapping: 1 for an empty queue down to 0 for a long one, breakpoints in port BDPs).
        queue_scale: Queue normalisation for the linear mapping ("1MB"; bytes, > 0).
        step_breakpoints_bdp: Step-mapping breakpoints in units of the port's BDP (increasing, >= 0).
        step_values: Step-mapping value at or below each breakpoint (0 beyond the last), in [0, 1].
        flow_scale: Distinct-flow count f is reported as f / (f + flow_scale) (> 0).
        flatten: Return the observation as one vector of ports x history x features (row-major:
            ``obs.reshape(ports, history, features)`` recovers the table); ``False`` keeps it
            2-D, ``(ports, history x features)``, which SB3's checker flags as unconventional.
    """

    features: list[Annotated[str, BeforeValidator(_feature)]] = Field(
        default_factory=lambda: ["queue", "utilization", "marked_rate", "kmin", "kmax", "pmax", "paused_fraction",
                                 "flows"], min_length=1)
    history: Whole(1, 64) = 3
    queue_mapping: OneOf("linear", "step") = "linear"
    queue_scale: Bytes(low=1) = "1MB"
    step_breakpoints_bdp: list[Real(0, 1e9)] = Field(default_factory=lambda: [0.25, 0.5, 1.0, 2.0, 4.0])
    step_values: list[Real(0, 1)] = Field(default_factory=lambda: [1.0, 0.8, 0.6, 0.4, 0.2])
    flow_scale: Real(0, 1e12, low_open=True) = 16.0
    flatten: Flag = True

    @model_validator(mode="after")
    def _consistent(self) -> ObservationConfig:
        if len(set(self.features)) != len(self.features):
            raise field_error("features", f"lists a feature twice: {self.features}")
        if len(self.step_breakpoints_bdp) != len(self.step_values):
            raise field_error("step_values", "needs one value per breakpoint")
        if self.step_breakpoints_bdp != sorted(self.step_breakpoints_bdp):
            raise field_error("step_breakpoints_bdp", f"must be increasing, got {self.step_breakpoints_bdp}")
        return self


#: Spellings of ``env.action`` fields from before one mapper served every policy (RED's curve had
#: fields of its own), and what replaced each: refused by name, so an old config fails saying the new one.
RENAMED_ACTION_FIELDS = {
    "aqm_params": "params",
    "aqm_templates": "templates",
    "aqm_ranges": "ranges",
    "kmin_range": "ranges.kmin_bytes ([low, high])",
    "kmax_span_range": "ranges.kmax_bytes ({relative_to: kmin_bytes, offset: [low, high]})",
    "pmax_range": "ranges.pmax ([low, high])",
}


class ActionConfig(ConfigModel):
    """How actions map to settings of the controlled ports' AQM policy (:mod:`ecngym.envs.action`).

    The policy is ``env.aqm``'s, RED when it is not set; the rules every policy shares (checks,
    duplicate templates, encode tolerances) are in :mod:`ecngym.envs.action`.

    Attributes:
        type: ``"discrete"`` (an index into ``templates``) or ``"continuous"`` (a Box in [-1, 1]).
        scope: ``"all"`` (one setting shared by every controlled port), ``"layer"`` (one per
            switch layer) or ``"port"`` (one per controlled port).
        layers: Switch layers under control (``None`` = every switch layer).
        ports: Fabric-wide ids of the switch egress ports under control (``None`` = every port of
            the chosen layers); e.g. ``[p]`` with any scope controls one port.
        params: The policy's parameters the action sets (snake case: RED's ``kmin_bytes``,
            ``kmax_bytes``, ``pmax``; ECN♯'s ``ins_target_ns`` ...). ``None``: the policy's usual
            knobs (:data:`ecngym.sim_backend.aqm.ACTION_PARAMS`).
        templates: Discrete: the settings the indices choose, each a list with one value per
            ``params`` entry (human units: "80us", "30KB"; RED: ``[kmin, kmax, pmax]``) or a
            mapping param -> value; each setting at most once. The static setting is always among
            them. ``None``: the policy's default grid (:data:`ecngym.envs.action.DEFAULT_TEMPLATES`;
            others: :data:`ecngym.envs.action.DEFAULT_TEMPLATE_FACTORS` x each configured value).
        static_default: Discrete: the setting of the static action (a template entry), forced
            into the templates. ``None``: the ports' configured setting (the fabric's RED setting,
            or ``env.aqm``'s).
        ranges: Continuous: ``{param: [low, high]}``, the values a = -1 and a = +1 map to, or
            ``{param: {relative_to: other, offset: [low, high]}}``: the other tuned parameter's
            value plus the offset mapped so. A parameter not given takes the policy's default
            (:data:`ecngym.envs.action.DEFAULT_RANGES`; others: the parameter's whole C++ checker
            range).
        scale_with_rate: Scale template / range byte values (``*_bytes`` parameters) by
            (port rate / 100 Gbps).
    """

    type: OneOf("discrete", "continuous") = "discrete"
    scope: OneOf("all", "layer", "port") = "all"
    layers: list[Text] | None = None
    ports: list[Whole(0, 2**32 - 1)] | None = None
    params: list[Text] | None = None
    templates: list[Any] | None = Field(default=None, min_length=1)
    static_default: list[Any] | dict[str, Any] | None = None
    ranges: dict[str, Any] | None = None
    scale_with_rate: Flag = False

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        """Refuse a field spelled as before one mapper served every policy, naming its new spelling.

        Raises:
            ValueError: Naming the old field (pydantic's ConfigError then names ``env.action.<field>``).
        """
        for old, new in RENAMED_ACTION_FIELDS.items():
            if isinstance(data, Mapping) and old in data:
                raise field_error(old, f"was renamed: give it as env.action.{new}")
        return data


class RewardConfig(ConfigModel):
    """Reward by name (formulas in :mod:`ecngym.envs.reward`).

    Attributes:
        name: ``"acc"`` (ω·U + (1−ω)·Q_step(q̄)), ``"pred"`` (β·R/C + (1−β)·Φ(q̄)), ``"fct"``
            (episode-level: −mean FCT slowdown of the episode's flows at the last step) or
            ``"score_dense"`` (every step, minus the change of the episode's score so far: its
            undiscounted return is −score; :mod:`ecngym.envs.score_reward`).
        omega: ACC/LAECN utilisation weight ω (LAECN §III-C; docs: algorithms/laecn.md §3.4: [UNSPEC], 0.5 is [OURS]).
        beta: PRED goodput weight β (PRED §IV-B; docs: algorithms/pred.md §3.3: 0.4).
        q_left: PRED Φ is 1 up to this queue ("15KB": q_left = 15 packets of 1 KB, PRED §IV-B;
            docs: algorithms/pred.md §3.3).
        q_max: PRED Φ reaches 0 here ("500KB": PRED's fixed maxK, PRED §IV-B; docs: algorithms/pred.md §3.3
            [OURS]); > q_left.
        score: ``score_dense`` only: the episode-summary metric its return is minus of, a mean
            slowdown ``slowdown_avg_<bucket>`` (a scenario's ``protocol.score``); None: ``slowdown_avg_all``.
    """

    name: OneOf(*REWARDS) = "acc"
    omega: Real(0, 1) = 0.5
    beta: Real(0, 1) = 0.4
    q_left: Bytes() = "15KB"
    q_max: Bytes() = "500KB"
    score: Text | None = None

    @model_validator(mode="after")
    def _q_order(self) -> RewardConfig:
        if self.q_max <= self.q_left:
            raise field_error("q_max", f"must exceed q_left ({self.q_left} B), got {self.q_max} B")
        if self.score is not None:
            if self.name != "score_dense":
                raise field_error("score", f"got {self.score!r} with reward {self.name!r}; only score_dense reads it")
            from ecngym.envs.score_reward import score_size_range

            try:
                score_size_range(self.score)
            except ValueError as exc:
                raise field_error("score", str(exc)) from None
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # an unset score is left out, so that every config without one dumps (and hashes into the
        # results' scenario identity) as it did before the field existed
        out = handler(self)
        if out.get("score") is None:
            out.pop("score", None)
        return out


class EnvConfig(ConfigModel):
    """One ECN-tuning scenario.

    Attributes:
        topology: Topology config (``{"kind": "incast_star", ...}``).
        fabric: Fabric config (``{"preset": "hpcc", ...}``), without ``seed``: the episode's seed seeds it.
        workload: Arguments of :func:`ecngym.workloads.generate_trace` except hosts, link rate,
            duration and seed, which come from the scenario.
        trace: Path of a fixed trace (Parquet from ``ecngym trace generate``, or an HPCC flow file)
            to replay instead of generating one per episode. The trace fixes the workload: an
            override that changes ``workload`` together with it is refused (:func:`merge`).
        trace_window: Which window of a fixed trace an episode replays (flows starting in
            [offset, offset + interval x episode_steps), shifted to start at 0): ``"start"``
            (offset 0), ``"random"`` (a uniform offset per episode, drawn from the episode seed,
            up to the trace's last start minus the episode length) or a duration ("2ms").
        interval: Control interval: a duration ("20us", > 0) or base RTTs ("5rtt", at most 10^6).
            With ``interval_short``, the interval while a long flow is active.
        interval_short: LAECN's adaptive monitoring interval (LAECN §III-A; docs: algorithms/laecn.md §3.1): steps
            last this long ("5rtt") while no started, unfinished flow has delivered ``long_flow_bytes``, and
            ``interval`` ("15rtt") otherwise; ``info["long_flow"]`` holds the flag. ``None`` (the
            default): every step lasts ``interval``. The episode still spans
            ``interval x episode_steps`` of simulated time (so more, shorter steps).
        long_flow_bytes: Delivered bytes that make a flow "long" ("100KB": the paper's 100 kb read
            as 100 KB, LAECN §III-A; docs: algorithms/laecn.md §3.1 [OURS]).
        episode_steps: Intervals per episode (the episode replays that much simulated time),
            1..:data:`MAX_EPISODE_STEPS`.
        seed: Default seed when ``reset`` is called without one (0..2^64-1).
        delay_classes: Per-flow extra base delays ("20us", ...): each flow of an episode's trace
            gets one, drawn uniformly from the episode seed (RTT variation as in ECN#'s experiments,
            ECN#; docs: algorithms/ecn-sharp.md §8 note 3; ``ecngym.sim_backend.flows.with_delay_classes``). Its
            base RTT and ideal FCT include it. ``None``: no extra delay.
        aqm: Port AQM policy of the controlled ports, installed at every reset: a name
            (``"ecn_sharp"``) or ``{"policy": name, param: value, ...}`` (parameters of
            :mod:`ecngym.sim_backend.aqm`, human units allowed). The action tunes that policy's
            parameters (``action.params``). ``None``: the fabric's own (``fabric.aqm``: the presets' RED
            curve), and the action tunes RED.
    """

    replaced_whole: ClassVar[frozenset[str]] = frozenset({"topology"})  # another kind takes other arguments

    topology: dict[str, Any] = Field(default_factory=lambda: {
        "kind": "incast_star", "hosts": 16, "link_rate": "100Gbps", "link_delay": "1us"})
    fabric: dict[str, Any] = Field(default_factory=lambda: {"preset": "hpcc"})
    workload: dict[str, Any] = Field(default_factory=lambda: {
        "workload": "websearch", "load": 0.3,
        "incast": {"degree": 8, "size": "64KB", "interval": "200us", "arrival": "poisson"}})
    trace: Text | None = None
    trace_window: TraceWindow = "start"
    interval: Interval = "5rtt"
    interval_short: Interval | None = None
    long_flow_bytes: Bytes(low=1) = "100KB"
    episode_steps: Whole(1, MAX_EPISODE_STEPS) = 100
    observation: ObservationConfig = Field(default_factory=ObservationConfig)
    action: ActionConfig = Field(default_factory=ActionConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    seed: Whole(0, MAX_EPISODE_SEED) | None = None
    delay_classes: DelayClasses | None = None
    aqm: dict[str, Any] | Text | None = None

    @model_validator(mode="after")
    def _nothing_ignored(self) -> EnvConfig:
        """Refuse fields the scenario would ignore.

        * ``trace_window`` other than the default without a fixed ``trace``: each episode of a
          generated workload is its own trace, starting at 0;
        * ``fabric.seed``: every episode's fabric takes the episode's seed.

        Raises:
            ValueError: Naming ``trace_window`` or ``fabric.seed`` (pydantic's ConfigError then
                names ``env.<field>``).
        """
        if self.trace is None and self.trace_window != "start":
            given = repr(self.trace_window) if isinstance(self.trace_window, str) else f"{self.trace_window} ns"
            raise field_error("trace_window", f"got {given} without env.trace: only a fixed "
                              "trace has windows (each episode of a generated workload is its own trace); "
                              "give env.trace=PATH or leave trace_window out")
        if "seed" in self.fabric:
            raise field_error("fabric.seed", f"got {self.fabric['seed']!r}; each episode's fabric is seeded from "
                              "the episode's seed (reset(seed=...); ecngym eval/run: seed=, seeds=), so a fabric "
                              "seed would be ignored; leave it out")
        return self

    @model_validator(mode="after")
    def _workload_keys(self) -> EnvConfig:
        """Refuse a ``workload`` key that the generator does not take or that the scenario sets itself.

        Raises:
            ValueError: Naming ``workload.<key>`` (pydantic's ConfigError then names ``env.workload.<key>``).
        """
        from ecngym.workloads.distributions import suggest

        allowed = workload_keys()
        for key in self.workload:
            if key in SCENARIO_WORKLOAD_KEYS:
                raise field_error(f"workload.{key}", "is set by the scenario (hosts and link rate from the "
                                  "topology, duration from interval x episode_steps, seed per episode); "
                                  f"allowed keys: {', '.join(allowed)}")
            if key not in allowed:
                raise field_error(f"workload.{key}", f"unknown key; allowed keys: {', '.join(allowed)}."
                                  f"{suggest(key, list(allowed))}")
        return self

    def updated(self, overrides: Any, prefix: str = "") -> EnvConfig:
        """Return a validated copy with (nested) ``overrides`` merged in (:meth:`ConfigModel.updated`).

        A ``fabric`` override that chooses its base (a ``preset`` or an ``hpcc_config`` file)
        replaces the scenario's choice of base, so ``fabric=hpcc_file fabric.hpcc_config=path``
        works on a scenario built on the ``hpcc`` preset; the fabric's other keys still merge.

        Raises:
            ConfigError: Naming the first bad field.
        """
        overrides = plain(overrides)
        fabric = overrides.get("fabric") if isinstance(overrides, dict) else None
        if isinstance(fabric, dict):
            from ecngym.sim_backend.config import BASE_KEYS

            if any(key in fabric for key in BASE_KEYS):
                kept = {key: value for key, value in self.fabric.items() if key not in BASE_KEYS}
                return super(EnvConfig, self.model_copy(update={"fabric": kept})).updated(overrides, prefix)
        return super().updated(overrides, prefix)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, prefix: str = "env") -> EnvConfig:
        """Build from a nested mapping (e.g. a Hydra config); bad or unknown keys raise ConfigError."""
        return cls.parse(data, prefix)


def number(field: str, value: Any, integer: bool = False) -> float | int:
    """``value`` as a float (or an int), or a :class:`ConfigError` naming ``field``.

    Integers must be whole (``3`` or ``3.0``, not ``2.5``); strings and booleans are refused.
    """
    return check(field, value, Whole() if integer else Real())


#: Action fields that name or set the parameters of the controlled ports' policy: a base's (a preset's)
#: apply to its own policy only, so an override that changes ``aqm`` starts the new one from its defaults.
POLICY_ACTION_FIELDS = ("params", "templates", "static_default", "ranges")
#: Action fields that one action type reads and the other ignores.
ACTION_TYPE_OF_FIELD = {"templates": "discrete", "static_default": "discrete", "ranges": "continuous"}


def merge(obj: EnvConfig, overrides: dict[str, Any], prefix: str) -> EnvConfig:
    """Return a validated copy of ``obj`` with nested ``overrides``; unknown keys raise.

    The ``fabric`` and ``workload`` mappings and the sections merge key by key (override one
    field of a preset); ``topology`` is replaced whole (another kind takes other arguments).

    Raises:
        ConfigError: On a bad value, an unknown key, an ``action`` field that ``overrides``
            changes although the resulting action does not read it (``templates`` with a
            continuous action, ``ranges`` with a discrete one), or a ``workload`` that
            ``overrides`` changes although the result replays a fixed ``trace`` (the trace fixes
            the workload). Not refused: ``obj``'s own fields (a preset may carry templates and
            still be run with a continuous action, and its workload with a trace) and fields given
            with the value they already have. ``obj``'s :data:`POLICY_ACTION_FIELDS` are dropped
            when ``overrides`` changes the policy (``aqm``) and does not give them: they set the
            parameters of ``obj``'s policy. A resolved config (``as_dict()`` of an env's config,
            as a trained run records it) is a base, not overrides: pass it as ``obj``
            (``EcnTuningEnv(config=...)``, RLlib's ``env_config["scenario"]``). As overrides it
            is checked like any others, and its free mappings merge into the preset's (a workload
            without incasts gained the preset's).
    """
    cfg = obj.updated(overrides, prefix)
    if cfg.trace is not None and "workload" in overrides and cfg.workload != obj.workload:
        raise ConfigError(f"{prefix}.workload", f"got {overrides['workload']!r} with {prefix}.trace={cfg.trace!r}: "
                                                "the trace fixes the workload (its flows are replayed as recorded), "
                                                "so workload settings would be ignored; leave workload out, or "
                                                "leave trace out to generate each episode's trace from the workload")
    given = overrides.get("action")
    if _policy(cfg, prefix) != _policy(obj, prefix):
        # the base's action settings are its policy's parameters: another policy starts from its own defaults
        mine = given if isinstance(given, Mapping) else {}
        reset = {k: None for k in POLICY_ACTION_FIELDS if k not in mine}
        cfg = cfg.model_copy(update={"action": cfg.action.model_copy(update=reset)})
    for key in given if isinstance(given, Mapping) else ():
        changed = key in type(cfg.action).model_fields and getattr(cfg.action, key) != getattr(obj.action, key)
        kind = ACTION_TYPE_OF_FIELD.get(key)
        if kind is not None and kind != cfg.action.type and changed:
            raise ConfigError(f"{prefix}.action.{key}", f"only a {kind} action reads it, and this env's action.type "
                                                        f"is {cfg.action.type!r}: set action.type={kind!r} or leave "
                                                        f"{key} out")
    return cfg


def _policy(cfg: EnvConfig, prefix: str) -> str:
    """The short name of the controlled ports' policy: ``aqm``'s, or the one switch ports are born with (RED)."""
    from ecngym.sim_backend.aqm import birth_policy, split_setting

    return birth_policy() if cfg.aqm is None else split_setting(cfg.aqm, f"{prefix}.aqm")[0]


def check_episode_seed(seed: Any) -> int | None:
    """The check of ``reset(seed=...)`` (single- and multi-agent env): ``None``, or the seed as an int.

    Raises:
        ConfigError: Naming ``seed`` if it is not a whole number in [0, :data:`MAX_EPISODE_SEED`].
    """
    return None if seed is None else int(check("seed", seed, Whole(0, MAX_EPISODE_SEED)))


def reset_options_error(options: Any) -> ConfigError | None:
    """The check of ``reset(options=...)`` (single- and multi-agent env): the error, or ``None`` if fine.

    The envs define no reset options (the episode's trace comes from ``seed``, everything else from
    the config the env was made with), so only ``None`` and an empty mapping are allowed: anything
    else would be ignored.
    """
    if options is None or (isinstance(options, Mapping) and not options):
        return None
    return ConfigError("options", f"got {options!r}, allowed: None or {{}}: this env defines no reset options (the "
                                  "episode's trace comes from reset(seed=...), the rest from the env's config)")
