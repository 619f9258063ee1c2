"""The ``ecngym`` command line.

``ecngym <command> [args]``; commands that run experiments take Hydra overrides
(``key=value``, ``-m`` for multirun) and compose their config from ``ecngym/configs``.

Bad input exits with status 2 and one line naming the field (``ecngym eval: error: fabric: no option
'dctpc' in group 'fabric'; available options: ...``); ``--debug`` (or ``HYDRA_FULL_ERROR=1``) also
prints the traceback.

Commands
--------
run             the benchmark: suite core (suite=full, suite=null env=...), then the board (Hydra)
compare         one trace under several static ECN settings on the bare fabric (Hydra)
leaderboard     rank controllers per scenario from the results store; terminal table + HTML page
trace generate  generate a hashed traffic trace from Hydra overrides
trace inspect   print a trace's flows, achieved load, size percentiles and hash
eval            run one controller on one scenario and print the summary (Hydra)
train           train an SB3 algorithm (DQN / PPO) on an env (Hydra)
bench fabric    replay the HPCC reference scenarios and print speed / fidelity figures
bench fabric-ab  this install's fabric against another's, alternating rounds: hop rates, ratios, fidelity
bench env       env steps per second (1 and 2 processes), overhead share, peak RSS
bench train     training env steps/s as a share of env-only steps/s (PPO, DQN, ACC)
bench scale     fabric cost vs size and load: fat-tree k = 4, 8, 16 at 30 % / 60 % WebSearch
bench branch    a branch of a running episode: snapshot and branch time, memory per live branch
bench tcp       our DCTCP hosts vs ns-3's own TcpDctcp: incast N = 2..128, two buffers, a dumbbell
bench tcp-bisect  the Linux-like host options one by one on the dumbbell: which moves the small-flow tail
benchmark references  a scenario's static_tuned / oracle_phase references (grid search; writes configs/suite/references)
benchmark scenarios   the suite's scenario table from the scenario files (markdown=docs/benchmarks/scenarios.md)
benchmark oracle-window  per test trace: the best per-window schedule in hindsight with state carried
benchmark headroom-map  the window oracle's headroom over a scenario family's axes (train seeds)
benchmark headroom    per scenario: S_default, S_tuned, S_oracle_phase, the adaptivity headroom with its 95% CI
benchmark board    a suite's board and page from the results store
benchmark eval     your trained checkpoint on its scenario's test seeds, on the suite board
benchmark rewards  Spearman correlation of each RL reward (acc, pred, fct) with a suite's score
reproduce       a paper's claims beside our measurements (--list names the papers)
serve-ns3gym    serve an env to an ns3-gym (OpenGym) agent over ZMQ (Hydra)
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import traceback
from typing import Any

from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError, EcnGymError

# command words -> ("module:function", one-line description); imported lazily: `ecngym --help` stays instant
_COMMANDS: dict[tuple[str, ...], tuple[str, str]] = {
    ("run",): ("ecngym.commands.run:run_main", "the benchmark: suite core (suite=...) x every untrained controller"),
    ("compare",): ("ecngym.commands.compare:compare_main", "one trace under several static ECN settings (bare fabric)"),
    ("leaderboard",): ("ecngym.results.leaderboard_cli:main",
                       "rank controllers from the results store, write the page"),
    ("eval",): ("ecngym.commands.eval:eval_main", "run one controller on one scenario, print the summary"),
    ("train",): ("ecngym.commands.train:train_main",
                  "train an agent (agent=acc|laecn|haecn) or an SB3 algorithm (DQN / PPO) on an env"),
    ("train-suite",): ("ecngym.benchmark.learner_cli:train_main",
                       "(ecngym train suite=<s> scenario=<sc> agent=<a> seed=<n>) a suite scenario's learner"),
    ("trace", "generate"): ("ecngym.workloads.cli:generate_main", "generate a hashed traffic trace"),
    ("trace", "inspect"): ("ecngym.workloads.cli:inspect_main", "flows, achieved load, sizes and hash of a trace"),
    ("bench", "fabric"): ("ecngym.perf.fabric:main", "fabric speed and fidelity vs the HPCC reference"),
    ("bench", "fabric-ab"): ("ecngym.perf.fabric_ab:main",
                             "this install's fabric against another's, alternating rounds (hop rates, ratios)"),
    ("bench", "env"): ("ecngym.perf.env:main", "env steps/s (1 and 2 processes), overhead, peak RSS"),
    ("bench", "train"): ("ecngym.perf.train:main", "training steps/s as a share of env-only steps/s"),
    ("bench", "scale"): ("ecngym.perf.scale:main", "fabric cost vs size and load (fat-tree k = 4, 8, 16)"),
    ("bench", "branch"): ("ecngym.perf.branch:main", "what a branch of a running episode costs (time, memory)"),
    ("bench", "tcp"): ("ecngym.perf.tcp:main", "our DCTCP hosts vs ns-3's TcpDctcp (incast, dumbbell)"),
    ("bench", "tcp-bisect"): ("ecngym.perf.tcp_bisect:main",
                              "the Linux-like host options one by one on the dumbbell (small-flow tail)"),
    ("benchmark", "references"): ("ecngym.benchmark.references:main",
                                  "a scenario's static_tuned and oracle_phase references (grid on its seeds)"),
    ("benchmark", "scenarios"): ("ecngym.benchmark.scenario_docs:main",
                                 "the suite's scenario table (docs/benchmarks/scenarios.md) from the YAML"),
    ("benchmark", "headroom"): ("ecngym.benchmark.headroom:main",
                                "per scenario: default, tuned, phase oracle and the adaptivity headroom with CIs"),
    ("benchmark", "oracle-window"): ("ecngym.benchmark.oracle_window_cli:main",
                                     "the window oracle per test trace (beam search on branches) vs static_tuned"),
    ("benchmark", "headroom-map"): ("ecngym.benchmark.headroom_map:main",
                                    "the window oracle's headroom over a parametric scenario family (train seeds)"),
    ("benchmark", "board"): ("ecngym.benchmark.cli:board_main", "a suite's board and page from the results store"),
    ("benchmark", "eval"): ("ecngym.benchmark.eval_cli:eval_main",
                            "your trained checkpoint on its scenario's test seeds: it joins the suite board"),
    ("benchmark", "train-learners"): ("ecngym.benchmark.learner_cli:train_all_main",
                                      "train every learner x training seed of a suite's scenarios (checkpoints)"),
    ("benchmark", "learners"): ("ecngym.benchmark.learners:main",
                                "the learner table: every training seed x test seed, held-out family, curves"),
    ("benchmark", "rewards"): ("ecngym.benchmark.cli:rewards_main",
                               "rank correlation of each RL reward with a suite's score, per scenario"),
    ("reproduce",): ("ecngym.reproduce.cli:main", "a paper's claims beside our numbers (--list names them)"),
    ("serve-ns3gym",): ("ecngym.opengym.server:serve_ns3gym_main",
                        "serve an env to an ns3-gym (OpenGym) agent: the simulation side of its protocol"),
}


# Hydra commands -> their config (configs/<name>.yaml): overrides are composed before the command runs
_HYDRA_CONFIGS: dict[tuple[str, ...], str] = {("run",): "run", ("compare",): "compare", ("eval",): "eval",
                                              ("train",): "train", ("trace", "generate"): "trace",
                                              ("serve-ns3gym",): "serve_ns3gym"}


# Config groups a command may switch off with ``<group>=null`` (``ecngym run suite=null``: one scenario).
_OPTIONAL_GROUPS = frozenset({"suite"})


# Hydra config -> the nodes whose every key ecngym validates (each node's own model refuses a key
# it does not know). A "+key=value" override may add keys there; anywhere else an added key would
# be read by nothing, so check_overrides refuses it. ("" = the whole config; config groups such as
# "+sweep=joblib" and Hydra's own "hydra." keys are always allowed.)
_OPEN_NODES: dict[str, tuple[str, ...]] = {
    "run": ("env.kwargs", "fabric", "topology", "workload", "results", "logger"),
    "eval": ("env.kwargs", "controller", "fabric", "topology", "workload", "results", "logger"),
    "train": ("env.kwargs", "agent", "hyperparams", "fabric", "topology", "workload", "results", "logger"),
    "compare": ("ecn_settings", "fabric", "topology"),
    "trace": ("",),
    "serve_ns3gym": ("env.kwargs", "fabric", "topology", "workload"),
}


def _null_group_as_deletion(arg: str) -> str:
    """``suite=null`` as Hydra's ``~suite`` (drop the group's default); any other argument as it is.

    Hydra refuses ``null`` as a config group's override (a ``ValueError`` traceback); deleting the
    default is its way to choose none.
    """
    for group in _OPTIONAL_GROUPS:
        if arg in (f"{group}=null", f"{group}=None", f"{group}=~"):
            return f"~{group}"
    return arg


def _debug() -> bool:
    """Whether errors should show their traceback (``--debug`` or ``HYDRA_FULL_ERROR=1``)."""
    return os.environ.get("HYDRA_FULL_ERROR") == "1"


def check_overrides(config_name: str, args: list[str]) -> Any:
    """Compose ``config_name`` with the Hydra overrides in ``args`` (each sweep combination with ``-m``).

    An unknown group option (``fabric=dctpc``), an unknown key or a malformed override fails here,
    before anything runs, as Hydra's own error.

    Returns:
        The first combination's config with Hydra's own node (``hydra.run.dir``), for
        :func:`check_output_folder`; ``None`` when ``args`` holds no override (nothing composed).

    Raises:
        ConfigError: Naming the group or key, with Hydra's message on one line (the available
            options of a group listed).
    """
    from hydra import compose, initialize_config_module
    from hydra.errors import HydraException, MissingConfigException
    from omegaconf.errors import OmegaConfBaseException

    combos = _override_combos(args)
    if combos == [[]]:
        return None
    first = None
    with initialize_config_module(config_module="ecngym.configs", version_base="1.3"):
        for i, combo in enumerate(combos):
            _check_group_choices(combo)
            try:
                # the same composition either way (compose only drops the hydra node at the end)
                cfg = compose(config_name, overrides=list(combo), return_hydra_config=i == 0)
            except MissingConfigException as exc:
                missing = exc.missing_cfg_file or ""
                group, _, option = missing.rpartition("/")
                message = _no_option_message(group, option, exc.options) if exc.options else _one_line(str(exc))
                raise ConfigError(group or _override_key(str(exc), combo), message) from exc
            except (HydraException, OmegaConfBaseException) as exc:
                key = _override_key(str(exc), combo)
                message = _one_line(str(exc))
                if key.startswith("env.") and not key.startswith("env.kwargs.") and "Could not override" in message:
                    # Hydra suggests "+env.<field>", which nothing reads: point at env.kwargs instead
                    message = (f"the env has no key {key[4:]!r}; its settings go under env.kwargs: "
                               f"env.kwargs.{key[4:]}=... (+env.kwargs.{key[4:]}=... for a field the "
                               f"env's config does not list; see ecngym.envs.EnvConfig)")
                elif "is not in struct" in str(exc.__cause__ or ""):
                    message = _absent_key_message(config_name, key, [o for o in combo if key_of_override(o) != key])
                raise ConfigError(key, message) from exc
            _check_added_keys(config_name, combo, cfg)
            first = cfg if first is None else first
    return first


def _no_option_message(group: str, option: str, options: list[str]) -> str:
    """The message for an option a group lacks (``no option 'dctpc' in group 'fabric'; available options: ...``)."""
    from ecngym.workloads.distributions import suggest

    hint = suggest(option, list(options))
    return f"no option {option!r} in group {group!r}; available options: {', '.join(options)}.{hint}"


@functools.cache
def _config_groups() -> dict[str, list[str]]:
    """Each config group of the installed tree and its options (read once: -m checks every combination)."""
    return {p.name: sorted(f.stem for f in p.glob("*.yaml")) for p in CONFIG_DIR.iterdir() if p.is_dir()}


def _check_group_choices(overrides: list[str]) -> None:
    """Refuse an override of one of ecngym's config groups that does not name one of its options.

    Hydra raised a ``ValueError`` traceback for ``env=null`` or ``env=5``, merged a list
    (``controller=[static_dcqcn,static_hpcc]`` ran only the last), and ignored a misspelt option
    of an optional group (``sweep=jobilb``).

    Raises:
        ConfigError: Naming the group, what was given and its options.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    groups = _config_groups()
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return  # a malformed override: composing it names it
    for override in parsed:
        group = override.key_or_group
        if group not in groups or override.package is not None or override.is_delete():
            continue
        options = groups[group]
        value = override.value()
        if isinstance(value, list):
            raise ConfigError(group, f"got the list {value}: one option per run (several: -m {group}="
                                     f"{','.join(map(str, value))}, a sweep); options: {', '.join(options)}")
        if value is None and group in _OPTIONAL_GROUPS:
            continue
        if not isinstance(value, str):
            given = "null" if value is None else repr(value)
            raise ConfigError(group, f"got {given}, expected the name of an option of the group (leave it out "
                                     f"for the command's default); options: {', '.join(options)}")
        if value not in options:
            raise ConfigError(group, _no_option_message(group, value, options))


