"""The OffloadTarget interface: compile a recipe's plan into a workflow, submit it, track it.

An engine (``shinobi-slurm``'s ``slurm``) implements :meth:`OffloadTarget.render`
(jobs to scripts), :meth:`OffloadTarget.submit` and the
:class:`~shinobi.launch.tracking.LaunchTracker` questions (status, cancel,
logs). Everything engine-independent happens here once: the eligibility
check that lists every reason a recipe is refused, flattening the plan into
jobs, the ordering edges in-place mutation needs, and the container
wrapping, so two engines can never disagree about what a recipe means.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shinobi.errors import ShinobiError
from shinobi.launch.handle import JobJournal, LaunchHandle
from shinobi.launch.tracking import LaunchTracker
from shinobi.offload.eligibility import Refusal, check_offloadable
from shinobi.offload.jobs import JobGraph, build_jobs, describe_edge
from shinobi.offload.ordering import derive_edges
from shinobi.offload.storage import missing_directories
from shinobi.offload.wrapping import wrap_in_containers
from shinobi.plan import Plan
from shinobi.wording import counted

__all__ = [
    "WRITTEN_LIST",
    "CompileOptions",
    "OffloadRefused",
    "OffloadTarget",
    "Script",
    "ScriptsInTheWay",
    "Workflow",
    "WrittenScripts",
    "compile_jobs",
]


class OffloadRefused(ShinobiError):
    """The recipe cannot be offloaded; ``refusals`` holds every reason."""

    def __init__(self, recipe: str, refusals: list[Refusal]) -> None:
        self.recipe = recipe
        self.refusals = refusals
        count = len(refusals)
        super().__init__(
            f"recipe {recipe!r} cannot be offloaded ({count} reason{'s' if count > 1 else ''}"
            f" listed above); fix {'them' if count > 1 else 'it'}, or run it with `ninja run`"
            " on a host of the cluster"
        )


@dataclass(frozen=True, slots=True)
class CompileOptions:
    """What the user chose for one compile: where things go and how commands run.

    ``cwd`` is where the jobs run and relative paths resolve; ``workdir``
    holds ``.shinobi/<recipe>/<run-id>/`` (scripts, logs, handle). Both must
    be on storage the compute nodes share.
    """

    workdir: Path
    cwd: Path
    run_id: str
    #: "auto": each step in the container backend it runs in under ``ninja run``.
    container_runtime: str = "auto"
    target: str | None = None
    #: The backend of a step that names none (``backend.default``): a venv there is
    #: a venv every such step would lose in a job.
    default_backend: str = "native"

    def run_dir(self, recipe: str) -> Path:
        from shinobi.launch.handle import run_folder

        return run_folder(self.workdir, recipe, self.run_id)


@dataclass(frozen=True, slots=True)
class Script:
    """One job's script as the engine will submit it."""

    job: str
    file_name: str
    text: str


