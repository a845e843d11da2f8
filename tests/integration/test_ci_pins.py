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


def _readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"full test suite.*?```bash\n(.*?)\n```", readme, re.S)
    assert block, "README.md lost its test command"
    return block.group(1).strip()


def test_ci_runs_the_readme_command_pinned_in_a_virtualenv_of_its_own() -> None:
    command = _readme_test_command()
    words = shlex.split(command.split("&&")[0])
    assert words[:2] == ["pip", "install"], command
    assert "-c" in words and words[words.index("-c") + 1] == "constraints.txt", command
    script = (ROOT / ".ci" / "run").read_text()
    lines = [line.strip() for line in script.splitlines() if not line.lstrip().startswith("#")]
    runs = [n for n, line in enumerate(lines) if line.startswith(command)]
    assert runs, f".ci/run does not run the README's test command {command!r}"
    activated = [
        n for n, line in enumerate(lines) if line.startswith('source "$venv/bin/activate"')
    ]
    assert activated and activated[0] < runs[0], "the command must run in .ci/run's own venv"
    assert "python3 -m venv" in script  # never the system's pip (Debian: externally managed)


def test_nox_builds_the_distributions_under_the_pinned_build_backend() -> None:
    noxfile = (ROOT / "noxfile.py").read_text()
    assert 'os.environ.setdefault("UV_BUILD_CONSTRAINT", CONSTRAINTS[1])' in noxfile
