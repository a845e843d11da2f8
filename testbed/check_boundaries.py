"""Check that every plugin uses only shinobi's public surface.

import-linter (the `boundaries` nox session) already checks that the core
imports no plugin and that plugins do not import each other. This adds what
its contracts cannot say: a plugin may import only public modules and names
of the core. A module path or imported name with a segment that starts with
"_" is private (`shinobi._paths`, `from shinobi.graph import _walk`), and so
is any module of another plugin.

    python testbed/check_boundaries.py [REPO_ROOT]

Walks shinobi-*/src/<package>/**/*.py of every distribution except
shinobi-core, prints one line per offending import and exits 1 if any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CORE = "shinobi"


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def plugin_packages(root: Path) -> dict[str, Path]:
    """Map each plugin's import package name to its source directory."""
    found: dict[str, Path] = {}
    for src in sorted(root.glob("shinobi-*/src")):
        for package in sorted(src.iterdir()):
            if package.is_dir() and package.name.isidentifier() and package.name != CORE:
                found[package.name] = package
    return found


def _private(parts: list[str]) -> str | None:
    return next((p for p in parts if p.startswith("_")), None)


def check_import(module: str, names: list[str], own: str, plugins: set[str]) -> str | None:
    """Why importing `names` from `module` breaks a boundary, or None."""
    parts = module.split(".")
    top = parts[0]
    if top in plugins and top != own:
        return f"{own} imports {module}, another plugin: plugins must not depend on each other"
    if top != CORE:
        return None
    private = _private(parts[1:])
    if private:
        return f"{own} imports {module}: {private!r} is private to shinobi; use a public module"
    private = _private(names)
    if private:
        return f"{own} imports {private} from {module}: names starting with '_' are private"
    return None


def imports(tree: ast.AST) -> Iterator[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) of every absolute import."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, [a.name for a in node.names if a.name != "*"]


def check(root: Path) -> list[Violation]:
    plugins = plugin_packages(root)
    violations: list[Violation] = []
    for own, package in plugins.items():
        for path in sorted(package.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, module, names in imports(tree):
                message = check_import(module, names, own, set(plugins))
                if message:
                    violations.append(Violation(path.relative_to(root), line, message))
    return violations


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    plugins = plugin_packages(root)
    violations = check(root)
    for violation in violations:
        print(violation)
    checked = ", ".join(plugins) or "none found"
    if violations:
        print(f"check_boundaries: {len(violations)} private or cross-plugin import(s)")
        return 1
    print(f"check_boundaries: plugins use only shinobi's public modules ({checked})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
