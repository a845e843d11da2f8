"""What a Slurm job's state means for the user, in one line.

The step backend and ``ninja status`` both classify through :func:`classify`,
so a job that ran out of memory reads the same wherever it is reported.
"""

from __future__ import annotations

import pwd
import signal as _signal
from dataclasses import dataclass

from shinobi.launch.tracking import StepPhase
from shinobi_slurm.sacct import JobRecord
from shinobi_slurm.sbatch import TIMELIMIT_VARIABLE, shown_value

__all__ = [
    "EXIT_NOT_KNOWN",
    "NEVER_RAN",
    "RAISE_TIME",
    "STUCK_REASONS",
    "Limits",
    "Outcome",
    "classify",
    "combine_tasks",
    "not_on_the_node",
    "timeout_advice",
]

#: Pending reasons Slurm will not clear by itself: said as soon as they are seen.
STUCK_REASONS = {
    "JobHeldUser": "it is held: `scontrol release {job}` lets it start",
    "JobHeldAdmin": "an administrator holds it",
    "PartitionDown": "its partition is down",
    "PartitionInactive": "its partition is inactive",
    "ReqNodeNotAvail": "the nodes it needs are not available (down, drained or reserved)",
    "NodeDown": "a node it needs is down",
    "BadConstraints": "no node meets its constraints",
    "InvalidAccount": "its account is not valid",
    "InvalidQOS": "its QOS is not valid",
}

#: What to do about a job that ran past its time limit, when nothing else set it.
RAISE_TIME = "raise --time in [backend.slurm] sbatch_opts"


def timeout_advice(timelimit: str | None, *, known: bool = True) -> str:
    """What to do about a TIMEOUT, given ``SBATCH_TIMELIMIT`` as the submitter had it.

    sbatch lets that variable beat the ``#SBATCH --time`` line that
    ``sbatch_opts`` becomes, so "raise --time" could not work while it was
    set. ``known``: whether the submitter's value was recorded at all (a
    launch submitted before ninja kept it); if not, it is named as a
    possible cause.
    """
    if timelimit is not None:
        return (
            f"{TIMELIMIT_VARIABLE}={shown_value(timelimit)} in the submitting environment set"
            f" that limit, beating any --time in [backend.slurm] sbatch_opts: raise it, or"
            " unset it and raise --time in sbatch_opts"
        )
    if not known:
        return (
            f"{RAISE_TIME} (unless {TIMELIMIT_VARIABLE} was set where the launch was"
            " submitted: it beats sbatch_opts, so unset it)"
        )
    return RAISE_TIME


#: What a job Slurm cancelled because a job it waits for failed is reported as.
NEVER_RAN = "never ran: a job it waits for did not succeed"

_PENDING = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "CONFIGURING"}
_RUNNING = {
    "RUNNING",
    "COMPLETING",
    "SUSPENDED",
    "STOPPED",
    "SIGNALING",
    "STAGE_OUT",
    "RESIZING",
    "SPECIAL_EXIT",
}


#: What the queue's record of an ended job cannot say (see ``queue``).
_UNSAID = "is not known yet (Slurm's accounting has not recorded the job; squeue does not say)"
#: How a failed job only the queue knows of is reported: its exit code is not said.
EXIT_NOT_KNOWN = f"failed; its exit code {_UNSAID}"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A job's state as shinobi reports it, and what a backend run returns for it."""

    phase: StepPhase
    message: str | None = None
    returncode: int | None = None
    signal: int | None = None
    oom: bool = False
    #: For a job array: the out-of-memory tasks when the task ``message`` names is not
    #: one, said after it (and after what that task printed last).
    also: str | None = None


def _signal_name(number: int) -> str:
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _user(uid: str | None) -> str:
    if uid is None:
        return "someone"
    try:
        return f"{pwd.getpwuid(int(uid)).pw_name} (uid {uid})"
    except (KeyError, ValueError):
        return f"uid {uid}"


@dataclass(frozen=True, slots=True)
class Limits:
    """The memory and time a job had, as Slurm shows them (``512M``, ``00:01:00``)."""

    memory: str | None = None
    time: str | None = None


def _its(value: str | None, what: str) -> str:
    """``its 64M of memory`` when the limit is known, else nothing; a share the
    value ends with stays after it (``its 4G of memory (512M per CPU)``)."""
    if not value:
        return ""
    amount, paren, share = value.partition(" (")
    return f"its {amount} {what}{' (' if paren else ''}{share}"


#: What a configured memory option is a share of.
_SHARES = {"--mem-per-cpu": "per CPU", "--mem-per-gpu": "per GPU"}


