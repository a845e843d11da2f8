"""The docker backend: steps in containers of a docker daemon."""

from __future__ import annotations

from typing import ClassVar

from shinobi.backends.base import Availability, BackendRun
from shinobi_containers.cgroups import CgroupReach, docker_reach
from shinobi_containers.cli import call
from shinobi_containers.engine import CHECK_TIMEOUT, ContainerSpec
from shinobi_containers.engine_lines import DOCKER_LINES
from shinobi_containers.errors import DOCKER_DAEMON_FIX, EngineUnreachable
from shinobi_containers.oci import REMOVE_TIMEOUT, OciBackend
from shinobi_containers.oom import OomWatch

__all__ = ["DockerBackend"]


class DockerBackend(OciBackend):
    """Runs each step's image with ``docker run``, as the invoking user by default."""

    name = "docker"
    version_words: ClassVar[tuple[str, ...]] = ("docker",)
    engine_lines = DOCKER_LINES

    def reach_daemon(self) -> None:
        answer = call([self.binary, "version", "--format", "{{.Server.Version}}"], CHECK_TIMEOUT)
        if not answer.ok:
            said = answer.last_line()
            raise EngineUnreachable(
                f"the docker daemon is not reachable ({said}); {_fix(said)}; nothing was run"
            )

    def check_engine(self) -> Availability:
        answer = call([self.binary, "version", "--format", "{{.Server.Version}}"], CHECK_TIMEOUT)
        if not answer.ok:  # `ninja backends` and `ninja doctor` say the fix too
            said = answer.last_line()
            return Availability(False, f"the docker daemon is not reachable: {said}; {_fix(said)}")
        return Availability(True, f"docker daemon {answer.stdout.strip()}")

    def cgroup_reach(self) -> CgroupReach:
        return docker_reach(self.binary)

    def oom_killed(
        self, name: str, spec: ContainerSpec, run: BackendRun, watch: OomWatch | None
    ) -> bool | None:
        """Docker's own record, which counts the kill of any process in the container."""
        if run.returncode == 0 and spec.limits.memory is None:
            return None
        answer = call(
            [self.binary, "inspect", "--format", "{{.State.OOMKilled}}", name], REMOVE_TIMEOUT
        )
        return answer.stdout.strip() == "true" if answer.ok else None


def _fix(said: str) -> str:
    """What to do about a daemon the client could not talk to, as it said why."""
    if "permission denied" in said.lower():  # it runs; this user may not talk to it
        return (
            "add yourself to the docker group (`sudo usermod -aG docker $USER`, then"
            " log in again), or use podman, which needs no daemon"
        )
    return DOCKER_DAEMON_FIX
