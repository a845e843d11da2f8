"""Which resource limits a container runtime can really apply on this host.

A runtime can only apply the cgroup controllers it can reach: a rootful
daemon reaches whatever the kernel mounts, while a rootless runtime reaches
only the controllers delegated to the user (a shared HPC box often delegates
memory but not cpu). Handing a runtime a limit it cannot apply makes it refuse
to create the container at all, so under ``enforce_resources = "auto"`` each
limit is emitted on its own merits. The answer is asked of the runtime itself
(``docker info``, ``podman info``, a throwaway apptainer container) once per
process, because it does not change while ninja runs.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from shinobi_containers.cli import CliAnswer, call

__all__ = [
    "CONTROLLERS",
    "UNPROBED",
    "CgroupReach",
    "apptainer_reach",
    "docker_reach",
    "podman_reach",
    "reach_from_apptainer_probes",
    "reach_from_docker_info",
    "reach_from_podman_info",
]

#: The controllers behind the limits shinobi emits: --cpus and --memory.
CONTROLLERS = ("cpu", "memory")
PROBE_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class CgroupReach:
    """The controllers a runtime cannot apply here, each with the reason why.

    ``probed`` is False when the runtime could not be asked; then nothing is
    known to be missing, every declared limit is emitted, and a failure to
    apply one is explained after the fact.
    """

    missing: Mapping[str, str] = field(default_factory=dict)
    probed: bool = True

    def can_apply(self, controller: str) -> bool:
        return controller not in self.missing


UNPROBED = CgroupReach(probed=False)


def reach_from_docker_info(info: Mapping[str, Any]) -> CgroupReach:
    """The reach ``docker info --format '{{json .}}'`` reports."""
    missing = {}
    if not info.get("MemoryLimit", False):
        missing["memory"] = "the docker daemon reports no memory limit support"
    if not info.get("CpuCfsQuota", False):
        missing["cpu"] = "the docker daemon reports no CPU quota support"
    return CgroupReach(missing)


def reach_from_podman_info(info: Mapping[str, Any]) -> CgroupReach:
    """The reach ``podman info --format json`` reports (host.cgroupControllers)."""
    host = info.get("host", {})
    controllers = set(host.get("cgroupControllers") or ())
    rootless = bool(host.get("security", {}).get("rootless", False))
    where = "delegated to this user" if rootless else "available to podman"
    missing = {
        controller: f"the {controller} cgroup controller is not {where}"
        for controller in CONTROLLERS
        if controller not in controllers
    }
    return CgroupReach(missing)


def reach_from_apptainer_probes(
    answers: Mapping[str, CliAnswer], baseline: CliAnswer
) -> CgroupReach:
    """The reach shown by one throwaway container per limit, and one with none.

    Apptainer applies cgroups while it creates the container, before it looks
    for the command, so a probe naming a missing command gets as far as that
    command when the limit could be applied, and fails on the cgroup when it
    could not. The probe without limits must get as far as the command too,
    or the probe itself is broken and nothing is known.
    """
    if PROBE_COMMAND not in baseline.stderr:
        return UNPROBED
    missing = {}
    for controller, answer in answers.items():
        if PROBE_COMMAND not in answer.stderr and "cgroup" in answer.stderr.lower():
            missing[controller] = _fatal_line(answer.stderr)
    return CgroupReach(missing)


def _fatal_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if "cgroup" in line.lower():
            return line.removeprefix("FATAL:").strip()[:300]
    return "its cgroup setup refused the limit"


def _json_answer(argv: list[str]) -> Mapping[str, Any] | None:
    answer = call(argv, PROBE_TIMEOUT)
    if not answer.ok:
        return None
    try:
        data = json.loads(answer.stdout)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


@cache
def docker_reach(binary: str) -> CgroupReach:
    info = _json_answer([binary, "info", "--format", "{{json .}}"])
    return UNPROBED if info is None else reach_from_docker_info(info)


@cache
def podman_reach(binary: str) -> CgroupReach:
    info = _json_answer([binary, "info", "--format", "json"])
    return UNPROBED if info is None else reach_from_podman_info(info)


#: A command no image has: the probes fail on it once the container exists.
PROBE_COMMAND = "/.shinobi-limit-probe"
_APPTAINER_PROBES = {"memory": ["--memory", str(256 * 1024 * 1024)], "cpu": ["--cpus", "1"]}


@cache
def apptainer_reach(binary: str, euid: int) -> CgroupReach:
    """Probe with an empty directory as the image: no image of the step's needed.

    ``euid`` is part of the cache key: what is delegated depends on the user.
    """
    del euid
    with tempfile.TemporaryDirectory(prefix="shinobi-limit-probe-") as sandbox:

        def probe(flags: list[str]) -> CliAnswer:
            return call([binary, "exec", *flags, sandbox, PROBE_COMMAND], PROBE_TIMEOUT)

        baseline = probe([])
        answers = {controller: probe(flags) for controller, flags in _APPTAINER_PROBES.items()}
    return reach_from_apptainer_probes(answers, baseline)
