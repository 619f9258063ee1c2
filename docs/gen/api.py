"""Generate the Python API reference (``reference/api/<subpackage>.md``) from the docstrings.

Run by mkdocs-gen-files at build time (``mkdocs.yml``'s ``gen-files.scripts``). Each page holds one
mkdocstrings directive (``::: ecngym.<subpackage>``) with its submodules.

Where griffe finds the code: the repository root *is* the ``ecngym`` package (there is no
``ecngym/`` folder in it to point mkdocstrings' ``paths`` at), so the reference is read from the
package ``make install`` installed into the docs build's Python (``.venv``), found on ``sys.path``.
The pages therefore document the installed copy: reinstall before building after a change (``make
docs`` does, as its ``install`` prerequisite). A symlink farm pointing at the source would also pull
``build/``, ``tests/`` and ``.venv/`` under the package's name.
"""

from __future__ import annotations

import importlib
import pkgutil

import mkdocs_gen_files

#: the public subpackages, each on one page, in the order of the site's navigation
SUBPACKAGES = {
    "envs": "Environments",
    "baselines": "Baselines (non-learning controllers)",
    "agents": "Agents (learning controllers)",
    "sim_backend": "Fabric (sim_backend)",
    "workloads": "Workloads and traces",
    "results": "Results store and leaderboard",
    "reproduce": "Reproductions",
}


def submodules(package: str) -> list[str]:
    """The importable submodules of ``ecngym.<package>`` (not the compiled ``_fabric``), sorted."""
    pkg = importlib.import_module(f"ecngym.{package}")
    return sorted(f"ecngym.{package}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)
                  if not m.name.startswith("_"))


for name, title in SUBPACKAGES.items():
    with mkdocs_gen_files.open(f"reference/api/{name}.md", "w") as page:
        page.write(f"# {title}: `ecngym.{name}`\n\n")
        page.write(f"::: ecngym.{name}\n    options:\n      show_submodules: false\n      members: false\n\n")
        for module in submodules(name):
            page.write(f"::: {module}\n    options:\n      heading_level: 2\n\n")

with mkdocs_gen_files.open("reference/api/index.md", "w") as page:
    page.write("# Python API\n\nGenerated from the docstrings of the installed package, one page per subpackage:\n\n")
    for name, title in SUBPACKAGES.items():
        page.write(f"- [{title}]({name}.md): `ecngym.{name}`\n")
