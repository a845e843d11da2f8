"""What a pystep in a venv is told when the venv's own packages are in the way.

* The venv's own ``typing_extensions``, too old for the pydantic ninja lends it
  (no ``Sentinel``), was worded as a Python version problem ("use an
  interpreter of the same Python version"), though the versions matched.
* The venv's own ``pydantic_core`` of another version than the lent pydantic's
  made pydantic raise SystemError, reported as the pystep's module failing to
  import, with a traceback through the lent files and no fix; it is named, with
  the command that installs ninja's version there.
* The pydantic 1 refusal said ``pip install`` to a venv with no pip (what
  ``uv venv`` makes); it now picks the command as a missing tool's does.
* For a venv without pip the command was uv's even where uv is not on PATH;
  there it is now the venv's own ensurepip, then its pip.

The venvs are stand-ins: ``python -m venv --without-pip`` with a package of
the right name and version written into its site-packages (no package index).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.loaders import load_target
from shinobi.runner import run_recipe
from shinobi.steps.result import StepResult


def _venv(tmp_path: Path, name: str, package: str, source: str, version: str) -> Path:
    """A pipless venv of this Python whose site-packages holds ``package`` (a module)."""
    venv = tmp_path / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    if package in ("pydantic", "shinobi"):
        (site / package).mkdir()
        (site / package / "__init__.py").write_text(source)
    else:
        (site / f"{package}.py").write_text(source)
    meta = site / f"{package}-{version}.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    return venv


def _run(tmp_path: Path, venv: Path, body: str) -> StepResult:
    source = tmp_path / "steps.py"
    source.write_text(
        textwrap.dedent(
            f"""
            import shinobi

            @shinobi.pystep(venv={str(venv)!r})
            def f(n: int = 1) -> int:
                {body}
            """
        )
    )
    config = load_config({"cache.enabled": False})
    return run_recipe(load_target(f"{source}:f"), cwd=tmp_path, config=config).steps[0]


def test_an_old_typing_extensions_of_the_venv_s_own_is_named_with_its_upgrade(
    tmp_path: Path,
) -> None:
    venv = _venv(tmp_path, "te", "typing_extensions", "# too old: no Sentinel\n", "4.1.1")
    step = _run(tmp_path, venv, "return n")
    assert step.status == "failed" and step.returncode is not None
    error = step.error or ""
    assert "has its own typing_extensions 4.1.1" in error, error
    assert f"uv pip install --python {venv}/bin/python --upgrade typing_extensions" in error
    assert "same Python version" not in error


def test_the_pydantic_1_refusal_names_uv_for_a_venv_without_pip(tmp_path: Path) -> None:
    venv = _venv(tmp_path, "p1", "pydantic", 'VERSION = "1.10.27"\n', "1.10.27")
    step = _run(tmp_path, venv, "return n")
    error = step.error or ""
    assert "has pydantic 1.10.27" in error, error
    assert f"upgrade it there (uv pip install --python {venv}/bin/python 'pydantic>=2')" in error


def test_the_pydantic_1_refusal_names_the_venv_s_pip_where_it_has_one(tmp_path: Path) -> None:
    venv = _venv(tmp_path, "p1pip", "pydantic", 'VERSION = "1.10.27"\n', "1.10.27")
    pip = venv / "bin" / "pip"
    pip.write_text("#!/bin/sh\nexit 1\n")
    pip.chmod(0o755)
    step = _run(tmp_path, venv, "return n")
    assert f"upgrade it there ({pip} install 'pydantic>=2')" in (step.error or "")


def test_a_venv_s_own_pydantic_core_of_another_version_is_named_with_ninja_s_pin(
    tmp_path: Path,
) -> None:
    from importlib.metadata import version

    venv = _venv(tmp_path, "core", "pydantic_core", '__version__ = "2.14.6"\n', "2.14.6")
    step = _run(tmp_path, venv, "return n")
    assert step.status == "failed" and step.returncode is not None
    (site,) = venv.glob("lib/python*/site-packages")
    assert (step.error or "").startswith(
        f"the Python step could not start: {venv}/bin/python3 has its own pydantic_core"
        f" 2.14.6 (in {site}), which the pydantic ninja lends it refuses"
    ), step.error
    pin = f"uv pip install --python {venv}/bin/python 'pydantic_core=={version('pydantic_core')}'"
    assert f"install ninja's there ({pin})" in (step.error or "")
    assert "Traceback" not in step.stderr and "importing" not in (step.error or "")


def test_a_venv_without_pip_on_a_host_without_uv_is_offered_ensurepip_then_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = _venv(tmp_path, "p1nouv", "pydantic", 'VERSION = "1.10.27"\n', "1.10.27")
    monkeypatch.setenv("PATH", str(tmp_path / "no-uv-here"))
    step = _run(tmp_path, venv, "return n")
    python = f"{venv}/bin/python"
    offered = f"{python} -m ensurepip && {python} -m pip install"
    assert f"upgrade it there ({offered} 'pydantic>=2')" in (step.error or ""), step.error
    assert "uv pip" not in (step.error or "")
    # and it works there: pip is installed, then runs (offline: ensurepip's own wheel)
    done = subprocess.run(
        f"{offered} --help", shell=True, capture_output=True, text=True, env={"PATH": "/bin"}
    )
    assert done.returncode == 0, done.stderr
    assert list(venv.glob("lib/python*/site-packages/pip/__main__.py"))


def test_a_venv_s_own_older_shinobi_is_named_not_the_pystep_s_module(tmp_path: Path) -> None:
    # The docs tell users to install shinobi-core into such a venv; an older one
    # failed every pystep as "importing the pystep's module raised ImportError".
    import shinobi

    venv = _venv(tmp_path, "old", "shinobi", '__version__ = "0.1.0"\n', "0.1.0")
    step = _run(tmp_path, venv, "return n")
    assert step.status == "failed"
    (site,) = venv.glob("lib/python*/site-packages")
    ninjas = Path(shinobi.__file__).resolve().parent
    assert (step.error or "").startswith(
        f"the Python step could not start: {venv}/bin/python3 imports a shinobi of its own"
        f" ({site / 'shinobi'}), not the one running ninja ({ninjas}), and it lacks what"
        " ninja needs (No module named 'shinobi.recipe_modules'); install the same"
        " shinobi-core into that environment as ninja's, or uninstall its own"
    ), step.error
    assert "Traceback" not in step.stderr and "importing" not in (step.error or "")


def test_an_old_typing_extensions_beside_the_venv_s_own_shinobi_is_a_setup_failure(
    tmp_path: Path,
) -> None:
    """A venv with shinobi and pydantic of its own is lent nothing; the search for
    the lent package its own one shadows must not then run, or the refusal is a
    TypeError in ninja's runner ("the pystep raised TypeError") instead."""
    from shinobi.pyrunner.request import core_paths

    venv = _venv(tmp_path, "ownte", "typing_extensions", "# too old: no Sentinel\n", "4.1.1")
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "ninjas.pth").write_text("".join(f"{p}\n" for p in core_paths()))  # its own, after
    step = _run(tmp_path, venv, "return n")
    assert step.status == "failed"
    error = step.error or ""
    assert error.startswith("the Python step could not start:"), error
    assert "cannot import typing_extensions" in error and "TypeError" not in error
