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
doing work (but for checking, as ``ninja run`` checks at its end, any
required recipe output the iteration would have made: the converged
iteration left it at the same path). "Before the iteration" matters: a step
of the iteration may write the flag itself (the convergence test runs beside
the imaging), and a job of the same iteration that starts after it must
still run. So the first job of
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
    SHELL_UNSAFE,
    Option,
    directive,
    directive_line,
    job_name,
    merge_options,
    overridden_by,
    parse_sbatch_opts,
    payload_line,
    refuse_line_breaks,
    relay_lines,
    resource_options,
    script_text,
)

__all__ = [
    "STAT_FORMAT",
    "TASK",
    "JobFiles",
    "ScriptContext",
    "job_options",
    "job_script",
    "script_of",
]


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

    @property
    def script_name(self) -> str:
        """The script's file name: ``os.path.basename(script)``, which a stem
        without a "/" (safe_name) makes the stem and its suffix."""
        return f"{self.stem}{_SCRIPT_SUFFIX}"

    @classmethod
    def of(cls, run_dir: str, job: Job) -> JobFiles:
        # A stem holds no "/" (safe_name), so joining is concatenating; one
        # os.path.join per file was a tenth of rendering 10,000 scripts.
        base = _folder(run_dir)
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
            script=f"{base}scripts/{stem}{_SCRIPT_SUFFIX}",
            stdout=f"{logs}{task}.out",
            stderr=f"{logs}{task}.err",
            skipped=f"{base}skipped/{stem}",
            exit_code=f"{base}exits/{stem}{task}",
            verdict=verdict,
            loop_before=loop_before,
        )


_SCRIPT_SUFFIX = ".sbatch"


def _folder(run_dir: str) -> str:
    """``run_dir`` ending with one "/", so a file in it is ``_folder(run_dir) + name``."""
    return run_dir if run_dir.endswith("/") else f"{run_dir}/"


#: A file's record: inode, size and modification time to the nanosecond.
STAT_FORMAT = "%i %s %y"
_STAT = f"stat -c '{STAT_FORMAT}'"


@dataclass(frozen=True, slots=True)
class ScriptContext:
    """What every script of one workflow shares: computed once, not once per job.

    That includes the text every job's script repeats (the ``#SBATCH`` lines of
    the options all jobs share, the quoted folder of exit codes, the start and
    end of the first comment): written once, not 10,000 times for as many jobs.
    """

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
    #: The ``#SBATCH`` lines of ``job_name``, ``chdir`` and ``configured``.
    job_name_line: str
    chdir_line: str
    configured_lines: tuple[str, ...]
    #: The folder of the jobs' exit codes (:func:`_exit_kept`), shell-quoted.
    exits_folder: str
    #: What the first comment of every script says before and after the step's name.
    said_before_step: str
    said_after_step: str
    #: Whether the run folder and ``recipe_stem`` are text ``shlex.quote`` leaves
    #: as it is: a job whose stem is such text too has files and ``#SBATCH`` lines
    #: with nothing to quote or escape (:func:`_plain`), written as they are.
    plain: bool
    #: ``#SBATCH --comment=`` of every job, up to its stem (when ``plain``).
    comment_start: str
    #: The text every plain job's script shares (:func:`_plain_script`); None
    #: when the context is not ``plain`` or a shared line holds a line break.
    plain_text: _PlainText | None

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
        run_dir = str(options.run_dir(graph.recipe))
        named = Option("job-name", job_name(options.run_id))
        chdir = Option("chdir", str(options.cwd))
        recipe_stem = safe_name(graph.recipe)
        plain = SHELL_UNSAFE(f"{_folder(run_dir)}{recipe_stem}") is None
        said_before, said_after = (
            f"shinobi: recipe {graph.recipe!r}, step ",
            f", run {graph.run_id}",
        )
        return cls(
            graph=graph,
            run_dir=run_dir,
            job_name=named,
            chdir=chdir,
            configured=configured,
            overridden=overridden_by(configured),
            recipe_stem=recipe_stem,
            job_name_line=directive(named),
            chdir_line=directive(chdir),
            configured_lines=tuple(directive(o) for o in configured),
            # os.path.dirname of every JobFiles.exit_code: a stem holds no "/"
            exits_folder=shlex.quote(f"{_folder(run_dir)}exits"),
            said_before_step=said_before,
            said_after_step=said_after,
            plain=plain,
            comment_start=f"#SBATCH --comment={recipe_stem}/",
            plain_text=(
                _PlainText.of(
                    run_dir, recipe_stem, [named, chdir, *configured], said_before, said_after
                )
                if plain
                else None
            ),
        )