def _out_of_memory(limits: Limits, configured: bool | str) -> str:
    """The message of a job Slurm stopped for memory: the limit it had, and what to raise.

    ``configured`` is the memory option of ``sbatch_opts`` (``--mem-per-cpu=64M``;
    True for a launch recorded before the option was kept, read as ``--mem``).
    """
    option = "--mem" if configured is True else configured or ""
    name, _, value = option.partition("=")
    memory = limits.memory
    if memory and value and name in _SHARES and "(" not in memory:
        memory = f"{memory} ({value} {_SHARES[name]})"
    limit = _its(memory, "of memory") or f"its {name or '--mem'}"
    remedy = (
        f"raise {name}{f' (now {value})' if value else ''} in [backend.slurm] sbatch_opts,"
        " which sets it for every job (a step's own declaration gives way to it)"
        if option
        else "declare more memory for the step (resources=Resources(memory=...))"
    )
    return f"out of memory: Slurm stopped it for using more than {limit} (OUT_OF_MEMORY); {remedy}"


def _memory_hint(sig: int, limits: Limits) -> str:
    """What a SIGKILL of a job with a memory limit usually is.

    A container engine inside the job (``docker run --memory``, apptainer's
    cgroup) kills its payload itself, and the job script ends by the signal
    its command died of, so Slurm sees a job killed by SIGKILL, never
    OUT_OF_MEMORY. (A tool's own exit 137 is its own: no guess there.)
    """
    if sig != _signal.SIGKILL or not limits.memory:
        return ""
    return (
        f"; likely out of memory: the job had {limits.memory}, and a container engine in it"
        " kills what uses more than that, or than the memory the step declares (its"
        " container's limit); declare more memory for the step"
        " (resources=Resources(memory=...)) if so"
    )


def classify(
    record: JobRecord,
    limits: Limits | None = None,
    *,
    contained: bool = True,
    memory_configured: bool | str = False,
    on_timeout: str = RAISE_TIME,
) -> Outcome:
    """The :class:`Outcome` of one sacct record (a job or one array task).

    ``limits``, when the caller asked Slurm for them, put the number that was
    exceeded in the out-of-memory and time-limit messages, so the user knows
    how far to raise it; without them, those sacct gave with the record do.
    ``contained``: the job may run its tool in a container engine, whose own
    memory kill Slurm sees as a SIGKILL (see :func:`_memory_hint`); a job that
    runs its tool itself is killed for memory by Slurm, as OUT_OF_MEMORY.
    ``memory_configured``: ``[backend.slurm] sbatch_opts`` set the job's memory,
    which a step's own declaration gives way to: raising that is the remedy.
    Given as the option (``--mem-per-cpu=64M``), the hint names that option.
    ``on_timeout``: what to do about a TIMEOUT (:func:`timeout_advice`).
    """
    limits = limits or Limits(record.memory_limit, record.time_limit)
    state = record.state
    code, sig = record.exit_code or 0, record.exit_signal or 0
    if state == "COMPLETED":
        return Outcome("completed", None, code)
    if state == "FAILED":
        if sig:
            killed = f"killed by {_signal_name(sig)} (signal {sig})"
            hint = _memory_hint(sig, limits) if contained else ""
            return Outcome("failed", killed + hint, -sig, sig)
        if record.exit_code is None:  # the queue's record: it does not say the code
            return Outcome("failed", EXIT_NOT_KNOWN, 1)
        return Outcome("failed", f"exited with code {code}", code or 1)
    if state == "OUT_OF_MEMORY":
        return Outcome(
            "failed", _out_of_memory(limits, memory_configured), code or 137, None, oom=True
        )
    if state == "TIMEOUT":
        limit = f"its time limit of {limits.time}" if limits.time else "its time limit"
        return Outcome(
            "failed",
            f"ran past {limit} (TIMEOUT); {on_timeout}",
            code or 124,
            sig or None,
        )
    if state == "NODE_FAIL":
        return Outcome("failed", "its node failed (NODE_FAIL); submit it again", code or 1)
    if state == "BOOT_FAIL":
        return Outcome("failed", "its node failed to boot (BOOT_FAIL); submit it again", 1)
    if state == "DEADLINE":
        return Outcome("failed", "it could not finish before its --deadline (DEADLINE)", 1)
    if state == "PREEMPTED":
        return Outcome(
            "failed",
            "preempted by a higher-priority job (PREEMPTED); submit it again, or use a"
            " partition without preemption",
            code or 1,
            sig or None,
        )
    if state == "CANCELLED":
        # Slurm itself cancels the dependants of a failed job (kill-on-invalid-dep): no
        # "by UID", reason "Dependency"; its Start may still be filled in, so do not use it.
        if record.by is None and record.reason and "depend" in record.reason.lower():
            return Outcome("cancelled", NEVER_RAN, 1)
        if record.by is None and record.from_queue:  # squeue does not say by whom
            return Outcome("cancelled", f"cancelled; by whom {_UNSAID}", 1)
        if record.by is None:
            return Outcome("cancelled", "cancelled by Slurm", 1)
        if not record.started:
            return Outcome("cancelled", f"cancelled by {_user(record.by)} before it started", 1)
        return Outcome(
            "cancelled", f"cancelled by {_user(record.by)} while running", 1, sig or None
        )
    if state in _RUNNING:
        note = "suspended" if state == "SUSPENDED" else None
        return Outcome("running", note)
    if state in _PENDING:
        reason = record.reason
        if reason == "DependencyNeverSatisfied":
            return Outcome("pending", "a job it waits for did not succeed; Slurm will cancel it")
        why = STUCK_REASONS.get(reason or "")  # one Slurm will not clear: say the fix
        if why is not None:
            return Outcome("pending", f"waiting: {reason}: {why.format(job=record.job_id)}")
        return Outcome("pending", f"waiting: {reason}" if reason else None)
    return Outcome("unknown", f"Slurm reports {state or 'nothing'}")


