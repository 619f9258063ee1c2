"""The ``ecngym`` command line.

``ecngym <command> [args]``; commands that run experiments take Hydra overrides
(``key=value``, ``-m`` for multirun) and compose their config from ``ecngym/configs``.

Commands
--------
run             the main job on a small default scenario (see README)
trace generate  generate a hashed traffic trace from Hydra overrides
trace inspect   print a trace's flows, achieved load, size percentiles and hash
eval            run one controller on one scenario and print the summary (Hydra)
train           train an SB3 algorithm (DQN / PPO) on an env (Hydra)
bench fabric    replay the HPCC reference scenarios and print speed / fidelity figures
bench env       env steps per second (1 and 2 processes), overhead share, peak RSS
reproduce       a paper's claims beside our measurements (--list names the papers)
"""

from __future__ import annotations

import importlib
import sys

from ecngym.error import EcnGymError

# command words -> ("module:function", one-line description); imported lazily: `ecngym --help` stays instant
_COMMANDS: dict[tuple[str, ...], tuple[str, str]] = {
    ("run",): ("ecngym.experiment:run_main", "the main job: one trace under several static ECN settings"),
    ("eval",): ("ecngym.experiment:eval_main", "run one controller on one scenario, print the summary"),
    ("train",): ("ecngym.experiment:train_main", "train an SB3 algorithm (DQN / PPO) on an env"),
    ("trace", "generate"): ("ecngym.workloads.cli:generate_main", "generate a hashed traffic trace"),
    ("trace", "inspect"): ("ecngym.workloads.cli:inspect_main", "flows, achieved load, sizes and hash of a trace"),
    ("bench", "fabric"): ("ecngym.sim_backend.bench:main", "fabric speed and fidelity vs the HPCC reference"),
    ("bench", "env"): ("ecngym.envs.bench:main", "env steps/s (1 and 2 processes), overhead, peak RSS"),
    ("reproduce",): ("ecngym.reproduce.cli:main", "a paper's claims beside our numbers (--list names them)"),
}


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
    for words, (target, _) in sorted(_COMMANDS.items(), key=lambda kv: -len(kv[0])):
        if tuple(args[: len(words)]) == words:
            module_name, func_name = target.split(":")
            func = getattr(importlib.import_module(module_name), func_name)
            # Hydra reads sys.argv itself: leave it exactly the command's own arguments.
            sys.argv = [f"ecngym {' '.join(words)}", *args[len(words) :]]
            try:
                result = func()
            except EcnGymError as exc:  # bad input: a clear message, no traceback
                print(f"ecngym {' '.join(words)}: error: {exc}", file=sys.stderr)
                return 2
            except SystemExit as exc:  # Hydra reports a failed job and exits
                return exc.code if isinstance(exc.code, int) else 1
            return int(result or 0)
    subcommands = [words[1] for words in _COMMANDS if len(words) == 2 and words[0] == args[0]]
    if subcommands:
        print(f"ecngym {args[0]}: needs one of: {', '.join(subcommands)}\n\n{_usage()}", file=sys.stderr)
    else:
        print(f"ecngym: unknown command {' '.join(args)!r}\n\n{_usage()}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
