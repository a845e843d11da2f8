"""The ``slurm`` step backend: each step is one batch job, waited for like a local process.

``ninja run --backend slurm`` keeps its own scheduler and hands Slurm one
job per step: a batch script with the step's footprint as ``#SBATCH``
options, submitted with ``sbatch --parsable``, its output written straight
into the step's log files (which must be on storage the nodes share, as the
invocation's cwd must). All steps of a process share one sacct poller, and
an interrupted run ``scancel``s its jobs and says so rather than leaving
them queued.

Settings (``[backend.slurm]``): ``sbatch_opts`` (list or table; wins over
derived options), ``command_prefix`` (e.g. ``"ssh -o BatchMode=yes login01"``),
``command_timeout``, ``submit_retry``, ``poll_min``, ``poll_max``,
``outage_limit`` (seconds of unreachable accounting tolerated).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from shinobi.backends.base import (
    Availability,
    Backend,
    BackendRun,
    Capabilities,
    Invocation,
    RunControl,
)
from shinobi.backends.process import read_log
from shinobi.errors import ConfigError
from shinobi.failures import cut_line

# the ledger of a run's jobs, <run folder>/slurm/jobs.tsv: core's convention, which
# `ninja clean --runs` reads
from shinobi.local_runs import JOBS_LEDGER, note_in_ledger
from shinobi.session import safe_name
from shinobi_slurm.commands import SlurmCommands, SlurmError
from shinobi_slurm.poller import JobWatch, PollTuning, SacctPoller, shared_poller
from shinobi_slurm.queue import query_queue
from shinobi_slurm.sacct import (
    FINAL_STATES,
    LIMITED_STATES,
    JobRecord,
    job_limits,
    query_jobs,
    with_true_exit,
)
from shinobi_slurm.sbatch import (
    TIMELIMIT_VARIABLE,
    Option,
    batch_script,
    exec_lines,
    job_name,
    log_path,
    memory_option,
    merge_options,
    overriding_environment,
    parse_sbatch_opts,
    resource_options,
    with_environment,
)
from shinobi_slurm.setting_values import POLL_FLOOR, SETTINGS_KEYS, seconds_setting
from shinobi_slurm.states import (
    STUCK_REASONS,
    Limits,
    classify,
    not_on_the_node,
    timeout_advice,
)
from shinobi_slurm.trial import (
    SlurmWouldRefuse,
    refusal_of_options,
    refuse_what_slurm_would,
    warn_now,
)

__all__ = ["JOBS_LEDGER", "SlurmBackend", "job_name", "poll_tuning"]

log = logging.getLogger("shinobi_slurm")

#: Seconds to wait, after scancel, for Slurm to confirm a job is gone.
CANCEL_WAIT = 60.0
#: Seconds between repeated scancels of a job the controller has not yet confirmed gone.
_CANCEL_AGAIN = 5.0


def poll_tuning(values: Mapping[str, Any]) -> PollTuning:
    """Polling pace from ``poll_min``, ``poll_max`` and ``outage_limit`` settings."""
    defaults = PollTuning()
    tuning = PollTuning(
        first=seconds_setting(values, "poll_min", defaults.first, POLL_FLOOR),
        ceiling=seconds_setting(values, "poll_max", defaults.ceiling, POLL_FLOOR),
        outage_limit=seconds_setting(values, "outage_limit", defaults.outage_limit),
    )
    if tuning.first > tuning.ceiling:  # rounds start at poll_min and stretch to poll_max
        raise ConfigError(
            f"[backend.slurm] poll_min ({tuning.first:g} s) is more than poll_max"
            f" ({tuning.ceiling:g} s): polling starts at poll_min and stretches to poll_max;"
            " swap them, or raise poll_max"
        )
    return tuning


def _names(steps: list[str]) -> str:
    shown = ", ".join(repr(s) for s in steps[:5])
    more = f" and {len(steps) - 5} more" if len(steps) > 5 else ""
    return f"step{'s' if len(steps) > 1 else ''} {shown}{more}"


#: sinfo node states in which a node takes no new job (a ``*`` suffix: not responding).
_NODE_DOWN = ("down", "drain", "drng", "fail", "inval", "unk", "futr")


def _partitions(lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    """From ``sinfo -o %P|%a|%D|%t``: partitions up, those with a node that can run a
    job, and the node states of the up partitions (``1 drain``) to say why."""
    up: list[str] = []
    working: list[str] = []
    states: list[str] = []
    for line in lines:
        parts = line.strip().split("|")
        if len(parts) != 4 or parts[1] != "up":
            continue
        name, count, state = parts[0].rstrip("*"), parts[2], parts[3]  # "*": the default
        if name not in up:
            up.append(name)
        states.append(f"{count} {state}")
        if not state.endswith("*") and not state.startswith(_NODE_DOWN) and name not in working:
            working.append(name)
    return up, working, states


def _last_line(text: str) -> str:
    """The last line with words, quoted as every route quotes a tool's line (cut at
    300 characters, and marked so: cut unmarked, a long path read as whole)."""
    for line in reversed(text.splitlines()):
        if line.strip():
            return cut_line(line.strip())
    return ""


#: Seconds a job may wait, for any other reason, before the run says why it waits.
PENDING_NOTICE = 120.0

#: Ordinary queueing, said (after :data:`PENDING_NOTICE`) as such: not a fault,
#: but a run that shows nothing for many minutes looks hung.
QUEUED = {
    "Resources": "it waits for the cluster to free the CPUs or memory it asks for",
    "Priority": "jobs of higher priority are ahead of it in the queue",
}


class _Waiting:
    """Tells the user, once per reason, why a step's job has not started.

    Without it a step whose job Slurm will never start (a drained node, a
    held job) showed nothing but "start" for as long as anyone waited.
    """

    def __init__(self, step: str, job_id: str, warn: Callable[[str], None]) -> None:
        self.step, self.job_id, self.warn = step, job_id, warn
        self.since = time.monotonic()
        self.said: set[str] = set()

    def saw(self, record: JobRecord) -> None:
        if record.state != "PENDING" or not record.reason or record.reason in self.said:
            return
        reason = record.reason.split(",")[0].strip()
        why = STUCK_REASONS.get(reason)
        waited = time.monotonic() - self.since
        if why is None and waited < PENDING_NOTICE:
            return
        self.said.add(record.reason)
        why = why.format(job=self.job_id) if why else QUEUED.get(reason, "Slurm has not started it")
        self.warn(
            f"shinobi: step {self.step!r}: Slurm job {self.job_id} has waited {waited:.0f} s"
            f" ({record.reason}): {why}; Ctrl-C cancels it"
        )


def _write_private(path: Path, text: str) -> None:
    """Write a job script only its owner can read: the tool's command line is in it,
    with the value of any secret input (``SecretStr``) the step is given, and the
    run folder may sit on storage the whole cluster reads. sbatch reads it as the
    same user; a script an earlier attempt left is made private too."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", closefd=False) as fh:
            fh.write(text)
    finally:
        os.close(fd)


