"""``ninja --help`` must stay instant: no pydantic, no plugin, at import or help time."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PLUGINS = ("shinobi_containers", "shinobi_slurm", "shinobi_k8s", "shinobi_remote")


def test_help_loads_no_pydantic_and_no_plugin() -> None:
    code = (
        "import sys\n"
        "from shinobi.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "import shinobi\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {('pydantic', 'stevedore', *PLUGINS)!r}]\n"
        "print('LOADED', bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "LOADED []" in proc.stdout, proc.stdout


def test_core_imports_no_plugin_package() -> None:
    source = Path(__file__).resolve().parents[1] / "src" / "shinobi"
    offenders = []
    for path in source.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}: {n}" for n in names if n.split(".")[0] in PLUGINS]
    assert offenders == []


def test_the_lazy_command_table_says_what_each_command_says_of_itself() -> None:
    """``ninja --help`` lists commands from a table so as not to import them; the
    table must not drift from the commands' own short help."""
    import importlib

    from shinobi.cli.main import COMMANDS

    for name, (module, attribute, short) in COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert command.short_help == short, name
