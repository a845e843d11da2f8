"""One sbatch script per offloaded job, saying in comments why it waits for what it waits for.

Every job of a launch is named ``shinobi-<run-id>`` (``--comment`` carries
the step), writes its logs under ``<workdir>/.shinobi/<recipe>/<run-id>/logs``
and waits for its dependencies with ``--dependency=afterok:...`` and
``--kill-on-invalid-dep=yes``, so a failure cancels its dependants instead
of leaving them pending for ever. Until submission a dependency is shown as
``<step>``; ``sbatch`` sees the real job ids.

A loop iteration after the first starts with its convergence guard: when the
loop had converged before the iteration, the job records that it was skipped
and exits 0, which satisfies ``afterok`` so the chain carries on without
doing work. "Before the iteration" matters: a step of the iteration may write
the flag itself (the convergence test runs beside the imaging), and a job of
the same iteration that starts after it must still run. So the first job of
an iteration to start decides for all of them, before any of them has run
its command, and publishes the verdict atomically (a symlink, which only one
job can create); the others read it. A scattered step is
a job array whose script picks its slice's command by
``$SLURM_ARRAY_TASK_ID``; its dependants wait for the whole array.

An until file an earlier run left must not end the loop after its first
cycle (see :mod:`shinobi.stale_until`): whichever job of the first cycle
starts first claims the loop's start (again a symlink only one job can
create) and records the file's ``stat`` before its command runs (no job of
the cycle can have written it yet, since each would have claimed first);
a guard counts the file only when it is no longer as recorded.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shinobi.errors import UsageError
from shinobi.offload.base import CompileOptions
from shinobi.offload.jobs import Job, JobGraph, describe_edge
from shinobi.session import safe_name
from shinobi_slurm.sbatch import (
    Option,
    batch_script,
    command_lines,
    job_name,
    merge_options,
    overridden_by,
    parse_sbatch_opts,
    payload_line,
    relay_lines,
    resource_options,
)

__all__ = ["STAT_FORMAT", "TASK", "JobFiles", "ScriptContext", "job_options", "job_script"]


#: What follows an array job's name in its tasks' files (Slurm puts the task for
#: ``%a``). Not ``.%a``: the logs of task 0 of ``x`` and of a step named ``x.0``
#: were one file.
TASK = "[%a]"


@dataclass(frozen=True, slots=True)
class JobFiles:
    """Where one job's script, logs and skip marker live inside the launch's run folder.

    Plain strings joined once: a 100,000-job compile builds a few of these per
    job, and pathlib objects would dominate its time.
    """

    #: The job's name as a file name (:func:`~shinobi.session.safe_name`).
    stem: str
    script: str
    stdout: str
    stderr: str
    skipped: str
    #: Where the job leaves an exit code above 127, which Slurm's accounting keeps
    #: only modulo 128 (an array's holds ``%a`` where the task goes, as its logs do).
    exit_code: str = ""
    #: Where the verdict of the job's loop iteration is published (None outside loops).
    verdict: str | None = None
    #: How its loop's until file was before the loop (jobs of a loop, None otherwise).
    loop_before: str | None = None

    @classmethod
    def of(cls, run_dir: str, job: Job) -> JobFiles:
        # A stem holds no "/" (safe_name), so joining is concatenating; one
        # os.path.join per file was a tenth of rendering 10,000 scripts.
        base = run_dir if run_dir.endswith("/") else f"{run_dir}/"
        stem = safe_name(job.name)
        # STEP[k], as `ninja run` names a slice: the graph refuses a step named so
        # beside a scattered STEP, where STEP.k may be another step's own name
        task = TASK if job.tasks else ""
        logs = f"{base}logs/{stem}"
        verdict = loop_before = None
        node = job.node
        if node.loop is not None:
            outer = job.name[: len(job.name) - len(node.name)]  # a nested recipe's prefix
            loop_before = f"{base}loops/{safe_name(f'{outer}{node.loop}.before')}"
            if job.guard is not None:
                verdict = f"{base}loops/{safe_name(f'{outer}{node.loop}.{node.iteration}')}"
        return cls(
            stem=stem,
            script=f"{base}scripts/{stem}.sbatch",
            stdout=f"{logs}{task}.out",
            stderr=f"{logs}{task}.err",
            skipped=f"{base}skipped/{stem}",
            exit_code=f"{base}exits/{stem}{task}",
            verdict=verdict,
            loop_before=loop_before,
        )


#: A file's record: inode, size and modification time to the nanosecond.
STAT_FORMAT = "%i %s %y"
_STAT = f"stat -c '{STAT_FORMAT}'"


@dataclass(frozen=True, slots=True)
class ScriptContext:
    """What every script of one workflow shares: computed once, not once per job."""

    graph: JobGraph
    run_dir: str
    #: ``--job-name``, the same for every job of the run.
    job_name: Option
    #: ``--chdir``: the directory the compile ran in.
    chdir: Option
    configured: tuple[Option, ...]
    #: The derived options ``configured`` sets or replaces.
    overridden: frozenset[str]
    #: The recipe's name as every job's ``--comment`` starts with it.
    recipe_stem: str

    @classmethod
    def of(
        cls, graph: JobGraph, options: CompileOptions, settings: Mapping[str, Any]
    ) -> ScriptContext:
        configured = tuple(parse_sbatch_opts(settings.get("sbatch_opts")))
        for path, what, fix in (
            (options.workdir, "the workdir", "pass a --workdir whose path has none"),
            (options.cwd, "the directory the jobs run in", "compile from one whose path has none"),
        ):
            text = str(path)
            if "\n" in text or "\r" in text:
                # every job's --output, --error and --chdir line would end at the break
                raise UsageError(
                    f"{what}, {text!r}, holds a line break, which an #SBATCH line cannot"
                    f" hold; {fix}"
                )
            if "%" in text or "\\" in text:
                # sbatch reads %x, %j... in --output/--error as patterns and drops a
                # backslash: the job could not open its log and would fail unseen
                raise UsageError(
                    f"{what}, {text!r}, holds a '%' or '\\', which sbatch reads as part of a"
                    f" file-name pattern in every job's log path; {fix}"
                )
        return cls(
            graph=graph,
            run_dir=str(options.run_dir(graph.recipe)),
            job_name=Option("job-name", job_name(options.run_id)),
            chdir=Option("chdir", str(options.cwd)),
            configured=configured,
            overridden=overridden_by(configured),
            recipe_stem=safe_name(graph.recipe),
        )


#: Options are immutable: the one every waiting job carries is made once.
_KILL_ON_INVALID_DEP = Option("kill-on-invalid-dep", "yes")


def _dependency(graph: JobGraph, job: Job, ids: Mapping[str, str] | None) -> Option | None:
    before = [graph.jobs[i].name for i in job.after()]
    if not before:
        return None
    names = [ids[name] if ids is not None else f"<{name}>" for name in before]
    return Option("dependency", "afterok:" + ":".join(names))


def job_options(context: ScriptContext, job: Job, files: JobFiles) -> list[Option]:
    """The sbatch options of ``job``'s script, its dependencies still to be named."""
    return _options(context, job, files, None)


