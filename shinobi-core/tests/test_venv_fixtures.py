"""A real virtualenv for the venv and pystep tests, made once per test session.

It is created with ``python -m venv`` and two tiny local packages are
installed into it with the venv's own pip, offline, from wheels built here:

* ``shinobi-hello`` (module ``hello_tool``): a console script that reports
  the interpreter and environment it runs under, and can touch a file;
* a decoy ``click`` (``__version__ == "venv-own"``): a name that also exists in
  the interpreter running the tests, to show whose package wins.

Without ensurepip the same files are written by hand (what pip would write).
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

__all__ = ["HELLO", "build_venv", "made_venv"]

HELLO = "shinobi-hello"

_HELLO_SOURCE = """\
import json, os, sys


def main():
    args = sys.argv[1:]
    if args[:1] == ["--touch"]:
        with open(args[1], "w") as fh:
            fh.write("made by hello_tool in " + sys.prefix)
        args = args[2:]
    print(json.dumps({
        "prefix": sys.prefix,
        "executable": sys.executable,
        "argv0": sys.argv[0],
        "virtual_env": os.environ.get("VIRTUAL_ENV"),
        "pythonpath": os.environ.get("PYTHONPATH"),
        "pythonhome": os.environ.get("PYTHONHOME"),
        "path": os.environ.get("PATH", "").split(os.pathsep),
        "marker": os.environ.get("SHINOBI_TEST_MARKER"),
        "args": args,
    }))
"""

_PACKAGES = {
    "hello_tool": ("shinobi_hello", "1.0", {"hello_tool/__init__.py": _HELLO_SOURCE}, HELLO),
    "click": ("click", "0.0.424242", {"click/__init__.py": '__version__ = "venv-own"\n'}, None),
}


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _wheel(where: Path, dist: str, version: str, files: dict[str, str], script: str | None) -> Path:
    info = f"{dist}-{version}.dist-info"
    contents = {name: text.encode() for name, text in files.items()}
    contents[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
    ).encode()
    contents[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: shinobi-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    if script:
        module = next(iter(files)).split("/")[0]
        contents[f"{info}/entry_points.txt"] = (
            f"[console_scripts]\n{script} = {module}:main\n"
        ).encode()
    record = [_record_line(n, d) for n, d in contents.items()] + [f"{info}/RECORD,,"]
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = where / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in contents.items():
            zf.writestr(name, data)
    return path


def _by_hand(venv: Path) -> None:
    """What pip would have installed, for interpreters without ensurepip."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    for _dist, _version, files, script in _PACKAGES.values():
        for name, text in files.items():
            (site / name).parent.mkdir(parents=True, exist_ok=True)
            (site / name).write_text(text)
        if script:
            module = next(iter(files)).split("/")[0]
            launcher = venv / "bin" / script
            launcher.write_text(
                f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom {module} import main\n"
                "sys.exit(main())\n"
            )
            launcher.chmod(0o755)


def build_venv(root: Path) -> Path:
    """A venv under ``root`` with the two packages installed."""
    venv = root / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True)
    if made.returncode != 0:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        _by_hand(venv)
        return venv
    wheels = [_wheel(root, *spec) for spec in _PACKAGES.values()]
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "-q",
            "--disable-pip-version-check",
            *map(str, wheels),
        ],
        check=True,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    return venv


_MADE: list[Path] = []


@pytest.fixture
def made_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's venv (built on first use)."""
    if not _MADE:
        _MADE.append(build_venv(tmp_path_factory.mktemp("venv-fixture")))
    return _MADE[0]