def _configured_memory(settings: Mapping[str, Any]) -> str | bool:
    """The memory option of ``sbatch_opts`` (``--mem-per-cpu=64M``), for the hint of a job
    out of memory; False when the step's declaration set the job's memory."""
    option = memory_option(settings)
    return option.argument() if option is not None else False


def _timeout_advice(record: JobRecord, commands: SlurmCommands) -> str:
    """What to do if ``record`` timed out: this process submitted the job, so its own
    ``SBATCH_TIMELIMIT`` is the one sbatch read, unless sbatch ran over ssh, which
    does not send it (looked up for a TIMEOUT alone)."""
    if record.state != "TIMEOUT":
        return ""
    return timeout_advice(commands.sbatch_environment().get(TIMELIMIT_VARIABLE))


def _size(path: str) -> int:
    """The bytes already in the log at ``path`` (0: none yet)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _lives(queued: list[JobRecord], run_id: str) -> bool:
    """Whether the queue's records of a job say it is the run's and has not ended."""
    return any(
        record.state not in FINAL_STATES and record.bears(job_name(run_id)) for record in queued
    )


#: Queue states of a job whose end Slurm has taken in hand (after scancel).
_ENDING = ("COMPLETING", "CANCELLED")


class SlurmBackend(Backend):
    """Runs each step as a Slurm batch job and blocks until it ends."""

    name = "slurm"
    capabilities = Capabilities(
        isolation=True, enforces_resources=True, remote=True, images=False, interruptible=True
    )
    settings_keys = SETTINGS_KEYS

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        """Refuse each value a run (or ``ninja compile``) would, for ``ninja doctor``:
        its check() asks only whether Slurm answers, so a bad poll_max passed it.
        Options Slurm would refuse are asked of Slurm itself, as a run asks first."""
        given = parse_sbatch_opts(settings.get("sbatch_opts"))
        commands = SlurmCommands.from_settings(settings)
        poll_tuning(settings)
        seconds_setting(settings, "status_interval", 5.0, POLL_FLOOR)
        if given:  # well formed, but Slurm may still refuse them: a partition's typo
            refused = refusal_of_options(SlurmCommands(commands.prefix, timeout=15.0), given)
            if refused is not None:
                raise ConfigError(f"[backend.slurm] sbatch_opts: {refused}")

    @property
    def commands(self) -> SlurmCommands:
        return SlurmCommands.from_settings(self.settings)

    @property
    def poller(self) -> SacctPoller:
        return shared_poller(self.commands, poll_tuning(self.settings))

    # -- doctor ------------------------------------------------------------------
    def check(self) -> Availability:
        commands = SlurmCommands(self.commands.prefix, timeout=15.0)
        try:
            version = commands.run("sbatch", ["--version"]).strip()
            lines = commands.run("sinfo", ["-h", "-o", "%P|%a|%D|%t"]).splitlines()
            commands.run("sacct", ["-X", "-n", "-P", "-S", "now", "-o", "JobID"])
        except SlurmError as exc:
            return Availability(False, str(exc))
        up, working, node_states = _partitions(lines)
        if not up:
            return Availability(False, f"{version}: no partition is up (sinfo)")
        if not working:
            return Availability(
                False,
                f"{version}: partitions up ({', '.join(up)}) but no node can run a job"
                f" (sinfo: {', '.join(node_states)}); ask the admin, or `scontrol update`"
                " the nodes back",
            )
        return Availability(True, f"{version}; partitions up: {', '.join(working)}")

    # -- the jobs of a run whose ninja is gone ----------------------------------------
    def live_jobs(self, listed: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
        """One squeue call for the jobs of every run given: the controller holds each
        job that is queued or running, and an ended one for a while only, in its final
        state. A job id Slurm has since given to another job (a controller reset) is
        told by its name, which is its run's."""
        ids = {job for jobs in listed.values() for job in jobs if job.isdigit()}
        queued, error = query_queue(self.commands, ids)
        if error is not None:
            raise SlurmError(error)
        return {
            run: [job for job in jobs if _lives(queued.get(job, []), run)]
            for run, jobs in listed.items()
        }

    def jobs_stop_command(self, job_ids: Sequence[str]) -> str | None:
        return f"scancel {' '.join(job_ids)}"

    # -- the job script ----------------------------------------------------------
    def options(self, invocation: Invocation, stdout: str, stderr: str) -> list[Option]:
        derived = [
            Option("job-name", job_name(invocation.run_id)),
            Option("comment", safe_name(invocation.step)),
            Option("output", log_path(stdout)),
            Option("error", log_path(stderr)),
            # a step's logs gather every attempt (ctx.run() again after a failure),
            # as a native step's do: Slurm would truncate them for each new job
            Option("open-mode", "append"),
            Option("chdir", invocation.cwd),
            *resource_options(invocation.resources),
        ]
        return merge_options(derived, parse_sbatch_opts(self.settings.get("sbatch_opts")))

    def script(self, invocation: Invocation, stdout: str, stderr: str) -> str:
        return batch_script(
            self.options(invocation, stdout, stderr),
            exec_lines(with_environment(invocation.argv, invocation.env)),
            comments=[f"shinobi step {invocation.step!r}, run {invocation.run_id or '-'}"],
        )

    def render(self, invocation: Invocation) -> list[str]:
        stdout = invocation.stdout_path or "<step log>.out"
        stderr = invocation.stderr_path or "<step log>.err"
        options = self.options(invocation, stdout, stderr)
        return [
            "sbatch",
            "--parsable",
            *(o.argument() for o in options),
            "--wrap",
            *exec_lines(with_environment(invocation.argv, invocation.env)),
        ]

    def prepare(self, invocations: list[Invocation]) -> list[str]:
        """Refuse bad sbatch_opts, and options Slurm would reject, before any job;
        warn about what a job will not have."""
        parse_sbatch_opts(self.settings.get("sbatch_opts"))
        poll_tuning(self.settings)  # a setting's bad value is one line now, not a step's failure
        planned = [
            (i.step, self.options(i, i.stdout_path or os.devnull, i.stderr_path or os.devnull))
            for i in invocations
        ]
        # a path no #SBATCH line can hold (a line break in the directory) is refused
        # now, not as a step's failure once the steps before it have run
        for _, options in planned:
            batch_script(options, [])
        # SBATCH_* variables of this shell beat the #SBATCH lines written: said once, here,
        # and before a refusal, which one of them may have caused
        warnings = overriding_environment(
            self.commands.sbatch_environment(),
            (options for _, options in planned),
            parse_sbatch_opts(self.settings.get("sbatch_opts")),
        )
        try:
            refuse_what_slurm_would(self.commands, planned)
        except SlurmWouldRefuse:
            warn_now(warnings)
            raise
        in_venv = sorted({i.step for i in invocations if i.venv})
        if in_venv:
            warnings.append(
                f"the slurm backend runs {_names(in_venv)} without a virtualenv (it activates"
                " none): the job finds its commands on the node's PATH"
            )
        with_image = sorted({i.step for i in invocations if i.image})
        if with_image:
            warnings.append(
                f"the slurm backend runs {_names(with_image)} on the node itself, not in the"
                " declared image (use a container backend, or ninja compile --container-runtime)"
            )
        return warnings

    # -- running -----------------------------------------------------------------
    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        if control.cancelled.is_set():
            return BackendRun(returncode=-15, signal=15, cancelled=True)
        temp = None
        stdout, stderr = invocation.stdout_path, invocation.stderr_path
        if stdout is None or stderr is None:
            base = invocation.scratch_dir or invocation.cwd
            temp = tempfile.mkdtemp(prefix=".shinobi-slurm-", dir=base)
            stdout = stdout or os.path.join(temp, "stdout")
            stderr = stderr or os.path.join(temp, "stderr")
        try:
            return self._run(invocation, control, stdout, stderr)
        finally:
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)

    def _submit(
        self, invocation: Invocation, stdout: str, stderr: str, warn: Callable[[str], None]
    ) -> str:
        for path in (stdout, stderr):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        text = self.script(invocation, stdout, stderr)
        if not invocation.scratch_dir:
            return self.commands.submit([], stdin=text)
        folder = Path(invocation.scratch_dir) / "slurm"
        script = folder / f"{safe_name(invocation.step)}.sbatch"
        folder.mkdir(parents=True, exist_ok=True)
        _write_private(script, text)
        job_id = self.commands.submit([str(script)])
        note_in_ledger(folder / JOBS_LEDGER, job_id, invocation.step, warn)
        return job_id

    def _run(
        self, invocation: Invocation, control: RunControl, stdout: str, stderr: str
    ) -> BackendRun:
        # what earlier attempts (ctx.run() again) left in the logs: not this job's output
        before = {path: _size(path) for path in (stdout, stderr)}
        try:
            job_id = self._submit(invocation, stdout, stderr, control.warn)
        except SlurmError as exc:
            unanswered = exc.transient and not exc.never_sent
            taken = self._taken_anyway(invocation) if unanswered else None
            if taken is None:
                fix = f"; {exc.check}, then run again" if exc.never_sent or exc.transient else ""
                said = f"not submitted: {exc}{fix}"
                if unanswered:
                    said = f"{self._cancel_unanswered(invocation, exc)}{fix}"
                return BackendRun(returncode=1, stderr=f"{exc}\n", reason=said)
            job_id = taken
            control.warn(
                f"shinobi: Slurm answered the submission of step {invocation.step!r} late"
                f" ({exc}), having taken it as job {job_id}: the step waits for that job"
            )
            if invocation.scratch_dir:
                ledger = Path(invocation.scratch_dir) / "slurm" / JOBS_LEDGER
                note_in_ledger(ledger, job_id, invocation.step, control.warn)
        poller = self.poller
        watch = poller.watch(job_id, job_name(invocation.run_id))
        stopped = threading.Event()

        def stop() -> tuple[int, ...]:
            stopped.set()
            try:
                self.commands.cancel([job_id])
                message = (
                    f"shinobi: interrupted: cancelled Slurm job {job_id} (step"
                    f" {invocation.step!r}) with scancel"
                )
            except SlurmError as exc:
                message = (
                    f"shinobi: could not cancel Slurm job {job_id} (step {invocation.step!r}):"
                    f" {exc}; run `scancel {job_id}` yourself"
                )
            control.warn(message)  # shown once, by the run's progress
            poller.kick()
            return ()

        unregister = control.on_cancel(stop)
        try:
            self._wait(
                watch,
                stopped,
                control.hurry,
                _Waiting(invocation.step, job_id, control.warn),
                lambda: poller.outage_since is not None,
            )
        finally:
            unregister()
            poller.forget(watch)
        gone = not stopped.is_set() or self._wait_gone(job_id, control.hurry)
        cancelled = stopped.is_set() and not (gone and self._completed_anyway(job_id, watch))
        run = self._result(invocation, job_id, watch, (stdout, stderr), before, cancelled)
        if gone:
            return run
        # the run must not say every step was stopped: this job may run on
        still = f"Slurm job {job_id}"
        return dataclasses.replace(
            run,
            reason=f"interrupted, but Slurm never confirmed that job {job_id} was cancelled:"
            f" it may still be running; check `squeue -j {job_id}` and `scancel {job_id}`",
            details={**run.details, "still_running": still},
        )

    def _completed_anyway(self, job_id: str, watch: JobWatch) -> bool:
        """Whether the job the stop cancelled had completed already, as Slurm
        recorded it (its ``watch`` then holds that record): the poller had not
        seen it end when the scancel went out. Reported cancelled, it ran
        again next time over its complete product, which stays where a job
        runs (an appending tool's was doubled). One sacct call, made only
        after a stop; a job accounting does not yet show ended stays cancelled.
        """
        if watch.record is not None and watch.record.state == "COMPLETED":
            return True
        try:
            records = query_jobs(self.commands, [job_id]).get(job_id, [])
        except SlurmError:
            return False
        done = next((r for r in records if r.task is None and r.state == "COMPLETED"), None)
        if done is None:
            return False
        watch.record = done
        return True

    def _queued_for(self, invocation: Invocation) -> list[tuple[str, str]]:
        """(job id, state) of every job the queue holds for the step: found by the
        run's job name and the step's comment, which no other job has. Raises
        SlurmError when Slurm cannot be asked."""
        name, comment = job_name(invocation.run_id), safe_name(invocation.step)
        listed = self.commands.run("squeue", ["-h", "-n", name, "-o", "%i|%k|%T"])
        found = []
        for line in listed.splitlines():
            job, _, rest = line.strip().partition("|")
            said, _, state = rest.rpartition("|")
            if job and said == comment:
                found.append((job, state))
        return found

    def _taken_anyway(self, invocation: Invocation) -> str | None:
        """The job a submission Slurm did not answer (a controller stalled past
        ``command_timeout``) created all the same, when there is exactly one such
        job still to run: the step adopts it rather than failing (and cancelling
        it). None when there is none, more than one, or Slurm cannot say."""
        try:
            live = [job for job, state in self._queued_for(invocation) if state != "COMPLETING"]
        except SlurmError:
            return None
        return live[0] if len(live) == 1 else None

    def _cancel_unanswered(self, invocation: Invocation, exc: SlurmError) -> str:
        """Cancel the step's job that an sbatch sent but not answered may have created.

        A slurmctld too busy to answer within ``command_timeout`` may still have
        taken the job: it ran the step's tool unseen while the step was reported
        "not submitted" (and ran beside the same step of the next run). It is
        found by the run's job name and the step's comment, which no other job has.
        """
        name = job_name(invocation.run_id)
        try:
            found = [job for job, _ in self._queued_for(invocation)]
            if found:
                self.commands.cancel(found)
        except SlurmError as again:
            return (
                f"Slurm did not answer the submission ({exc}), which it may have taken, and"
                f" could not be asked whether it did ({again}): `squeue -n {name}` shows it"
                " if so; cancel it before running again"
            )
        if not found:
            return f"Slurm did not answer the submission ({exc}) and queues no job for the step"
        return (
            f"Slurm did not answer the submission ({exc}) but had taken it: cancelled"
            f" Slurm job {', '.join(found)}"
        )

    def _wait(
        self,
        watch: JobWatch,
        stopped: threading.Event,
        hurry: threading.Event,
        waiting: _Waiting,
        accounting_down: Callable[[], bool],
    ) -> None:
        """Until the job's final record, or after a cancel, until accounting has it.

        A cancelled job's end is waited for in accounting only while accounting
        answers: during an outage the controller, asked next (:meth:`_wait_gone`),
        is what can say the job is gone, and a Ctrl-C must not sit out
        :data:`CANCEL_WAIT` for a record that cannot come.
        """
        cancelled_at: float | None = None
        while not watch.done.wait(0.25):
            if watch.latest is not None and not stopped.is_set():
                waiting.saw(watch.latest)
            if stopped.is_set():
                cancelled_at = cancelled_at or time.monotonic()
                if (
                    hurry.is_set()
                    or accounting_down()
                    or time.monotonic() - cancelled_at > CANCEL_WAIT
                ):
                    return

    def _wait_gone(self, job_id: str, hurry: threading.Event) -> bool:
        """After scancel: whether squeue stopped showing the job (its processes are
        reaped) within :data:`CANCEL_WAIT`, or before a second interrupt.

        A controller that does not answer (the scancel itself may have failed
        for it) is asked again, and the job cancelled again, every few seconds
        until it does: an outage must not leave the job running while the run
        reports it stopped.
        """
        deadline = time.monotonic() + CANCEL_WAIT
        cancel_again = time.monotonic() + _CANCEL_AGAIN
        while time.monotonic() < deadline:
            state = self._queue_state(job_id)
            if not state:
                return True
            if time.monotonic() >= cancel_again:
                cancel_again = time.monotonic() + _CANCEL_AGAIN
                with contextlib.suppress(SlurmError):
                    self.commands.cancel([job_id])
            if hurry.wait(0.3):
                # a second interrupt ends the wait: a job Slurm is already finishing
                # off (COMPLETING: its scancel taken, its processes being killed) is
                # stopped, and must not keep the run "not all stopped" for ever
                return self._queue_state(job_id) in ("", *_ENDING)
        return False

    def _queue_state(self, job_id: str) -> str:
        """The job's state in the queue; "" once the queue no longer holds it."""
        try:
            return self.commands.run("squeue", ["-h", "-j", job_id, "-o", "%T"]).strip()
        except SlurmError as exc:
            if not (exc.transient or exc.never_sent):
                return ""  # squeue no longer knows the job at all
            return "unknown: Slurm does not answer"

    def _result(
        self,
        invocation: Invocation,
        job_id: str,
        watch: JobWatch,
        logs: tuple[str, str],
        before: dict[str, int],
        stopped: bool,
    ) -> BackendRun:
        """The step's result; ``before``: the bytes each log held before this job."""
        stdout, stderr = logs
        details: dict[str, object] = {"slurm_job_id": job_id}
        record = watch.record
        if record is None:
            if stopped:
                return BackendRun(
                    returncode=-15,
                    signal=15,
                    cancelled=True,
                    reason=f"interrupted; Slurm job {job_id} was cancelled",
                    details=details,
                )
            lost = f"lost track of Slurm job {job_id}"
            if watch.error:  # the poller's account names no job: this step's may run on
                lost = f"{watch.error}; {self._cancel_lost(job_id)}"
            return BackendRun(returncode=1, stderr=f"{lost}\n", reason=lost, details=details)
        if record.started:
            self._await_logs(stdout)
        out = read_log(stdout, before.get(stdout, 0), invocation.stdout_capture)
        err = read_log(stderr, before.get(stderr, 0), invocation.stderr_capture)
        record = with_true_exit(self.commands, record)
        # `ninja run --backend slurm` runs the tool itself in the job, never an engine
        outcome = classify(
            record,
            self._limits(record),
            contained=False,
            memory_configured=_configured_memory(self.settings),
            on_timeout=_timeout_advice(record, self.commands),
        )
        details.update(slurm_state=record.state, slurm_exit=record.exit_text)
        if record.started:  # the step's own times run from submission to its end being seen
            details.update(slurm_start=record.start, slurm_end=record.end, slurm_nodes=record.nodes)
        reason: str | None = None
        if outcome.phase != "completed":
            said = _last_line(err) or _last_line(out)
            tail = f": {said}" if said and outcome.message and "exited" in outcome.message else ""
            reason = f"{outcome.message}{tail} (Slurm job {job_id}, {record.state})"
            tool = invocation.argv[0]
            if outcome.returncode == 127 and said and _not_found(said, tool):  # the job's shell
                reason = f"{not_on_the_node(tool, 'this host')} (Slurm job {job_id})"
        returncode = outcome.returncode if outcome.returncode is not None else 1
        return BackendRun(
            returncode=returncode,
            stdout=out,
            stderr=err,
            signal=outcome.signal,
            reason=reason,
            oom=outcome.oom,
            cancelled=stopped,
            details=details,
        )

    def _cancel_lost(self, job_id: str) -> str:
        """Cancel the job of a step whose wait ended without word from accounting.

        The step is reported failed, so its job must not run on unseen: the
        next run would submit the same step beside it, both writing the same
        outputs. scancel asks slurmctld, which usually still answers when
        slurmdbd (accounting) is what is down.
        """
        try:
            self.commands.cancel([job_id])
        except SlurmError as exc:
            return (
                f"this step's Slurm job {job_id} may still be running and could not be"
                f" cancelled ({exc}): `scancel {job_id}` before running again"
            )
        return f"cancelled this step's Slurm job {job_id}, so it does not run on unseen"

    def _limits(self, record: JobRecord) -> Limits | None:
        """What the job was allowed, for a job stopped for going over it (one sacct call)."""
        if record.state not in LIMITED_STATES:
            return None
        memory, time_limit = job_limits(self.commands, record.base)
        return Limits(memory=memory, time=time_limit)

    @staticmethod
    def _await_logs(path: str, timeout: float = 5.0) -> None:
        """Give a shared filesystem a moment to show a finished job's log file."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.1)
        with contextlib.suppress(OSError):
            os.stat(os.path.dirname(path))


def _not_found(said: str, tool: str) -> bool:
    """Whether the job's shell said it found no ``tool``: ``tool: command not found``
    for a name, ``/path/tool: No such file or directory`` for a path (in the job
    script's words, ``.../slurm_script: line 9: ...``)."""
    return "not found" in said or (f"{tool}: No such file or directory" in said and "/" in tool)
