"""Reading what each runtime says about the limits it can apply."""

from __future__ import annotations

from shinobi_containers.cgroups import (
    reach_from_apptainer_probes,
    reach_from_docker_info,
    reach_from_podman_info,
)
from shinobi_containers.cli import CliAnswer


def test_docker_info_with_full_support() -> None:
    reach = reach_from_docker_info({"MemoryLimit": True, "CpuCfsQuota": True})
    assert reach.can_apply("cpu") and reach.can_apply("memory") and reach.probed


def test_docker_info_without_cpu_quota() -> None:
    reach = reach_from_docker_info({"MemoryLimit": True, "CpuCfsQuota": False})
    assert reach.can_apply("memory") and not reach.can_apply("cpu")
    assert "CPU quota" in reach.missing["cpu"]


def test_podman_info_lists_the_controllers_it_reaches() -> None:
    info = {"host": {"cgroupControllers": ["memory", "pids"], "security": {"rootless": True}}}
    reach = reach_from_podman_info(info)
    assert reach.can_apply("memory") and not reach.can_apply("cpu")
    assert "delegated to this user" in reach.missing["cpu"]


def test_podman_info_without_controllers_reaches_none() -> None:
    reach = reach_from_podman_info({"host": {"cgroupControllers": None}})
    assert not reach.can_apply("cpu") and not reach.can_apply("memory")


MISSING_COMMAND = CliAnswer(
    255, "", "FATAL:   stat /.shinobi-limit-probe: no such file or directory\n"
)


def test_apptainer_probes_tell_a_refused_cgroup_from_a_missing_command() -> None:
    refused = CliAnswer(
        255,
        "",
        "INFO:    gocryptfs not found\nFATAL:   container creation failed: while applying"
        " cgroups config: .../apptainer-3628201.scope/cpu.max: no such file or directory\n",
    )
    reach = reach_from_apptainer_probes(
        {"cpu": refused, "memory": MISSING_COMMAND}, baseline=MISSING_COMMAND
    )
    assert reach.probed and reach.can_apply("memory") and not reach.can_apply("cpu")
    assert reach.missing["cpu"].startswith("container creation failed")


def test_an_apptainer_probe_that_cannot_reach_the_command_knows_nothing() -> None:
    broken = CliAnswer(255, "", "FATAL:   container creation failed: mount hook function failure\n")
    reach = reach_from_apptainer_probes({"cpu": broken, "memory": broken}, baseline=broken)
    assert not reach.probed and reach.can_apply("cpu") and reach.can_apply("memory")


def test_an_apptainer_probe_failing_otherwise_keeps_the_limit() -> None:
    odd = CliAnswer(255, "", "FATAL:   something unrelated\n")
    reach = reach_from_apptainer_probes({"cpu": odd}, baseline=MISSING_COMMAND)
    assert reach.can_apply("cpu")
