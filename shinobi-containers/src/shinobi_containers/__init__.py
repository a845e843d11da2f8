"""shinobi backends that run steps in containers: docker, podman, apptainer, singularity.

The backends are found through the ``shinobi.backends`` entry points; nothing
is imported here, so loading one engine's backend does not load the others.
Bind mounts are derived in :mod:`shinobi_containers.mounts`, the same way for
every engine.
"""

from __future__ import annotations

__all__: list[str] = []
