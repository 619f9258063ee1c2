"""The structure counts of issue 35, read from a checkout's source as text (nothing of it is imported or run).

Run from any checkout, for any commit::

    python tests/structure_counts.py                 # the working tree this file is in
    python tests/structure_counts.py --repo DIR      # another checkout (e.g. a ``git worktree`` of main)

It prints:

* **largest files**: lines of the largest Python / C++ sources (tests, docs, build outputs and
  generated code left out);
* **import circles**: the strongly connected groups of the ``ecngym`` import graph, once over every
  import and once over module-level imports only (an import inside a function still ties the two
  modules: it only hides the circle from the interpreter);
* **reads of the env's scenario outside envs/**: lines reaching ``env.unwrapped.scenario`` past
  :class:`~ecngym.envs.view.EnvView` (tests left out);
* **homes of a fact**: lines that state RED's default marking curve (Kmin 5 KB, Kmax 200 KB,
  Pmax 0.01) or TIMELY's alpha (its default 0.875, its range, its binding);
* **files naming a plug-in**: for each shipped AQM policy, learning agent and suite scenario, the
  source and config files (tests and docs left out) that name it (its registration, and the
  docstrings, reproductions and configs that use it);
* **files a new plug-in adds**: the files of each kind's worked example (:data:`PLUGIN_EXAMPLES`).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

#: Never counted: tests, docs, notebooks, build outputs, protoc's generated module.
EXCLUDED_PARTS = {"tests", "docs", "notebooks", "build", ".venv", "__pycache__"}
GENERATED = {"opengym/messages_pb2.py"}
SOURCE_SUFFIXES = {".py", ".cc", ".h"}
CONFIG_SUFFIXES = {".yaml", ".yml", ".txt", ".cmake"}


def tracked_files(repo: Path) -> list[Path]:
    """The files git tracks in ``repo`` (relative paths), outside :data:`EXCLUDED_PARTS`."""
    out = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True).stdout
    files = [Path(line) for line in out.splitlines() if line]
    return [f for f in files if not EXCLUDED_PARTS & set(f.parts) and str(f) not in GENERATED and (repo / f).is_file()]


def largest_files(repo: Path, files: list[Path], top: int = 12) -> list[tuple[int, str]]:
    """(lines, path) of the ``top`` largest source files."""
    sizes = [(len((repo / f).read_text(errors="replace").splitlines()), str(f))
             for f in files if f.suffix in SOURCE_SUFFIXES]
    return sorted(sizes, reverse=True)[:top]


def module_name(path: Path) -> str:
    """``agents/acc.py`` -> ``ecngym.agents.acc``; ``agents/__init__.py`` -> ``ecngym.agents``."""
    parts = ["ecngym", *path.with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def compiled_modules(repo: Path) -> set[str]:
    """The extension modules CMake builds into the package (``ecngym.sim_backend._fabric``), by name.

    Read from ``CMakeLists.txt``: each ``nanobind_add_module(NAME ...)`` (or pybind11's) installed by
    ``install(TARGETS NAME LIBRARY DESTINATION ecngym/<folder>)``. They have no ``.py`` file, but
    they are modules like any other: importing one imports no module of the package but its parents.
    """
    cmake = repo / "CMakeLists.txt"
    text = cmake.read_text() if cmake.is_file() else ""
    names = set(re.findall(r"(?:nanobind|pybind11)_add_module\(\s*(\w+)", text))
    out = set()
    for target, dest in re.findall(r"install\(\s*TARGETS\s+(\w+)\s+LIBRARY\s+DESTINATION\s+([\w/]+)", text):
        if target in names:
            out.add(".".join([*dest.strip("/").split("/"), target]))
    return out


def import_edges(repo: Path, files: list[Path]) -> list[tuple[str, str, bool]]:
    """(importer, imported, at module level) for every import of an ``ecngym`` module.

    ``from ecngym.a import b`` points at ``ecngym.a.b`` when that is a module (a ``.py`` file or a
    compiled module, :func:`compiled_modules`), else at ``ecngym.a``. A package's implicit import of
    its parents is not an edge.
    """
    sources = {module_name(f): f for f in files if f.suffix == ".py"}
    modules = set(sources) | compiled_modules(repo)
    edges = []
    for name, path in sources.items():
        tree = ast.parse((repo / path).read_text(), str(path))
        top_level = {id(n) for n in tree.body}
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            at_top = id(node) in top_level or _under_type_checking(tree, node)
            for target in targets:
                while target and target not in modules:  # ``import ecngym.a.b.func``-like names
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.append((name, target, at_top and not _under_type_checking(tree, node)))
    return edges


def _under_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    """Whether ``node`` sits in a module-level ``if TYPE_CHECKING:`` block (no import at run time)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
            if any(node is n for n in ast.walk(stmt)):
                return True
    return False


def circles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted, largest first."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups, key=lambda g: (-len(g), g))


def grep(repo: Path, files: list[Path], pattern: str, suffixes: set[str], skip: tuple[str, ...] = ()) -> list[str]:
    """``path:line: text`` of each line matching ``pattern`` (case-insensitive) in files of ``suffixes``."""
    regex = re.compile(pattern, re.IGNORECASE)
    hits = []
    for f in files:
        if f.suffix not in suffixes or str(f).startswith(skip):
            continue
        for i, line in enumerate((repo / f).read_text(errors="replace").splitlines(), 1):
            if regex.search(line):
                hits.append(f"{f}:{i}: {line.strip()[:110]}")
    return hits


#: Lines that state a fact (its value beside its name, its range check, its binding), per fact.
FACT_PATTERNS = {
    "RED default Kmin (5 KB)": r"(kmin|minth)\w*\W{1,6}(\w+\W{1,3})?\"?(5000|5 ?KB|5e3)\b",
    "RED default Kmax (200 KB)": r"(kmax|maxth)\w*\W{1,6}(\w+\W{1,3})?\"?(200000|200 ?KB|2e5)\b",
    "RED default Pmax (0.01)": r"(pmax|maxp)\w*\W{1,6}(\w+\W{1,3})?0\.01\b",
    "TIMELY alpha (0.875, its range, its binding)":
        r"alpha\w*\W{1,6}(\w+\W{1,3})?0\.875\b|timely\.alpha|TimelyConfig::alpha|\"alpha\", &timely|\"TimelyAlpha\"",
}


def plugin_files(repo: Path, files: list[Path], names: dict[str, str]) -> dict[str, list[str]]:
    """Each plug-in's files: those named after it, and those that name it as code names things.

    A file counts when its name holds the plug-in's name, or it holds the name as a string literal
    (``"codel"``: a registry key, a dispatch branch), as a YAML value (``policy: codel``,
    ``- codel``, ``[codel, red]``) or, when given, the C++ class (``CodelAqmPolicy``).

    Args:
        repo: The checkout.
        files: Its files (:func:`tracked_files`).
        names: Short name -> C++ class name (``""``: none).
    """
    texts = {f: (repo / f).read_text(errors="replace") for f in files
             if f.suffix in SOURCE_SUFFIXES | CONFIG_SUFFIXES}
    out = {}
    for name, cpp_class in names.items():
        literal = re.compile(r"[\"']" + re.escape(name) + r"[\"']")
        yaml_value = re.compile(r"(:|^\s*-|[\[,])\s*" + re.escape(name) + r"\s*(#|$|[,\]])", re.MULTILINE)
        spelled = {name, name.replace("_", "-")}
        found = []
        for f, text in texts.items():
            own = any(re.search(rf"(^|[-_]){re.escape(part)}($|[-_])", f.stem) for part in spelled)
            said = literal.search(text) or (f.suffix in CONFIG_SUFFIXES and yaml_value.search(text))
            if own or said or (cpp_class and re.search(rf"\b{cpp_class}\b", text)):
                found.append(str(f))
        out[name] = sorted(found)
    return out


def policy_classes(repo: Path) -> dict[str, str]:
    """Each shipped AQM policy's short name (as ``set_aqm`` takes it) -> its C++ class, from the headers."""
    out = {}
    for header in sorted((repo / "sim_backend" / "model").glob("*-aqm-policy.h")):
        if header.stem.startswith("port-"):
            continue  # the interface every policy implements
        words = header.stem.removesuffix("-policy").split("-")
        cpp_class = "".join(w.capitalize() for w in words) + "Policy"
        short = "_".join(words[:-1]) if len(words) > 2 else words[0] if words[0] != "r" else "r_aqm"
        out[{"pred_fcs": "pred"}.get(short, short)] = cpp_class
    return out


#: The worked example of each kind of plug-in: a folder holding exactly the files it adds (run by
#: ``tests/test_plugin_examples.py``), or a tutorial (a C++ policy needs a build).
PLUGIN_EXAMPLES = {"learning agent": "tests/plugin_examples/agent", "scenario": "tests/plugin_examples/scenario",
                   "AQM policy": "docs/tutorials/new-aqm-policy.md"}


def example_files(repo: Path, example: str) -> list[str]:
    """The files a worked example adds or edits.

    A folder: its source and config files. A tutorial: the files its code blocks write
    (``title="path"``) and the checkout's files its "Build it in" section names (``CMakeLists.txt``,
    ``sim_backend/aqm.py``): the files of a new one, whatever the tutorial's prose says.
    """
    path = repo / example
    if path.is_dir():
        return sorted(str(f.relative_to(repo)) for f in path.rglob("*")
                      if f.suffix in SOURCE_SUFFIXES | CONFIG_SUFFIXES and "__pycache__" not in f.parts)
    if not path.is_file():
        return []
    text = path.read_text()
    written = re.findall(r'^```\w+ title="([^"]+)"', text, re.MULTILINE)
    build = re.search(r"^## \d+\. Build it in.*?(?=^## )", text, re.MULTILINE | re.DOTALL)
    edited = {m for m in re.findall(r"`([\w./-]+\.(?:py|txt|cc|h|yaml))", build.group(0) if build else "")
              if (repo / m).is_file()}
    return [*written, *sorted(edited - set(written))]


def main(argv: list[str] | None = None) -> int:
    """Print every count for the checkout ``--repo`` (default: the one this file is in)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--verbose", action="store_true", help="list every matching line and file")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    files = tracked_files(repo)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    print(f"# structure counts of {repo} (HEAD {head}, plus uncommitted changes)\n")

    print("## largest source files (lines)")
    for lines, path in largest_files(repo, files):
        print(f"{lines:6d}  {path}")

    edges = import_edges(repo, files)
    for label, chosen in (("every import", [(a, b) for a, b, _ in edges]),
                          ("module-level imports only", [(a, b) for a, b, top in edges if top])):
        groups = circles(chosen)
        print(f"\n## import circles, {label}: {len(groups)}")
        for group in groups:
            print(f"  {len(group)} modules: {', '.join(group)}")

    reads = grep(repo, files, r"unwrapped\.scenario\b|\bscenario\s*=\s*\w+\.unwrapped\.scenario", {".py"},
                 skip=("envs/",))
    print(f"\n## reads of env.unwrapped.scenario outside envs/: {len(reads)}")
    for hit in reads:
        print(f"  {hit}")

    print("\n## homes of a fact (lines in source and config; tests and docs left out)")
    for fact, pattern in FACT_PATTERNS.items():
        hits = grep(repo, files, pattern, SOURCE_SUFFIXES | {".yaml"}, skip=("configs/suite/", "reproduce/"))
        homes = sorted({h.split(":")[0] for h in hits})
        print(f"{fact}: {len(hits)} lines in {len(homes)} files")
        for hit in hits if args.verbose else []:
            print(f"    {hit}")

    policies = policy_classes(repo)
    agents = {p.stem: "" for p in sorted((repo / "configs" / "agent").glob("*.yaml"))}
    scenarios = {p.stem: "" for p in sorted((repo / "configs" / "suite" / "scenarios").glob("*.yaml"))}
    print("\n## files naming a plug-in (source and config; tests and docs left out): what adding one touches")
    for kind, names in (("AQM policy", policies), ("learning agent", agents), ("scenario", scenarios)):
        found = plugin_files(repo, files, names)
        counts = ", ".join(f"{n} {len(fs)}" for n, fs in found.items())
        print(f"{kind}: {counts}")
        for name, fs in found.items() if args.verbose else ():
            print(f"    {name}: {' '.join(fs)}")

    print("\n## files a new plug-in adds or edits, from its worked example")
    for kind, example in PLUGIN_EXAMPLES.items():
        fs = example_files(repo, example)
        print(f"{kind}: {len(fs)} ({example}: {', '.join(Path(f).name for f in fs) or 'no such example'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