@dataclass(slots=True)
class Workflow:
    """A compiled recipe: its jobs and edges, and one script per job in submission order."""

    engine: str
    options: CompileOptions
    jobs: JobGraph
    scripts: list[Script] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def recipe(self) -> str:
        return self.jobs.recipe

    @property
    def run_dir(self) -> Path:
        return self.options.run_dir(self.recipe)

    def render(self) -> str:
        """Every script, each headed by its file name: what ``ninja compile`` prints."""
        return "".join(self.rendered_in_parts())

    def rendered_in_parts(self, scripts_per_part: int = 64) -> Iterator[str]:
        """:meth:`render`'s text in consecutive parts of a few scripts each.

        ``ninja compile`` prints them one by one: 100,000 scripts are a hundred
        megabytes, and printing them as one string copied all of it several
        times (see :mod:`shinobi.cli.long_output`). Each part is joined once
        from its pieces: pasting each header onto its script first copied
        every script twice.
        """
        scripts = self.scripts
        for start in range(0, len(scripts), scripts_per_part):
            parts: list[str] = []
            for script in scripts[start : start + scripts_per_part]:
                parts += (f"# ---- {script.file_name} ({script.job}) ----\n", script.text, "\n")
            if start + scripts_per_part >= len(scripts):
                parts.pop()  # no separator after the last one
            yield "".join(parts)

    def write(self, directory: Path) -> WrittenScripts:
        """Write every script into ``directory``, and remove the scripts an
        earlier compile wrote there that this one has not (a step since
        renamed or removed): a stale script beside fresh ones is one
        ``sbatch *.sh`` away from running.

        ninja records what it wrote (``WRITTEN_LIST``: each name with the
        size and modification time it left the file with), and only touches
        those: a stale script is removed only if it is still as ninja wrote
        it, and a file of the same name as a script, but not ninja's (the
        user's own, a symbolic link), stops the compile before anything is
        written. Plain ``os.open``/``os.write``: a 100,000-job workflow is
        100,000 files, and buffered text files cost several times more per
        file.
        """
        from shinobi.file_digests import make_dirs

        make_dirs(directory)  # shared as the folder it is made in is
        base = str(directory)
        record = os.path.join(base, WRITTEN_LIST)
        earlier = _recorded(record)
        names = [script.file_name for script in self.scripts]
        if not _empty(base):  # in a fresh directory nothing can be in the way
            _refuse_foreign(base, [WRITTEN_LIST, *names], earlier)
        written, stamps = [], []
        path = ""
        try:
            for script in self.scripts:
                path = os.path.join(base, script.file_name)
                stamps.append(f"{script.file_name}\t{_write_file(path, script.text)}\n")
                written.append(path)
        except OSError:
            # what is there stays ninja's: the scripts written so far, and the
            # earlier compile's not reached (a compile after more space is made
            # writes over them, rather than stop at scripts it does not know)
            with contextlib.suppress(OSError):
                os.unlink(path)  # the one cut short: checked to be ninja's, or new
            done = {os.path.basename(p) for p in written}
            rest = [f"{n}\t{t}\n" for n, t in earlier.items() if n and n not in done]
            try:
                _write_file(record, "".join(stamps + rest))
            except OSError:  # a full disk takes the record too: take back what was
                for made in written:  # written, or the retry calls each "a file of yours"
                    with contextlib.suppress(OSError):
                        os.unlink(made)
            raise
        removed, kept = _remove_stale(base, earlier, set(names))
        # an edited stale script is said now, and is then no longer ninja's: a later
        # compile of that step stops rather than write over the edit
        _write_file(record, "".join(stamps))
        return WrittenScripts(written, removed, kept)

    def explain(self) -> list[str]:
        """Why every edge exists, which readers stay parallel, and what was noted."""
        graph = self.jobs
        lines = [f"recipe {graph.recipe!r}: {counted(len(graph.jobs), 'job')}, offload-eligible"]
        for job in graph.jobs:
            head = f"{job.name}"
            if job.tasks is not None:
                one = f", one at a time: they share {job.serial}" if job.serial else ""
                head += f" (array of {job.tasks} tasks{one})"
            if job.guard:
                head += f" (skipped once {job.guard} exists)"
            if not job.edges:
                lines.append(f"  {head}: starts at once (depends on nothing)")
            else:
                lines.append(f"  {head}:")
            for edge in job.edges:
                lines.append(f"    {describe_edge(graph, job, edge)}")
            lines.extend(f"    {line}" for line in job.promised)
        for note in graph.parallel_readers:
            lines.append(f"  {note}")
        for warning in graph.warnings:
            lines.append(f"  note: {warning}")
        return lines


#: The file in a script directory naming the scripts ninja last wrote there.
WRITTEN_LIST = ".ninja-scripts"


@dataclass(frozen=True, slots=True)
class WrittenScripts:
    """The scripts ``Workflow.write`` wrote, the stale ones it removed, and the stale
    ones it left because they were changed since an earlier compile wrote them."""

    paths: list[str]
    removed: list[str]
    kept: list[str] = field(default_factory=list)


def _write_file(path: str, text: str) -> str:
    """Write ``text`` to ``path`` (never through a symbolic link); returns its stamp.

    Every byte, or an OSError: a short write (a full disk, a file-size limit)
    must not leave a script that ends mid-command, recorded as ninja's own.
    """
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return f"{_stamp(os.fstat(fd))}\t{hashlib.sha256(data).hexdigest()}"
    except OSError as exc:  # the part written is no script: it goes, and the error names it
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise OSError(exc.errno, exc.strerror, path) from None
    finally:
        os.close(fd)


def _stamp(st: os.stat_result) -> str:
    """A file's size and mtime: what tells at a glance a file ninja wrote is unchanged."""
    return f"{st.st_size}\t{st.st_mtime_ns}"


