"""From a statically resolved plan to engine-neutral jobs and the edges between them.

Every step becomes one job; a scattered step becomes one job with a task per
slice (an engine renders it as an array); nested recipes are flattened into
their steps, named ``outer.inner``. Each edge remembers why it exists
(``wired``, a loop's previous iteration, its convergence test, or one of the
mutation orderings added by :mod:`shinobi.offload.ordering`) so a compiled
script and ``--explain`` can say so. Jobs are listed dependencies first, in
the order the local scheduler would run them one at a time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from shinobi.backends.base import Invocation, PathUse
from shinobi.graph import Node, output_refs
from shinobi.harvest import anchored
from shinobi.plan import Plan, PlannedStep, cab_of, resolve_value
from shinobi.steps.argv import Unknown, harvest_glob, on_disk_kind
from shinobi.steps.refs import OutputRef
from shinobi.steps.types import fields_of
from shinobi.untouched_outputs import rewritten_paths

__all__ = [
    "DERIVED",
    "EXEC_ARGV",
    "Edge",
    "EdgeKind",
    "Job",
    "JobGraph",
    "build_jobs",
    "describe_edge",
    "env_command",
]

EdgeKind = Literal[
    "wired", "loop", "guard", "mutate-then-mutate", "mutate-then-read", "read-then-mutate"
]

#: Edge kinds that ordering derives from shared paths rather than from wiring.
DERIVED: frozenset[str] = frozenset({"mutate-then-mutate", "mutate-then-read", "read-then-mutate"})


@dataclass(frozen=True, slots=True)
class Edge:
    """``before`` must finish successfully before the job holding this edge starts."""

    before: int
    kind: EdgeKind
    detail: str

    @property
    def derived(self) -> bool:
        return self.kind in DERIVED


@dataclass(slots=True)
class Job:
    """One step as the engine will run it: a command per task, what it touches, what it waits for.

    ``guard`` is the absolute path whose existence means the step's loop has
    converged: the job then exits successfully without running its command.
    ``until_file`` (jobs of a loop's first cycle) is that path: whichever of
    them starts first records how the file is before the loop, and the guards
    do not count it unchanged (see :mod:`shinobi.stale_until`).
    """

    index: int
    name: str
    node: Node
    commands: list[list[str]]
    invocations: list[Invocation]
    paths: tuple[PathUse, ...]
    scattered: bool = False
    guard: str | None = None
    until_file: str | None = None
    edges: list[Edge] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: A path the slices of a scattered job share and rewrite: they run one at a time.
    serial: str | None = None
    #: Per task, the required outputs the tool must leave: (field, absolute path,
    #: "file", "dir" or "any"). ``ninja run`` fails a step that did not make
    #: one, or made the wrong kind; so must its job.
    expected: list[list[tuple[str, str, str]]] = field(default_factory=list)
    #: Why ``expected`` holds more than the cab's own required outputs: one line
    #: per step output a required recipe output takes (``set_output`` may wire
    #: one to an output the cab leaves optional), for ``--explain`` and the script.
    promised: list[str] = field(default_factory=list)
    #: Per task, the required recipe outputs this job's step makes: (how
    #: ``ninja run`` names it, "recipe 'r': its output 'image'", absolute path,
    #: kind). A loop iteration that skips its tool checks these in its place:
    #: ``ninja run`` checks the recipe's outputs at its end, the converged
    #: iteration's, whose paths are this iteration's (an offloadable loop names
    #: every path the same in every iteration), while the converged iteration's
    #: own job does not check them, since a later iteration may yet make them.
    recipe_outputs: list[list[tuple[str, str, str]]] = field(default_factory=list)
    #: Per task, the command that stops its payload when the job is cancelled
    #: or times out (None: ending the job's processes ends it); see
    #: :class:`shinobi.backends.base.Rendered`. Empty: no task needs one.
    stops: list[list[str] | None] = field(default_factory=list)
    #: Per task, what says the engine killed its payload for memory (see
    #: :attr:`shinobi.backends.base.Rendered.oom_probe`). Empty: no task has one.
    probes: list[list[str] | None] = field(default_factory=list)
    #: On the job that writes a loop's until file in the loop's last iteration:
    #: the loop's dotted name, that iteration's number and the file. A launch
    #: that ends without the file used every iteration without converging,
    #: which its status says, as ``ninja run`` warns.
    loop_end: tuple[str, int, str] | None = None
    #: The container runtime its commands run in ("none": on the node itself);
    #: set by :func:`shinobi.offload.wrapping.wrap_in_containers`.
    runtime: str = "none"

    @property
    def tasks(self) -> int | None:
        """The number of array tasks, or None for a plain job."""
        return len(self.commands) if self.scattered else None

    @property
    def resources(self) -> Any:
        return self.node.resources

    @property
    def image(self) -> str | None:
        return self.invocations[0].image if self.invocations else None

    def after(self) -> list[int]:
        """Distinct jobs this one waits for, in the order the edges were added.

        A job with one edge (most of a chain's) skips the dict that drops
        repeats: this is asked twice per job of a compile."""
        edges = self.edges
        if len(edges) == 1:
            return [edges[0].before]
        return list(dict.fromkeys([edge.before for edge in edges]))

    def left_paths(self, cwd: str, task: int | None = None) -> dict[str, list[str]]:
        """What the job (or the array task ``task``, its slice) may leave
        half-written if it ends without finishing, for ``ninja status`` to name
        (see :mod:`shinobi.launch.left_outputs`):
        ``writes``, its outputs, and ``rewrites``, the inputs it rewrites in place,
        absolute, each once; an empty list is left out. An output that is also
        an input it only reads is not there, nor one that is the path it was
        handed (a passthrough) from a step before it, which made it: a file
        stamped after this job started could be either's. Nor is a ``harvest``
        glob: what it matches is known only once the tool has run."""
        uses = self.paths if task is None else self.invocations[task].paths
        rewritten = list(rewritten_paths(uses))
        read = {u.path for u in uses if u.role == "input"}
        wiring = self.node.wiring
        made_before = {
            name
            for name in cab_of(self.node.step).passthroughs()  # a job always runs a cab
            if isinstance(wiring.get(name), OutputRef)
        }
        writes = [
            u.path
            for u in uses
            if u.role == "output"
            and not u.pattern
            and u.field not in made_before
            and u.path not in read
            and u.path not in rewritten
        ]
        found = {"writes": writes, "rewrites": rewritten}
        return {
            key: list(dict.fromkeys(os.path.normpath(os.path.join(cwd, p)) for p in paths))
            for key, paths in found.items()
            if paths
        }

    def waits_for(self, other: int) -> bool:
        """Whether an edge of this job names ``other``. A list and ``in``, not
        ``any()`` over a generator: ordering asks this of every edge it derives,
        and a job has one or a few."""
        return other in [edge.before for edge in self.edges]


@dataclass(slots=True)
class JobGraph:
    """Every job of a recipe, dependencies first, with the cwd its commands run in."""

    recipe: str
    cwd: str
    run_id: str
    jobs: list[Job] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    parallel_readers: list[str] = field(default_factory=list)


def describe_edge(graph: JobGraph, job: Job, edge: Edge) -> str:
    """Why ``job`` waits for ``edge.before``, in one line."""
    before = graph.jobs[edge.before].name
    if edge.kind == "wired":
        return f"after {before}: wired ({edge.detail})"
    if edge.kind == "loop":
        return f"after {before}: the previous iteration of loop {job.node.loop!r}"
    if edge.kind == "guard":
        return f"after {before}: it writes the convergence test {edge.detail}"
    if edge.kind == "mutate-then-mutate":
        return f"after {before}: mutate-then-mutate on {edge.detail} (both rewrite it in place)"
    if edge.kind == "mutate-then-read":
        return f"after {before}: mutate-then-read on {edge.detail} (read the finished result)"
    return (
        f"after {before}: read-then-mutate on {edge.detail} (rewrite it only once"
        " the reader of the old contents is done)"
    )


def _absolute(cwd: str, value: Any) -> str | None:
    if value is None or isinstance(value, Unknown):
        return None
    return os.path.normpath(os.path.join(cwd, str(value)))


#: One required output a job checks: its name, its harvest glob template (or
#: None: a path output), and what must be on disk ("file", "dir", "any", "glob").
_Required = tuple[str, str | None, str]


def _required_of(cab: Any) -> tuple[_Required, ...]:
    """The outputs of ``cab`` that :func:`_required_outputs` checks: the same
    for every step of the cab, so worked out once per cab."""
    if cab is None:
        return ()
    found: list[_Required] = []
    for name, spec in fields_of(cab.outputs_model).items():
        meta = cab.meta(name)
        if meta.harvest and spec.required:
            found.append((name, meta.harvest, "glob"))
            continue
        dtype = meta.dtype
        if not spec.promised or (spec.path_kind is None and dtype is None):
            continue
        found.append((name, None, on_disk_kind(spec.path_kind, dtype)))
    return tuple(found)


class _CabJobFacts(NamedTuple):
    """What every job of one cab shares: the outputs it checks, the environment
    its tool gets and the image it runs in. Worked out at the cab's first step.

    ``env`` is copied from the cab once, here, and that copy is every one of
    the cab's invocations' ``env``: a copy per step cost a 10,000-step compile
    about a tenth of its flattening. :attr:`Invocation.env` is a read-only
    ``Mapping``; the renderers (the Slurm scripts, the container runtimes'
    ``render_for_job``) read it and build their own dicts from it. A later
    change to the cab's own ``env`` reaches no job, as before."""

    required: tuple[_Required, ...]
    env: dict[str, str]
    image: str | None

    @classmethod
    def of(cls, cab: Any) -> _CabJobFacts:
        env = dict(getattr(cab, "env", {}) or {})
        return cls(_required_of(cab), env, getattr(cab, "image", None))


def _required_outputs(
    required: tuple[_Required, ...], part: PlannedStep, cwd: str
) -> list[tuple[str, str, str]]:
    """The paths ``part`` must leave: its required path outputs, as planned, each
    with what it must be ("file", "dir" or "any"), as ``ninja run`` checks; a
    required output a harvest glob collects (one file or a list), as the
    pattern, "glob" (something must match it). ``required``: its cab's, from
    :func:`_required_of`."""
    found: list[tuple[str, str, str]] = []
    for name, harvest, kind in required:
        if harvest is not None:
            pattern = harvest_glob(harvest, part.values)
            if pattern is not None:
                found.append((name, anchored(cwd, pattern), kind))
            continue
        value = part.outputs.get(name)
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str | os.PathLike):
                found.append((name, os.path.join(cwd, os.fspath(item)), kind))
    return found


#: Runs its arguments as a command, for a program a shell or ``env`` would read
#: as a variable (a path holding ``=``). bash, not sh: dash drops a variable
#: whose name is no identifier from what it runs; ``--``: a program named
#: ``-x=1`` is no option of ``exec``.
EXEC_ARGV: tuple[str, ...] = ("/bin/bash", "-c", 'exec -- "$@"', "bash")

#: A first word a shell reads as an assignment rather than as the program.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: First words bash runs itself (``compgen -k`` and ``compgen -b``), not the program
#: of that name: a cab's ``time -v tool`` ran bash's ``time`` keyword on the cluster
#: ("-v: command not found"), ``echo`` or ``kill`` bash's builtin, where ``ninja
#: run`` runs ``/usr/bin/time``, ``/bin/echo`` and ``/bin/kill``.
_SHELL_OWN = frozenset(
    """
    if then else elif fi case esac for select while until do done in function time { } !
    [[ ]] coproc . : [ alias bg bind break builtin caller cd command compgen complete
    compopt continue declare dirs disown echo enable eval exec exit export false fc fg
    getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd
    read readarray readonly return set shift shopt source suspend test times trap true
    type typeset ulimit umask unalias unset wait
    """.split()  # noqa: SIM905 (the words as compgen lists them, a line per sort)
)


def env_command(argv: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
    """The words a job script runs for ``argv`` with a cab's ``env`` set for the tool alone.

    ``env -- K=V tool`` rather than ``export`` lines: the variables reach the
    tool and nothing else of the job (a cab's ``PATH`` would hide ``stat`` and
    ``mkdir`` from a loop's guard), and a name that is no shell identifier
    (``MY-VAR``) is passed as ``ninja run`` passes it; ``--`` keeps a name
    starting with ``-`` from being read as an option. ``env`` reads every word
    holding ``=`` as one more variable, ``--`` or not, so a program whose path
    holds one (``tools/applycal=v2/applycal``) is run through
    :data:`EXEC_ARGV`; without ``env``, so is one a shell would read as an
    assignment (``tools=v2/run``) or run itself (``time``, ``echo``: ``env``
    runs the program of that name either way). Otherwise the words stay as the user wrote
    them, for a readable script and ``--explain``. Shared by every engine that
    writes a shell command line (the Slurm scripts and per-step jobs).
    """
    words = list(argv)
    program = words[0] if words else ""
    if not env:
        ran_by_shell = _ASSIGNMENT.match(program) or program in _SHELL_OWN
        return [*EXEC_ARGV, *words] if ran_by_shell else words
    through = list(EXEC_ARGV) if "=" in program else []
    return ["env", "--", *(f"{k}={v}" for k, v in env.items()), *through, *words]


def _with_environment(invocation: Invocation) -> list[str]:
    """The command a job runs for ``invocation`` (:func:`env_command`). A container
    runtime replaces it with its own, which carries the variables its way."""
    return env_command(invocation.argv, invocation.env)


class _Flattener:
    def __init__(self, graph: JobGraph, until_files: dict[str, str]) -> None:
        self.graph = graph
        #: dotted loop name -> its until file, for the jobs of its first cycle
        self.until_files = until_files
        #: id() of a planned step -> its job
        self.job_of: dict[int, Job] = {}
        #: each cab met so far (the key keeps it alive) -> what its jobs share
        self.cabs: dict[Any, _CabJobFacts] = {}

    def lookup(self, plan: Plan) -> Any:
        by_node = {step.node.name: step for step in plan.steps}

        def output(ref: OutputRef) -> Any:
            step = by_node.get(ref.step)
            if step is None:
                return Unknown(ref.step, ref.field)
            if step.slices is not None:
                return [s.outputs.get(ref.field) for s in step.slices]
            return step.outputs.get(ref.field, Unknown(ref.step, ref.field))

        return output

    def edges_of(self, plan: Plan, node: Node, jobs_of: dict[int, list[int]]) -> list[Edge]:
        if not node.deps:
            return []
        nodes = plan.graph.nodes
        wired = _wired_from(node)
        guard_refs = output_refs(node.guard) if node.guard is not None else ()
        guard_steps = {ref.step for ref in guard_refs} if guard_refs else set()
        edges: list[Edge] = []
        for dep in node.deps:
            dep_node = nodes[dep]
            if dep_node.name == node.previous:
                kind: EdgeKind = "loop"
                detail = f"iteration {node.iteration} after {dep_node.iteration}"
            elif dep_node.name in guard_steps and dep_node.name not in wired:
                kind = "guard"
                detail = ", ".join(str(r) for r in guard_refs if r.step == dep_node.name)
            elif (
                node.loop is not None  # (most nodes: no call to ask)
                and _earlier_iteration(node, dep_node)
                and dep_node.name not in wired
            ):
                kind = "loop"  # not wired: an iteration starts once the one before is over
                detail = f"iteration {node.iteration} waits for all of {dep_node.iteration}"
            else:
                kind = "wired"
                detail = ", ".join(wired.get(dep_node.name, ())) or "declared"
            for before in jobs_of.get(dep, []):
                edges.append(Edge(before, kind, detail))
        return edges

    def flatten(self, plan: Plan, prefix: str, outer: list[Edge]) -> list[int]:
        """Add ``plan``'s jobs; returns their indices. ``outer`` edges go to its roots."""
        cwd = self.graph.cwd
        output = self.lookup(plan)
        jobs_of: dict[int, list[int]] = {}
        made: list[int] = []
        last = _last_iterations(plan)
        for i in plan.graph.topological_order():
            step = plan.steps[i]
            node = step.node
            edges = self.edges_of(plan, node, jobs_of)
            if not node.deps:
                edges = [*outer, *edges]
            if step.children is not None:
                jobs_of[i] = self.flatten(step.children, f"{prefix}{node.name}.", edges)
                made.extend(jobs_of[i])
                continue
            guard = None
            if node.guard is not None:
                guard = _absolute(cwd, resolve_value(node.guard, plan.inputs, output))
            job = self.make_job(step, f"{prefix}{node.name}", guard, edges)
            if node.loop is not None and node.iteration == 1:
                job.until_file = self.until_files.get(f"{prefix}{node.loop}")
            if node.until is not None and node.loop is not None and step.slices is None:
                until = _absolute(cwd, step.outputs.get(node.until))
                if until is not None and node.iteration == last[node.loop]:
                    job.loop_end = (f"{prefix}{node.loop}", node.iteration, until)
            jobs_of[i] = [job.index]
            made.append(job.index)
        return made

    def make_job(self, step: PlannedStep, name: str, guard: str | None, edges: list[Edge]) -> Job:
        parts = step.slices if step.slices is not None else [step]
        cab = cab_of(step.node.step)
        facts = self.cabs.get(cab)
        if facts is None:
            facts = self.cabs[cab] = _CabJobFacts.of(cab)
        # each part's invocation, command and checks in one pass over the parts
        invocations: list[Invocation] = []
        commands: list[list[str]] = []
        expected: list[list[tuple[str, str, str]]] = []
        cwd, required = self.graph.cwd, facts.required
        for part in parts:
            invocation = self.invocation(part, name, facts)
            invocations.append(invocation)
            commands.append(_with_environment(invocation))
            expected.append(_required_outputs(required, part, cwd) if required else [])
        # one step's paths are a tuple already (tuple() returns it): no list to join
        paths = tuple(step.paths if step.slices is None else (u for p in parts for u in p.paths))
        job = Job(
            index=len(self.graph.jobs),
            name=name,
            node=step.node,
            commands=commands,
            invocations=invocations,
            paths=paths,
            scattered=step.slices is not None,
            guard=guard,
            edges=edges,
            expected=expected,
        )
        self.graph.jobs.append(job)
        self.job_of[id(step)] = job
        return job

    def promise_outputs(self, plan: Plan) -> None:
        """Have the jobs check what ``plan``'s recipe (and each nested one) promises.

        ``ninja run`` fails a recipe whose required path output names a path
        that is not there, or not of its kind, once its steps are done (see
        :func:`shinobi.steps.outputs.unmade_recipe_output`): ``set_output`` may
        wire it to an output the step's cab leaves optional. A compiled launch
        has no step after the last job, so the job that makes that output
        checks it after its tool, as it checks the cab's required outputs.
        """
        recipe = plan.graph.recipe
        for name, spec in fields_of(recipe.outputs_model).items():
            if not spec.promised or spec.path_kind is None:
                continue
            why = f"recipe {recipe.name!r} requires it as its output {name!r}"
            kind = on_disk_kind(spec.path_kind, None)
            said = f"recipe {recipe.name!r}: its output {name!r}"
            for ref in output_refs(plan.graph.outputs.get(name)):
                self.promise(plan, ref, kind, why, said)
        for step in plan.steps:
            if step.children is not None:
                self.promise_outputs(step.children)

    def promise(self, plan: Plan, ref: OutputRef, kind: str, why: str, said: str) -> None:
        """Add ``ref``'s paths (each slice's, for a scatter) to its job's checks;
        through a nested recipe to the step output its own output is wired to.
        ``said``: how ``ninja run`` names the recipe output (``Job.recipe_outputs``)."""
        step = next((s for s in plan.steps if s.node.name == ref.step), None)
        if step is None:
            return
        if step.children is not None:
            for inner in output_refs(step.children.graph.outputs.get(ref.field)):
                self.promise(step.children, inner, kind, why, said)
            return
        job = self.job_of.get(id(step))
        if job is None:
            return
        parts = step.slices if step.slices is not None else [step]
        if not job.recipe_outputs:
            job.recipe_outputs = [[] for _ in parts]
        added = found = False
        for expected, kept, part in zip(job.expected, job.recipe_outputs, parts, strict=True):
            value = part.outputs.get(ref.field)
            for item in value if isinstance(value, list | tuple) else [value]:
                if not isinstance(item, str | os.PathLike):
                    continue
                path = os.path.join(self.graph.cwd, os.fspath(item))
                kept.append((said, path, kind))
                found = True
                entry = (ref.field, path, kind)
                if entry not in expected:
                    expected.append(entry)
                    added = True
        whose = "each slice's" if step.slices is not None else "its"
        if added:
            job.promised.append(f"after its tool, checks {whose} output {ref.field!r}: {why}")
        if found and job.guard is not None:
            _note_skipped_check(job, f"{whose} output {ref.field!r}: {why}")

    def invocation(self, part: PlannedStep, name: str, cab: _CabJobFacts) -> Invocation:
        return Invocation(
            step=name,
            argv=tuple(part.argv or ()),
            cwd=self.graph.cwd,
            env=cab.env,
            paths=part.paths,
            resources=part.node.resources,
            image=cab.image,
            venv=part.node.venv,
            run_id=self.graph.run_id,
        )


def _note_skipped_check(job: Job, what: str) -> None:
    """Say in ``job``'s notes that its loop iteration, when skipped, still checks
    ``what`` (``Job.recipe_outputs``): the check a reader would otherwise think
    the skip bypasses, as it did."""
    job.promised.append(
        f"if loop {job.node.loop!r} converged before iteration {job.node.iteration},"
        f" runs no tool but still checks {what}"
    )


def _last_iterations(plan: Plan) -> dict[str, int]:
    """Each loop of ``plan`` (not of its nested recipes) and the number of its last iteration."""
    last: dict[str, int] = {}
    for node in plan.graph.nodes:
        if node.loop is not None and node.iteration is not None:
            last[node.loop] = max(node.iteration, last.get(node.loop, 0))
    return last


def _earlier_iteration(node: Node, dep: Node) -> bool:
    """Whether ``dep`` is a step of an earlier iteration of ``node``'s own loop."""
    return (
        node.loop is not None
        and dep.loop == node.loop
        and dep.iteration is not None
        and node.iteration is not None
        and dep.iteration < node.iteration
    )


def _wired_from(node: Node) -> dict[str, list[str]]:
    """Each step ``node`` is wired to -> its wirings, ``key <- step.field``, in
    wiring order: one walk of the wiring per node, not one per dependency.

    A value that is an :class:`OutputRef` itself (most wirings) needs no walk
    by :func:`output_refs`; a subclass, or a container, takes the long way."""
    wired: dict[str, list[str]] = {}
    for key, value in node.wiring.items():
        if type(value) is OutputRef:
            wired.setdefault(value.step, []).append(f"{key} <- {value}")
            continue
        for ref in output_refs(value):
            wired.setdefault(ref.step, []).append(f"{key} <- {ref}")
    return wired


def build_jobs(plan: Plan, cwd: str, run_id: str) -> JobGraph:
    """The jobs of an offload-eligible ``plan`` (see :mod:`shinobi.offload.eligibility`)."""
    from shinobi.stale_until import until_files

    graph = JobGraph(recipe=plan.graph.recipe.name, cwd=cwd, run_id=run_id)
    # an offloaded loop's until path is the same in every cycle: its first cycle's
    found = {u.loop: u.path for u in until_files(plan, cwd) if u.iteration == 1}
    flattener = _Flattener(graph, found)
    flattener.flatten(plan, "", [])
    flattener.promise_outputs(plan)
    return graph
