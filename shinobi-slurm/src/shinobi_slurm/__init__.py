"""shinobi on Slurm: a step backend (``ninja run --backend slurm``) and the
``ninja compile --engine slurm`` offload target.

Everything goes through Slurm's own command-line tools (sbatch, sacct,
scancel, squeue), so a site needs nothing beyond a submit host.
"""

from __future__ import annotations

__all__ = [
    "backend",
    "commands",
    "compile",
    "poller",
    "queue",
    "sacct",
    "sbatch",
    "scripts",
    "states",
    "status",
]
