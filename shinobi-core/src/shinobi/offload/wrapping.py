"""Putting each offloaded command inside a container runtime.

A compiled job runs whatever the node has, so a container is the
reproducible option there. The command line comes from the container
backend itself (``Backend.render``), found through core's registry: an
offload plugin never imports the containers plugin, and the mounts, user
mapping and resource flags are exactly what ``ninja run --backend docker``
would use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shinobi.errors import UsageError

if TYPE_CHECKING:
    from shinobi.offload.jobs import JobGraph

__all__ = ["CONTAINER_RUNTIMES", "wrap_in_containers"]

#: What ``--container-runtime`` accepts; ``none`` runs commands on the node itself.
CONTAINER_RUNTIMES = ("none", "docker", "podman", "apptainer", "singularity")


def wrap_in_containers(graph: JobGraph, runtime: str) -> None:
    """Rewrite every job's commands to run in ``runtime``; note steps that cannot."""
    if runtime not in CONTAINER_RUNTIMES:
        raise UsageError(
            f"unknown container runtime {runtime!r}; use one of {', '.join(CONTAINER_RUNTIMES)}"
        )
    with_image = [job for job in graph.jobs if job.image]
    if runtime == "none":
        if with_image:
            names = ", ".join(job.name for job in with_image[:5])
            more = f" and {len(with_image) - 5} more" if len(with_image) > 5 else ""
            graph.warnings.append(
                f"{len(with_image)} step(s) declare an image ({names}{more}) but run on the"
                " node itself (--container-runtime none); pass --container-runtime to use it"
            )
        return
    from shinobi.backends import get_backend

    backend = get_backend(runtime)
    bare = [job for job in graph.jobs if not job.image]
    for job in with_image:
        rendered = [backend.render_for_job(inv, batch=True) for inv in job.invocations]
        job.commands = [r.argv for r in rendered]
        if any(r.stop for r in rendered):
            job.stops = [r.stop for r in rendered]
        if any(r.oom_probe for r in rendered):
            job.probes = [r.oom_probe for r in rendered]
    if bare:
        names = ", ".join(job.name for job in bare[:5])
        more = f" and {len(bare) - 5} more" if len(bare) > 5 else ""
        graph.warnings.append(
            f"{len(bare)} step(s) declare no image ({names}{more}) and run on the node"
            f" itself, not in {runtime}"
        )
