"""Typed agent configs (``configs/agent/<name>.yaml``), validated with :mod:`ecngym.validation`.

:func:`agent_config` loads one agent's YAML and merges overrides; :func:`agent_env_config` is the
env config the agent trains on.

Every field of ACC's and LAECN's configs is checked when the config is built (bad values, unknown
keys, wrong types are a :class:`~ecngym.error.ConfigError` naming ``agent.<field>``), before any
fabric or network exists. The values and their sources live in the YAML files, not here.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from ecngym.error import ConfigError
from ecngym.validation import ConfigModel, Flag, OneOf, Real, Whole, config_values, convert, field_error

GRANULARITY = OneOf("port", "switch")
#: A network's hidden layer widths (``[]``: none, a linear network).
HIDDEN_WIDTHS = list[Whole(1, 65536)]
#: The same, at least one layer (the agents' Q-networks are MLPs).
HIDDEN_LAYERS = Annotated[HIDDEN_WIDTHS, Field(min_length=1)]


class DqnTrainingParams(ConfigModel):
    """The deep-Q training settings ACC (SB3's DoubleDQN) and LAECN (our own loop) share.

    ``batch_size`` is at most ``buffer_size`` (a batch is drawn from the replay).
    """

    learning_rate: Real(0, 1, low_open=True)
    gamma: Real(0, 1)
    batch_size: Whole(1, 10**6)
    target_update_interval: Whole(1)
    buffer_size: Whole(1, 10**8)
    learning_starts: Whole(0)
    exploration_initial_eps: Real(0, 1)
    exploration_final_eps: Real(0, 1)

    @model_validator(mode="after")
    def _batch_fits_the_replay(self) -> DqnTrainingParams:
        self._check_within_replay("batch_size", "the replay a batch is drawn from")
        return self

    def _check_within_replay(self, field: str, bound: str) -> None:
        """Refuse a ``field`` larger than ``buffer_size`` (``bound``: why the replay bounds it).

        Raises:
            ValueError: Naming ``field`` (:func:`~ecngym.validation.field_error`).
        """
        value = getattr(self, field)
        if value > self.buffer_size:
            raise field_error(field, f"got {value}, allowed: at most buffer_size ({self.buffer_size}), {bound}")


class PolicyKwargs(ConfigModel):
    """The Q-network's shape (SB3's ``policy_kwargs``; RLlib's ``fcnet_hiddens``): hidden layer widths (>= 1 layer)."""

    net_arch: HIDDEN_LAYERS = Field(default_factory=lambda: [64, 64])


class DoubleDqnParams(DqnTrainingParams):
    """Keyword arguments of :class:`~ecngym.agents.ddqn.DoubleDQN` that ACC sets."""

    train_freq: Whole(1)
    gradient_steps: Whole(1)
    loss: OneOf("mse", "huber")
    overlap_updates: Flag = False
    policy_kwargs: PolicyKwargs = Field(default_factory=PolicyKwargs)


class OnlineParams(ConfigModel):
    """ACC's online fine-tuning after the offline phase."""

    timesteps: Whole(0)
    exploration_eps: Real(0, 1)
    env: dict[str, Any] = Field(default_factory=dict)


class RllibParams(ConfigModel):
    """ACC on RLlib."""

    train_batch_size: Whole(1)
    num_env_runners: Whole(0, 4096)
    rollout_fragment_length: Whole(1, 10**6)


class AccConfig(ConfigModel):
    """``configs/agent/acc.yaml``."""

    name: OneOf("acc")
    granularity: GRANULARITY
    env: dict[str, Any]
    hyperparams: DoubleDqnParams
    exploration_decisions: Whole(1)
    #: ε's schedule in decisions of each agent (port or switch), i.e. env steps; set, it replaces
    #: ``exploration_decisions`` (summed over agents), so the schedule does not change with the port count
    exploration_decisions_per_agent: Whole(1) | None = None
    online: OnlineParams
    rllib: RllibParams


class LaecnConfig(DqnTrainingParams):
    """``configs/agent/laecn.yaml`` and ``haecn.yaml`` (the deep-Q settings at the top level).

    ``learning_starts`` is at most ``buffer_size``: LAECN's warm-up counts the transitions its replay
    holds (SB3's, for ACC, counts env steps), and a replay never holds more than ``buffer_size``.
    """

    name: OneOf("laecn", "haecn")
    granularity: GRANULARITY
    env: dict[str, Any]
    trigger_penalty: Real(0, 1e3)
    initial_trigger: Flag
    exploration_decisions: Whole(1)
    #: As ACC's: ε's schedule in each agent's decisions (env steps); set, it replaces ``exploration_decisions``
    exploration_decisions_per_agent: Whole(1) | None = None
    eval_eps: Real(0, 1)
    optimizer: OneOf("adam")
    policy_net: HIDDEN_LAYERS
    decision_net: HIDDEN_LAYERS
    decision_double_q: Flag

    @model_validator(mode="after")
    def _warm_up_fits_the_replay(self) -> LaecnConfig:
        # past it the modules would never take a gradient step
        self._check_within_replay("learning_starts", "the transitions a replay holds")
        return self


# ------------------------------------------------------------------ generic SB3 training
def _train_freq(value: Any) -> Any:
    """SB3's ``train_freq``: a whole number of steps, or ``[n, "step" | "episode"]`` (as a tuple)."""
    if isinstance(value, (list, tuple)):
        if len(value) != 2 or not isinstance(value[1], str) or value[1] not in ("step", "episode"):
            raise ValueError(f"got {value!r}, allowed: a whole number >= 1, or [n, 'step' | 'episode']")
        return convert(value[0], Whole(1)), value[1]
    return convert(value, Whole(1))


class ActorCriticArch(ConfigModel):
    """PPO's separate hidden layers (SB3's ``net_arch=dict(pi=[...], vf=[...])``; a missing one is none)."""

    pi: HIDDEN_WIDTHS = Field(default_factory=list)
    vf: HIDDEN_WIDTHS = Field(default_factory=list)


#: Value types of SB3's keyword arguments that ``ecngym train`` (without ``agent=``) checks as
#: ``hyperparams.<key>`` before SB3 sees them: SB3 itself checks few (``gamma=2`` trained). Keys of the
#: algorithm's signature not listed pass on as given (SB3 checks their types); a callable schedule
#: (``learning_rate``, ``clip_range`` from Python) is SB3's to check. Of ``policy_kwargs``, ecngym
#: checks ``net_arch``: :data:`HIDDEN_WIDTHS`, or for PPO also :class:`ActorCriticArch`.
SB3_HYPERPARAMS: dict[str, dict[str, Any]] = {
    "dqn": {
        "learning_rate": Real(0, 1, low_open=True),
        "buffer_size": Whole(1, 10**8),
        "learning_starts": Whole(0),
        "batch_size": Whole(1, 10**6),
        "tau": Real(0, 1, low_open=True),
        "gamma": Real(0, 1),
        "train_freq": Annotated[Any, BeforeValidator(_train_freq)],
        "gradient_steps": Whole(-1),  # -1: as many as env steps collected (SB3)
        "optimize_memory_usage": Flag,
        "n_steps": Whole(1, 10**6),
        "target_update_interval": Whole(1),
        "exploration_fraction": Real(0, 1),
        "exploration_initial_eps": Real(0, 1),
        "exploration_final_eps": Real(0, 1),
        "max_grad_norm": Real(0, None, low_open=True),
        "stats_window_size": Whole(1),
    },
    "ppo": {
        "learning_rate": Real(0, 1, low_open=True),
        "n_steps": Whole(1, 10**8),
        "batch_size": Whole(2, 10**8),  # SB3 asserts > 1 (a one-sample advantage normalises to NaN)
        "n_epochs": Whole(1),
        "gamma": Real(0, 1),
        "gae_lambda": Real(0, 1),
        "clip_range": Real(0, None, low_open=True),
        "clip_range_vf": Real(0, None, low_open=True) | None,
        "normalize_advantage": Flag,
        "ent_coef": Real(),
        "vf_coef": Real(0, None),
        "max_grad_norm": Real(0, None, low_open=True),
        "use_sde": Flag,
        "sde_sample_freq": Whole(-1),  # -1: only at the start of a rollout (SB3)
        "target_kl": Real(0, None, low_open=True) | None,
        "stats_window_size": Whole(1),
    },
}


def agent_config(name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Agent ``name``'s YAML (``configs/agent/<name>.yaml``) with ``overrides`` merged in, validated.

    Args:
        name: A registered agent's name (:func:`~ecngym.agents.registry.agent_names`: ``"acc"``,
            ``"laecn"``, ``"haecn"`` ...).
        overrides: Fields to change (a mapping, nested like the YAML; an OmegaConf config too).
            Values are validated as given: Python or NumPy numbers, lists or tuples. The YAML's
            own ``_kind_`` may come back in them (Hydra's composed ``agent`` node holds it).

    Returns:
        The validated config as a plain dict (without ``_kind_``).

    Raises:
        ConfigError: On an unknown agent name, overrides that are not a mapping, an override of
            ``name`` or ``_kind_``, or a bad or unknown field (named ``agent.<field>``).
    """
    from ecngym.agents.registry import KIND_KEY, agent_kind, load_agent_yaml
    from ecngym.envs.config import EnvConfig

    kind = agent_kind(name)
    raw = config_values(load_agent_yaml(name))
    own_kind = raw.pop(KIND_KEY, None)
    if overrides is not None and hasattr(overrides, "items") and KIND_KEY in overrides:
        if overrides[KIND_KEY] != own_kind:  # (another kind would train one agent with another's code)
            raise ConfigError(f"agent.{KIND_KEY}", f"got {overrides[KIND_KEY]!r} for the agent {name!r}, whose "
                                                   f"YAML names {own_kind!r}; it is not an override")
        overrides = {k: v for k, v in overrides.items() if k != KIND_KEY}
    base = kind.config.parse(raw, "agent")
    cfg = base.updated({} if overrides is None else overrides, "agent").as_dict()
    if cfg["name"] != name:  # (the name picks the file: laecn with name=haecn would be neither)
        raise ConfigError("agent.name", f"got {cfg['name']!r} for the agent {name!r}; the name is not an override: "
                                        f"choose the agent with agent={cfg['name']}")
    EnvConfig().updated(cfg["env"], "agent.env")  # the agent's env overrides are valid env fields
    if "online" in cfg:  # (ACC) checked now, not only once a run reaches its online phase
        EnvConfig().updated(cfg["online"]["env"], "agent.online.env")
    return cfg


def agent_env_config(base: dict[str, Any], agent_env: dict[str, Any]) -> Any:
    """The :class:`~ecngym.envs.EnvConfig` an agent trains on: the scenario plus the agent's overrides.

    Args:
        base: The scenario (a registered preset merged with the user's env overrides).
        agent_env: The agent's ``env`` overrides (its observation, reward, Δt).
    """
    from ecngym.envs.config import EnvConfig, merge

    return merge(EnvConfig.from_dict(base), agent_env, "env")