def _out_of_memory_tasks(found: list[tuple[int, Outcome]]) -> str | None:
    """``task 2: out of memory: ...`` for the tasks of an array Slurm stopped for memory.

    Only the first failed task was named: an array whose task 1 exited 7 and
    whose task 2 ran out of memory said nothing of memory, nor how to fix it.
    """
    if not found:
        return None
    found.sort(key=lambda pair: pair[0])
    task, outcome = found[0]
    others = f" (and {len(found) - 1} more task(s) out of memory)" if len(found) > 1 else ""
    return f"task {task}: {outcome.message}{others}"


def combine_tasks(
    records: list[JobRecord],
    size: int,
    *,
    contained: bool = True,
    memory_configured: bool | str = False,
    on_timeout: str = RAISE_TIME,
) -> tuple[Outcome, dict[str, int]]:
    """One outcome for a job array of ``size`` tasks, and its tasks counted by phase.

    Failed tasks win (the first one is named), then tasks still to run; an
    array is complete only when every task completed.
    """
    counts: dict[str, int] = {}
    first_failed: tuple[int, Outcome] | None = None
    out_of_memory: list[tuple[int, Outcome]] = []
    first_cancelled: Outcome | None = None
    whole: Outcome | None = None
    # The array as one line, no task of it named: Slurm (22.05) records an array
    # cancelled before any task was split off so (``9|CANCELLED``) for good, and
    # that line speaks for every task (read as one task, the others stayed
    # "unknown" and the launch read running for ever). Any other such line is a
    # moment of accounting before the task lines (an array that just ended reads
    # ``9|FAILED`` alone): one task, the rest unknown until they are listed.
    alone = all(r.task is None and not r.pending_tasks for r in records)
    seen = 0
    for record in records:
        outcome = classify(
            record,
            contained=contained,
            memory_configured=memory_configured,
            on_timeout=on_timeout,
        )
        if alone and record.state == "CANCELLED":
            whole = outcome
            continue
        # 9_[0-3] stands for tasks that never started: pending, or cancelled as one
        # (an array whose dependency failed), never running or done
        tasks = record.pending_tasks or 1
        counts[outcome.phase] = counts.get(outcome.phase, 0) + tasks
        seen += tasks
        if record.pending_tasks:
            if outcome.phase == "cancelled" and first_cancelled is None:
                first_cancelled = outcome
            continue
        if outcome.phase == "failed" and (
            first_failed is None or (record.task or 0) < first_failed[0]
        ):
            first_failed = (record.task or 0, outcome)
        if outcome.oom:
            out_of_memory.append((record.task or 0, outcome))
        if outcome.phase == "cancelled" and first_cancelled is None:
            first_cancelled = outcome
    if seen < size and whole is not None:
        counts[whole.phase] = counts.get(whole.phase, 0) + size - seen
        seen = size
        if whole.phase == "failed" and first_failed is None:
            first_failed = (0, whole)
        if whole.phase == "cancelled" and first_cancelled is None:
            first_cancelled = whole
    if seen < size:
        counts["unknown"] = counts.get("unknown", 0) + size - seen
    active = counts.get("running", 0) + counts.get("pending", 0) + counts.get("unknown", 0)
    if first_failed is not None:
        task, outcome = first_failed
        failed, cancelled = counts.get("failed", 0), counts.get("cancelled", 0)
        message = f"task {task}: {outcome.message}"
        if failed > 1 or cancelled:  # the tasks a cancel stopped are not the failed ones
            also_cancelled = f", {cancelled} cancelled" if cancelled else ""
            message += f" ({failed} of {size} tasks failed{also_cancelled})"
        also = None if outcome.oom else _out_of_memory_tasks(out_of_memory)
        if active:  # the array is not over until its last task is
            running = f"{message}; {active} task(s) not finished"
            return Outcome("running", running, also=also), counts
        oom = outcome.oom or also is not None
        return Outcome(
            "failed", message, outcome.returncode, outcome.signal, oom, also=also
        ), counts
    if active:
        if counts.get("running") or counts.get("completed"):
            return Outcome("running"), counts
        return Outcome("pending" if counts.get("pending") else "unknown"), counts
    if first_cancelled is not None:
        return first_cancelled, counts
    return Outcome("completed", None, 0), counts


def not_on_the_node(program: str, here: str) -> str:
    """What a run and a launch's status say of a program the job's shell did not
    find: a name not on the nodes' PATH, or a path that is ``here`` (the host the
    run was started on, said as the reader knows it) but not on the nodes."""
    where = (
        f"does that path exist on the nodes, not only on {here}?"
        if "/" in program
        else "is it installed on the nodes, and on their PATH?"
    )
    return f"command not found on the compute node: {program!r} ({where})"
