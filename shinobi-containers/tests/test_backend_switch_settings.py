"""A container backend's switches read as the global keys read
theirs, and a refusal names the file or variable that set the value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from live_engines import OCI_ENGINES, live_backend

from shinobi.config import load_config
from shinobi.errors import ConfigError
from shinobi_containers.errors import SettingsInvalid
from shinobi_containers.settings import ContainerSettings

NINJA = str(Path(sys.executable).parent / "ninja")
SWITCHES = ("run_as_host_user", "pin_image", "init")
HI = """\
import shinobi

@shinobi.pystep
def hi(x: int = 1) -> int:
    return x
"""


@pytest.mark.parametrize("key", SWITCHES)
@pytest.mark.parametrize(
    ("word", "meant"), [("0", False), ("1", True), ("yes", True), ("off", False), ("True", True)]
)
def test_a_switch_reads_a_word_as_the_global_key_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, word: str, meant: bool
) -> None:
    """``SHINOBI_BACKEND_RUN_AS_HOST_USER=0`` was false; the docker table's was refused."""
    monkeypatch.setenv("SHINOBI_CONFIG", os.devnull)
    variable = f"SHINOBI_BACKEND_DOCKER_{key.upper()}"
    config = load_config(cwd=tmp_path, environ={variable: word})
    read = ContainerSettings.from_mapping("docker", config.backend_settings("docker"))
    assert getattr(read, key) is meant
    assert (
        load_config(
            cwd=tmp_path, environ={"SHINOBI_BACKEND_RUN_AS_HOST_USER": word}
        ).backend.run_as_host_user
        is meant
    )


def test_a_bad_switch_is_a_configuration_error_naming_the_key() -> None:
    with pytest.raises(SettingsInvalid) as info:
        ContainerSettings.from_mapping("podman", {"init": "perhaps"})
    assert isinstance(info.value, ConfigError)  # so the CLI says where it was set
    assert str(info.value).startswith("backend.podman.init must be true or false")


def _ninja(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "SHINOBI_CONFIG": os.devnull, **env}
    environ["SHINOBI_CACHE_ENABLED"] = "false"
    return subprocess.run(
        [NINJA, *args], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_a_refused_value_names_the_variable_and_a_word_is_accepted(
    tmp_path: Path, engine: str
) -> None:
    """The refusal said only "fix it in your configuration", of several layers."""
    live_backend(engine)
    (tmp_path / "hi.py").write_text(HI)
    variable = f"SHINOBI_BACKEND_{engine.upper()}_INIT"
    refused = _ninja(tmp_path, "run", "hi.py:hi", "-b", engine, **{variable: "perhaps"})
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1
    assert f"(init is set in environment variable {variable})" in refused.stderr
    done = _ninja(tmp_path, "run", "hi.py:hi", "-b", engine, **{variable: "yes"})
    assert done.returncode == 0, done.stderr


def test_doctor_flags_a_value_its_backend_would_refuse(tmp_path: Path) -> None:
    """doctor listed every backend as ok and exited 0; the next run was refused."""
    (tmp_path / "shinobi.toml").write_text('[backend.podman]\npin_image = "sometimes"\n')
    found = _ninja(tmp_path, "doctor", "--json")
    assert found.returncode == 2, found.stderr
    report = json.loads(found.stdout)
    (problem,) = [p for p in report["config"]["problems"] if "podman" in p]
    assert problem.startswith("backend.podman.pin_image must be true or false")
    assert problem.endswith(f"(pin_image is set in project file {tmp_path / 'shinobi.toml'})")
    (row,) = [r for r in report["backends"] if r["name"] == "podman"]
    assert row["usable"] is False and "project file" in str(row["detail"])