def _options(
    context: ScriptContext, job: Job, files: JobFiles, ids: Mapping[str, str] | None
) -> list[Option]:
    graph = context.graph
    derived = [
        context.job_name,
        Option("comment", f"{context.recipe_stem}/{files.stem}"),
        Option("output", files.stdout),
        Option("error", files.stderr),
        context.chdir,
        *resource_options(job.resources),
    ]
    if job.tasks:
        # %1: one task at a time, when the slices share a path one rewrites
        derived.append(Option("array", f"0-{job.tasks - 1}{'%1' if job.serial else ''}"))
    dependency = _dependency(graph, job, ids)
    if dependency is not None:
        derived += [dependency, _KILL_ON_INVALID_DEP]
    return merge_options(derived, context.configured, context.overridden)


def _comments(graph: JobGraph, job: Job) -> list[str]:
    lines = [f"shinobi: recipe {graph.recipe!r}, step {job.name!r}, run {graph.run_id}"]
    if job.edges:
        lines.append("waits for (afterok):")
        lines.extend(f"  {describe_edge(graph, job, edge)}" for edge in job.edges)
    if job.tasks is not None:
        lines.append(f"scatter: {job.tasks} slices, one array task each")
    lines.extend(f"note: {note}" for note in job.notes)
    lines.extend(f"note: {line}" for line in job.promised)
    return lines


def _guard(job: Job, files: JobFiles) -> list[str]:
    if job.guard is None:
        return []
    flag = shlex.quote(job.guard)
    said = shlex.quote(
        f"shinobi: loop {job.node.loop} converged before iteration {job.node.iteration}"
        f" ({job.guard} exists): nothing to do"
    )
    skip = [
        f"  echo {said}",
        f"  mkdir -p {shlex.quote(os.path.dirname(files.skipped))}",
        f"  : > {shlex.quote(files.skipped)}",
        "  exit 0",
        "fi",
    ]
    written = f"[ -e {flag} ]"
    if files.loop_before is not None:  # and not as it was before the loop
        before = shlex.quote(files.loop_before)
        written += f' && [ "$({_STAT} -- {flag})" != "$(cat {before} 2>/dev/null)" ]'
    if files.verdict is None:
        return [f"if {written}; then", *skip]
    verdict = shlex.quote(files.verdict)
    return [
        f"# loop {job.node.loop}, iteration {job.node.iteration}: skip if it converged before it;",
        "# the first job of the iteration decides for all of them (see the module docstring)",
        f"if {written}; then mine=skip; else mine=run; fi",
        f"mkdir -p {shlex.quote(os.path.dirname(files.verdict))}",
        f'ln -s "$mine" {verdict} 2>/dev/null || true',
        f'if [ "$(readlink {verdict})" = skip ]; then',
        *skip,
    ]