@dataclass(frozen=True, slots=True)
class _PlainText:
    """The text between a plain job's own parts in its script (:func:`_plain_script`):
    the same for every plain job of a workflow, so written once."""

    #: Up to the stem of ``--comment``; then up to that of ``--output``, of ``--error``.
    head: str
    output: str
    error: str
    #: From the ``--error``'s stem up to the dependency lines.
    chdir: str
    #: From the dependency lines up to the step's name in the first comment; then after it.
    said: str
    said_after: str
    #: From the payload's checks up to the stem of the exit code's file; then to the end.
    exits: str
    leave: str

    @classmethod
    def of(
        cls,
        run_dir: str,
        recipe_stem: str,
        shared: Sequence[Option],
        said_before: str,
        said_after: str,
    ) -> _PlainText | None:
        """``shared``: ``--job-name``, ``--chdir`` and the configured options, in that order."""
        base = _folder(run_dir)
        lines = [directive(o) for o in shared]
        if any(
            "\n" in line or "\r" in line or not line.isascii()
            for line in [*lines, said_before, said_after]
        ):
            return None  # the general path writes (or refuses, naming the option) every script
        # the exit code's lines with a NUL where the stem goes: a NUL is in no path
        exits, _, leave = "\n".join(
            _exit_lines(shlex.quote(f"{base}exits"), f"{base}exits/\0")
        ).partition("\0")
        return cls(
            head=f"#!/bin/bash\n{lines[0]}\n#SBATCH --comment={recipe_stem}/",
            output=f"\n#SBATCH --output={base}logs/",
            error=f".out\n#SBATCH --error={base}logs/",
            chdir=f".err\n{lines[1]}\n{_OPEN_MODE_LINE}\n",
            said="".join(f"{line}\n" for line in lines[2:]) + f"# {said_before}",
            said_after=f"{said_after}\n",
            exits=exits,
            leave=f"{leave}\n{_LEAVE}\n",
        )


#: Options are immutable: the one every waiting job carries is made once.
_KILL_ON_INVALID_DEP = Option("kill-on-invalid-dep", "yes")
_KILL_ON_INVALID_DEP_LINE = directive(_KILL_ON_INVALID_DEP)
#: Every job appends to its logs, as a step of ``ninja run --backend slurm`` does: a
#: job Slurm requeues (a node lost, preemption) truncated the failed attempt's output.
_OPEN_MODE = Option("open-mode", "append")
_OPEN_MODE_LINE = directive(_OPEN_MODE)


def _afterok(graph: JobGraph, job: Job, ids: Mapping[str, str] | None) -> str | None:
    """``--dependency``'s value: the jobs ``job`` waits for (None: it waits for none)."""
    after = job.after()
    if not after:
        return None
    jobs = graph.jobs
    if ids is None:
        return "afterok:" + ":".join([f"<{jobs[i].name}>" for i in after])
    return "afterok:" + ":".join([ids[jobs[i].name] for i in after])


def _array(job: Job, tasks: int) -> str:
    """``--array``'s value; %1: one task at a time, when the slices share a path one rewrites."""
    return f"0-{tasks - 1}{'%1' if job.serial else ''}"


def job_options(context: ScriptContext, job: Job, files: JobFiles) -> list[Option]:
    """The sbatch options of ``job``'s script, its dependencies still to be named."""
    return _options(context, job, files, None)


def _options(
    context: ScriptContext, job: Job, files: JobFiles, ids: Mapping[str, str] | None
) -> list[Option]:
    derived = [
        context.job_name,
        Option("comment", f"{context.recipe_stem}/{files.stem}"),
        Option("output", files.stdout),
        Option("error", files.stderr),
        context.chdir,
        _OPEN_MODE,
        *resource_options(job.resources),
    ]
    tasks = job.tasks
    if tasks:
        derived.append(Option("array", _array(job, tasks)))
    afterok = _afterok(context.graph, job, ids)
    if afterok is not None:
        derived += [Option("dependency", afterok), _KILL_ON_INVALID_DEP]
    return merge_options(derived, context.configured, context.overridden)


