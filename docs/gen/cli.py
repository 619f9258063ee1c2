"""Generate ``reference/cli.md``: every ``ecngym`` command with its options, from the code.

Run by mkdocs-gen-files at build time. The commands and their one-line descriptions come from the
dispatcher's table (:data:`ecngym.cli._COMMANDS`). An argparse command's options are its own
``--help`` text (its parser, run in this process); a Hydra command's are its config
(``configs/<name>.yaml``, the defaults list and keys an override may set) and the options of each
config group.
"""

from __future__ import annotations

import contextlib
import io
import os
from importlib.resources import files

import mkdocs_gen_files

from ecngym import cli

CONFIGS = files("ecngym.configs")
os.environ["COLUMNS"] = "110"  # argparse wraps its help to the terminal's width: the same page everywhere


def argparse_help(words: tuple[str, ...]) -> str:
    """The ``--help`` text of an argparse command (``ecngym <words> --help``)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main([*words, "--help"])
    if code != 0:
        raise RuntimeError(f"ecngym {' '.join(words)} --help exited with {code}")
    return out.getvalue().rstrip()


def groups() -> dict[str, list[str]]:
    """Each config group (a folder of ``configs/``) and its options."""
    return {p.name: sorted(f.name.removesuffix(".yaml") for f in p.iterdir() if f.name.endswith(".yaml"))
            for p in sorted(CONFIGS.iterdir(), key=lambda p: p.name) if p.is_dir() and p.name != "__pycache__"}


with mkdocs_gen_files.open("reference/cli.md", "w") as page:
    page.write("# Command line\n\n`ecngym <command> [args]`; `ecngym <command> --help` prints the same text as "
               "below. Bad input exits with status 2 and one line naming the field; `--debug` also prints the "
               "traceback.\n\n| command | what it does |\n|---|---|\n")
    for words, (_, about) in cli._COMMANDS.items():
        anchor = "-".join(words)
        page.write(f"| [`ecngym {' '.join(words)}`](#{anchor}) | {about} |\n")
    for words, (_, about) in cli._COMMANDS.items():
        name = " ".join(words)
        page.write(f"\n## `ecngym {name}` {{ #{'-'.join(words)} }}\n\n{about}.\n\n")
        config = cli._HYDRA_CONFIGS.get(words)
        if config is None:
            page.write(f"```text\n{argparse_help(words)}\n```\n")
            continue
        text = CONFIGS.joinpath(f"{config}.yaml").read_text().rstrip()
        page.write(f"A Hydra command: its arguments are overrides of `configs/{config}.yaml` (`key=value`, "
                   f"`group=option`, `-m` for a sweep over comma-separated values; `--cfg job` prints the "
                   f"composed config). The keys an added `+key=value` may set lie under: "
                   f"{', '.join(f'`{n}`' for n in cli._OPEN_NODES[config] if n) or 'any key'}.\n\n"
                   f"```yaml title=\"configs/{config}.yaml\"\n{text}\n```\n")
    page.write("\n## Config groups\n\nThe options of each group (`group=option` on any Hydra command; each is "
               "`configs/<group>/<option>.yaml`). Controllers and agents: [controller configs](controllers.md), "
               "[agent configs](agents.md).\n\n| group | options |\n|---|---|\n")
    for group, options in groups().items():
        page.write(f"| `{group}` | {', '.join(f'`{o}`' for o in options)} |\n")
