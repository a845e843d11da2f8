"""A plugin built for another shinobi-core says so, naming both versions.

The fake distributions are dist-info folders in a directory put first on
``sys.path`` of a fresh interpreter, as ``pip install --no-deps`` of a plugin
made for another core would leave them.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from fake_plugins import BACKEND, DEMO, install, ninja

from shinobi.backends.registry import core_mismatch

CORE = version("shinobi-core")


def _plugin(site: Path, dist: str, requires: list[str], module: str) -> None:
    entry_points = f"[shinobi.backends]\n{dist} = {dist}_mod:Backend\n"
    install(site, dist, entry_points, {f"{dist}_mod.py": module}, tuple(requires))


def test_backends_flags_a_plugin_that_loads_but_wants_another_core(tmp_path: Path) -> None:
    _plugin(tmp_path, "acme_future", ["shinobi-core>=99.0", "click"], BACKEND)
    proc = ninja(tmp_path, "backends", "--no-check")
    row = next(line for line in proc.stdout.splitlines() if "acme_future" in line)
    assert "built for another shinobi-core" in row, row
    assert f"needs shinobi-core>=99.0 but shinobi-core {CORE} is installed" in row, row


def test_a_plugin_that_fails_to_load_against_this_core_names_the_versions(
    tmp_path: Path,
) -> None:
    broken = "from shinobi.backends.base import BackendOfTheFuture\n"
    _plugin(tmp_path, "acme_next", [f"shinobi-core<{CORE}"], broken)
    target = str(tmp_path / "made.ms")
    proc = ninja(tmp_path, "run", f"{DEMO}:pipe", "--target", target, "--backend", "acme_next")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "the backend 'acme_next' is installed but failed to load (ImportError" in lines[0]
    assert f"acme_next needs shinobi-core<{CORE} but shinobi-core {CORE} is installed" in lines[0]


def test_matching_or_conditional_requirements_are_no_mismatch(tmp_path: Path) -> None:
    requires = [
        f"shinobi-core>={CORE}",
        'shinobi-core>=99 ; python_version < "3"',  # not for this interpreter
        'shinobi-core>=99 ; extra == "future"',  # only with an extra nobody asked for
    ]
    _plugin(tmp_path, "acme_fits", requires, BACKEND)
    code = (
        f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
        "from shinobi.backends.registry import core_mismatch\n"
        "print(repr(core_mismatch('acme_fits')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "None", proc.stderr


def test_the_installed_plugins_match_this_core() -> None:
    assert core_mismatch("shinobi-core") is None
    assert core_mismatch("no-such-distribution") is None


def _mismatch(site: Path, dist: str) -> str:
    """``core_mismatch(dist)`` in a fresh interpreter that finds what ``site`` holds."""
    code = (
        f"import sys\nsys.path.insert(0, {str(site)!r})\n"
        "from shinobi.backends.registry import core_mismatch\n"
        f"print(core_mismatch({dist!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return proc.stdout.strip()


def test_a_third_party_plugin_is_not_sent_to_a_shinobi_checkout(tmp_path: Path) -> None:
    """It was told to `pip install ./shinobi-core ./acme_future` "from one shinobi
    checkout", which holds no acme_future."""
    _plugin(tmp_path, "acme_future", ["shinobi-core>=99.0"], BACKEND)
    said = _mismatch(tmp_path, "acme_future")
    assert said.endswith(
        "; install a shinobi-core acme_future accepts (shinobi-core>=99.0), or a release of"
        f" acme_future made for shinobi-core {CORE}"
    ), said
    assert "checkout" not in said


def test_one_of_ours_is_still_sent_to_one_checkout(tmp_path: Path) -> None:
    install(  # the dist-info folder's spelling: a wheel's
        tmp_path,
        "shinobi_k8s",
        "[shinobi.backends]\nkubernetes = acme_k8s:Backend\n",
        {"acme_k8s.py": BACKEND},
        ("shinobi-core>=99.0",),
    )
    said = _mismatch(tmp_path, "shinobi-k8s")
    assert (
        "install both from one shinobi checkout (pip install ./shinobi-core ./shinobi-k8s)" in said
    )


def test_a_plugin_that_cannot_import_a_name_of_shinobis_was_made_for_another_core(
    tmp_path: Path,
) -> None:
    # Two checkouts carry one version number: the requirement is met, and
    # "reinstall it" (what ninja said) changed nothing.
    broken = "from shinobi.failures import a_name_of_a_newer_core\n"
    _plugin(tmp_path, "acme_skew", [f"shinobi-core>={CORE}"], broken)
    proc = ninja(tmp_path, "backends", "--no-check")
    row = next(line for line in proc.stdout.splitlines() if "acme_skew" in line)
    assert (
        f"acme_skew was made for another shinobi-core: install a release of it made for {CORE}"
        in row
    )
    assert "reinstall" not in row


def test_one_of_ours_made_for_another_core_is_to_be_installed_from_one_checkout() -> None:
    from shinobi.backends.registry import _load_fix

    said = "ImportError: cannot import name 'cut_line' from 'shinobi.failures' (/x/failures.py)"
    assert _load_fix("shinobi-slurm", said) == (
        f"shinobi-slurm and the installed shinobi-core {CORE} come from different checkouts:"
        " install both from one (pip install ./shinobi-core ./shinobi-slurm)"
    )
    assert _load_fix("shinobi-slurm", "ImportError: libfoo.so: no such file") == (
        "reinstall shinobi-slurm with its dependencies"
    )


def test_a_fault_of_a_plugin_made_for_another_core_says_so(tmp_path: Path) -> None:
    _plugin(tmp_path, "acme_later", ["shinobi-core>=99.0"], BACKEND)
    target = str(tmp_path / "made.ms")
    proc = ninja(tmp_path, "run", f"{DEMO}:pipe", "--target", target, "--backend", "acme_later")
    assert proc.returncode != 0
    assert "report it to acme_later's authors (built for another shinobi-core:" in proc.stderr
    assert f"needs shinobi-core>=99.0 but shinobi-core {CORE} is installed" in proc.stderr


def test_a_plugin_whose_capabilities_are_no_capabilities_is_unusable(tmp_path: Path) -> None:
    sloppy = BACKEND + "    capabilities = None\n"
    _plugin(tmp_path, "acme_caps", [], sloppy)
    target = str(tmp_path / "made.ms")
    proc = ninja(tmp_path, "run", f"{DEMO}:pipe", "--target", target, "--backend", "acme_caps")
    assert proc.returncode == 2, proc.stderr
    assert (
        "the backend 'acme_caps' is installed but unusable: its capabilities are None,"
        " not Capabilities(...); it is acme_caps's to mend"
    ) in proc.stderr
