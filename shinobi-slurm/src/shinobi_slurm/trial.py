"""Asking Slurm, before anything is submitted, whether it would take the jobs.

An sbatch option Slurm rejects (a partition that does not exist, more memory
than any node has, a malformed ``--time``) used to surface only when its job
was submitted: after the steps before it had run for hours, or, in a
compiled launch, after the first jobs had been queued and started. ``sbatch
--test-only`` answers without creating a job, so each distinct set of
options is tried once, before the first submission; a recipe's steps share
a handful of them however many steps it has.

Slurm that cannot be reached proves nothing either way: the submission
itself will say so, with the same message it always had.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from shinobi.errors import UsageError
from shinobi_slurm.commands import SlurmCommands, SlurmError, SlurmUnreachable
from shinobi_slurm.sbatch import Option, batch_script

__all__ = ["SlurmWouldRefuse", "refuse_what_slurm_would"]

#: Options that differ from job to job and that Slurm takes from any job.
_PER_JOB = frozenset(
    {"job-name", "comment", "output", "error", "chdir", "dependency", "kill-on-invalid-dep"}
)


class SlurmWouldRefuse(UsageError):
    """``sbatch --test-only`` refused a step's options: nothing was submitted."""


def refuse_what_slurm_would(
    commands: SlurmCommands, steps: Iterable[tuple[str, Sequence[Option]]]
) -> None:
    """Try each distinct set of ``steps``' options with ``sbatch --test-only``.

    ``steps`` pairs a step's name with its options; the first step with a set
    is the one a refusal names.
    """
    tried: set[tuple[str, ...]] = set()
    for step, options in steps:
        kept = [o for o in options if o.name not in _PER_JOB]
        key = tuple(o.argument() for o in kept)
        if key in tried:
            continue
        tried.add(key)
        try:
            commands.run("sbatch", ["--test-only"], stdin=batch_script(kept, ["true"]))
        except SlurmError as exc:
            if exc.transient or exc.never_sent:
                return  # Slurm is away: the submission will say so itself
            if isinstance(exc, SlurmUnreachable):
                raise  # (no sbatch here): no answer about the step, and none to come by waiting
            raise SlurmWouldRefuse(
                f"Slurm would refuse step {step!r} ({exc}{_partitions_hint(commands, exc, kept)});"
                " nothing was submitted: fix [backend.slurm] sbatch_opts or the step's declared"
                " resources"
            ) from None


def _partitions_hint(commands: SlurmCommands, exc: SlurmError, options: Sequence[Option]) -> str:
    """``; no partition 'dbug': partitions here are debug`` for a mistyped partition.

    Slurm says only "Invalid partition name specified", leaving the user to
    find the name it means and the names it has.
    """
    if "partition" not in str(exc).lower():
        return ""
    asked = next((o.value for o in options if o.name in ("partition", "p")), None)
    try:
        here = sorted({p.rstrip("*") for p in commands.run("sinfo", ["-h", "-o", "%P"]).split()})
    except SlurmError:
        return ""
    named = f"no partition {asked!r}: " if asked else ""
    return f"; {named}partitions here are {', '.join(here)}" if here else ""
