"""Declared resources to runtime flags, under each enforce_resources mode."""

from __future__ import annotations

import pytest

from shinobi.resources import Resources
from shinobi_containers.cgroups import UNPROBED, CgroupReach
from shinobi_containers.limits import dropped_warning, limit_flags

NO_CPU = CgroupReach({"cpu": "the cpu cgroup controller is not delegated to this user"})


def test_declared_cpus_and_memory_become_flags() -> None:
    limits = limit_flags(Resources(cpus=2, memory="64MiB"), "auto", CgroupReach())
    assert limits.flags == ("--cpus", "2", "--memory", str(64 * 1024 * 1024))
    assert limits.memory == 64 * 1024 * 1024 and limits.cpus == 2.0
    assert limits.dropped == {}


def test_fractional_cpus_keep_their_fraction() -> None:
    assert limit_flags(Resources(cpus=0.25), "always").flags == ("--cpus", "0.25")


def test_all_cpus_is_no_limit() -> None:
    limits = limit_flags(Resources(cpus="all", memory="1GB"), "always")
    assert limits.flags == ("--memory", "1000000000")


def test_nothing_declared_gives_nothing() -> None:
    assert limit_flags(None, "always").flags == ()
    assert limit_flags(Resources(), "always").flags == ()
    assert not limit_flags(Resources(), "auto").emitted


def test_never_passes_no_limits_and_warns_of_nothing() -> None:
    limits = limit_flags(Resources(cpus=1, memory="1GiB"), "never", NO_CPU)
    assert limits.flags == () and limits.dropped == {} and limits.memory is None


def test_auto_drops_only_what_this_host_cannot_apply() -> None:
    limits = limit_flags(Resources(cpus=4, memory="1GiB"), "auto", NO_CPU)
    assert limits.flags == ("--memory", str(1024**3))
    assert limits.dropped == {"--cpus": NO_CPU.missing["cpu"]}
    assert limits.cpus is None and limits.memory == 1024**3


def test_always_emits_everything_whatever_the_probe_says() -> None:
    limits = limit_flags(Resources(cpus=4, memory="1GiB"), "always", NO_CPU)
    assert limits.flags == ("--cpus", "4", "--memory", str(1024**3))


def test_auto_without_a_probe_emits_everything() -> None:
    limits = limit_flags(Resources(cpus=4), "auto", UNPROBED)
    assert limits.flags == ("--cpus", "4")


@pytest.mark.parametrize("flag", ["--cpus", "--memory"])
def test_the_warning_names_the_flag_the_reason_and_the_settings(flag: str) -> None:
    message = dropped_warning("apptainer", flag, "no delegation")
    assert flag in message and "no delegation" in message and "apptainer" in message
    assert "enforce_resources" in message and "\n" not in message
