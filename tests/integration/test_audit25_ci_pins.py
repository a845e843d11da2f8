"""What CI installs before nox is pinned, and installs where a fresh Debian lets it.

.ci/run ran ``pip install nox uv`` without constraints.txt, with the system's
pip (Debian's refuses: externally managed), and nothing pinned hatchling, the
build backend every distribution builds with.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _pinned() -> set[str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return {line.split("==")[0].lower() for line in lines if "==" in line}


def _build_requirements() -> set[str]:
    names = set()
    for pyproject in ROOT.glob("shinobi-*/pyproject.toml"):
        with pyproject.open("rb") as f:
            for req in tomllib.load(f)["build-system"]["requires"]:
                names.add(Requirement(req).name.lower())
    return names


def test_constraints_pin_the_ci_tools_and_every_build_backend() -> None:
    missing = ({"nox", "uv"} | _build_requirements()) - _pinned()
    assert not missing, f"add to constraints.txt: {sorted(missing)}"


def test_ci_installs_nox_and_uv_pinned_into_a_virtualenv_of_its_own() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    commands = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    installs = [shlex.split(line) for line in commands if re.search(r"\bpip3?\"? install\b", line)]
    assert installs, "no pip install in .ci/run"
    for words in installs:
        assert words[0] == "$venv/bin/pip", words  # never the system's pip
        assert "-c" in words and words[words.index("-c") + 1] == "constraints.txt", words
    assert "python3 -m venv" in script and '"$venv/bin/nox"' in script


def test_nox_builds_the_distributions_under_the_pinned_build_backend() -> None:
    noxfile = (ROOT / "noxfile.py").read_text()
    assert 'os.environ.setdefault("UV_BUILD_CONSTRAINT", CONSTRAINTS[1])' in noxfile
