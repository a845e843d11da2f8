"""@shinobi.pystep(image=...) runs its function inside the container, through the public API."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

from live_engines import image, live_backend, settings_for

from shinobi.config import AppConfig
from shinobi.runner import run_recipe

HERE = Path(__file__).resolve().parent
PYTHON_IMAGE = image("docker", "python")


def _config() -> AppConfig:
    return AppConfig.model_validate({"backend": {"docker": settings_for("docker")}})


def _load(module_dir: Path, name: str) -> object:
    os.environ["SHINOBI_TEST_PYTHON_IMAGE"] = PYTHON_IMAGE
    sys.path.insert(0, str(module_dir))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(module_dir))


def _assert_ran_inside(result: object) -> None:
    outputs = result.outputs["result"]  # type: ignore[attr-defined]
    assert outputs["greeting"] == "HI"
    assert outputs["dockerenv"] == "True", "the function ran on the host, not in the container"
    with open("/proc/1/cmdline", "rb") as fh:
        host_init = fh.read().split(b"\0")[0].decode()
    assert outputs["init"] != host_init, "pid 1 is the host's: not in a container"


def _on_docker(step: object, inputs: dict[str, str], cwd: Path) -> Any:
    """``step`` run on docker from ``cwd``, with nothing cached; asserted to succeed."""
    live_backend("docker")
    result = run_recipe(step, inputs, backend="docker", config=_config(), cwd=cwd, use_cache=False)
    assert result.ok, result.error
    return result


def test_a_pystep_with_an_image_runs_inside_the_container(tmp_path: Path) -> None:
    module = _load(HERE, "pystep_probe")
    _assert_ran_inside(_on_docker(module.where_am_i, {"greeting": "hi"}, tmp_path))  # type: ignore[attr-defined]


def test_a_pystep_whose_module_sits_in_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "in_cwd_probe.py").write_text((HERE / "pystep_probe.py").read_text())
    module = _load(tmp_path, "in_cwd_probe")
    _assert_ran_inside(_on_docker(module.where_am_i, {"greeting": "hi"}, tmp_path))  # type: ignore[attr-defined]


def test_a_pystep_writes_a_passthrough_output_into_a_directory_it_makes(tmp_path: Path) -> None:
    """A path parameter it returns again is an output: it need not exist beforehand."""
    module = _load(HERE, "pystep_probe")
    _on_docker(module.write_to, {"out": "new/sub/o.txt"}, tmp_path)  # type: ignore[attr-defined]
    assert (tmp_path / "new" / "sub" / "o.txt").read_text() == "written inside\n"
    # returned as a plain File: no field names it an output
    _on_docker(module.make_file, {"out": "other dir/sub/o.txt"}, tmp_path)  # type: ignore[attr-defined]
    assert (tmp_path / "other dir" / "sub" / "o.txt").read_text() == "made inside\n"


def test_a_pystep_sees_its_working_directory_and_not_the_folder_around_it(
    tmp_path: Path,
) -> None:
    """The working directory was declared an output, so its parent (a user's home,
    .ssh and all) was mounted writable; from a directory right under / the step
    was refused ("create / first")."""
    work = tmp_path / "proj"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("not the step's")
    module = _load(HERE, "pystep_probe")
    result = _on_docker(module.beside_the_cwd, {}, work)  # type: ignore[attr-defined]
    assert "secret.txt" not in result.outputs["result"]
