"""Every container backend passes the conformance suite every backend passes, live."""

from __future__ import annotations

from typing import Any, ClassVar

from live_engines import image, settings_for, shinobi_containers_of

from shinobi.backends.base import Backend, Invocation
from shinobi.testing.conformance import BackendConformance


class _OciConformance(BackendConformance):
    """docker and podman keep containers apart from the client: list this run's too."""

    def leftovers(self, backend: Backend, invocation: Invocation, tag: str) -> list[str]:
        containers = shinobi_containers_of(backend.name, invocation.run_id)
        return [*super().leftovers(backend, invocation, tag), *containers]


class TestDockerConformance(_OciConformance):
    backend_name = "docker"
    image = image("docker")
    settings: ClassVar[dict[str, Any]] = settings_for("docker")


class TestPodmanConformance(_OciConformance):
    backend_name = "podman"
    image = image("podman")
    settings: ClassVar[dict[str, Any]] = settings_for("podman")


class TestApptainerConformance(BackendConformance):
    backend_name = "apptainer"
    image = image("apptainer")


class TestSingularityConformance(BackendConformance):
    backend_name = "singularity"
    image = image("singularity")
