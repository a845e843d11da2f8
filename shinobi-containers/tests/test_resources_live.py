"""Declared resources on each engine, live: limits bite where claimed, and only there."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_engines import (
    ENGINES,
    OCI_ENGINES,
    image,
    live_backend,
    shared_sites,
    unprivileged_user,
)

from recipes import MEMORY_HOG, config_for, one_step
from shinobi.backends.base import Invocation, RunControl
from shinobi.resources import Resources
from shinobi.runner import run_recipe

CPU_QUOTA = (
    "p=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/self/cgroup);"
    " for f in /sys/fs/cgroup/cpu$p/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_quota_us"
    " /sys/fs/cgroup/cpu.max; do [ -r $f ] && { cat $f; break; }; done"
)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_step_beyond_its_declared_memory_is_killed_and_reported_out_of_memory(
    engine: str, tmp_path: Path
) -> None:
    live_backend(engine)
    recipe = one_step("hog", MEMORY_HOG, image(engine), Resources(memory="64MiB"))
    config = config_for(
        engine, memory_stall_timeout=3
    )  # apptainer's hog may stall: see test_stall_live
    result = run_recipe(recipe, backend=engine, config=config, cwd=tmp_path, use_cache=False)
    assert not result.ok
    step = result.steps[0]
    assert step.status == "failed" and step.returncode == 137
    assert step.error is not None and "out of memory" in step.error and "64MiB" in step.error
    assert not (tmp_path / "oom").exists()  # conmon's marker stays out of the user's files


def test_under_native_the_same_declaration_limits_nothing(tmp_path: Path) -> None:
    recipe = one_step("hog", MEMORY_HOG, None, Resources(memory="64MiB"))
    result = run_recipe(
        recipe, backend="native", config=config_for("native"), cwd=tmp_path, use_cache=False
    )
    assert result.ok, result.error
    assert result.steps[0].returncode == 0


@pytest.mark.parametrize("engine", OCI_ENGINES)
def test_declared_cpus_become_the_containers_cpu_quota(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    recipe = one_step("quota", CPU_QUOTA, image(engine), Resources(cpus=1.5))
    result = run_recipe(
        recipe, backend=engine, config=config_for(engine), cwd=tmp_path, use_cache=False
    )
    assert result.ok, result.error
    assert result.steps[0].stdout.split()[0] == "150000"  # v1 quota, or v2 "150000 100000"


def test_declared_cpus_become_an_apptainer_containers_cpu_quota(tmp_path: Path) -> None:
    """Apptainer shows no cgroup files inside, so the host's are read while the step waits."""
    backend = live_backend("apptainer")
    tmp_path.chmod(0o777)
    where, go = tmp_path / "cgroup", tmp_path / "go"
    script = (
        f"awk -F: '$2 ~ /(^|,)cpu(,|$)/ {{print $3}}' /proc/self/cgroup > '{where}.part'"
        f" && mv '{where}.part' '{where}'; while [ ! -e '{go}' ]; do sleep 0.05; done"
    )
    invocation = Invocation(
        step="quota",
        argv=("/bin/sh", "-c", script),
        cwd=str(tmp_path),
        image=image("apptainer"),
        resources=Resources(cpus=1.5),
    )
    outcome: list[object] = []
    runner = threading.Thread(target=lambda: outcome.append(backend.run(invocation, RunControl())))
    runner.start()
    try:
        for _ in range(600):
            if where.exists():
                break
            runner.join(0.05)
        cgroup = where.read_text().strip()
        quota = Path(f"/sys/fs/cgroup/cpu{cgroup}/cpu.cfs_quota_us")
        period = Path(f"/sys/fs/cgroup/cpu{cgroup}/cpu.cfs_period_us")
        assert int(quota.read_text()) / int(period.read_text()) == 1.5
    finally:
        go.touch()
        runner.join(60)
    assert outcome and outcome[0].returncode == 0  # type: ignore[attr-defined]


# -- an unprivileged user, whose cgroups this host does not delegate -------------------------

UNPRIVILEGED_RUN = r"""
import json, site, sys
for directory in sys.argv[2:]:
    site.addsitedir(directory)
from shinobi.backends import get_backend
from shinobi.backends.base import Invocation, RunControl, PathUse
from shinobi.resources import Resources

area, image, mode = json.loads(sys.argv[1])
backend = get_backend("apptainer", {"enforce_resources": mode})
control = RunControl(grace=2.0)
target = area + "/made/by/the/step.txt"
invocation = Invocation(
    step="unprivileged",
    argv=("/bin/sh", "-c", "mkdir -p " + area + "/made/by/the && id -u > " + target
          + " && head -c 100000000 /dev/zero | tail > /dev/null"),
    cwd=area,
    paths=(PathUse(target, "output", "made", "file"),),
    image=image,
    resources=Resources(cpus=1, memory="64MiB"),
)
missing = sorted(backend.cgroup_reach().missing)
warnings = backend.prepare([invocation])
run = backend.run(invocation, control)
print(json.dumps({"returncode": run.returncode, "reason": run.reason, "oom": run.oom,
                  "warnings": warnings + control.warnings, "missing": missing,
                  "stderr": run.stderr[-2000:]}))
"""


def _as_unprivileged_user(area: Path, mode: str) -> dict[str, object]:
    """Run the apptainer backend in a fresh interpreter as the testbed's unprivileged user.

    The system's python3 (same minor version) imports this environment's packages
    from a world-readable copy of its site directories: this environment, its
    interpreter and the clone may live where the other user cannot reach (/root).
    """
    live_backend("apptainer")
    user = unprivileged_user()
    area.chmod(0o777)
    done = subprocess.run(
        [
            "runuser",
            "-u",
            str(user["name"]),
            "--",
            "/usr/bin/python3",
            "-c",
            UNPRIVILEGED_RUN,
            json.dumps([str(area), image("apptainer"), mode]),
            *shared_sites(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=str(area),
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["uid"] = int(user["uid"])
    return result


@pytest.fixture
def shared_area() -> Iterator[Path]:
    """A directory outside root's private pytest tree, reachable by the other user."""
    path = Path(tempfile.mkdtemp(prefix="shinobi-unprivileged-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_unprivileged_apptainer_drops_what_it_cannot_enforce_with_one_warning(
    shared_area: Path,
) -> None:
    result = _as_unprivileged_user(shared_area, "auto")
    if not result["missing"]:
        pytest.skip("this host delegates cpu and memory to the user: nothing to drop")
    assert result["returncode"] == 0, result
    warnings = result["warnings"]
    flags = {"cpu": "--cpus", "memory": "--memory"}
    dropped = [flags[c] for c in result["missing"]]  # type: ignore[attr-defined]
    assert isinstance(warnings, list) and len(warnings) == len(dropped), warnings
    for flag in dropped:
        assert sum(flag in w for w in warnings) == 1, warnings
    made = shared_area / "made" / "by" / "the" / "step.txt"
    assert made.read_text().strip() == str(result["uid"])
    assert made.stat().st_uid == result["uid"]


def test_unprivileged_apptainer_under_always_explains_cause_and_remedy(shared_area: Path) -> None:
    result = _as_unprivileged_user(shared_area, "always")
    if not result["missing"]:
        pytest.skip("this host delegates cpu and memory to the user: nothing is refused")
    assert result["returncode"] != 0 and not result["oom"]
    reason = str(result["reason"])
    assert "could not apply the declared limits" in reason
    assert "cgroups v2 in unified mode" in reason and 'enforce_resources = "auto"' in reason
    assert "FATAL" not in reason
