"""Whose exit is it: the engine's, the memory limit's, or the payload's own.

Two ways a container's exit used to be misread, live on every engine:

* a SIGKILL under a declared memory limit was called out of memory even when
  the engine's record (docker) or the kernel's log (podman, apptainer) said
  no out-of-memory kill happened, telling the user to declare more memory
  for a step someone else killed;
* a payload exiting with a number the engine also uses for its own failures
  (a shell's 127, a C tool's ``exit(-1)`` = 255, 125) had its own message
  passed off as "<engine> could not run the step".
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend

from recipes import config_for, one_step
from shinobi.backends.base import BackendRun
from shinobi.failures import describe_failure
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi_containers.errors import ImageUnavailable
from shinobi_containers.limits import LimitFlags
from shinobi_containers.outcome import interpret_run

MEMORY = LimitFlags(flags=("--memory", "67108864"), memory=64 * 1024 * 1024)


def test_a_sigkill_the_engine_says_was_not_for_memory_is_not_out_of_memory() -> None:
    run = interpret_run(
        BackendRun(returncode=137), engine="docker", limits=MEMORY, oom_killed=False
    )
    assert not run.oom and run.signal == signal.SIGKILL
    said = describe_failure(run) or ""
    assert "not by its docker --memory limit" in said and "declare more" not in said


def test_without_a_verdict_a_sigkill_under_a_limit_is_still_taken_as_the_limit() -> None:
    run = interpret_run(BackendRun(returncode=137), engine="podman", limits=MEMORY)
    assert run.oom


@pytest.mark.parametrize("engine", ENGINES)
def test_a_step_killed_by_sigkill_under_a_memory_limit_is_not_called_out_of_memory(
    engine: str, tmp_path: Path
) -> None:
    live_backend(engine)
    recipe = one_step("selfkill", "kill -KILL $$", image(engine), Resources(memory="64MiB"))
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    step = result.steps[0]
    assert step.status == "failed"
    assert step.error is not None and "out of memory" not in step.error, step.error
    assert "SIGKILL" in step.error


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("code", [125, 127, 255])
def test_a_payloads_own_exit_code_is_not_taken_for_the_engines(
    engine: str, code: int, tmp_path: Path
) -> None:
    live_backend(engine)
    script = f"echo 'the tool says why' >&2; exit {code}"
    recipe = one_step("exits", script, image(engine), None)
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    step = result.steps[0]
    assert step.status == "failed" and step.returncode == code
    assert step.error == f"exited with code {code}: the tool says why"


def test_a_mistyped_image_name_on_podman_is_said_to_be_not_here(tmp_path: Path) -> None:
    """Podman fails a name with no registry on "short-name resolution", which reads
    like a configuration problem; the user's fix is the image's name."""
    live_backend("podman")
    typo = image("podman").removeprefix("localhost/").replace("busybox", "busybx")
    recipe = one_step("typo", "true", typo, None)
    result = run_recipe(
        recipe, backend="podman", config=config_for("podman"), cwd=tmp_path, use_cache=False
    )
    error = result.steps[0].error or ""
    assert f"image {typo!r} is not here" in error and "check its name" in error


@pytest.mark.parametrize("engine", ["docker", "apptainer"])
def test_a_mistyped_registry_image_is_said_to_be_not_here_in_the_engines_own_words(
    engine: str, tmp_path: Path
) -> None:
    """Docker says "Unable to find image ... locally", apptainer "Unable to handle
    docker://... uri", before the registry's own error. test_outcome.py has those
    lines only as typed-in strings: had a release reworded them, the user was told
    just that a registry was not reached, never that the image is not here."""
    live_backend(engine)
    typo = image("docker").replace("busybox", "busybx")  # a registry's name on both
    recipe = one_step("typo", "true", typo, None)
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    error = result.steps[0].error or ""
    said = rf"^{engine} could not run the step: image '(docker://)?{re.escape(typo)}' is not here"
    assert re.search(said, error), error


def test_a_mistyped_sif_file_on_apptainer_is_said_to_be_missing(tmp_path: Path) -> None:
    """A path is never a registry's name: sent to apptainer as docker://..., a typo in
    it came back as a failed registry lookup, far from the file's name."""
    live_backend("apptainer")
    typo = image("apptainer").replace("busybox", "busybx")
    recipe = one_step("typo", "true", typo, None)
    with pytest.raises(ImageUnavailable, match=f"the image file {re.escape(typo)} does not exist"):
        run_recipe(
            recipe,
            backend="apptainer",
            config=config_for("apptainer"),
            cwd=tmp_path,
            use_cache=False,
        )