def _override_combos(args: list[str]) -> list[list[str]]:
    """The Hydra overrides in ``args``: one list, or with ``-m`` one per sweep combination (64 at most).

    Returns:
        ``[[]]`` when ``args`` holds no override.

    Raises:
        ConfigError: Naming the override Hydra cannot parse (a sweep's syntax).
    """
    from hydra.errors import HydraException

    overrides = [a for a in args if not a.startswith("-") and ("=" in a or a.startswith("~"))]
    if not overrides or not ("-m" in args or "--multirun" in args):
        return [overrides]
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise ConfigError(_override_key(str(exc), overrides), _one_line(str(exc))) from exc
    return [c for batch in BasicSweeper.split_arguments(parsed, None) for c in batch][:64]


def check_output_folder(config_name: str, args: list[str], composed: Any = None) -> None:
    """Refuse a Hydra output folder that nothing can be written to, before Hydra makes it.

    Hydra makes ``hydra.run.dir`` (``hydra.sweep.dir`` with ``-m``) before the command runs: one
    under a file, under a missing or read-only root, or without permission was its raw
    ``FileNotFoundError`` / ``PermissionError`` traceback.

    Args:
        config_name: The command's Hydra config (``eval``).
        args: The command's arguments (its overrides; the first sweep combination with ``-m``).
        composed: That config already composed from them, Hydra's node included (what
            :func:`check_overrides` returns); ``None``: composed here.

    Raises:
        ConfigError: Naming ``hydra.run.dir`` or ``hydra.sweep.dir``, the folder and the system's
            reason (:func:`ecngym.files.check_writable_directory`).
    """
    from hydra import compose, initialize_config_module
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from ecngym.files import check_writable_directory

    key = "hydra.sweep.dir" if "-m" in args or "--multirun" in args else "hydra.run.dir"
    try:
        if composed is None:
            with initialize_config_module(config_module="ecngym.configs", version_base="1.3"):
                composed = compose(config_name, overrides=_override_combos(args)[0], return_hydra_config=True)
        folder = OmegaConf.select(composed, key)
    except (HydraException, OmegaConfBaseException):
        return  # a folder only a running Hydra resolves (${hydra:job.num}), or a bad override: Hydra names it
    check_writable_directory(key, folder, "the folder of the command's outputs")


