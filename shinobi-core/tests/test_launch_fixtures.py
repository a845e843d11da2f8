"""A stand-in engine for the launch tests, so core's commands are tested without any plugin.

``FakeTarget`` answers from class-level state each test sets (the phase of
every step, in order for successive calls); the ``engine`` fixture installs
it behind the plugin registry as the offload engine ``fake`` and gives the
test its own launches index and working directory.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from shinobi.launch.handle import JobJournal, LaunchHandle, LaunchJob, write_handle
from shinobi.launch.index import record_launch
from shinobi.launch.tracking import LaunchStatus, LogSource, StepPhase, StepState
from shinobi.offload.base import CompileOptions, OffloadTarget, Script, Workflow
from shinobi.offload.jobs import JobGraph


class FakeTarget(OffloadTarget):
    name = "fake"
    #: Each status call pops the first entry (the last one stays): step -> phase.
    rounds: ClassVar[list[dict[str, StepPhase]]] = []
    #: Launches (by run id) whose steps are all still running.
    running: ClassVar[set[str]] = set()
    status_calls: ClassVar[int] = 0
    many_calls: ClassVar[int] = 0
    cancelled: ClassVar[list[str]] = []

    def render(self, jobs: JobGraph, options: CompileOptions) -> Workflow:
        workflow = Workflow(engine=self.name, options=options, jobs=jobs)
        for job in jobs.jobs:
            after = " ".join(jobs.jobs[i].name for i in job.after())
            text = f"# after: {after}\n" + "\n".join(" ".join(c) for c in job.commands) + "\n"
            workflow.scripts.append(Script(job.name, f"{job.name}.sh", text))
        return workflow

    def new_handle(self, workflow: Workflow) -> LaunchHandle:
        return LaunchHandle(
            engine=self.name,
            recipe=workflow.recipe,
            run_id=workflow.options.run_id,
            workdir=str(workflow.options.workdir),
            cwd=str(workflow.options.cwd),
            target=workflow.options.target,
            state="submitting",
            jobs=[LaunchJob(step=job.name) for job in workflow.jobs.jobs],
        )

    def submit(self, workflow: Workflow, handle: LaunchHandle, journal: JobJournal) -> None:
        for number, job in enumerate(handle.jobs, start=1):
            job.job_id = str(number)
            journal.record(job)

    def status(self, handle: LaunchHandle) -> LaunchStatus:
        FakeTarget.status_calls += 1
        return self._answer(handle)

    def status_many(self, handles: Sequence[LaunchHandle]) -> list[LaunchStatus]:
        FakeTarget.many_calls += 1
        return [self._answer(h) for h in handles]

    def _answer(self, handle: LaunchHandle) -> LaunchStatus:
        phases = self.rounds[0] if self.rounds else {}
        if len(self.rounds) > 1:
            self.rounds.pop(0)
        steps = []
        for job in handle.jobs:
            phase: StepPhase = "running" if handle.run_id in self.running else "completed"
            steps.append(StepState(job.step, phases.get(job.step, phase), job_id=job.job_id))
        return LaunchStatus(handle=handle, steps=steps)

    def cancel(self, handle: LaunchHandle) -> list[str]:
        FakeTarget.cancelled.append(handle.run_id)
        return [f"cancelled {len(handle.jobs)} fake job(s)"]

    def log_sources(self, handle: LaunchHandle, step: str | None = None) -> list[LogSource]:
        return [
            LogSource(job.step, "stdout", str(job.stdout))
            for job in handle.jobs
            if job.stdout and step in (None, job.step)
        ]

    def poll_interval(self) -> float:
        return 0.01


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[type[FakeTarget]]:
    """The ``fake`` engine installed, a private launches index, and ``tmp_path`` as cwd."""
    from shinobi.backends import registry

    real = registry.load_plugin

    def load(group: str, name: str) -> Any:
        return FakeTarget if name == "fake" else real(group, name)

    monkeypatch.setattr(registry, "load_plugin", load)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    FakeTarget.rounds = []
    FakeTarget.running = set()
    FakeTarget.status_calls = 0
    FakeTarget.many_calls = 0
    FakeTarget.cancelled = []
    yield FakeTarget


def launch(
    workdir: Path, recipe: str = "pipe", run_id: str = "run1", created: float = 1.0
) -> LaunchHandle:
    """A submitted fake launch of two steps with log files, written and recorded."""
    logs = workdir / ".shinobi" / recipe / run_id / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    jobs = []
    for number, step in enumerate(("make", "use"), start=1):
        out = logs / f"{step}.out"
        out.write_text(f"{step} says hello\n")
        jobs.append(LaunchJob(step=step, job_id=str(number), stdout=str(out)))
    handle = LaunchHandle(
        engine="fake",
        recipe=recipe,
        run_id=run_id,
        workdir=str(workdir),
        cwd=str(workdir),
        created=created,
        jobs=jobs,
    )
    write_handle(handle)
    record_launch(handle)
    return handle
