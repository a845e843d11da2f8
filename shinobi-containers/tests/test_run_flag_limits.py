"""A limit in ``run_flags`` that replaces a step's declared one.

``[backend.podman] run_flags = ["--memory", "1g"]`` came after ninja's own
``--memory 67108864`` on the command line, and the engine keeps the last: a
step that declared 64MiB and allocated 400MB passed, even under
``enforce_resources = "always"``, and nothing said so. Now such a flag is
refused when the settings are read under ``always``, and warned of once per
run (and by ``ninja backends``/``doctor``) otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live_engines import ENGINES, image, live_backend
from stand_in import QUIET_ENGINE

from shinobi.backends.base import Invocation, RunControl
from shinobi.cache_limits import applied_limits
from shinobi.resources import Resources
from shinobi_containers.apptainer import ApptainerBackend
from shinobi_containers.cgroups import CgroupReach
from shinobi_containers.docker import DockerBackend
from shinobi_containers.engine import ContainerBackend
from shinobi_containers.errors import SettingsInvalid
from shinobi_containers.podman import PodmanBackend
from shinobi_containers.settings import ContainerSettings, flags_of

SPELLINGS = [
    (["--memory", "1g"], "--memory"),
    (["--memory=1g"], "--memory"),
    ("-m 1g", "-m"),
    (["-m1g"], "-m"),
    (["-itm", "1g"], "-m"),
    (["--memory-swap", "4g"], "--memory-swap"),
    (["--cpus", "8"], "--cpus"),
    ("--shm-size 1g --cpus=8", "--cpus"),
]


def declaring(tmp_path: Path, **extra: object) -> Invocation:
    fields: dict[str, object] = {
        "step": "hog",
        "argv": ("true",),
        "cwd": str(tmp_path),
        "image": "busybox",
        "resources": Resources(cpus=1, memory="64MiB"),
    }
    fields.update(extra)
    return Invocation(**fields)  # type: ignore[arg-type]


def able(backend: ContainerBackend, monkeypatch: pytest.MonkeyPatch) -> ContainerBackend:
    """``backend`` on a host that can apply every limit (no engine asked)."""
    monkeypatch.setattr(backend, "cgroup_reach", lambda: CgroupReach({}))
    return backend


@pytest.mark.parametrize(("flags", "flag"), SPELLINGS)
@pytest.mark.parametrize("engine", ["docker", "podman", "apptainer"])
def test_a_limit_in_run_flags_is_refused_under_always(
    flags: object, flag: str, engine: str
) -> None:
    if flag == "-m" and engine == "apptainer":
        pytest.skip("apptainer has no -m: see the test after this one")
    settings = {"run_flags": flags, "enforce_resources": "always"}
    with pytest.raises(SettingsInvalid) as refused:
        ContainerSettings.from_mapping(engine, settings)
    said = str(refused.value)
    assert said.startswith(f"backend.{engine}.run_flags sets {flag}, which would override")
    assert '"always"' in said and "drop it from run_flags" in said and "\n" not in said


@pytest.mark.parametrize("flags", ["-m 1g", ["-m1g"]])
def test_apptainer_s_run_flags_have_no_short_memory_flag(flags: object) -> None:
    """``-m`` is docker's and podman's ``--memory``: apptainer has none (it refuses it
    as an unknown flag), so it was refused under "always" for overriding a limit."""
    settings = {"run_flags": flags, "enforce_resources": "always"}
    assert ContainerSettings.from_mapping("apptainer", settings).run_flags[0].startswith("-m")


@pytest.mark.parametrize("mode", ["auto", "never"])
def test_it_is_taken_otherwise(mode: str) -> None:
    settings = {"run_flags": ["--memory", "1g"], "enforce_resources": mode}
    assert ContainerSettings.from_mapping("podman", settings).run_flags == ("--memory", "1g")


def test_flags_that_set_no_limit_stay_allowed_under_always() -> None:
    flags = ["--shm-size", "1g", "--memory-reservation", "1g", "-e", "M=--memory", "-it"]
    settings = {"run_flags": flags, "enforce_resources": "always"}
    assert ContainerSettings.from_mapping("docker", settings).run_flags == tuple(flags)


@pytest.mark.parametrize(
    ("word", "named"),
    [
        ("--memory=1g", ("--memory",)),
        ("-dit", ("-d", "-i", "-t")),
        ("-itm1g", ("-i", "-t", "-m")),
        ("-m=1g", ("-m",)),
        ("-edummy=1", ("-e",)),
        ("1g", ()),
    ],
)
def test_the_one_flag_reader_names_each_option(word: str, named: tuple[str, ...]) -> None:
    assert flags_of(word) == named


@pytest.mark.parametrize("backend", [DockerBackend, PodmanBackend, ApptainerBackend])
def test_a_run_warns_once_under_auto(
    tmp_path: Path, backend: type[ContainerBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = able(backend({"run_flags": ["--memory", "1g"], "binary": QUIET_ENGINE}), monkeypatch)
    steps = [
        declaring(tmp_path, image="docker://busybox" if backend is ApptainerBackend else "busybox")
    ]
    warned = [w for w in engine.prepare(steps * 2) if "run_flags sets --memory" in w]
    assert len(warned) == 1 and "overrides the memory limit steps declare" in warned[0], warned
    rendered = engine.render_for_job(steps[0])
    assert any("run_flags sets --memory" in w for w in rendered.warnings)
    # a batch job of apptainer's leaves the declared limits to the job's own --mem
    batch = engine.render_for_job(steps[0], batch=True)
    said = any("run_flags sets --memory" in w for w in batch.warnings)
    assert said is backend.limits_in_jobs, batch.warnings


def test_no_warning_where_no_step_declares_that_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site may cap every container with run_flags: steps that declare no
    memory lose nothing to it."""
    engine = able(
        PodmanBackend({"run_flags": ["--memory", "1g"], "binary": QUIET_ENGINE}), monkeypatch
    )
    cpu_only = declaring(tmp_path, resources=Resources(cpus=1))
    assert not engine.prepare([cpu_only])


def test_a_cached_result_made_so_does_not_count_as_made_under_the_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = able(
        DockerBackend({"run_flags": ["--memory", "1g"], "binary": QUIET_ENGINE}), monkeypatch
    )
    assert applied_limits(engine, declaring(tmp_path)) is None
    plain = able(DockerBackend({"binary": QUIET_ENGINE}), monkeypatch)
    assert applied_limits(plain, declaring(tmp_path)) == {"cpus": 1.0, "memory": 64 * 1024**2}


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "singularity"])
def test_live_run_says_it_and_backends_too(engine: str, tmp_path: Path) -> None:
    backend = live_backend(engine, run_flags=["--memory", "1g"])
    assert "run_flags sets --memory" in backend.check().detail
    control = RunControl(grace=2.0)
    result = backend.run(declaring(tmp_path, image=image(engine)), control)
    assert result.returncode == 0, result.reason
    assert any("overrides the memory limit" in w for w in control.warnings), control.warnings


def test_only_a_batch_job_of_apptainer_leaves_the_limits_to_the_batch_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dry run and the cache's look at the limits a step ran under are this
    machine's: apptainer applies --memory there. Stripped for them too, the dry
    run hid the limits the run applied and the cache took every result for one
    made under its declared limits."""
    engine = able(ApptainerBackend({"binary": QUIET_ENGINE}), monkeypatch)
    step = declaring(tmp_path, image="docker://busybox")
    here = engine.render_for_job(step).argv
    assert "--memory" in here and "--cpus" in here
    batch = engine.render_for_job(step, batch=True).argv
    assert "--memory" not in batch and "--cpus" not in batch
