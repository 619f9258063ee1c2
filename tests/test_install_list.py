"""Every top-level module and every package folder of the repository is installed (CMakeLists.txt's lists)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_top_level_module_and_package_is_in_the_install_lists():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    files = set(re.search(r"install\(FILES ([^)]*) DESTINATION ecngym\)", cmake).group(1).split())
    packages = set(re.search(r"foreach\(subpackage ([^)]*)\)", cmake).group(1).split())
    modules = {p.name for p in ROOT.glob("*.py")}
    assert modules - files == set(), "top-level modules missing from CMakeLists.txt's install(FILES ...)"
    folders = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "notebooks", "docs"}
    assert folders - packages == set(), "packages missing from CMakeLists.txt's foreach(subpackage ...)"
