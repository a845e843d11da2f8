"""shinobi-core's declared dependencies are exactly what its source imports.

A user installs the wheel alone: an import of an undeclared package fails on
their machine only, and a declared package nothing imports is installed for
nothing. ``shinobi.testing`` (the conformance kit for plugin authors) may use
its ``testing`` extra on top.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

CORE = Path(__file__).resolve().parents[1]
SOURCE = CORE / "src" / "shinobi"
#: Import names whose distribution is spelt differently, or comes with another.
PROVIDED_BY = {
    # pydantic pins its own pydantic-core exactly; declaring it too could only conflict.
    "pydantic_core": "pydantic",
}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _project() -> dict:
    with open(CORE / "pyproject.toml", "rb") as f:
        project: dict = tomllib.load(f)["project"]
    return project


def _imports(files: list[Path]) -> dict[str, str]:
    """Third-party distribution -> one file importing it (absolute imports only)."""
    found: dict[str, str] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "shinobi":
                    continue
                dist = PROVIDED_BY.get(top, top).lower().replace("_", "-")
                found.setdefault(dist, str(path.relative_to(CORE)))
    return found


def _sources(testing: bool) -> list[Path]:
    kit = SOURCE / "testing"
    return [p for p in sorted(SOURCE.rglob("*.py")) if (kit in p.parents) == testing]


def test_every_runtime_import_is_a_declared_dependency() -> None:
    declared = {_name(r) for r in _project()["dependencies"]}
    undeclared = {d: f for d, f in _imports(_sources(testing=False)).items() if d not in declared}
    assert undeclared == {}


def test_every_declared_dependency_is_imported() -> None:
    imported = set(_imports(_sources(testing=False)))
    unused = {_name(r) for r in _project()["dependencies"]} - imported
    assert unused == set(), f"declared in shinobi-core/pyproject.toml, imported nowhere: {unused}"


def test_the_conformance_kit_declares_what_it_imports_as_the_testing_extra() -> None:
    """A plugin author's `pip install shinobi-core[testing]` gets what shinobi.testing needs."""
    project = _project()
    declared = {_name(r) for r in project["dependencies"]}
    declared |= {_name(r) for r in project.get("optional-dependencies", {}).get("testing", [])}
    undeclared = {d: f for d, f in _imports(_sources(testing=True)).items() if d not in declared}
    assert undeclared == {}
