"""The podman backend: steps in podman containers, rootful or rootless.

Podman's inspect reports ``OOMKilled=false`` even for a container its memory
limit killed, so an out-of-memory kill is read from the kernel's log (the
container's cgroup carries its ID, see :mod:`oom`) and from the exit (137)
under a declared limit. An interrupt stops the container with the run's grace
first (``stop -t``, as docker); ``rm -f`` would then give a PID 1 that ignores
SIGTERM another ten seconds, so the removal after it is ``-t 0``.
"""

from __future__ import annotations

import glob
import os
import tomllib
from typing import ClassVar

from shinobi.backends.base import Availability, BackendRun, Invocation
from shinobi_containers.cgroups import CgroupReach, podman_reach
from shinobi_containers.cli import call
from shinobi_containers.engine import CHECK_TIMEOUT, ContainerSpec
from shinobi_containers.engine_lines import PODMAN_LINES
from shinobi_containers.oci import REMOVE_TIMEOUT, OciBackend
from shinobi_containers.oom import OomWatch

__all__ = ["PodmanBackend", "configured_volumes"]


def _conf_files() -> list[str]:
    """Every containers.conf podman may read, system-wide first (containers.conf(5));
    ``CONTAINERS_CONF`` names the one it reads instead."""
    if os.environ.get("CONTAINERS_CONF"):
        return [os.environ["CONTAINERS_CONF"]]
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    found = []
    for base in (
        "/usr/share/containers",
        "/etc/containers",
        os.path.join(config_home, "containers"),
    ):
        found.append(os.path.join(base, "containers.conf"))
        found += sorted(glob.glob(os.path.join(base, "containers.conf.d", "*.conf")))
    return found


def configured_volumes(files: list[str] | None = None) -> bool | None:
    """Whether a containers.conf gives every container ``volumes`` of the host
    (``[containers] volumes = [...]``); None when one cannot be read."""
    for path in _conf_files() if files is None else files:
        try:
            with open(path, "rb") as fh:
                table = tomllib.load(fh)
        except FileNotFoundError:
            continue
        except (OSError, tomllib.TOMLDecodeError):
            return None
        containers = table.get("containers")
        if isinstance(containers, dict) and containers.get("volumes"):
            return True
    return False


class PodmanBackend(OciBackend):
    """Runs each step's image with ``podman run``, as the invoking user by default."""

    name = "podman"
    version_words: ClassVar[tuple[str, ...]] = ("podman",)
    engine_lines = PODMAN_LINES
    remove_command: ClassVar[tuple[str, ...]] = ("rm", "-f", "-t", "0")

    def check_engine(self) -> Availability:
        answer = call([self.binary, "info", "--format", "{{.Host.OCIRuntime.Name}}"], CHECK_TIMEOUT)
        if not answer.ok:
            return Availability(False, f"podman cannot run containers here: {answer.last_line()}")
        return Availability(True, f"podman with runtime {answer.stdout.strip()}")

    ignores_unenforceable_limits = True  # rootless on cgroup v1: ignored, with a note

    def site_binds(self) -> tuple[str, ...] | None:
        """Volumes a site's containers.conf gives every container may show the
        step any of the host: ninja then stands aside (None)."""
        return () if configured_volumes() is False else None

    def cgroup_reach(self) -> CgroupReach:
        return podman_reach(self.binary)

    def user_options(self) -> list[str]:
        """Rootless podman maps the user to root by default; keep-id maps it to itself."""
        if os.geteuid() != 0:
            return ["--userns", "keep-id"]
        return super().user_options()

    def client_directory(self, invocation: Invocation) -> str:
        """The run's own folder: conmon leaves a file named ``oom`` in the client's
        directory when it kills a container for memory, which must not appear
        among the user's files."""
        return invocation.scratch_dir or invocation.cwd

    def watch_for_oom(self, spec: ContainerSpec) -> OomWatch | None:
        return OomWatch() if spec.limits.memory is not None else None

    def oom_killed(
        self, name: str, spec: ContainerSpec, run: BackendRun, watch: OomWatch | None
    ) -> bool | None:
        if watch is None:
            return None
        answer = call([self.binary, "inspect", "--format", "{{.Id}}", name], REMOVE_TIMEOUT)
        container_id = answer.stdout.strip() if answer.ok else ""
        kills = watch.kills()
        if not container_id or kills is None:
            return None
        return any(container_id in kill.memcg for kill in kills)