def _exit_kept(job: Job, files: JobFiles) -> list[str]:
    """Keep an exit code sacct would report modulo 128: a C tool's ``exit(-1)``
    would read as 127, "command not found" (``ninja status`` reads the file)."""
    before, task, after = files.exit_code.partition("%a")
    path = shlex.quote(before)
    if task:
        path += '"$SLURM_ARRAY_TASK_ID"' + shlex.quote(after)
    directory = shlex.quote(os.path.dirname(files.exit_code))
    return [
        'if [ "$rc" -gt 127 ]; then',
        f'  mkdir -p {directory} 2>/dev/null && echo "$rc" > {path} 2>/dev/null',
        "fi",
    ]


def _body(job: Job, files: JobFiles) -> list[str]:
    stops = job.stops or [None] * len(job.commands)
    if job.tasks is None:
        *run, leave = command_lines(job.commands[0], stops[0])
        checked = _outputs_checked(job.expected[0] if job.expected else [])
        return [*run, *checked, *_exit_kept(job, files), leave]
    if job.tasks == 0:
        return ["# an empty scatter: nothing to run", "exit 0"]
    lines = ['case "${SLURM_ARRAY_TASK_ID:?this script runs as a job array}" in']
    for index, (argv, stop) in enumerate(zip(job.commands, stops, strict=True)):
        lines.append(f"  {index}) {payload_line(argv, stop)} ;;")
    lines.append('  *) echo "shinobi: no slice $SLURM_ARRAY_TASK_ID in this array" >&2; exit 2 ;;')
    lines.append("esac")
    *relay, leave = relay_lines(any(stops))
    checks: list[str] = []
    if any(job.expected):
        checks.append('case "$SLURM_ARRAY_TASK_ID" in')
        for index, expected in enumerate(job.expected):
            if expected:
                checks += [
                    f"  {index})",
                    *(f"  {line}" for line in _outputs_checked(expected)),
                    "  ;;",
                ]
        checks.append("esac")
    return [*lines, *relay, *checks, *_exit_kept(job, files), leave]


def _outputs_checked(expected: Sequence[tuple[str, str, str]]) -> list[str]:
    """Fail a job whose tool exited 0 without making a required output, or made
    the wrong kind (a file where an MS was declared), as ``ninja run`` fails the
    step: its dependants must not run on nothing (or on what an earlier run
    left)."""
    if not expected:
        return []
    lines = ['if [ "$rc" -eq 0 ]; then']
    for field, path, kind in expected:
        quoted = shlex.quote(path)
        if kind == "glob":  # a harvest pattern: something must match it
            said = shlex.quote(
                f'shinobi: output "{field}": nothing matched its harvest pattern {path}'
            )
            # bash reads a backslash in a pattern as an escape, Python's glob as a character
            pattern = shlex.quote(path.replace("\\", "\\\\"))
            lines.append(f"  compgen -G {pattern} > /dev/null || {{ echo {said} >&2; rc=1; }}")
            continue
        said = shlex.quote(f'shinobi: output "{field}": the tool did not create {path}')
        lines.append(f"  [ -e {quoted} ] || {{ echo {said} >&2; rc=1; }}")
        if kind != "any":
            test, wrong = ("! -d", "a directory") if kind == "file" else ("-d", "not a directory")
            said = shlex.quote(
                f'shinobi: output "{field}": {path} is {wrong}, but the output is declared'
                f" {'a file' if kind == 'file' else 'a directory'}"
            )
            lines.append(
                f"  [ ! -e {quoted} ] || [ {test} {quoted} ] || {{ echo {said} >&2; rc=1; }}"
            )
    lines.append("fi")
    return lines


def _look_at_until_file(job: Job, files: JobFiles) -> list[str]:
    """The first job of a loop's first cycle records its until file (module docstring)."""
    if files.loop_before is None or job.until_file is None:
        return []
    flag = shlex.quote(job.until_file)
    before = shlex.quote(files.loop_before)
    return [
        f"# loop {job.node.loop}: the first job of its first cycle records its until file",
        f"mkdir -p {shlex.quote(os.path.dirname(files.loop_before))}",
        f"if ln -s {shlex.quote(job.name)} {before}.claim 2>/dev/null; then",
        f"  {_STAT} -- {flag} > {before} 2>/dev/null || echo absent > {before}",
        "fi",
    ]


def job_script(
    context: ScriptContext, job: Job, files: JobFiles, ids: Mapping[str, str] | None = None
) -> str:
    """The sbatch script of ``job``; dependencies as ``<step>`` until ``ids`` are known."""
    body: Sequence[str] = [
        *_guard(job, files),
        *_look_at_until_file(job, files),
        *_body(job, files),
    ]
    return batch_script(
        _options(context, job, files, ids),
        body,
        comments=_comments(context.graph, job),
    )