def _plain(context: ScriptContext, files: JobFiles) -> bool:
    """Whether ``files`` (and the job's ``--comment``) hold nothing to quote or escape.

    Their text is the context's run folder and recipe stem, which
    :attr:`ScriptContext.plain` tested once, and the job's stem: when that is
    such text too, ``shlex.quote`` of a file and :func:`~.sbatch.directive_line`
    of a value give the text itself (the ``[%a]`` of an array's logs needs no
    escaping in a directive), and writing them as they are skips a test of
    every file of every job.
    """
    return context.plain and SHELL_UNSAFE(files.stem) is None


def _directives(
    context: ScriptContext,
    job: Job,
    files: JobFiles,
    tasks: int | None,
    ids: Mapping[str, str] | None,
    plain: bool = False,
) -> list[str]:
    """The ``#SBATCH`` lines of :func:`_options`, in its order, without making its options.

    The lines every job shares were written once (:class:`ScriptContext`);
    only the job's own are written here (as they are, when ``plain``: see
    :func:`_plain`). Only a resource option can be one that ``configured``
    replaces: ``sbatch_opts`` may not set an option ninja owns
    (:func:`~.sbatch.parse_sbatch_opts` refuses it).
    """
    if plain:
        lines = [
            context.job_name_line,
            f"{context.comment_start}{files.stem}",
            f"#SBATCH --output={files.stdout}",
            f"#SBATCH --error={files.stderr}",
            context.chdir_line,
            _OPEN_MODE_LINE,
        ]
    else:
        lines = [
            context.job_name_line,
            directive_line("comment", f"{context.recipe_stem}/{files.stem}"),
            directive_line("output", files.stdout),
            directive_line("error", files.stderr),
            context.chdir_line,
            _OPEN_MODE_LINE,
        ]
    resources = job.resources
    if resources is not None:
        overridden = context.overridden
        lines += [directive(o) for o in resource_options(resources) if o.name not in overridden]
    if tasks:
        lines.append(directive_line("array", _array(job, tasks)))
    afterok = _afterok(context.graph, job, ids)
    if afterok is not None:
        lines += _dependency_lines(afterok)
    lines += context.configured_lines
    return lines


def _dependency_lines(afterok: str) -> tuple[str, str]:
    """The ``#SBATCH`` lines of a job that waits for others: ``--dependency``, and
    ``--kill-on-invalid-dep`` so that a failed one ends it rather than leaving it
    queued for ever."""
    return directive_line("dependency", afterok), _KILL_ON_INVALID_DEP_LINE


def _comments(context: ScriptContext, job: Job, tasks: int | None) -> list[str]:
    lines = [f"{context.said_before_step}{job.name!r}{context.said_after_step}"]
    lines += _waits_said(context.graph, job)
    if tasks is not None:
        lines.append(f"scatter: {tasks} slices, one array task each")
    if job.notes:
        lines += [f"note: {note}" for note in job.notes]
    if job.promised:
        lines += [f"note: {line}" for line in job.promised]
    return lines


def _waits_said(graph: JobGraph, job: Job) -> list[str]:
    """The comments naming what ``job`` waits for and why (none: it waits for nothing)."""
    if not job.edges:
        return []
    return ["waits for (afterok):", *[f"  {describe_edge(graph, job, e)}" for e in job.edges]]


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
        *_recipe_outputs_kept(job),
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


def _recipe_outputs_kept(job: Job) -> list[str]:
    """In a skipped loop iteration, fail the job as ``ninja run`` fails the recipe
    when a required recipe output this iteration would have made is not there.

    ``ninja run`` checks the recipe's outputs once its steps are done: those of
    the last iteration that ran, which are at this iteration's paths (see
    ``Job.recipe_outputs``). Without this, the check was the skipped tool's
    and nothing checked them. Said as ``ninja run`` says it, and not as the
    tool's check (``shinobi: output "...``), since no tool ran in this job.
    """
    lines: list[str] = []
    for said, path, kind in dict.fromkeys(e for kept in job.recipe_outputs for e in kept):
        quoted = shlex.quote(path)
        missing = shlex.quote(
            f"shinobi: {said} names {path}, which does not exist (loop {job.node.loop}"
            f" converged before iteration {job.node.iteration}, and set_output wires it to an"
            " output its step may leave unmade: have the step make it, or declare the"
            " recipe's output optional, `... | None = None`)"
        )
        lines.append(f"  [ -e {quoted} ] || {{ echo {missing} >&2; exit 1; }}")
        if kind != "any":
            test, wrong = ("! -d", "a directory") if kind == "file" else ("-d", "not a directory")
            declared = "a file" if kind == "file" else "a directory"
            wrong_kind = shlex.quote(
                f"shinobi: {said}: {path} is {wrong}, but the output is declared {declared}"
            )
            lines.append(f"  [ {test} {quoted} ] || {{ echo {wrong_kind} >&2; exit 1; }}")
    return lines