def _as_left(path: str, st: os.stat_result, recorded: str) -> bool:
    """Whether the file at ``path`` is as a compile left it (``recorded``: its stamp
    and content digest). Its size and mtime, or else its content: a copy, a tar
    restore, a checkout or ``touch`` change the mtime of a file nobody edited."""
    size, _, rest = recorded.partition("\t")
    mtime, _, digest = rest.partition("\t")
    if _stamp(st) == f"{size}\t{mtime}":
        return True
    if not digest or str(st.st_size) != size:  # an older record has no digest
        return False
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest() == digest
    except OSError:
        return False


def _recorded(record: str) -> dict[str, str]:
    """The names ``record`` lists, with the stamp each was left with ("" if none)."""
    try:
        with open(record, encoding="utf-8") as listing:
            lines = listing.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    return {name: stamp for name, _, stamp in (line.partition("\t") for line in lines)}


def _empty(directory: str) -> bool:
    """Whether ``directory`` holds no entry at all: then no script has a file in
    its way, which one listing says instead of an ``lstat`` per script (10,000
    for a 10,000-job workflow). A directory that cannot be listed is taken as
    holding something, and each name is looked at as before."""
    try:
        with os.scandir(directory) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _refuse_foreign(base: str, names: list[str], earlier: dict[str, str]) -> None:
    """Raise before anything is written if a file a script (or the record) is to
    replace is not one ninja wrote there as it is now: the user's own, a script
    edited since, a link, a directory."""
    for name in names:
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            raise ScriptsInTheWay(f"{path} is {what}; ninja writes its scripts only as files")
        if name == WRITTEN_LIST:
            continue
        stamp = earlier.get(name)
        # a record without stamps (an older ninja's) cannot tell an edit: taken as written
        if stamp is None or (stamp and not _as_left(path, st, stamp)):
            raise ScriptsInTheWay(
                f"{path} is there already and is not as a ninja compile left it (a file of"
                " yours, or a script edited since)"
            )


class ScriptsInTheWay(ShinobiError):
    """A compile's output directory holds a file where a script is to go that is not ninja's."""

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"cannot write the scripts: {problem}; move it away, or write them to another"
            " directory (-o)"
        )


def _remove_stale(
    base: str, recorded: dict[str, str], current: set[str]
) -> tuple[list[str], list[str]]:
    """Remove the recorded scripts not in ``current`` that are still as ninja left
    them; a name that is not a plain file name is left alone, and so is a file
    changed since (an edited script, a name someone added to the record), which
    is returned as kept: (removed, kept)."""
    removed: list[str] = []
    kept: list[str] = []
    for name, stamp in recorded.items():
        if name in current or name in ("", WRITTEN_LIST) or os.path.basename(name) != name:
            continue
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if not _as_left(path, st, stamp):
            kept.append(path)
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed, kept


def compile_jobs(plan: Plan, options: CompileOptions) -> JobGraph:
    """The engine-neutral jobs of ``plan``; raises :class:`OffloadRefused` with every reason."""
    refusals = check_offloadable(plan, options.default_backend, options.container_runtime)
    if refusals:
        raise OffloadRefused(plan.graph.recipe.name, refusals)
    jobs = build_jobs(plan, str(options.cwd), options.run_id)
    derive_edges(jobs)
    wrap_in_containers(jobs, options.container_runtime, options.default_backend)
    jobs.warnings.extend(missing_directories(jobs))
    return jobs


class OffloadTarget(LaunchTracker):
    """A cluster engine ``ninja compile --engine NAME`` hands recipes to."""

    def compile(self, plan: Plan, options: CompileOptions) -> Workflow:
        """Check, flatten, order and wrap ``plan``, then let the engine render scripts."""
        return self.render(compile_jobs(plan, options), options)

    @abstractmethod
    def render(self, jobs: JobGraph, options: CompileOptions) -> Workflow:
        """One script per job, dependencies first."""

    @abstractmethod
    def new_handle(self, workflow: Workflow) -> LaunchHandle:
        """The handle of a launch about to be submitted (state ``submitting``, no job ids)."""

    @abstractmethod
    def submit(self, workflow: Workflow, handle: LaunchHandle, journal: JobJournal) -> None:
        """Hand every job to the engine in dependency order, filling in ``handle``'s job ids.

        Record each accepted job in ``journal`` at once. Return without waiting
        for any job: nothing of the launch keeps running here.
        """
