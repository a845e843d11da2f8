"""``ninja compile --engine slurm``: scripts, submission, and answering for the launch after.

Core has already checked, flattened and ordered the recipe
(:mod:`shinobi.offload`); this renders one sbatch script per job, submits
them dependencies first, and rebuilds a launch's state from its handle with
ONE sacct call however many jobs it has (:meth:`SlurmTarget.status_many`
answers for several launches with one call too).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from shinobi.errors import ConfigError, MachineRefused, UsageError, did_you_mean
from shinobi.launch.handle import JobJournal, LaunchHandle, LaunchJob, owner_of
from shinobi.launch.submitter import submitter_running
from shinobi.launch.tracking import LaunchStatus, LogSource
from shinobi.offload.base import CompileOptions, OffloadTarget, Script, Workflow
from shinobi.offload.jobs import Job, JobGraph
from shinobi_slurm.commands import SlurmCommands, SlurmError, SlurmUnreachable
from shinobi_slurm.sbatch import (
    TIMELIMIT_VARIABLE,
    Option,
    job_name,
    launch_job_name,
    memory_option,
    overriding_environment,
    parse_sbatch_opts,
)
from shinobi_slurm.scripts import JobFiles, ScriptContext, job_options, job_script, script_of
from shinobi_slurm.setting_values import POLL_FLOOR, SETTINGS_KEYS, seconds_setting
from shinobi_slurm.trial import refuse_what_slurm_would, warn_now

__all__ = ["SlurmTarget", "refuse_arrays_too_wide"]

_MAX_ARRAY_SIZE = re.compile(r"^MaxArraySize\s*=\s*(\d+)\s*$", re.MULTILINE)


def refuse_arrays_too_wide(commands: SlurmCommands, jobs: Sequence[Job]) -> None:
    """Refuse a scatter wider than the cluster's job arrays before anything is submitted.

    Slurm's own answer to ``--array=0-1500`` over a MaxArraySize of 1001 is
    "Invalid job array specification", which names neither the step nor the
    limit, and reads like a mistake in ``sbatch_opts``. Asking the
    controller's configuration costs one ``scontrol`` call, made only when
    the workflow has an array at all.
    """
    widest = max((job for job in jobs if job.tasks), key=lambda job: job.tasks or 0, default=None)
    if widest is None or widest.tasks is None:
        return
    try:
        found = _MAX_ARRAY_SIZE.search(commands.run("scontrol", ["show", "config"]))
    except SlurmError:
        return  # cannot tell from here: the submission (or its trial) will say
    if found is None or widest.tasks <= int(found.group(1)):
        return
    raise UsageError(
        f"step {widest.name!r} scatters over {widest.tasks} slices, more than one Slurm job"
        f" array may hold on this cluster (MaxArraySize = {found.group(1)}); nothing was"
        " submitted: scatter over fewer slices (split the list and run the recipe per part),"
        " or ask the site to raise MaxArraySize in slurm.conf"
    )


#: sbatch options that limit what a job's processes may use (by their long names,
#: which parse_sbatch_opts gives every option, -c included).
_JOB_LIMITS = frozenset({"mem", "mem-per-cpu", "mem-per-gpu", "cpus-per-task"})


class SlurmTarget(OffloadTarget):
    """Compiles a recipe into sbatch scripts chained with afterok, and tracks the launch."""

    name = "slurm"
    settings_keys = SETTINGS_KEYS

    @property
    def commands(self) -> SlurmCommands:
        return SlurmCommands.from_settings(self.settings)

    # -- compile -----------------------------------------------------------------
    def render(self, jobs: JobGraph, options: CompileOptions) -> Workflow:
        workflow = Workflow(engine=self.name, options=options, jobs=jobs)
        context = ScriptContext.of(jobs, options, self.settings)
        scripts = workflow.scripts
        for job in jobs.jobs:
            scripts.append(Script(job.name, *script_of(context, job)))
        daemon_owned = self._limits_outside_containers(jobs)
        if daemon_owned is not None:
            jobs.warnings.append(daemon_owned)
        return workflow

    def _limits_outside_containers(self, jobs: JobGraph) -> str | None:
        """The note for job limits set in ``sbatch_opts`` that a docker or podman container
        escapes: its daemon starts it in a control group of its own, outside the job's,
        so ``--mem`` limits the job's shell and client, not the step (a step that used
        twice as much ended "completed"). Declared resources reach the container."""
        engines = sorted({job.runtime for job in jobs.jobs} & {"docker", "podman"})
        if not engines:
            return None
        runtime = " and ".join(engines)
        try:
            given = parse_sbatch_opts(self.settings.get("sbatch_opts"))
        except ConfigError:  # refused with its own words where the options are used
            return None
        limits = [o.argument() for o in given if o.name in _JOB_LIMITS]
        if not limits:
            return None
        return (
            f"sbatch_opts sets {', '.join(limits)} for each job, but {runtime} starts its"
            " containers outside the job (in its daemon's control group), where that does"
            " not reach the steps; declare the steps' resources (Resources(memory=..., cpus=...)),"
            f" which {runtime} applies to each container as --memory and --cpus"
        )

    # -- submit ------------------------------------------------------------------
    def new_handle(self, workflow: Workflow) -> LaunchHandle:
        options = workflow.options
        run_dir = str(workflow.run_dir)
        configured_memory = memory_option(self.settings)
        jobs = []
        for job in workflow.jobs.jobs:
            files = JobFiles.of(run_dir, job)
            details: dict[str, object] = {"exit_code": files.exit_code}
            if job.runtime != "none":
                details["contained"] = True  # its tool runs in a container engine
            if configured_memory is not None:  # sbatch_opts, not the step, set it: which
                details["memory_option"] = configured_memory.argument()
            # what ninja status names if the job (or a task of the array) ends unfinished
            if job.tasks is None:
                details.update(job.left_paths(workflow.jobs.cwd))
            else:
                slices = [job.left_paths(workflow.jobs.cwd, task) for task in range(job.tasks)]
                if any(slices):
                    details["slices"] = slices
            if job.guard:
                details.update(guard=job.guard, skipped=files.skipped)
            if job.loop_end is not None:
                loop, iterations, until = job.loop_end
                details.update(loop=loop, iterations=iterations, until=until)
                if files.loop_before is not None:  # the until file as it was before the loop
                    details["until_before"] = files.loop_before
            jobs.append(
                LaunchJob(
                    step=job.name,
                    script=files.script,
                    stdout=files.stdout,
                    stderr=files.stderr,
                    tasks=job.tasks,
                    after=[workflow.jobs.jobs[i].name for i in job.after()],
                    details=details,
                )
            )
        return LaunchHandle(
            engine=self.name,
            recipe=workflow.recipe,
            run_id=options.run_id,
            workdir=str(options.workdir),
            target=options.target,
            cwd=str(options.cwd),
            state="submitting",
            jobs=jobs,
            # what a TIMEOUT's advice names, since sbatch read it (None: it was unset)
            extra={
                "job_name": job_name(options.run_id),
                "sbatch_timelimit": self.commands.sbatch_environment().get(TIMELIMIT_VARIABLE),
            },
        )

    def submit(self, workflow: Workflow, handle: LaunchHandle, journal: JobJournal) -> None:
        # ninja status and ninja run read these: one they would refuse is refused
        # here, before a launch exists that status could not follow
        from shinobi_slurm.backend import poll_tuning

        self.poll_interval()
        poll_tuning(self.settings)
        graph = workflow.jobs
        context = ScriptContext.of(graph, workflow.options, self.settings)
        (workflow.run_dir / "logs").mkdir(parents=True, exist_ok=True)
        (workflow.run_dir / "scripts").mkdir(parents=True, exist_ok=True)
        ids: dict[str, str] = {}
        commands = self.commands
        files_of = [JobFiles.of(context.run_dir, job) for job in graph.jobs]
        refuse_arrays_too_wide(commands, graph.jobs)
        planned = [
            (job.name, job_options(context, job, files))
            for job, files in zip(graph.jobs, files_of, strict=True)
        ]
        # said first: a refusal may be of what an overriding variable asked for
        _warn_of_environment(commands, [options for _, options in planned], context.configured)
        refuse_what_slurm_would(commands, planned)
        for job, record, files in zip(graph.jobs, handle.jobs, files_of, strict=True):
            try:  # each script names the ids of the jobs before it: written as it goes
                Path(files.script).write_text(job_script(context, job, files, ids), "utf-8")
            except OSError as exc:  # a full disk: half a workflow is no use either
                raise self._unwritten(commands, ids, files.script, exc) from None
            try:
                job_id = commands.submit([files.script])
            except SlurmError as exc:
                raise self._abandon(commands, ids, job.name, exc, context.job_name.value) from None
            ids[job.name] = job_id
            record.job_id = job_id
            journal.record(record)

    @staticmethod
    def _unwritten(
        commands: SlurmCommands, ids: dict[str, str], script: str, exc: OSError
    ) -> MachineRefused:
        """Cancel what was submitted before ``script`` could not be written (a full
        disk): it was left running, unsaid, and a resubmit ran it twice."""
        said = f"cannot write the job script {script} ({exc.strerror or exc})"
        if not ids:
            return MachineRefused(
                f"{said}; nothing was submitted: free some space and submit again"
            )
        undone = _cancel_submitted(commands, ids)
        return MachineRefused(f"{said}; {undone}: free some space and submit again")

    @staticmethod
    def _abandon(
        commands: SlurmCommands,
        ids: dict[str, str],
        step: str,
        exc: SlurmError,
        name: str | None = None,
    ) -> SlurmError:
        """Cancel what was submitted before ``step`` was refused: half a workflow is no use."""
        if exc.transient and not exc.never_sent and name:
            return _unanswered(commands, step, exc, name)
        if exc.never_sent:  # not a refusal: the controller never heard of the job
            said = f"could not reach Slurm to submit step {step!r} ({exc})"
            fix = f"{exc.check}, then submit again"
        else:
            said = f"Slurm refused step {step!r}: {exc}"
            fix = "fix what it names (sbatch_opts, the step's resources) and submit again"
        error = SlurmUnreachable if exc.never_sent else SlurmError
        if not ids:
            return error(f"{said}; nothing was submitted: {fix}")
        return error(f"{said}; {_cancel_submitted(commands, ids)}: {fix}")

    # -- status ------------------------------------------------------------------
    def status(self, handle: LaunchHandle) -> LaunchStatus:
        return self.status_many([handle])[0]

    def status_many(self, handles: Sequence[LaunchHandle]) -> list[LaunchStatus]:
        """The state of every launch from ONE sacct call covering all their jobs."""
        from shinobi_slurm.status import launch_statuses  # sacct's parsing: not for compiling

        return launch_statuses(self.commands, handles)

    # -- cancel ------------------------------------------------------------------
    def cancel(self, handle: LaunchHandle) -> list[str]:
        status = self.status(handle)
        active = [s.job_id for s in status.steps if s.job_id and not s.final]
        said = []
        commands = self.commands
        name = launch_job_name(handle)
        if active:
            shown = " ".join(active[:10]) + (" ..." if len(active) > 10 else "")
            try:
                # only jobs of the launch's name: an id Slurm reused is another job now
                commands.cancel(active, name)
            except SlurmError as exc:
                # a controller that never heard the scancel, or never answered it, and
                # a host without scancel are the machine's problem (74), not a refusal
                unreachable = exc.never_sent or exc.transient or isinstance(exc, SlurmUnreachable)
                if not unreachable and "permission denied" in str(exc).lower():
                    # another user's jobs: trying again, or scancel, cannot work
                    owner = owner_of(Path(str(handle.path)), "the user who submitted them")
                    raise SlurmError(
                        f"could not cancel the {len(active)} job(s) of {handle.name}: Slurm"
                        f" refused ({exc}); they are {owner}'s, not this user's: {owner} (or a"
                        " Slurm operator) can cancel them"
                    ) from None
                away = f"; {exc.check}, then" if unreachable else ";"
                error = SlurmUnreachable if unreachable else SlurmError
                raise error(
                    f"could not cancel the {len(active)} job(s) of {handle.name} ({exc}){away}"
                    f" run `ninja cancel {handle.run_id}` again, or `scancel --name={name} {shown}`"
                ) from None
            unseen = sum(1 for s in status.steps if s.job_id and s.phase == "unknown")
            if unseen and status.error is not None:  # scancel is silent on an ended job
                said.append(
                    f"asked scancel to cancel {len(active)} Slurm job(s): {shown}; the state of"
                    f" {unseen} of them was unknown (Slurm's accounting did not answer), so some"
                    f" may have ended before: `ninja status {handle.run_id}` says once it answers"
                )
            elif unseen:  # accounting answered, and knows nothing of them
                said.append(
                    f"asked scancel to cancel {len(active)} Slurm job(s): {shown}; Slurm has no"
                    f" record of {unseen} of them (purged from its accounting, or never"
                    " this cluster's), so there was nothing of those to cancel"
                )
            else:
                said.append(f"cancelled {len(active)} Slurm job(s) with scancel: {shown}")
        if handle.state == "submitting":  # jobs handed over that no record names yet
            commands.cancel_named(name)
            when = (
                "is still being submitted"
                if submitter_running(handle) is not None
                else "was still submitting when its submitter stopped"
            )
            said.append(f"the launch {when}: also cancelled every job named {name}")
        if not said:
            said.append(f"nothing to cancel: every job of {handle.name} has already ended")
        return said

    # -- logs --------------------------------------------------------------------
    def log_sources(self, handle: LaunchHandle, step: str | None = None) -> list[LogSource]:
        jobs = handle.jobs
        only: int | None = None  # STEP[k]: one task of an array, named as a run names a slice
        if step is not None:
            jobs = [j for j in handle.jobs if j.step == step]
            if not jobs:
                jobs, only = _task_of(handle.jobs, step)
            if not jobs:
                names = [j.step for j in handle.jobs]
                raise UsageError(
                    f"launch {handle.name} has no step {step!r}{did_you_mean(step, names)}"
                    f" (steps: {', '.join(names)})"
                )
        sources = []
        for job in jobs:
            tasks = range(job.tasks) if job.tasks else [None]
            for task in tasks if only is None else [only]:
                label = job.step if task is None else f"{job.step}[{task}]"
                for stream, path in (("stdout", job.stdout), ("stderr", job.stderr)):
                    if path:
                        where = path if task is None else path.replace("%a", str(task))
                        sources.append(LogSource(job.step, stream, where, label))  # type: ignore[arg-type]
        return sources

    def poll_interval(self) -> float:
        return seconds_setting(self.settings, "status_interval", 5.0, POLL_FLOOR)


def _warn_of_environment(
    commands: SlurmCommands, jobs: Sequence[Sequence[Option]], configured: Sequence[Option]
) -> None:
    """Say, once for the launch, each ``SBATCH_*`` variable of this shell that beats an
    ``#SBATCH`` line of its scripts (see :func:`~.sbatch.overriding_environment`): none
    when ``commands`` submit over ssh, which does not send them."""
    warn_now(overriding_environment(commands.sbatch_environment(), jobs, configured))


def _unanswered(commands: SlurmCommands, step: str, exc: SlurmError, name: str) -> SlurmError:
    """Cancel every job of the launch, ``step``'s too, when its sbatch was sent but not answered.

    sbatch may have created the job before its answer was lost (a slurmctld too
    busy to reply within ``command_timeout``): that job, whose id ninja never
    read, ran its tool unseen while the error said nothing was submitted.
    Every job of the launch shares ``name``, so one ``scancel --name`` finds it.
    """
    said = f"Slurm did not answer the submission of step {step!r} ({exc}), which it may have taken"
    fix = f"{exc.check}, then submit again"
    try:
        commands.cancel_named(name)
    except SlurmError as cancel_exc:
        return SlurmUnreachable(
            f"{said}; cancelling the launch's jobs failed too ({cancel_exc}): run"
            f" `scancel --name={name}`, then {fix}"
        )
    return SlurmUnreachable(f"{said}; every job named {name} was cancelled: {fix}")


def _task_of(jobs: Sequence[LaunchJob], name: str) -> tuple[list[LaunchJob], int | None]:
    """The array job and task ``STEP[k]`` names, as ``ninja logs`` names a run's slice."""
    step, bracket, rest = name.partition("[")
    if not bracket or not rest.endswith("]") or not rest[:-1].isdigit():
        return [], None
    task = int(rest[:-1])
    found = [j for j in jobs if j.step == step and j.tasks and task < j.tasks]
    return found, task if found else None


def _cancel_submitted(commands: SlurmCommands, ids: dict[str, str]) -> str:
    """Cancel the jobs a submission that stopped part-way had handed over; what was done."""
    try:
        commands.cancel(list(ids.values()))
        return f"the {len(ids)} job(s) already submitted were cancelled"
    except SlurmError as exc:
        return (
            f"cancelling the {len(ids)} job(s) already submitted failed too ({exc});"
            f" run `scancel {' '.join(ids.values())}`"
        )
