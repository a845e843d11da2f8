"""@shinobi.pystep(image=...) runs its function inside the container, through the public API."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

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


def test_a_pystep_with_an_image_runs_inside_the_container(tmp_path: Path) -> None:
    live_backend("docker")
    module = _load(HERE, "pystep_probe")
    result = run_recipe(
        module.where_am_i,  # type: ignore[attr-defined]
        {"greeting": "hi"},
        backend="docker",
        config=_config(),
        cwd=tmp_path,
        use_cache=False,
    )
    assert result.ok, result.error
    _assert_ran_inside(result)


def test_a_pystep_whose_module_sits_in_the_working_directory(tmp_path: Path) -> None:
    live_backend("docker")
    (tmp_path / "in_cwd_probe.py").write_text((HERE / "pystep_probe.py").read_text())
    module = _load(tmp_path, "in_cwd_probe")
    result = run_recipe(
        module.where_am_i,  # type: ignore[attr-defined]
        {"greeting": "hi"},
        backend="docker",
        config=_config(),
        cwd=tmp_path,
        use_cache=False,
    )
    assert result.ok, result.error
    _assert_ran_inside(result)


def test_a_pystep_writes_a_passthrough_output_into_a_directory_it_makes(tmp_path: Path) -> None:
    """A path parameter it returns again is an output: it need not exist beforehand."""
    live_backend("docker")
    module = _load(HERE, "pystep_probe")
    result = run_recipe(
        module.write_to,  # type: ignore[attr-defined]
        {"out": "new/sub/o.txt"},
        backend="docker",
        config=_config(),
        cwd=tmp_path,
        use_cache=False,
    )
    assert result.ok, result.error
    assert (tmp_path / "new" / "sub" / "o.txt").read_text() == "written inside\n"
    made = run_recipe(
        module.make_file,  # type: ignore[attr-defined]
        {"out": "other dir/sub/o.txt"},
        backend="docker",
        config=_config(),
        cwd=tmp_path,
        use_cache=False,
    )
    assert made.ok, made.error  # returned as a plain File: no field names it an output
    assert (tmp_path / "other dir" / "sub" / "o.txt").read_text() == "made inside\n"
