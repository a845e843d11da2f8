"""The slurm step backend passes the behavioural suite every backend passes, live.

``workdir`` is pytest's tmp_path: on this single-node cluster slurmd sees the
same filesystem, which is what shared storage means on a real one.
"""

from __future__ import annotations

import subprocess
from typing import Any, ClassVar

from shinobi.backends.base import Backend, Invocation
from shinobi.testing.conformance import BackendConformance
from shinobi_slurm.backend import job_name


class TestSlurmConformance(BackendConformance):
    backend_name = "slurm"
    settings: ClassVar[dict[str, Any]] = {"poll_max": 2.0}
    teardown_budget = 60.0

    def leftovers(self, backend: Backend, invocation: Invocation, tag: str) -> list[str]:
        found = super().leftovers(backend, invocation, tag)
        queued = subprocess.run(
            ["squeue", "-h", "-n", job_name(invocation.run_id), "-o", "%i %T %k"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split("\n")
        return found + [f"queued: {line}" for line in queued if line.strip()]
