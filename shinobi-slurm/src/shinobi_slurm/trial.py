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

import sys
from collections.abc import Iterable, Mapping, Sequence

from shinobi.errors import UsageError
from shinobi_slurm.commands import SlurmCommands, SlurmError, SlurmUnreachable
from shinobi_slurm.sbatch import Option, batch_script, input_variables, shown_value

__all__ = ["SlurmWouldRefuse", "refusal_of_options", "refuse_what_slurm_would", "warn_now"]

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
        exc = _tried(commands, kept)
        if exc is None:
            continue
        if exc.transient or exc.never_sent:
            return  # Slurm is away: the submission will say so itself
        if isinstance(exc, SlurmUnreachable):
            raise exc  # (no sbatch here): no answer about the step, and none to come by waiting
        reason, fix = _refusal(commands, exc, kept)
        raise SlurmWouldRefuse(
            f"Slurm would refuse step {step!r} ({reason}); nothing was submitted: {fix}"
        ) from None


def refusal_of_options(commands: SlurmCommands, options: Sequence[Option]) -> str | None:
    """Slurm's refusal of ``options`` on their own, with what to fix; None when it
    takes them, or when it cannot be asked (no Slurm here, or away: the engine's
    own check says so).

    ``ninja doctor`` asks this of ``[backend.slurm] sbatch_opts``: it called
    slurm usable while every submission was refused for a mistyped partition.
    """
    kept = [o for o in options if o.name not in _PER_JOB]
    exc = _tried(commands, kept)
    if exc is None or exc.transient or exc.never_sent or isinstance(exc, SlurmUnreachable):
        return None
    reason, fix = _refusal(commands, exc, kept, submitting=False)
    return f"Slurm refuses them ({reason}): {fix}"


def _tried(commands: SlurmCommands, options: Sequence[Option]) -> SlurmError | None:
    """What ``sbatch --test-only`` says against ``options``; None when it takes them."""
    try:
        commands.run("sbatch", ["--test-only"], stdin=batch_script(options, ["true"]))
    except SlurmError as exc:
        return exc
    return None


def _refusal(
    commands: SlurmCommands, exc: SlurmError, options: Sequence[Option], submitting: bool = True
) -> tuple[str, str]:
    """Slurm's refusal of ``options`` and what to fix: the ``SBATCH_*``
    variables of this shell that asked for what it refused, if they did.

    sbatch lets those variables beat the ``#SBATCH`` lines, so a
    ``SBATCH_PARTITION=gpu`` left in the shell was refused as if sbatch_opts
    (which might set no partition, or a good one) had asked for it.
    """
    blamed = _blamed_variables(commands, options)
    hint = _partitions_hint(commands, exc, options, blamed)
    if blamed:
        said = " and ".join(f"{k}={shown_value(v)}" for k, v in blamed.items())
        unset = " ".join(blamed)
        fix = (
            f"it is what {said} in the environment asks for (sbatch lets such variables beat"
            f" [backend.slurm] sbatch_opts); unset {unset}"
        )
    elif submitting:
        fix = "fix [backend.slurm] sbatch_opts or the step's declared resources"
    else:
        fix = "fix [backend.slurm] sbatch_opts"
    return f"{exc}{hint}", fix


def _passes(commands: SlurmCommands, options: Sequence[Option], without: Iterable[str]) -> bool:
    """Whether ``sbatch --test-only`` takes ``options`` with ``without`` unset."""
    try:
        commands.run(
            "sbatch", ["--test-only"], stdin=batch_script(options, ["true"]), without=set(without)
        )
    except SlurmError:
        return False
    return True


def _blamed_variables(commands: SlurmCommands, options: Sequence[Option]) -> dict[str, str]:
    """The sbatch input variables of this shell without which Slurm takes ``options``.

    Asked of Slurm itself (a refusal rarely says which option it refuses):
    once without them all, and, if that passes and there are several, without
    each in turn; if none alone is to blame, all are named. Only ever called
    on a refusal, so it costs nothing on a submission that passes.
    """
    present = input_variables(commands.sbatch_environment())
    if not present or not _passes(commands, options, present):
        return {}
    if len(present) == 1:
        return present
    alone = {k: v for k, v in present.items() if _passes(commands, options, [k])}
    return alone or present


def warn_now(warnings: Sequence[str]) -> None:
    """Print ``warnings`` at once, on stderr: said before a refusal ends the run, which
    would otherwise lose them (an override they name may be what was refused)."""
    for warning in warnings:
        print(f"ninja: warning: {warning}", file=sys.stderr, flush=True)


def _partitions_hint(
    commands: SlurmCommands,
    exc: SlurmError,
    options: Sequence[Option],
    blamed: Mapping[str, str],
) -> str:
    """``; no partition 'dbug': partitions here are debug`` for a mistyped partition.

    Slurm says only "Invalid partition name specified", leaving the user to
    find the name it means and the names it has. The name asked for is
    ``SBATCH_PARTITION``'s when it is to blame: it beat any ``--partition`` line.
    """
    if "partition" not in str(exc).lower():
        return ""
    asked = blamed.get("SBATCH_PARTITION") or next(
        (o.value for o in options if o.name in ("partition", "p")), None
    )
    try:
        here = sorted({p.rstrip("*") for p in commands.run("sinfo", ["-h", "-o", "%P"]).split()})
    except SlurmError:
        return ""
    named = f"no partition {asked!r}: " if asked and asked not in here else ""
    return f"; {named}partitions here are {', '.join(here)}" if here else ""