def _exit_kept(context: ScriptContext, files: JobFiles, plain: bool) -> tuple[str, str, str]:
    """Keep an exit code sacct would report modulo 128: a C tool's ``exit(-1)``
    would read as 127, "command not found" (``ninja status`` reads the file)."""
    before, task, after = files.exit_code.partition("%a")
    # plain: quoting would keep it as it is, but for an array's, which ends in "["
    path = before if plain and not task else shlex.quote(before)
    if task:
        path += '"$SLURM_ARRAY_TASK_ID"' + shlex.quote(after)
    return _exit_lines(context.exits_folder, path)


def _exit_lines(folder: str, path: str) -> tuple[str, str, str]:
    """:func:`_exit_kept`'s lines, given the exit codes' folder and the job's file, quoted."""
    return (
        'if [ "$rc" -gt 127 ]; then',
        f'  mkdir -p {folder} 2>/dev/null && echo "$rc" > {path} 2>/dev/null',
        "fi",
    )


#: :func:`~.sbatch.relay_lines` after a payload without a trap (False) and with
#: one (True), but its last line, which ends the script after the checks.
_RELAYED = {stopped: tuple(relay_lines(stopped)[:-1]) for stopped in (False, True)}
_LEAVE = relay_lines()[-1]


def _payload(job: Job) -> list[str]:
    """A job of one command: the tool, the relay of its exit status, and the checks
    of its outputs (an array's slices are told apart in a ``case`` of their own)."""
    stop = job.stops[0] if job.stops else None
    probe = job.probes[0] if job.probes else None
    checked = _outputs_checked(job.expected[0]) if job.expected else []
    return [payload_line(job.commands[0], stop, probe), *_RELAYED[bool(stop)], *checked]


def _body(
    context: ScriptContext, job: Job, files: JobFiles, tasks: int | None, plain: bool = False
) -> list[str]:
    if tasks is None:
        return [*_payload(job), *_exit_kept(context, files, plain), _LEAVE]
    if tasks == 0:
        return ["# an empty scatter: nothing to run", "exit 0"]
    stops = job.stops or [None] * len(job.commands)
    probes = job.probes or [None] * len(job.commands)
    stopped = _serial_stop(files) if job.serial else None
    lines = [] if stopped is None else stopped[0]
    lines.append('case "${SLURM_ARRAY_TASK_ID:?this script runs as a job array}" in')
    for index, (argv, stop, probe) in enumerate(zip(job.commands, stops, probes, strict=True)):
        lines.append(f"  {index}) {payload_line(argv, stop, probe)} ;;")
    lines.append('  *) echo "shinobi: no slice $SLURM_ARRAY_TASK_ID in this array" >&2; exit 2 ;;')
    lines.append("esac")
    relay = list(_RELAYED[any(stops)])
    if stopped is not None:  # kept before a death by a signal is relayed
        relay.insert(1, stopped[1])
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
        if stopped is not None:  # a slice whose outputs the checks refused failed too
            checks.append(stopped[1])
    return [*lines, *relay, *checks, *_exit_kept(context, files, plain), _LEAVE]


def _serial_stop(files: JobFiles) -> tuple[list[str], str]:
    """A one-at-a-time array stops at its first failed slice, as ``ninja run`` does.

    Its slices share a path one of them rewrites (an MS, a log), and Slurm's
    ``%1`` only throttles: a failed slice's successors went on rewriting what
    it may have left half-written. A failed slice leaves its number in a file
    of the launch; every slice looks for it before its tool runs. Returns the
    lines that look, and the line that leaves the number (``rc`` set).
    """
    folder = f"{os.path.dirname(os.path.dirname(files.skipped))}/failed"  # beside skipped/
    failed = shlex.quote(f"{folder}/{files.stem}")
    said = (
        '"shinobi: slice $SLURM_ARRAY_TASK_ID not started: slice $(cat '
        + failed
        + ") failed before it, and the slices of this step run one at a time because"
        ' they share a path one rewrites"'
    )
    look = [
        "# one slice at a time (they share a path one rewrites): none starts after one failed",
        f"if [ -e {failed} ]; then echo {said} >&2; exit 1; fi",
    ]
    leave = (
        f'[ "$rc" -eq 0 ] || {{ mkdir -p {shlex.quote(folder)}'
        f' && echo "$SLURM_ARRAY_TASK_ID" > {failed}; }} 2>/dev/null'
    )
    return look, leave


