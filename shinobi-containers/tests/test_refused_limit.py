"""docker's refusal of a too-small ``--cpus``.

runc's reason ("...cpu.cfs_quota_us: invalid argument") comes after a cgroup
path holding a 64-digit container id, and the engine's line was cut at its
end at 300 characters: the reason was lost and the id kept. The remedy also
always talked about memory, though only ``--cpus`` was refused. The line is
now cut in its middle, and the remedy is about the limit the engine names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend

from recipes import config_for, one_step
from shinobi.backends.base import BackendRun
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi_containers.limits import LimitFlags
from shinobi_containers.outcome import engine_message, interpret_run

RUNC = (
    "docker: Error response from daemon: failed to create shim task: OCI runtime create"
    " failed: runc create failed: unable to start container process: error during container"
    ' init: error setting cgroup config for procHooks process: failed to write "500": write'
    f" /sys/fs/cgroup/cpu/docker/{'d7b20ed4' * 8}/cpu.cfs_quota_us: invalid argument: unknown"
)
BOTH = LimitFlags(flags=("--cpus", "0.005", "--memory", "67108864"), memory=2**26, cpus=0.005)


def refused(stderr: str, limits: LimitFlags = BOTH) -> str:
    run = interpret_run(
        BackendRun(returncode=125, stderr=f"{stderr}\n\nRun 'docker run --help' for more"),
        engine="docker",
        limits=limits,
        engine_error_codes=frozenset({125, 126, 127}),
    )
    return run.reason or ""


def test_a_long_engine_line_keeps_its_end() -> None:
    said = engine_message(RUNC)
    assert len(said) <= 300 and said.endswith("cpu.cfs_quota_us: invalid argument: unknown")
    assert said.startswith("docker: Error response from daemon:") and " ... " in said


def test_a_refused_cpus_gets_a_remedy_about_cpus() -> None:
    reason = refused(RUNC)
    assert reason.startswith("docker refused the value of the declared limit --cpus 0.005: ")
    assert "invalid argument" in reason and reason.endswith("Declare at least 0.01 cpus")
    assert "\n" not in reason and "memory" not in reason


def test_a_refused_memory_gets_a_remedy_about_memory() -> None:
    reason = refused("docker: Error response from daemon: Minimum memory limit allowed is 6MB")
    assert reason.startswith("docker refused the value of the declared limit --memory 67108864")
    assert reason.endswith("above what the tool needs just to start") and "cpus" not in reason


def test_a_refusal_naming_no_limit_keeps_the_remedy_for_both() -> None:
    reason = refused("error setting cgroup config: invalid argument")
    assert "(--cpus 0.005 --memory 67108864)" in reason and "at least 0.01 cpus" in reason


@pytest.mark.parametrize("engine", ENGINES)
def test_a_too_small_cpus_is_said_with_the_engines_reason(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    recipe = one_step("tiny", "true", image(engine), Resources(cpus=0.005, memory="64MiB"))
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    error = result.steps[0].error or ""
    if result.ok:  # this host's runtime took the value
        pytest.skip(f"{engine} accepted --cpus 0.005 here")
    assert "refused the value of the declared limit --cpus 0.005" in error, error
    assert error.endswith("Declare at least 0.01 cpus") and "\n" not in error, error
