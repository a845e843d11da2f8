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
from shinobi.wording import listed

if TYPE_CHECKING:
    from shinobi.backends.base import Backend
    from shinobi.offload.jobs import Job, JobGraph

__all__ = ["AUTO", "CONTAINER_RUNTIMES", "RUNTIME_CHOICES", "runtime_of", "wrap_in_containers"]

#: The runtimes a job's command can run in; ``none`` runs it on the node itself.
CONTAINER_RUNTIMES = ("none", "docker", "podman", "apptainer", "singularity")
#: Each step in the container backend ``ninja run`` would give it, else on the node.
AUTO = "auto"
#: What ``--container-runtime`` accepts.
RUNTIME_CHOICES = (AUTO, *CONTAINER_RUNTIMES)


def runtime_of(chosen: str, backend: str) -> str:
    """The runtime a step whose backend in ``ninja run`` is ``backend`` runs in.

    Under :data:`AUTO` a step that names a container backend (or inherits one
    from ``backend.default``) keeps it on the cluster: the promise is that a
    recipe moves there unchanged, and one that ran in apptainer on a laptop
    must not run on a node's bare software. Any other choice applies to every
    step that has an image.
    """
    if chosen != AUTO:
        return chosen
    return backend if backend in CONTAINER_RUNTIMES[1:] else "none"


def _named(jobs: list[Job]) -> str:
    return listed(jobs, 5, lambda job: job.name)


def wrap_in_containers(graph: JobGraph, runtime: str, default_backend: str = "native") -> None:
    """Rewrite each job's commands to run in its runtime (see :func:`runtime_of`);
    note steps that run on the node itself though they have an image, or the reverse."""
    if runtime not in RUNTIME_CHOICES:
        raise UsageError(
            f"unknown container runtime {runtime!r}; use one of {', '.join(RUNTIME_CHOICES)}"
        )
    from shinobi.backends import get_backend

    # one instance per runtime; one named for the compile is looked up even if no
    # step has an image, so a missing plugin is said where it was asked for
    engines = {runtime: get_backend(runtime)} if runtime not in (AUTO, "none") else {}
    bare_images: list[Job] = []
    for job in graph.jobs:
        node = job.node
        backend = node.backend or getattr(node.step, "backend", None) or default_backend
        job.runtime = runtime_of(runtime, backend) if job.image else "none"
        if job.runtime != "none":
            if job.runtime not in engines:
                engines[job.runtime] = get_backend(job.runtime)
            _contain(job, engines[job.runtime])
        elif job.image:
            bare_images.append(job)
    if bare_images:
        why = (
            "--container-runtime none"
            if runtime == "none"
            else "their backend is not a container backend"
        )
        graph.warnings.append(
            f"{len(bare_images)} step(s) declare an image ({_named(bare_images)}) but run on"
            f" the node itself ({why}); pass --container-runtime to run them in it"
        )
    if runtime not in (AUTO, "none"):
        bare = [job for job in graph.jobs if not job.image]
        if bare:
            graph.warnings.append(
                f"{len(bare)} step(s) declare no image ({_named(bare)}) and run on the node"
                f" itself, not in {runtime}"
            )


def _contain(job: Job, backend: Backend) -> None:
    """Replace ``job``'s commands with ``backend``'s, as ``ninja run --backend`` renders them."""
    rendered = [backend.render_for_job(inv, batch=True) for inv in job.invocations]
    job.commands = [r.argv for r in rendered]
    if any(r.stop for r in rendered):
        job.stops = [r.stop for r in rendered]
    if any(r.oom_probe for r in rendered):
        job.probes = [r.oom_probe for r in rendered]