def _outputs_checked(expected: Sequence[tuple[str, str, str]]) -> list[str]:
    """Fail a job whose tool exited 0 without making a required output, or made
    the wrong kind (a file where an MS was declared), as ``ninja run`` fails the
    step: its dependants must not run on nothing (or on what an earlier run
    left)."""
    if not expected:
        return []
    lines = ['if [ "$rc" -eq 0 ]; then']
    if any(kind == "glob" for _, _, kind in expected):
        lines.append("  shopt -s globstar  # ** at any depth, as ninja's own harvest reads it")
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


def script_of(context: ScriptContext, job: Job) -> tuple[str, str]:
    """The file name and text of ``job``'s script as a compile shows it (:func:`job_script`).

    A plain job's needs no :class:`JobFiles` (:func:`_plain_script`).
    """
    stem = safe_name(job.name)
    text = _plain_script(context, job, stem, None)
    if text is not None:
        return f"{stem}{_SCRIPT_SUFFIX}", text
    files = JobFiles.of(context.run_dir, job)
    return files.script_name, _any_script(context, job, files, None)


def job_script(
    context: ScriptContext, job: Job, files: JobFiles, ids: Mapping[str, str] | None = None
) -> str:
    """The sbatch script of ``job``; dependencies as ``<step>`` until ``ids`` are known."""
    text = _plain_script(context, job, files.stem, ids)
    return _any_script(context, job, files, ids) if text is None else text


def _plain_script(
    context: ScriptContext, job: Job, stem: str, ids: Mapping[str, str] | None
) -> str | None:
    """:func:`_any_script` of a plain job, written into the text it shares with the others.

    Nearly every job of a large recipe is plain: one command, no resources of
    its own, no array, no loop, no notes, and a name with nothing to quote
    (:func:`_plain`). Of its script, only the stem (four times), the
    dependency lines, the first comments and the body are its own; the rest
    is the same for every such job (:class:`_PlainText`). Filling in those
    parts rather than writing and joining every line cost half as much, on a
    tenth of a 10,000-job compile. None: the job is not plain, or a part of it
    holds a line break or a character that is not ASCII, and :func:`_any_script`
    writes it (and refuses what must be).
    """
    text = context.plain_text
    if (
        text is None
        or job.scattered
        or job.node.loop is not None
        or job.guard is not None
        or job.notes
        or job.promised
        or job.resources is not None
        or SHELL_UNSAFE(stem) is not None
    ):
        return None
    waits = ""
    afterok = _afterok(context.graph, job, ids)
    if afterok is not None:
        if "\n" in afterok or "\r" in afterok:
            return None
        waits = "".join(f"{line}\n" for line in _dependency_lines(afterok))
    said = _waits_said(context.graph, job)
    waits_said = "".join(f"# {line}\n" for line in said)
    if waits_said.count("\n") != len(said) or "\r" in waits_said:
        return None  # an edge's description holding a line break: the general path
    script = "".join(
        (
            text.head, stem, text.output, stem, text.error, stem, text.chdir, waits,
            text.said, repr(job.name), text.said_after, waits_said,
            "\n".join(_payload(job)), "\n", text.exits, stem, text.leave,
        )
    )  # fmt: skip
    # the general path refuses, naming it, what no script may hold (see script_text)
    return script if script.isascii() and "\0" not in script else None


def _any_script(
    context: ScriptContext, job: Job, files: JobFiles, ids: Mapping[str, str] | None
) -> str:
    """The sbatch script of any job: :func:`~.sbatch.batch_script` of :func:`_options`,
    written without making the options (:func:`_directives`), which are made only
    to name one that holds a line break.
    """
    tasks = job.tasks
    plain = _plain(context, files)
    body = _body(context, job, files, tasks, plain)
    if job.guard is not None or files.loop_before is not None:  # a loop's job
        body = [*_guard(job, files), *_look_at_until_file(job, files), *body]
    directives = _directives(context, job, files, tasks, ids, plain)
    refuse_line_breaks(directives, lambda: _options(context, job, files, ids))
    return script_text(directives, body, _comments(context, job, tasks))
