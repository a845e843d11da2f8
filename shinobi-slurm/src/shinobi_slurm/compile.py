"""``ninja compile --engine slurm``: scripts, submission, and answering for the launch after.

Core has already checked, flattened and ordered the recipe
(:mod:`shinobi.offload`); this renders one sbatch script per job, submits
them dependencies first, and rebuilds a launch's state from its handle with
ONE sacct call however many jobs it has (:meth:`SlurmTarget.status_many`
answers for several launches with one call too).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from shinobi.errors import UsageError
from shinobi.launch.handle import JobJournal, LaunchHandle, LaunchJob
from shinobi.launch.tracking import LaunchStatus, LogSource, StepState
from shinobi.offload.base import CompileOptions, OffloadTarget, Script, Workflow
from shinobi.offload.jobs import JobGraph
from shinobi_slurm.backend import job_name
from shinobi_slurm.commands import SlurmCommands, SlurmError
from shinobi_slurm.queue import query_queue
from shinobi_slurm.sacct import JobRecord, query_jobs
from shinobi_slurm.scripts import JobFiles, ScriptContext, job_script
from shinobi_slurm.states import NEVER_RAN, Outcome, classify, combine_tasks

__all__ = ["SlurmTarget"]


class SlurmTarget(OffloadTarget):
    """Compiles a recipe into sbatch scripts chained with afterok, and tracks the launch."""

    name = "slurm"

    @property
    def commands(self) -> SlurmCommands:
        return SlurmCommands.from_settings(self.settings)

    # -- compile -----------------------------------------------------------------
    def render(self, jobs: JobGraph, options: CompileOptions) -> Workflow:
        workflow = Workflow(engine=self.name, options=options, jobs=jobs)
        context = ScriptContext.of(jobs, options, self.settings)
        for job in jobs.jobs:
            files = JobFiles.of(context.run_dir, job)
            text = job_script(context, job, files)
            workflow.scripts.append(Script(job.name, os.path.basename(files.script), text))
        return workflow

    # -- submit ------------------------------------------------------------------
    def new_handle(self, workflow: Workflow) -> LaunchHandle:
        options = workflow.options
        run_dir = str(workflow.run_dir)
        jobs = []
        for job in workflow.jobs.jobs:
            files = JobFiles.of(run_dir, job)
            details: dict[str, object] = {}
            if job.guard:
                details.update(guard=job.guard, skipped=files.skipped)
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
            extra={"job_name": job_name(options.run_id)},
        )

    def submit(self, workflow: Workflow, handle: LaunchHandle, journal: JobJournal) -> None:
        graph = workflow.jobs
        context = ScriptContext.of(graph, workflow.options, self.settings)
        (workflow.run_dir / "logs").mkdir(parents=True, exist_ok=True)
        (workflow.run_dir / "scripts").mkdir(parents=True, exist_ok=True)
        ids: dict[str, str] = {}
        commands = self.commands
        for job, record in zip(graph.jobs, handle.jobs, strict=True):
            files = JobFiles.of(context.run_dir, job)
            Path(files.script).write_text(job_script(context, job, files, ids), encoding="utf-8")
            try:
                job_id = commands.submit([files.script])
            except SlurmError as exc:
                raise self._abandon(commands, ids, job.name, exc) from None
            ids[job.name] = job_id
            record.job_id = job_id
            journal.record(record)

    @staticmethod
    def _abandon(
        commands: SlurmCommands, ids: dict[str, str], step: str, exc: SlurmError
    ) -> SlurmError:
        """Cancel what was submitted before ``step`` was refused: half a workflow is no use."""
        if not ids:
            return SlurmError(f"Slurm refused step {step!r}: {exc}; nothing was submitted")
        try:
            commands.cancel(list(ids.values()))
            undone = f"the {len(ids)} job(s) already submitted were cancelled"
        except SlurmError as cancel_exc:
            undone = (
                f"cancelling the {len(ids)} job(s) already submitted failed too ({cancel_exc});"
                f" run `scancel {' '.join(ids.values())}`"
            )
        return SlurmError(f"Slurm refused step {step!r}: {exc}; {undone}")

    # -- status ------------------------------------------------------------------
    def status(self, handle: LaunchHandle) -> LaunchStatus:
        return self.status_many([handle])[0]

    def status_many(self, handles: Sequence[LaunchHandle]) -> list[LaunchStatus]:
        """The state of every launch from ONE sacct call covering all their jobs."""
        ids = [job.job_id for h in handles for job in h.jobs if job.job_id]
        error = None
        commands = self.commands
        try:
            found = query_jobs(commands, ids)
        except SlurmError as exc:
            found, error = {}, f"could not ask Slurm ({exc}); states shown as unknown"
        missing = [i for i in ids if i not in found]
        if missing and error is None:
            found.update(query_queue(commands, missing))
        return [self._launch_status(h, found, error) for h in handles]

    def _launch_status(
        self, handle: LaunchHandle, found: dict[str, list[JobRecord]], error: str | None
    ) -> LaunchStatus:
        steps = [self._step_state(job, found, error) for job in handle.jobs]
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
        return LaunchStatus(handle=handle, steps=steps, error=error)

    def _step_state(
        self, job: LaunchJob, found: dict[str, list[JobRecord]], error: str | None
    ) -> StepState:
        if job.job_id is None:
            return StepState(job.step, "cancelled", "never submitted (the submitter stopped)")
        records = found.get(job.job_id, [])
        if not records:
            detail = "Slurm could not be asked" if error else "not in Slurm accounting yet"
            return StepState(job.step, "unknown", detail, job_id=job.job_id)
        tasks = None
        if job.tasks:
            outcome, tasks = combine_tasks(records, job.tasks)
            record = records[0]
            started = min((r.start for r in records if r.start), default=None)
            ends = [r.end for r in records if r.end]
            finished = max(ends) if ends and outcome.phase not in ("running", "pending") else None
        else:
            record = records[-1]
            outcome = classify(record)
            if outcome.phase in ("completed", "failed", "cancelled") and not record.final:
                outcome = Outcome("running", "ending (accounting not final yet)")
            started, finished = record.start, record.end
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
        )
        skipped = job.details.get("skipped")
        if state.phase == "completed" and skipped and os.path.exists(str(skipped)):
            state.phase = "skipped"
            state.detail = "the loop had converged: exited without doing any work"
        if state.phase == "failed" and job.stderr:
            said = _last_line(_failed_log(job.stderr, records) if job.tasks else job.stderr)
            if said:
                state.detail = f"{state.detail}: {said}"
        if state.detail and state.detail.startswith("never ran"):
            state.started = None
        return state

    # -- cancel ------------------------------------------------------------------
    def cancel(self, handle: LaunchHandle) -> list[str]:
        status = self.status(handle)
        active = [s.job_id for s in status.steps if s.job_id and not s.final]
        said = []
        commands = self.commands
        if active:
            commands.cancel(active)
            shown = " ".join(active[:10]) + (" ..." if len(active) > 10 else "")
            said.append(f"cancelled {len(active)} Slurm job(s) with scancel: {shown}")
        if handle.state == "submitting":
            commands.cancel_named(str(handle.extra.get("job_name", job_name(handle.run_id))))
            said.append(
                "the launch was still submitting when its submitter stopped: also cancelled"
                f" every job named {handle.extra.get('job_name')}"
            )
        if not said:
            said.append(f"nothing to cancel: every job of {handle.name} has already ended")
        return said

    # -- logs --------------------------------------------------------------------
    def log_sources(self, handle: LaunchHandle, step: str | None = None) -> list[LogSource]:
        jobs = handle.jobs
        if step is not None:
            jobs = [j for j in handle.jobs if j.step == step]
            if not jobs:
                import difflib

                names = [j.step for j in handle.jobs]
                close = difflib.get_close_matches(step, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise UsageError(
                    f"launch {handle.name} has no step {step!r}{hint} (steps: {', '.join(names)})"
                )
        sources = []
        for job in jobs:
            tasks = range(job.tasks) if job.tasks else [None]
            for task in tasks:
                label = job.step if task is None else f"{job.step}[{task}]"
                for stream, path in (("stdout", job.stdout), ("stderr", job.stderr)):
                    if path:
                        where = path if task is None else path.replace("%a", str(task))
                        sources.append(LogSource(job.step, stream, where, label))  # type: ignore[arg-type]
        return sources

    def poll_interval(self) -> float:
        return float(self.settings.get("status_interval", 5.0))


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
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _task_states(records: list[JobRecord]) -> str:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.state] = counts.get(record.state, 0) + (record.pending_tasks or 1)
    return ",".join(f"{state}:{n}" for state, n in sorted(counts.items()))