def _check_added_keys(config_name: str, overrides: list[str], cfg: Any) -> None:
    """Refuse a ``+key=value`` override that adds a key no part of ecngym reads.

    Hydra accepts any added key; one outside the validated nodes of :data:`_OPEN_NODES` (a typo
    such as ``+episode=5``, or ``+env.episode_steps=5`` for ``env.kwargs.episode_steps``) would
    otherwise be silently ignored.

    Raises:
        ConfigError: Naming the key and where such settings go.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for override in OverridesParser.create().parse_overrides(list(overrides)):
        if not (override.is_add() or override.is_force_add()):
            continue
        key = override.key_or_group
        if key.startswith("hydra.") or _is_config_group(key):
            continue  # Hydra's own settings; a config group choice (+sweep=joblib)
        if any(node == "" or key == node or key.startswith(node + ".") for node in _OPEN_NODES[config_name]):
            continue
        if key.startswith("env.") or key == "env":
            raise ConfigError(key, f"unknown key: nothing reads it; the env's settings go under env.kwargs "
                                   f"(+env.kwargs.{key.removeprefix('env.')}=..., see ecngym.envs.EnvConfig)")
        raise ConfigError(key, f"unknown key: nothing reads it ('+' adds a key to the config); "
                               f"{_keys_beside(cfg, key)}")


def _absent_key_message(config_name: str, key: str, other_overrides: list[str]) -> str:
    """Why ``key=value`` fails when the config has no ``key``: the keys its node has, the closest one.

    Hydra's own message only suggests ``+key=value``, which outside :data:`_OPEN_NODES` adds a key
    that nothing reads (and :func:`_check_added_keys` refuses).
    """
    from hydra import compose
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    cfg = None
    choices = [o for o in other_overrides if _is_config_group(key_of_override(o))]
    for overrides in (other_overrides, choices):  # the others may hold a bad key too: then the group choices
        try:
            cfg = compose(config_name, overrides=overrides)
            break
        except (HydraException, OmegaConfBaseException):
            continue
    message = f"unknown key: {_keys_beside(cfg, key)}"
    if any(key.startswith(n + ".") for n in _OPEN_NODES[config_name] if n):
        message += f" (+{key}=... adds a key the config does not list, for the model to check)"
    return message


def _keys_beside(cfg: Any, key: str) -> str:
    """``"<parent> has [<its other keys>]. Did you mean '<closest>'?"`` for ``key`` in the composed ``cfg``."""
    from omegaconf import DictConfig, OmegaConf

    from ecngym.workloads.distributions import suggest

    parent, _, leaf = key.rpartition(".")
    node = (OmegaConf.select(cfg, parent) if parent else cfg) if cfg is not None else None
    hidden = {leaf} if parent else {leaf, "hydra"}  # Hydra's own node (check_overrides' first combination has it)
    known = sorted(str(k) for k in node if str(k) not in hidden) if isinstance(node, DictConfig) else []
    return f"{parent or 'the config'} has {known}.{suggest(leaf, known)}"


def _is_config_group(key: str) -> bool:
    """Whether ``key`` names a config group (``sweep``, ``controller``): a folder of ``ecngym.configs``."""
    from importlib.resources import files

    return files("ecngym.configs").joinpath(*key.split(".")).is_dir()


def key_of_override(override: str) -> str:
    """The key (or group) an override sets: ``+a.b@pkg=1`` -> ``a.b``."""
    return override.lstrip("~+").split("=", 1)[0].split("@", 1)[0]


def key_value_arguments(model: Any, argv: list[str], usage: str, doc: str | None = None) -> Any:
    """The ``key=value`` arguments of a command that does not compose a Hydra config, as its typed model.

    ``ecngym benchmark ...`` and ``ecngym train suite=...`` take ``key=value`` arguments of their own
    (their model's fields). A value that reads as a YAML number, boolean or null is that
    (``reps=500``, ``held_out=false``, ``out=null``); any other is the text as given
    (``scenario=a,b``, ``out=runs/x``). A field of text keeps a number-like value as text
    (``scenario=2``), and an empty value is null (``markdown=``). ``-h`` / ``--help`` prints
    ``usage`` and ``doc`` and exits.

    Args:
        model: The command's :class:`~ecngym.validation.ConfigModel` (its fields are the keys).
        argv: The command's arguments.
        usage: One line: the command and its arguments.
        doc: Printed under the usage for ``--help`` (the command's module docstring).

    Returns:
        The validated ``model``.

    Raises:
        ConfigError: Naming the argument as given if it is not ``key=value``, the key if it is
            not one of the model's fields or is given twice, or the field whose value is refused.
    """
    import yaml

    from ecngym.validation import describe_field

    if "-h" in argv or "--help" in argv:
        print(f"usage: {usage}" + (f"\n\n{doc}" if doc else ""))
        raise SystemExit(0)
    fields = model.model_fields
    values: dict[str, Any] = {}
    for arg in argv:
        key, sep, text = arg.partition("=")
        if not sep or not key:
            raise ConfigError(arg, f"expected key=value; usage: {usage}")
        if key not in fields:
            raise ConfigError(key, f"unknown argument; known: {sorted(fields)}; usage: {usage}")
        if key in values:
            raise ConfigError(key, f"given twice ({key}={values[key]!r} and {arg!r}); give it once")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = text
        if value is not None and (describe_field(fields[key]).startswith("string")
                                  or not isinstance(value, (bool, int, float))):
            value = text  # (YAML's dates, lists and mappings are not argument values: the text as given)
        values[key] = value
    return model.parse(values, "")


def _one_line(message: str) -> str:
    lines = [ln.strip() for ln in message.splitlines() if ln.strip() and "HYDRA_FULL_ERROR" not in ln]
    return "; ".join(lines)


def _override_key(message: str, overrides: list[str]) -> str:
    """The override key a Hydra message is about (the first override whose key it quotes)."""
    for o in overrides:
        key = key_of_override(o)
        if f"'{key}'" in message or f"'{o}'" in message:
            return key
    return "overrides"


def _usage() -> str:
    width = max(len(" ".join(words)) for words in _COMMANDS)
    lines = ["usage: ecngym <command> [args]    (ecngym <command> --help for its arguments)", "",
             "commands:"]
    lines += [f"  {' '.join(words):<{width}}  {about}" for words, (_, about) in _COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``argv`` (default ``sys.argv[1:]``) to a command; return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if args[0] in ("-V", "--version"):
        from ecngym import __version__

        print(f"ecngym {__version__}")
        return 0
    if args[0] == "train" and any(a.startswith("suite=") for a in args[1:]):
        # a suite scenario's learner (ecngym.benchmark.learner_cli): key=value arguments, not Hydra's
        args = ["train-suite", *args[1:]]
    for words, (target, _) in sorted(_COMMANDS.items(), key=lambda kv: -len(kv[0])):
        if tuple(args[: len(words)]) == words:
            module_name, func_name = target.split(":")
            own = args[len(words) :]
            if "--debug" in own:  # show tracebacks (Hydra's switch for the same)
                own = [a for a in own if a != "--debug"]
                os.environ["HYDRA_FULL_ERROR"] = "1"
            if words in _HYDRA_CONFIGS:
                own = [_null_group_as_deletion(a) for a in own]
            try:
                if words in _HYDRA_CONFIGS and not {"-h", "--help", "--hydra-help", "--info"} & set(own):
                    composed = check_overrides(_HYDRA_CONFIGS[words], own)
                    check_output_folder(_HYDRA_CONFIGS[words], own, composed)
                func = getattr(importlib.import_module(module_name), func_name)
                # Hydra reads sys.argv itself: leave it exactly the command's own arguments.
                sys.argv = [f"ecngym {' '.join(words)}", *own]
                result = func()
            except EcnGymError as exc:  # bad input: a clear message, no traceback
                if _debug():
                    traceback.print_exc()
                print(f"ecngym {' '.join(words)}: error: {exc}", file=sys.stderr)
                return 2
            except SystemExit as exc:  # Hydra reports a failed job and exits
                return exc.code if isinstance(exc.code, int) else 1
            return result if isinstance(result, int) else 0  # a sweep objective is no exit status
    subcommands = [words[1] for words in _COMMANDS if len(words) == 2 and words[0] == args[0]]
    if subcommands and args[1:2] in (["-h"], ["--help"]):  # `ecngym bench --help`: the group's commands
        print(f"usage: ecngym {args[0]} {{{','.join(subcommands)}}} [args]\n\n{_usage()}")
        return 0
    if subcommands:
        print(f"ecngym {args[0]}: needs one of: {', '.join(subcommands)}\n\n{_usage()}", file=sys.stderr)
    else:
        print(f"ecngym: unknown command {' '.join(args)!r}\n\n{_usage()}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
