"""A launch's state rebuilt from Slurm: one sacct call for every job of every launch asked about.

Jobs sacct does not list yet (submitted a moment ago, or accounting lags)
are asked of squeue in one more call, in every state: the controller keeps
an ended job's final state for a while (see ``queue``). A job Slurm
cancelled because one it waits for failed is reported as never having run,
naming that job; a loop iteration that found its convergence flag is
reported as skipped (its script left a marker).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import time
from collections.abc import Sequence

from shinobi.failures import cut_line, is_engine_banner
from shinobi.launch.handle import LaunchHandle, LaunchJob
from shinobi.launch.submitter import cancel_requested, submitter_running
from shinobi.launch.tracking import LaunchStatus, StepState, TaskEnd
from shinobi_slurm.commands import SlurmCommands, SlurmError, SlurmUnreachable
from shinobi_slurm.queue import query_queue, query_queue_named, waits, with_queue_reasons
from shinobi_slurm.sacct import (
    JobRecord,
    cut_exit,
    query_jobs,
    query_named,
    with_exit,
    without_stale_ranges,
)
from shinobi_slurm.sbatch import launch_job_name
from shinobi_slurm.scripts import STAT_FORMAT
from shinobi_slurm.states import (
    EXIT_NOT_KNOWN,
    NEVER_RAN,
    RAISE_TIME,
    Outcome,
    classify,
    combine_tasks,
    not_on_the_node,
    timeout_advice,
)

__all__ = ["FORGOTTEN_AFTER", "launch_statuses"]

#: Seconds after submission from which a job neither sacct nor squeue knows is
#: taken as one Slurm has forgotten, not one accounting has yet to list.
FORGOTTEN_AFTER = 300.0


def launch_statuses(commands: SlurmCommands, handles: Sequence[LaunchHandle]) -> list[LaunchStatus]:
    """The state of every launch in ``handles``: ONE sacct call (and at most one squeue)."""
    ids = [job.job_id for h in handles for job in h.jobs if job.job_id]
    error = None
    notes: list[str] = []
    try:
        found = query_jobs(commands, ids)
    except SlurmError as exc:
        found, error, notes = _from_the_queue_alone(commands, ids, exc)
    accounted = error is None and not notes  # sacct answered
    recovered: dict[str, str] = {}
    if accounted:
        recovered, error = _found_by_name(commands, handles, found)
    # a job whose every record is another job's of the same id (Slurm reused it) is
    # not in accounting yet, as far as this launch goes: the queue may hold it
    names = {job.job_id: launch_job_name(h) for h in handles for job in h.jobs if job.job_id}
    missing = [i for i in ids if not any(r.bears(names[i]) for r in found.get(i, []))]
    # accounting's reason for a waiting job can be stale: the queue says it as it is now
    unexplained = [i for i, records in found.items() if any(waits(r) for r in records)]
    if (missing or unexplained) and error is None and accounted:
        queued, away = query_queue(commands, [*missing, *unexplained])
        for job_id in unexplained:
            found[job_id] = with_queue_reasons(found[job_id], queued.pop(job_id, []))
        found.update(queued)
        if away is not None:  # accounting answered, the controller did not
            error = f"could not ask Slurm's controller ({away}); states may be out of date"
    now = time.time()
    old = [accounted and error is None and now - h.created > FORGOTTEN_AFTER for h in handles]
    statuses = [
        _launch_status(_with_found(h, recovered), found, error, aged)
        for h, aged in zip(handles, old, strict=True)
    ]
    for status in statuses:
        status.notes[:0] = notes
    return statuses


def _from_the_queue_alone(
    commands: SlurmCommands, ids: list[str], exc: SlurmError
) -> tuple[dict[str, list[JobRecord]], str | None, list[str]]:
    """(records, error, notes) when accounting (sacct) could not be asked: what the
    controller's queue still holds, which is every job waiting or running and those
    that ended in the last few minutes (``MinJobAge``). An error only for jobs it does
    not hold, whose state then cannot be known; a note that accounting was away."""
    away = f"could not ask Slurm's accounting ({exc}){_what_to_check(exc)}"
    queued, unreached = query_queue(commands, ids)
    if unreached is not None:
        return {}, f"could not ask Slurm ({exc}){_what_to_check(exc)}; states shown as unknown", []
    if all(i in queued for i in ids):
        return queued, None, [f"{away}; every state shown is the controller's queue's"]
    return queued, f"{away}; a job the queue no longer holds is shown as unknown", []


def _what_to_check(exc: SlurmError) -> str:
    """``"; CHECK"`` naming what to try by hand when Slurm could not be reached (or
    timed out), not when it answered with a refusal; else ``""``."""
    unreached = exc.transient or exc.never_sent or isinstance(exc, SlurmUnreachable)
    return f"; {exc.check}" if unreached else ""


def _found_by_name(
    commands: SlurmCommands, handles: Sequence[LaunchHandle], found: dict[str, list[JobRecord]]
) -> tuple[dict[str, str], str | None]:
    """The jobs Slurm took that a stopped submitter never recorded, by their script:
    made only when some launch was left half-submitted, one sacct call and at most
    one squeue call for all such launches.

    sbatch answers before ninja records the job: a submitter killed in between
    left a queued or running job that status called "never submitted". Every
    job of a launch bears its name, and its submit line names its script
    (:func:`~shinobi_slurm.sacct.query_named`); a job still waiting is not in
    accounting yet, so what sacct does not place the queue is asked for. The
    records found join ``found``; the answer maps each script to its job id.
    """
    stopped = [h for h in handles if h.state == "submitting" and any(not j.job_id for j in h.jobs)]
    if not stopped:
        return {}, None
    names = sorted({launch_job_name(h) for h in stopped})
    known = {j.job_id for h in stopped for j in h.jobs if j.job_id}
    unplaced = {_tail(j.script) for h in stopped for j in h.jobs if not j.job_id and j.script}
    recovered: dict[str, str] = {}
    try:  # a minute's margin: the handle is written a moment before the first sbatch
        accounted = query_named(commands, names, min(h.created for h in stopped) - 60)
        _place([(r, _script_of(line)) for r, line in accounted], known, found, recovered)
        if unplaced - recovered.keys():
            queued = query_queue_named(commands, names)
            _place(queued, known | set(recovered.values()), found, recovered)
    except SlurmError as exc:
        said = f"could not ask Slurm for the jobs the submitter did not record ({exc})"
        return {}, f"{said}{_what_to_check(exc)}"
    return recovered, None


def _place(
    named: Sequence[tuple[JobRecord, str | None]],
    known: set[str],
    found: dict[str, list[JobRecord]],
    recovered: dict[str, str],
) -> None:
    """Add to ``found`` and ``recovered`` the records of jobs by ``script``, but not
    those of a job already ``known`` (recorded, or placed by the other source)."""
    for record, script in named:
        if record.base in known or not script:
            continue
        if recovered.setdefault(_tail(script), record.base) == record.base:
            found.setdefault(record.base, []).append(record)


def _script_of(submit_line: str) -> str | None:
    """The script of ``sbatch --parsable SCRIPT`` (how ``commands.submit`` submits),
    quoted or not (an ssh ``command_prefix`` quotes it for the login host's shell)."""
    _, flag, script = submit_line.strip().partition(" --parsable ")
    if not flag:
        return None
    if script.startswith("'"):
        try:
            words = shlex.split(script)
        except ValueError:
            return None
        return words[0] if len(words) == 1 else None
    return script


def _tail(script: str) -> str:
    """``<run-id>/scripts/<job>.sbatch``: a job's script as its launch names it, the
    same after the workspace moved, where sbatch's submit line keeps the old path
    and the handle is read where it is now (the run id makes it unique)."""
    return "/".join(script.rsplit("/", 3)[-3:])


def _with_found(handle: LaunchHandle, recovered: dict[str, str]) -> LaunchHandle:
    """``handle`` with the job ids found by name for jobs its submitter did not record."""
    if not recovered or handle.state != "submitting":
        return handle
    jobs = [
        dataclasses.replace(job, job_id=recovered[_tail(job.script)])
        if not job.job_id and job.script and _tail(job.script) in recovered
        else job
        for job in handle.jobs
    ]
    return dataclasses.replace(handle, jobs=jobs)


def _launch_status(
    handle: LaunchHandle, found: dict[str, list[JobRecord]], error: str | None, old: bool
) -> LaunchStatus:
    name = launch_job_name(handle)
    on_timeout = _on_timeout(handle)
    steps = [_step_state(job, found, error, old, name, on_timeout) for job in handle.jobs]
    if handle.state == "submitting" and cancel_requested(handle):  # why it stopped
        steps = [
            dataclasses.replace(state, detail="never submitted (cancelled while submitting)")
            if job.job_id is None
            else state
            for job, state in zip(handle.jobs, steps, strict=True)
        ]
    elif submitter_running(handle) is not None:  # not handed over yet: it will be
        steps = [
            _not_yet(state) if job.job_id is None else state
            for job, state in zip(handle.jobs, steps, strict=True)
        ]
    by_name = {s.step: s for s in steps}
    for job, state in zip(handle.jobs, steps, strict=True):
        # Accounting can briefly lack the "Dependency" reason of a job Slurm cancelled
        # for a failed dependency: a system cancel after a failed dependency is that.
        if state.phase == "cancelled" and state.detail in (NEVER_RAN, "cancelled by Slurm"):
            failed = [
                a
                for a in job.after
                if by_name.get(a) is not None and by_name[a].phase in ("failed", "cancelled")
            ]
            if failed:
                state.detail = f"never ran: {', '.join(failed)} did not succeed"
                state.started = None
    status = LaunchStatus(handle=handle, steps=steps, error=error)
    if status.state == "completed":
        for job, state in zip(handle.jobs, steps, strict=True):
            _say_if_unconverged(status, job, state)
    return status


def _on_timeout(handle: LaunchHandle) -> str:
    """What to do about a step of ``handle`` that ran past its time limit: the
    ``SBATCH_TIMELIMIT`` its submitter had is named (a handle written before it was
    recorded names it as a possible cause)."""
    if "sbatch_timelimit" not in handle.extra:
        return timeout_advice(None, known=False)
    value = handle.extra["sbatch_timelimit"]
    return timeout_advice(value if isinstance(value, str) else None)


def _say_if_unconverged(status: LaunchStatus, job: LaunchJob, state: StepState) -> None:
    """Say so on the job that ends a loop which used every iteration without converging.

    Asked only of a completed launch: before that, another job of the last
    iteration may still be about to write the until file. Like the skip
    markers, the file is looked for on this host, which shares the workdir.
    """
    until = job.details.get("until")
    if state.phase != "completed" or not until:
        return
    if os.path.exists(str(until)) and not _as_before(str(until), job.details.get("until_before")):
        return  # written (or rewritten) by this run: converged
    state.detail = (
        f"loop {job.details.get('loop')!r} ran all {job.details.get('iterations')} iterations"
        f" without converging (its until file {until!r} was not written); its outputs are the"
        " last iteration's"
    )
    status.notes.append(f"loop {job.details.get('loop')!r} did not converge")


def _as_before(until: str, before: object) -> bool:
    """Whether the until file is just as the loop's first job recorded it before the
    loop ran (inode, size and time to the nanosecond, in ``stat``'s words as the
    job script wrote them): a flag left by an earlier run, not this run's."""
    if not isinstance(before, str):
        return False  # a handle from before the record was kept
    try:
        with open(before, encoding="utf-8") as fh:
            recorded = fh.read().strip()
        now = subprocess.run(
            ["stat", "-c", STAT_FORMAT, "--", until],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return recorded == now


def _not_yet(state: StepState) -> StepState:
    """A step whose job the submitter, still at work, has not handed over yet."""
    return dataclasses.replace(
        state, phase="pending", detail="not submitted yet (still submitting)"
    )


def _step_state(
    job: LaunchJob,
    found: dict[str, list[JobRecord]],
    error: str | None,
    old: bool,
    name: str | None = None,
    on_timeout: str = RAISE_TIME,
) -> StepState:
    """The step's state from its job's records; ``name``: the launch's job name, which
    a record of the job must bear (None: not checked)."""
    if job.job_id is None:
        return StepState(job.step, "cancelled", "never submitted (the submitter stopped)")
    listed = found.get(job.job_id, [])
    # a job of another name holds the id now (controller reset, MaxJobId wrap): not ours
    records = [r for r in listed if r.bears(name)]
    # Accounting lists every job ever given the id, and may not list a job just
    # submitted yet: its other job is conclusive once the job is old, or when the
    # controller's queue, which holds one job of an id, says it is another's.
    if listed and not records and (old or any(r.from_queue for r in listed)):
        return StepState(
            job.step,
            "cancelled",
            f"Slurm has no record of this job: job {job.job_id} is now another job"
            f" ({listed[0].name!r}, not {name!r}; Slurm reused the id after a controller reset"
            " or a job id wrap): how it ended cannot be known",
            job_id=job.job_id,
        )
    if not records and old:  # neither accounting nor the queue, long after submission
        return StepState(
            job.step,
            "cancelled",
            "Slurm has no record of this job (purged from accounting, or submitted to"
            " another cluster): how it ended cannot be known",
            job_id=job.job_id,
        )
    if not records:
        detail = "Slurm could not be asked" if error else "not in Slurm accounting yet"
        return StepState(job.step, "unknown", detail, job_id=job.job_id)
    kept = job.details.get("exit_code")
    if kept:
        records = [_exact_exit(record, str(kept)) for record in records]
    tasks = None
    unfinished: tuple[TaskEnd, ...] = ()
    # a container engine's own memory kill reads as SIGKILL (see states._memory_hint)
    contained = bool(job.details.get("contained"))
    # the sbatch_opts memory option; a launch recorded before it was kept says only that one was
    configured = str(job.details.get("memory_option") or "") or bool(
        job.details.get("memory_configured")
    )
    if job.tasks:
        records = without_stale_ranges(records)
        outcome, tasks = combine_tasks(
            records,
            job.tasks,
            contained=contained,
            memory_configured=configured,
            on_timeout=on_timeout,
        )
        unfinished = _unfinished_tasks(
            records, contained=contained, memory_configured=configured, on_timeout=on_timeout
        )
        record = records[0]
        started = min((r.start for r in records if r.start and r.started), default=None)
        ends = [r.end for r in records if r.end]
        finished = max(ends) if ends and outcome.phase not in ("running", "pending") else None
    else:
        record = records[-1]
        outcome = classify(
            record, contained=contained, memory_configured=configured, on_timeout=on_timeout
        )
        if outcome.phase in ("completed", "failed", "cancelled") and not record.final:
            outcome = Outcome("running", "ending (accounting not final yet)")
        started = record.start if record.started else None
        finished = record.end
    state = StepState(
        step=job.step,
        phase=outcome.phase,
        detail=outcome.message,
        engine_state=record.state if not job.tasks else f"array {_task_states(records)}",
        job_id=job.job_id,
        exit_code=record.exit_text if not job.tasks else None,
        started=started,
        finished=finished,
        tasks=tasks,
        unfinished_tasks=unfinished,
    )
    skipped = job.details.get("skipped")
    if state.phase == "completed" and skipped and os.path.exists(str(skipped)):
        state.phase = "skipped"
        state.detail = "the loop had converged: exited without doing any work"
    if state.phase == "failed" and job.stderr:
        said = _last_line(_failed_log(job.stderr, records) if job.tasks else job.stderr)
        if said.startswith(_OUTPUT_CHECK) and state.detail in _CHECKS_EXIT:
            # the job script's own check failed it, after the tool exited 0: the check
            # says so only then, and makes the job's exit 1, which the queue does not say
            state.detail = f"the tool exited 0, but {said[len('shinobi: ') :]}"
        elif ((state.exit_code or "").startswith("127:") or state.detail == EXIT_NOT_KNOWN) and (
            missing := _not_on_the_node(said)
        ) is not None:
            # 127: the shell's "not found" (a redirect's missing folder is 1); or no
            # code yet (only the queue knows the job), when its line says as much
            state.detail = missing
        elif said:
            state.detail = f"{state.detail}: {said}"
    if outcome.also:
        state.detail = f"{state.detail}; {outcome.also}" if state.detail else outcome.also
    if state.detail and state.detail.startswith("never ran"):
        state.started = None
    return state


def _unfinished_tasks(
    records: list[JobRecord], *, contained: bool, memory_configured: bool | str, on_timeout: str
) -> tuple[TaskEnd, ...]:
    """Each task of an array that started and then failed or was cancelled, in
    task order (a task listed twice, requeued, is as its last line says)."""
    found: dict[int, TaskEnd] = {}
    for record in records:
        if record.task is None or record.pending_tasks or not record.started:
            continue
        how = classify(
            record, contained=contained, memory_configured=memory_configured, on_timeout=on_timeout
        )
        phase = how.phase
        if phase in ("failed", "cancelled"):
            found[record.task] = TaskEnd(record.task, phase, record.start, record.end)
        else:
            found.pop(record.task, None)
    return tuple(found[task] for task in sorted(found))


#: How the job script's check of a step's declared outputs starts what it says
#: (see ``scripts``): its ``exit 1`` is the check's, not the tool's.
_OUTPUT_CHECK = 'shinobi: output "'
#: What a job failed by that check is reported as: accounting's ``exit 1``, or the
#: queue's record, which says no exit code, while accounting has not the job yet.
_CHECKS_EXIT = ("exited with code 1", EXIT_NOT_KNOWN)


def _exact_exit(record: JobRecord, kept: str) -> JobRecord:
    """``record`` with the exit code its job kept (see ``scripts._exit_kept``): Slurm's
    accounting has it modulo 128, so a tool's ``exit 255`` would read 127."""
    if not cut_exit(record):
        return record
    path = kept if record.task is None else _task_file(kept, record.task)
    try:
        with open(path, encoding="ascii") as fh:
            code = int(fh.read().strip())
    except (OSError, ValueError):
        return record
    return with_exit(record, code)  # another run's file (an old run folder) is not taken


def _task_file(pattern: str, task: int) -> str:
    """An array task's exit file: ``%a`` is the task (a launch recorded before the
    files were named ``STEP[%a]`` gave ``exits/STEP``, whose tasks were ``STEP.<task>``)."""
    return pattern.replace("%a", str(task)) if "%a" in pattern else f"{pattern}.{task}"


def _failed_log(pattern: str, records: list[JobRecord]) -> str:
    """The log of an array's first failed task (``%a`` in ``pattern`` is the task)."""
    failed = [r.task for r in records if r.task is not None and classify(r).phase == "failed"]
    return pattern.replace("%a", str(min(failed))) if failed else ""


def _last_line(path: str, limit: int = 4096) -> str:
    """The last non-empty line of a (shared) log file: what a failed tool said last."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - limit))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [
        s
        for line in text.splitlines()
        if (s := line.strip())
        and not is_engine_banner(s)
        and not _JOB_REPORT.match(s)
        and s not in _SIGNAL_WORDS
    ]
    # cut as every route quotes a tool's line: 300 characters, marked (it was 200, unmarked)
    return cut_line(lines[-1]) if lines else ""


def _not_on_the_node(said: str) -> str | None:
    """The advice ``ninja run --backend slurm`` gives for a program the job's shell
    did not find, from the shell's own line (``.../slurm_script: line 9: tool:
    command not found``), which a compiled launch's status quoted as it was."""
    found = _NOT_FOUND.search(said)
    if found is None:
        return None
    return not_on_the_node(found.group(1), "the login host")


#: The job's shell finding no program: a name not on PATH, or a path not there.
_NOT_FOUND = re.compile(
    r"slurm_script: line \d+: (?:exec: )?(\S+?): (?:command not found|not found"
    r"|No such file or directory)$"
)


#: What bash prints of a command in the job script that died of a signal
#: ("/var/spool/slurmd/job00336/slurm_script: line 10:  4242 Segmentation fault
#: (core dumped) tool ..."): the shell's report, not what the tool said last.
_JOB_REPORT = re.compile(r"^\S*slurm_script: line \d+: +\d+ ")

#: ... and its short form, a line of only the signal's description ("Terminated"),
#: which read as the tool's last words after a SIGTERM.
_SIGNAL_WORDS = frozenset(
    {"Terminated", "Killed", "Hangup", "Interrupt", "Aborted", "Aborted (core dumped)"}
)


def _task_states(records: list[JobRecord]) -> str:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.state] = counts.get(record.state, 0) + (record.pending_tasks or 1)
    return ",".join(f"{state}:{n}" for state, n in sorted(counts.items()))
