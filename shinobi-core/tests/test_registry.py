"""Loading plugins through stevedore, and how a broken or doubly-installed one is reported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _dist(site: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    for name, text in modules.items():
        (site / name).write_text(text)


def _python(code: str, site: Path | None = None) -> str:
    prelude = "import sys\n" + (f"sys.path.insert(0, {str(site)!r})\n" if site else "")
    proc = subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_core_backends_load_without_a_plugin_scan() -> None:
    out = _python(
        "from shinobi.backends.registry import BACKENDS, load_plugin\n"
        "cls = load_plugin(BACKENDS, 'native')\n"
        "print(cls.__module__, cls.__name__, 'stevedore' in sys.modules)\n"
    )
    assert out.split() == ["shinobi.backends.native", "NativeBackend", "False"]


def test_the_core_shortcut_names_exactly_what_core_registers() -> None:
    from importlib.metadata import entry_points

    from shinobi.backends.registry import BACKENDS, CORE_ENTRY_POINTS

    registered = {
        (BACKENDS, ep.name): ep.value
        for ep in entry_points(group=BACKENDS)
        if ep.dist is not None and ep.dist.name == "shinobi-core"
    }
    assert registered == dict(CORE_ENTRY_POINTS)


def test_a_plugin_is_loaded_through_stevedore(tmp_path: Path) -> None:
    _dist(
        tmp_path,
        "shinobi_extra",
        "[shinobi.backends]\nextra = shinobi_extra_mod:Backend\n",
        {"shinobi_extra_mod.py": "class Backend:\n    pass\n"},
    )
    out = _python(
        "from shinobi.backends.registry import BACKENDS, load_plugin\n"
        "cls = load_plugin(BACKENDS, 'extra')\n"
        "print(cls.__module__, cls.__name__, 'stevedore' in sys.modules)\n",
        tmp_path,
    )
    assert out.split() == ["shinobi_extra_mod", "Backend", "True"]


_FAILS = """
from shinobi.backends.registry import BACKENDS, load_plugin
from shinobi.errors import BackendNotFound
try:
    load_plugin(BACKENDS, {name!r})
except BackendNotFound as exc:
    print(exc)
"""


def test_a_plugin_that_fails_to_import_is_reported_as_installed_but_broken(
    tmp_path: Path,
) -> None:
    _dist(
        tmp_path,
        "shinobi_broken",
        "[shinobi.backends]\nbroken = shinobi_broken_mod:Backend\n",
        {"shinobi_broken_mod.py": "import shinobi_missing_dependency\n"},
    )
    out = _python(_FAILS.format(name="broken"), tmp_path)
    assert "the backend 'broken' is installed but failed to load" in out
    assert "ModuleNotFoundError: No module named 'shinobi_missing_dependency'" in out


def test_a_name_installed_twice_is_reported_by_stevedore(tmp_path: Path) -> None:
    for dist, module in (("shinobi_twice_a", "twice_a"), ("shinobi_twice_b", "twice_b")):
        _dist(
            tmp_path,
            dist,
            f"[shinobi.backends]\ntwice = {module}:Backend\n",
            {f"{module}.py": "class Backend:\n    pass\n"},
        )
    out = _python(_FAILS.format(name="twice"), tmp_path)
    assert "the backend 'twice' is installed but failed to load (MultipleMatches" in out


def test_a_recipe_directory_whose_name_is_not_utf8_does_not_break_plugins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """stevedore hashes sys.path as UTF-8: a recipe in /data/lat\\xe9 put an entry there
    that made every plugin "fail to load", with advice to reinstall it."""
    from shinobi.backends import registry

    undecodable = os.fsdecode(b"/tmp/lat\xe9")
    monkeypatch.setattr(sys, "path", [*sys.path, undecodable])
    assert registry._load_error(registry.BACKENDS, "native") is None
    assert sys.path[-1] == undecodable  # put back as it was


def test_a_third_party_backends_table_is_reached_by_its_variables(tmp_path: Path) -> None:
    """SHINOBI_BACKEND_NICE_LEVEL was refused ("did you mean
    SHINOBI_BACKEND_NICE_LEVEL?") for every run: only shinobi's own backends'
    names were split off a variable, though the docs promise the form to any."""
    _dist(
        tmp_path,
        "shinobi_nice",
        "[shinobi.backends]\nnice = shinobi_nice_mod:Backend\nmy_nice = shinobi_nice_mod:B\n",
        {"shinobi_nice_mod.py": "class Backend:\n    pass\nclass B:\n    pass\n"},
    )
    code = (
        "import os\n"
        "os.environ.update(SHINOBI_BACKEND_NICE_LEVEL='3', SHINOBI_BACKEND_MY_NICE_LEVEL='5',"
        " SHINOBI_CONFIG=os.devnull)\n"
        "from shinobi.config import load_config\n"
        "config = load_config()\n"
        "print(config.backend_settings('nice')['level'], config.backend_settings('my_nice')['level'])\n"
    )
    assert _python(code, tmp_path).split() == ["3", "5"]
