"""The wavefront executor.

A step becomes ready the moment everything it depends on has finished; ready
steps run on ``max_workers`` threads, lowest declaration index first, and are
admitted against the run's shared budget in that same order. A worker that
finishes a step records it and goes straight on with the next ready one, under
the wavefront's lock, rather than handing the result to a coordinating thread
and waiting to be given more: two thread wake-ups per step cost more than the
scheduling itself. At one worker the steps run on the thread that schedules
them. The main thread never runs a step, so it can always turn a signal into
a teardown. On the first
failure nothing new starts, running steps finish, and the first failure by
declaration order is the one reported. Results are assembled in declaration
order, so output never depends on which thread won a race.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import heapq
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shinobi.backends.spawn import ninja_holds_main
from shinobi.errors import ShinobiError, exception_line
from shinobi.exit_guard import describe_exit, validated
from shinobi.fd_limit import exhausted, steps_at_once, too_few_files
from shinobi.plan import (
    cab_of,
    resolve_value,
    resolve_wiring,
    scatter_slices,
    validate_inputs,
)
from shinobi.steps.argv import masked
from shinobi.steps.outputs import unmade_recipe_output
from shinobi.steps.refs import OutputRef
from shinobi.steps.result import (
    RecipeResult,
    StepResult,
    StepStatus,
    failing_part,
    first_failed,
    joined_tail,
    run_secrets,
)
from shinobi.steps.types import error_field, field_values, validation_errors
from shinobi.wording import counted

if TYPE_CHECKING:
    from shinobi.graph import Graph, Node
    from shinobi.resources import Ticket
    from shinobi.session import Session
    from shinobi.stale_until import Signature

__all__ = ["UNDYING_WAIT", "run_graph"]

#: Seconds a run waits, after teardown, for a step whose processes would not die.
UNDYING_WAIT = 2.0


class _Workers:
    """Up to ``size`` daemon threads: a step stuck in uninterruptible I/O must not
    keep ninja from exiting once the run has been reported.

    A thread starts only when a job finds every running one busy, so a run
    never has more threads than steps at once, however large ``-j`` is (a
    typo of ``-j 100000000`` must not start that many).
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job()
            with self._lock:
                self._idle += 1

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
            elif len(self._threads) < self._size:
                thread = threading.Thread(
                    target=self._loop, daemon=True, name=f"shinobi-worker-{len(self._threads)}"
                )
                self._threads.append(thread)
                thread.start()
        self._jobs.put(job)

    def close(self) -> None:
        with self._lock:
            started = len(self._threads)
        for _ in range(started):
            self._jobs.put(None)

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds in all for the threads to end (after :meth:`close`)."""
        until = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, until - time.monotonic()))


@dataclass(slots=True)
class _Unit:
    """One thing to run: a node, or one slice of a scattered node."""

    node: int
    slice: int | None
    name: str
    values: dict[str, Any]
    ticket: Ticket | None = None
    requested: bool = False


def _order(unit: _Unit) -> tuple[int, int]:
    """Where ``unit`` comes in declaration order: its step's, then its slice's."""
    return unit.node, -1 if unit.slice is None else unit.slice


def _gather(name: str, slices: list[StepResult], fields: Iterable[str] = ()) -> StepResult:
    """A scattered step's result: every output a list, one element per slice, in order."""
    keys = dict.fromkeys(fields)
    for part in slices:
        keys.update(dict.fromkeys(part.outputs))
    outputs = {key: [part.outputs.get(key) for part in slices] for key in keys}
    # a slice that failed speaks for the step before one an interrupt cancelled after it
    failed = failing_part(slices)
    # every slice replayed from the cache: the step as a whole did not run either
    replayed = bool(slices) and all(s.status == "cached" for s in slices)
    starts = [s.started for s in slices if s.started is not None]
    ends = [s.finished for s in slices if s.finished is not None]
    return StepResult(
        name=name,
        status=failed.status if failed else ("cached" if replayed else "ok"),
        outputs=outputs,
        returncode=failed.returncode if failed else 0,
        stdout=joined_tail([s.stdout for s in slices]),
        stderr=joined_tail([s.stderr for s in slices]),
        error=_slices_error(failed, slices) if failed else None,
        signal=failed.signal if failed else None,
        backend=slices[0].backend if slices else None,
        started=min(starts) if starts else None,
        finished=max(ends) if ends else None,
        slices=slices,
    )


#: How many more failed slices a scattered step's error names after the first.
_MORE_FAILURES_NAMED = 2


def _slices_error(failed: StepResult, slices: list[StepResult]) -> str:
    """The error of a scattered step: its first failed slice's, and the others'
    after it. A summary naming one exit code hid an out-of-memory kill in the
    next slice, which is the one the user must act on."""
    error = f"slice {failed.name!r}: {failed.error}"
    others = [s for s in slices if s.status == "failed" and s is not failed]
    if not others:
        return error
    named = "; ".join(f"slice {s.name!r}: {s.error}" for s in others[:_MORE_FAILURES_NAMED])
    rest = len(others) - _MORE_FAILURES_NAMED
    more = f"; and {counted(rest, 'more failed slice')}" if rest > 0 else ""
    return f"{error}; {named}{more}"


def _unnamed(error: str, *names: str) -> str:
    """A refusal of a step's inputs without the step's name in front (as qualified,
    or as declared): the failed step's result is named, and whoever reports it
    ("step 'b' failed: ...") names it once. A slice's name (``step 'b[1]'``)
    stays: it says which slice."""
    for step in names:
        lead = f"step {step!r}: "
        if error.startswith(lead):
            return error[len(lead) :]
    return error


def _declares(node: Node) -> bool:
    return node.resources is not None and node.resources.declared


#: Kinds of step that declare nothing themselves but run steps that may queue at the
#: budget while they hold a worker (see _Wavefront.next_unit).
_MAY_WAIT_INSIDE = frozenset({"recipe", "function"})


class _Wavefront:
    def __init__(self, graph: Graph, inputs: dict[str, Any], session: Session, prefix: str) -> None:
        self.graph = graph
        self.inputs = inputs
        self.session = session
        self.prefix = prefix
        self.nodes = graph.nodes
        self.max_workers = graph.recipe.max_workers or session.config.execution.max_workers
        #: Steps that may run at once: ``max_workers``, unless the open-file
        #: limit holds fewer (see :mod:`shinobi.fd_limit`).
        self.at_once = steps_at_once(self.max_workers)
        self.held_to_files = False
        self.results: list[StepResult | None] = [None] * len(self.nodes)
        self.pending_deps = [len(n.deps) for n in self.nodes]
        self.slices: dict[int, list[StepResult | None]] = {}
        self.inflight: dict[int, int] = {}
        #: Scattered steps whose slices run one at a time (see :mod:`shinobi.shared_slices`).
        self.serial: set[int] = set()
        #: The steps each step waits for, besides its wiring (see :mod:`shinobi.step_turns`).
        self.turns: dict[int, set[int]] = {}
        self.waiting: _Unit | None = None
        self.verdicts: dict[tuple[str | None, int | None], bool] = {}
        #: loop -> each path handed to its first cycle -> its signature before the
        #: loop; see :meth:`note_handed`
        self.handed_before: dict[str, dict[str, Signature | None]] = {}
        #: loop -> the nodes of its first cycle, grouped once (None: not yet)
        self.first_cycles: dict[str | None, list[Node]] | None = None
        #: (loop, iteration) -> the indices of its nodes, grouped once (None: not yet):
        #: looked up for every iteration, a scan of every node made a loop of
        #: 100,000 iterations that converged early take minutes to skip the rest
        self.cycle_nodes: dict[tuple[str | None, int | None], list[int]] | None = None
        #: Steps already warned about as larger than the whole budget.
        self.oversized: set[int] = set()
        #: Results waiting to be recorded, while :meth:`complete` records others.
        self.completing: collections.deque[tuple[int, StepResult]] | None = None
        self.budgeted: dict[int, bool] = {}
        self.ready: list[tuple[int, int, _Unit]] = []
        # Guards everything above and below against the workers, which record
        # their own results and claim their next unit.
        self.lock = threading.Lock()
        self.wakeup = threading.Event()
        self.running = 0
        self.failed = False
        self.completed = 0
        # The main thread handles interrupts: it must never be busy running a step.
        self.top_level = not prefix and threading.current_thread() is threading.main_thread()
        self.inline = self.max_workers == 1
        self.abandoned = False
        self.undying_since: float | None = None
        self.crash: BaseException | None = None
        self.workers: _Workers | None = None

    # -- resolving -----------------------------------------------------------
    def output_of(self, ref: OutputRef) -> Any:
        result = self.results[self.graph.index[ref.step]]
        assert result is not None, f"{ref.step} has not finished"
        return result.outputs.get(ref.field)

    def make_ready(self, index: int) -> None:
        node = self.nodes[index]
        name = f"{self.prefix}{node.name}"
        values = resolve_wiring(node, self.inputs, self.output_of)
        if node.loop is not None and node.iteration == 1:
            self.note_until_before(node.loop)
            self.note_handed(node.loop)
        if node.guard is not None and self.converged_before(node):
            self.complete(index, self.skipped(node, name))
            return
        try:
            if node.scatter:
                parts = scatter_slices(node, values)
                assert parts is not None
                checked = [
                    validate_inputs(node, part, f"step '{name}[{k}]'")
                    for k, part in enumerate(parts)
                ]
                self.slices[index] = [None] * len(checked)
                each = 1 if node.subgraph is None else node.subgraph.working_steps()
                self.session.plan_slices(name, len(checked), each)
                if len(checked) > 1:
                    self.check_slices(index, name, checked)
                if not checked:
                    self.complete(index, _gather(name, [], self.output_fields(node)))
                for k, part in enumerate(checked):
                    self.push(_Unit(index, k, f"{name}[{k}]", part))
                return
            values = validate_inputs(node, values, f"step {name!r}")
        except ValueError as exc:
            error = _unnamed(str(exc), name, node.name)
            # refused before any process ran: no exit status to report (not 0)
            self.complete(
                index, StepResult(name=name, status="failed", returncode=None, error=error)
            )
            return
        self.push(_Unit(index, None, name, values))

    def check_slices(self, index: int, name: str, parts: list[dict[str, Any]]) -> None:
        """Hold a scatter's slices to one at a time when they would rewrite one path,
        and say when two write the same output or one's harvest glob would collect
        another's files.

        One worker runs slices in turn, so there only the warnings are left: two
        slices writing one output still replace each other's product.
        """
        from shinobi.shared_slices import (
            harvests_overlapping,
            plan_slices,
            slices_clashing,
            slices_sharing,
        )

        node = self.nodes[index]
        cab = cab_of(node.step)
        harvests = cab is None or any(m.harvest for m in cab.field_meta.values())
        uses = plan_slices(node, name, parts, self.session.cwd)
        if self.max_workers > 1:
            reason = slices_sharing(name, uses)
            if reason:
                self.serial.add(index)
        else:
            reason = slices_clashing(name, uses)
        if reason:
            self.session.warn(reason)
        overlap = harvests_overlapping(name, uses, self.session.cwd) if harvests else None
        if overlap:
            self.session.warn(overlap)

    def note_turns(self) -> None:
        """With several workers, have steps that share a path one writes take turns."""
        if self.max_workers == 1 or len(self.nodes) < 2:
            return  # one worker runs them in that order anyway
        from shinobi.step_turns import step_turns

        self.turns, warnings = step_turns(self.graph, self.inputs, self.session.cwd, self.prefix)
        for warning in warnings:
            self.session.warn(warning)

    def note_until_before(self, loop: str) -> None:
        """Note each cycle's until file of ``loop`` as it is right before the loop's
        first cycle (when its first step is ready), so a flag an earlier run left
        does not end it, and one an earlier loop of this run wrote neither.

        The paths are the plan's (see :attr:`Session.until_planned`), or for a
        loop handed its path (:attr:`Graph.handed_until`), that path in every cycle.
        """
        key = f"{self.prefix}{loop}"
        if key in self.session.until_before:
            return  # another step of the first cycle was ready first
        from shinobi.graph import output_refs
        from shinobi.stale_until import as_before

        paths = dict(self.session.until_planned.get(key, {}))
        handed = self.graph.handed_until.get(loop)
        known = handed is not None and all(
            self.results[self.graph.index[ref.step]] is not None for ref in output_refs(handed)
        )
        path = resolve_value(handed, self.inputs, self.output_of) if known else None
        if isinstance(path, str | os.PathLike):
            full = os.path.join(self.session.cwd, os.fspath(path))
            cycles = {n.iteration for n in self.nodes if n.loop == loop and n.iteration}
            paths = dict.fromkeys(cycles, full)
        self.session.until_before[key] = as_before(paths)

    def note_handed(self, loop: str) -> None:
        """Note each path handed to ``loop``'s first cycle as it is before the cycle
        runs, for an until path known only once a step returns it (a pystep's).

        A pystep handed the flag's path (``done="done.flag"``) and returning it
        is judged as a Cab passing it through is: a flag an earlier run left,
        not rewritten by a cycle of this run, does not end the loop. Called as
        each step of the first cycle becomes ready: a path from a step outside
        the loop still running is noted when it is known; one the first noted
        keeps its first note; a path from a step of the cycle is the run's own.
        """
        from shinobi.graph import output_refs
        from shinobi.stale_until import signature

        noted = self.handed_before.setdefault(loop, {})
        if self.first_cycles is None:  # one pass over the graph, not one per ready step
            self.first_cycles = {}
            for each in self.nodes:
                if each.iteration == 1:
                    self.first_cycles.setdefault(each.loop, []).append(each)
        for node in self.first_cycles.get(loop, ()):
            for raw in node.wiring.values():
                if any(self.from_cycle_or_unknown(loop, ref) for ref in output_refs(raw)):
                    continue
                value = resolve_value(raw, self.inputs, self.output_of)
                if isinstance(value, str | os.PathLike):
                    path = self.full_path(value)
                    if path not in noted:
                        noted[path] = signature(path)

    def from_cycle_or_unknown(self, loop: str, ref: OutputRef) -> bool:
        """Whether ``ref`` is an output of ``loop``'s own steps, or not known yet."""
        index = self.graph.index[ref.step]
        return self.nodes[index].loop == loop or self.results[index] is None

    def full_path(self, path: str | os.PathLike[str]) -> str:
        """``path`` made absolute against the run's directory, one spelling per file."""
        return os.path.normpath(os.path.join(self.session.cwd, os.fspath(path)))

    def converged_before(self, node: Node) -> bool:
        """Whether ``node``'s loop had converged before ``node``'s iteration.

        Decided once per iteration, when its first node becomes ready, before
        any of the iteration has run: a step of the iteration may write the
        flag itself, and the steps after it in that iteration must still run.
        """
        key = (node.loop, node.iteration)
        verdict = self.verdicts.get(key)
        if verdict is None:
            verdict = self.verdicts[key] = self.converged(node)
        return verdict

    def converged(self, node: Node) -> bool:
        """Whether the loop's until file is there, and a cycle of this run made it.

        A file exactly as it was before the loop (one an earlier run, or an
        earlier loop, left) counts only if the cycle before was skipped, or a
        cached step of it recorded that it had changed the file (see
        :mod:`shinobi.stale_until`).
        """
        path = resolve_value(node.guard, self.inputs, self.output_of)
        return self.flagged(str(node.loop), (node.iteration or 0) - 1, path)

    def flagged(self, loop: str, iteration: int, path: Any) -> bool:
        """Whether ``loop``'s until file ``path`` says it had converged after ``iteration``."""
        from shinobi.stale_until import until_changed

        if path is None:
            return False
        full = os.path.join(self.session.cwd, str(path))
        if not os.path.exists(full):
            return False
        before = self.session.until_before.get(f"{self.prefix}{loop}", {}).get(iteration)
        if before is None:  # a path a step returned: one handed to the loop is judged too
            before = self.handed_as_before(loop, full)
        results = self.results
        cycle = [r for i in self.nodes_of_cycle(loop, iteration) if (r := results[i]) is not None]
        if before is None:  # known only once reported (a pystep made it up, a glob found it)
            return self.written_in_this_run(loop, iteration, path, full, cycle)
        if before[0] != full or until_changed(before):
            return True
        return any(  # converged before that cycle, or a cached step of it changed the file
            r.status == "skipped" or r.details.get("until_changed") for r in cycle
        )

    def nodes_of_cycle(self, loop: str, iteration: int) -> list[int]:
        """The indices of the nodes of ``loop``'s cycle ``iteration``, in node order."""
        if self.cycle_nodes is None:
            grouped: dict[tuple[str | None, int | None], list[int]] = {}
            for index, node in enumerate(self.nodes):
                if node.loop is not None:
                    grouped.setdefault((node.loop, node.iteration), []).append(index)
            self.cycle_nodes = grouped
        return self.cycle_nodes.get((loop, iteration), [])

    def written_in_this_run(
        self, loop: str, iteration: int, path: Any, full: str, cycle: list[StepResult]
    ) -> bool:
        """Whether an until file no one knew before the cycle ran was written in this
        run: one an earlier run left (a pystep that writes ``Path("flag")`` once it
        converged) ended the loop after its first cycle, on every run after.

        Told by the clock of the file system that holds the run's records (its
        ``.steps``, written as the run began): a file server's clock may be off
        this machine's by seconds. A cycle served from the step cache, or one
        skipped, rewrote nothing: its word is taken, as before.
        """
        if any(r.status in ("cached", "skipped") for r in cycle):
            return True
        began = self.session.began_on_disk()
        try:
            st = os.stat(full)
        except OSError:
            return False
        # the change time too: a copy that keeps its source's time (cp -p, copy2,
        # rsync -a, tar x) or a rename of an older file is still written now
        written = max(st.st_mtime_ns, st.st_ctime_ns)
        if began is None or written >= began:
            return True
        self.session.warn(
            f"loop {self.prefix}{loop}: its until file {os.fspath(path)!r} was there before this"
            f" run and cycle {iteration} did not rewrite it, so it does not end the loop (a"
            " flag an earlier run left); remove it, or have the step write it in every run",
            once=f"stale-until:{self.prefix}{loop}",
        )
        return False

    def handed_as_before(self, loop: str, full: str) -> tuple[str, Signature | None] | None:
        """``full`` with its signature before ``loop``, when it is a path handed to
        the loop's first cycle (see :meth:`note_handed`)."""
        noted = self.handed_before.get(loop, {})
        path = self.full_path(full)
        return (full, noted[path]) if path in noted else None

    def warn_unconverged(self) -> None:
        """Say so when a loop's last iteration ran and did not converge either.

        Its outputs are then the last iteration's, as declared, and the run
        succeeds; but a self-calibration that used up ``max_iter`` without
        reaching its goal is something the user has to know about.
        """
        last: dict[str, int] = {}
        for node in self.nodes:
            if node.loop is not None and node.iteration is not None:
                last[node.loop] = max(node.iteration, last.get(node.loop, 0))
        if not last:
            return
        self.warn_unconverged_handed(last)
        for index, node in enumerate(self.nodes):
            if node.until is None or node.loop is None or node.iteration != last[node.loop]:
                continue
            result = self.results[index]
            if result is None or result.status not in ("ok", "cached"):
                continue  # failed, not run, or skipped (the loop converged earlier)
            self.warn_if_unflagged(node.loop, node.iteration, result.outputs.get(node.until))

    def warn_unconverged_handed(self, last: dict[str, int]) -> None:
        """:meth:`warn_unconverged` for a loop handed its until path: the last
        iteration ran (none of its steps skipped) and did not leave the flag."""
        for loop, value in self.graph.handed_until.items():
            final = [
                result
                for result, node in zip(self.results, self.nodes, strict=True)
                if node.loop == loop and node.iteration == last.get(loop)
            ]
            if not final or any(r is None or r.status not in ("ok", "cached") for r in final):
                continue
            self.warn_if_unflagged(
                loop, last[loop], resolve_value(value, self.inputs, self.output_of)
            )

    def warn_if_unflagged(self, loop: str, iterations: int, path: Any) -> None:
        """Warn that ``loop`` used all its ``iterations`` when its last one did not
        leave the until file ``path``."""
        if not self.flagged(loop, iterations, path):
            ran = "its only iteration" if iterations == 1 else f"all {iterations} iterations"
            # a body that returns no until path (a pystep's None) names no file
            missing = (
                "the last iteration gave no until path"
                if path is None
                else (f"its until file {str(path)!r} was not written")
            )
            self.session.warn(
                f"loop {self.prefix + loop!r} ran {ran} without converging ({missing});"
                " its outputs are the last iteration's"
            )

    def skipped(self, node: Node, name: str) -> StepResult:
        assert node.previous is not None
        before = self.results[self.graph.index[node.previous]]
        assert before is not None
        return StepResult(
            name=name,
            status="skipped",
            outputs=dict(before.outputs),
            returncode=None,
            details={"reason": f"loop {node.loop!r} converged before iteration {node.iteration}"},
        )

    @staticmethod
    def output_fields(node: Node) -> list[str]:
        return list(getattr(node.step.outputs_model, "model_fields", {}))

    def push(self, unit: _Unit) -> None:
        heapq.heappush(self.ready, (*_order(unit), unit))

    # -- running -------------------------------------------------------------
    def launch(self) -> bool:
        """Start what may start now (with the lock held): on the pool, or here at one worker.

        True if any unit ran here, so the caller looks again at once instead of
        waiting for a wake-up no worker will send.
        """
        ran = False
        while (unit := self.claim()) is not None:
            if self.inline:
                result = self.execute(unit)
                if self.abandoned:
                    return True
                self.finish(unit, result)
                ran = True
                continue
            if self.workers is None:
                self.workers = _Workers(self.at_once)
            self.workers.submit(functools.partial(self.work, unit))
        return ran

    def claim(self) -> _Unit | None:
        """The next unit to run, counted as running; None when nothing may start now."""
        if not self.ready or self.stopping:
            return None
        if self.running >= self.at_once:
            if self.at_once < self.max_workers and not self.held_to_files:
                self.held_to_files = True  # said once, when it first holds a step back
                self.session.warn(too_few_files(self.max_workers, self.at_once))
            return None
        unit = self.next_unit()
        if unit is None:
            return None  # admission blocks in declaration order
        self.take(unit)
        self.running += 1
        if unit.slice is not None:
            self.inflight[unit.node] = self.inflight.get(unit.node, 0) + 1
        return unit

    def execute(self, unit: _Unit) -> StepResult:
        """Run one unit (without the lock): a failure of ours fails the step, loudly."""
        from shinobi.dispatch import run_node

        try:
            return run_node(self.session, unit.name, self.nodes[unit.node], unit.values)
        except ShinobiError as exc:  # a backend refusing this step, in its own words
            return StepResult(name=unit.name, status="failed", returncode=None, error=str(exc))
        except SystemExit as exc:  # the recipe's code, somewhere no closer look caught it
            said = f"the recipe's code {describe_exit(exc)} while the step ran; raise instead"
            return StepResult(name=unit.name, status="failed", returncode=None, error=said)
        except Exception as exc:  # a bug or a backend crash, or the machine's file limit
            return StepResult(
                name=unit.name,
                status="failed",
                returncode=None,
                error=exhausted(exc) or f"internal error: {type(exc).__name__}: {exc}",
            )
        finally:
            self.session.budget.release(unit.ticket)

    def work(self, first: _Unit) -> None:
        """A worker's job: run ``first``, then every unit it can claim, recording each.

        Recording runs the observers; one that raises ends the run, raised on
        the coordinating thread as it would be at one worker.
        """
        unit: _Unit | None = first
        try:
            while unit is not None:
                result = self.execute(unit)
                with self.lock:
                    if self.abandoned:
                        return
                    self.finish(unit, result)
                    unit = self.claim()
                    self.launch()  # what this result made ready, on the idle workers
        except BaseException as exc:
            self.crash = self.crash or exc
        finally:
            self.wakeup.set()  # going idle: the coordinator may have to end the run

    def next_unit(self) -> _Unit | None:
        """The unit to start next, or None while the budget holds the head back.

        A unit declared earlier that became ready while a later one waits at
        the budget goes first, as declaration order says: the waiting unit
        leaves the budget's queue (see :meth:`yield_turn`) and asks again when
        its turn comes back. Undeclared units take no share, so the queue does
        not hold them back;
        except at one worker, where the recipe runs in exact declaration order,
        and except a nested recipe (or a step function): it declares nothing
        itself, yet its own steps may queue at the budget while it holds a
        worker. Let past, such units could take every worker while the grant
        went to the waiting unit, which then had no worker to start on, and
        the run hung with nothing running.
        """
        unit = self.waiting or self.head()
        if unit is not None and unit is self.waiting:
            unit = self.yield_turn(unit)
        if unit is None:
            return None  # only slices of a step whose slices run one at a time
        if not unit.requested:
            self.request(unit)
        if unit.ticket is None or unit.ticket.granted:
            if unit is self.waiting:
                self.waiting = None
            return unit
        self.waiting = unit
        if self.max_workers == 1:
            return None
        free = [
            e
            for e in self.ready
            if e[2] is not unit
            and not self.draws_on_budget(e[0])
            and self.nodes[e[0]].kind not in _MAY_WAIT_INSIDE
            and not self.held(e[2])
        ]
        return min(free)[2] if free else None

    def yield_turn(self, waiting: _Unit) -> _Unit | None:
        """``waiting``, or the ready unit declared before it that now goes first.

        Its ticket, not granted yet, leaves the budget's queue; one granted
        meanwhile gives its share back. Either way no grant is left held by a
        unit that does not launch.
        """
        earlier = self.head()
        if earlier is None or _order(earlier) >= _order(waiting):
            return waiting
        if waiting.ticket is not None and waiting.ticket.granted:
            return waiting
        self.session.budget.release(waiting.ticket)
        waiting.ticket, waiting.requested = None, False
        self.waiting = None
        return earlier

    def head(self) -> _Unit | None:
        """The first ready unit in declaration order that may start now."""
        if not (self.serial or self.turns):
            return self.ready[0][2]
        return min((e for e in self.ready if not self.held(e[2])), default=(0, 0, None))[2]

    def held(self, unit: _Unit) -> bool:
        """Whether ``unit`` waits: a slice for its step's running slice, or a step for
        one it takes turns with (a path they share) to finish."""
        if unit.node in self.serial and self.inflight.get(unit.node, 0) > 0:
            return True
        waits = self.turns.get(unit.node)
        return waits is not None and any(self.results[i] is None for i in waits)

    def draws_on_budget(self, index: int) -> bool:
        """Whether node ``index`` takes a share of this machine's budget.

        A step that declares nothing takes none; nor does one its backend runs
        elsewhere (a Slurm job): the cluster admits it, and holding it back
        for this machine's cores would run cluster jobs one after another. A
        pystep runs here whatever the backend (see :mod:`shinobi.pystep_runner`).
        """
        known = self.budgeted.get(index)
        if known is None:
            from shinobi.dispatch import choose_backend

            node = self.nodes[index]
            known = _declares(node) and (
                node.kind == "python"
                or not self.session.backend(choose_backend(self.session, node)).capabilities.remote
            )
            self.budgeted[index] = known
        return known

    def request(self, unit: _Unit) -> None:
        node = self.nodes[unit.node]
        unit.requested = True
        if not self.draws_on_budget(unit.node):
            unit.ticket = None
            return
        unit.ticket = self.session.budget.request(unit.name, node.resources, self.wakeup.set)
        if (
            unit.ticket is not None
            and unit.ticket.oversized
            and node.resources
            and unit.node not in self.oversized  # once per step, not once per slice
        ):
            self.oversized.add(unit.node)
            name = f"{self.prefix}{node.name}"
            self.session.warn_when_started(
                name,
                f"step {name!r} declares {node.resources.describe()}, more than"
                f" this run's whole budget ({self.session.budget.describe()}); it runs alone",
            )

    def take(self, unit: _Unit) -> None:
        """Remove ``unit`` from the ready heap (usually its head)."""
        if self.ready[0][2] is unit:
            heapq.heappop(self.ready)
            return
        self.ready = [entry for entry in self.ready if entry[2] is not unit]
        heapq.heapify(self.ready)

    @property
    def stopping(self) -> bool:
        # a failure in any recipe of the run, nested or beside this one, stops it too
        return self.failed or self.session.step_failed.is_set() or self.session.control.stopping()

    def note_failure(self) -> None:
        self.failed = True
        self.session.step_failed.set()

    def complete(self, index: int, result: StepResult) -> None:
        """Record node ``index``'s result and make ready what it unblocks.

        A step made ready here may complete at once (a skipped loop cycle, an
        input refused), so results are recorded from a queue rather than by
        recursion: a loop of a thousand cycles that converged at the second
        skips 998 cycles in a row.
        """
        if self.completing is not None:
            self.completing.append((index, result))
            return
        self.completing = collections.deque([(index, result)])
        try:
            while self.completing:
                self.record(*self.completing.popleft())
        finally:
            self.completing = None

    def record(self, index: int, result: StepResult) -> None:
        self.results[index] = result
        self.completed += 1
        self.session.emit_finished(result)
        if not result.ok:
            self.note_failure()
            return
        for dependant in self.graph.dependants[index]:
            self.pending_deps[dependant] -= 1
            if self.pending_deps[dependant] == 0 and not self.stopping:
                self.make_ready(dependant)

    def finish(self, unit: _Unit, result: StepResult) -> None:
        """Record a unit's result (with the lock held)."""
        self.running -= 1
        if unit.slice is None:
            self.complete(unit.node, result)
            return
        parts = self.slices[unit.node]
        parts[unit.slice] = result
        self.inflight[unit.node] -= 1
        self.session.emit_finished(result)
        if not result.ok:
            self.note_failure()
        node = self.nodes[unit.node]
        done = [p for p in parts if p is not None]
        # After a failed slice the rest never start: the step is complete (and
        # failed) once its running slices are back.
        name = f"{self.prefix}{node.name}"
        if len(done) == len(parts) or (
            self.inflight[unit.node] == 0 and any(not p.ok for p in done)
        ):
            gathered = _gather(name, done, self.output_fields(node))
        elif self.inflight[unit.node] == 0 and self.stopping:
            # The run stopped at another step: the slices still waiting never start.
            # Those that ended are kept, as the manifest keeps them: what they made
            # is there, and a pystep slice that ran to its end must be said so.
            gathered = _gather(name, done, self.output_fields(node))
            gathered.status, gathered.returncode, gathered.outputs = "cancelled", None, {}
            gathered.error = f"stopped after {len(done)} of {len(parts)} slices, as the run did"
        else:
            return
        if len(done) < len(parts):  # which slices never started: k is slice name[k]
            gathered.details["slices_not_run"] = [k for k, p in enumerate(parts) if p is None]
        self.complete(unit.node, gathered)

    def check_interrupt(self) -> None:
        session = self.session
        if session.interrupted and not session.control.cancelled.is_set():
            session.undying = session.control.cancel()

    def run(self) -> RecipeResult:
        # The roots are listed before any is made ready: a root that completes
        # at once (an empty scatter, a skipped iteration) makes its dependants
        # ready itself, and they must not be found again by this loop.
        self.note_turns()
        roots = [index for index, count in enumerate(self.pending_deps) if count == 0]
        for index in roots:
            if not self.stopping:
                self.make_ready(index)
        try:
            # The main thread runs (or waits on) ninja's own code until the run
            # ends: steps may then start by posix_spawn (shinobi.backends.spawn).
            with ninja_holds_main() if self.top_level else contextlib.nullcontext():
                try:
                    if self.top_level and self.inline:
                        self.loop_beside_main_thread()
                    else:
                        self.loop()
                except BaseException:
                    if self.crash is not None:
                        self.drain_after_crash()
                    raise
        finally:
            if self.workers is not None:
                self.workers.close()
            for _, _, unit in self.ready:
                self.session.budget.release(unit.ticket)
        if not self.stopping:
            self.warn_unconverged()
        return self.assemble()

    def drain_after_crash(self) -> None:
        """Stop what runs once the run has crashed (an observer or ninja itself
        raised on a worker), and wait for the workers before the crash is raised.

        A worker may be starting a step at that moment: it is stopped as it
        registers (see :meth:`RunControl.on_cancel`), but only if the run waits
        for it; raised at once, the run left it running behind a caller that had
        been told the run was over.
        """
        with self.lock:
            self.abandoned = True  # nothing more is recorded or started
        control = self.session.control
        self.session.undying = tuple(sorted({*self.session.undying, *control.cancel()}))
        if self.workers is not None:
            self.workers.close()
            self.workers.join(control.grace + UNDYING_WAIT)

    def loop_beside_main_thread(self) -> None:
        """Schedule (and run the steps) on a thread of its own while the main
        thread stays free to turn a signal into the teardown of the running step."""
        failure: list[BaseException] = []

        def schedule() -> None:
            try:
                self.loop()
            except BaseException as exc:  # re-raised on the main thread
                failure.append(exc)

        thread = threading.Thread(target=schedule, name="shinobi-scheduler", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.1)
            self.check_interrupt()
            # A step whose leader would not die holds the thread (and the lock
            # it runs steps under), so this is checked here, without the lock.
            if self.give_up_on_undying():
                return
        if failure:
            raise failure[0]

    def give_up_on_undying(self) -> bool:
        """True once a step that would not die has been waited on for :data:`UNDYING_WAIT`.

        The run is then reported rather than left hanging, and nothing such a
        step returns later counts (``abandoned``).
        """
        if self.session.undying and self.undying_since is None:
            self.undying_since = time.monotonic()
        if self.undying_since is None or time.monotonic() - self.undying_since <= UNDYING_WAIT:
            return False
        self.abandoned = True
        return True

    def loop(self) -> None:
        watch = self.top_level and not self.inline  # else the main thread watches
        while True:
            self.wakeup.clear()
            if watch:
                self.check_interrupt()
            with self.lock:
                if self.crash is not None:
                    raise self.crash
                if self.stopping and self.waiting is not None:
                    # Nothing new starts: give the queued turn to sibling recipes now.
                    self.session.budget.release(self.waiting.ticket)
                    self.waiting = None
                if self.running == 0 and (self.stopping or not self.ready):
                    return
                if self.give_up_on_undying():
                    return
                if self.launch():
                    continue
            self.wakeup.wait(0.1)

    def assemble(self) -> RecipeResult:
        steps = [r for r in self.results if r is not None]
        # A step that failed is to blame; one stopped because a step failed
        # elsewhere in the run (a sibling of this nested recipe) is not: the
        # recipe is then stopped too, not failed, or the run's report named it
        # (declared first) and hid the step that did fail.
        failed = first_failed(steps)
        stopped = None if failed else next((r for r in steps if r.status == "cancelled"), None)
        failure = failed or stopped
        cancelled = self.session.control.cancelled.is_set()
        recipe = self.graph.recipe
        outputs: dict[str, Any] = {}
        if failure is None and not cancelled and self.completed == len(self.nodes):
            outputs = {
                k: resolve_value(v, self.inputs, self.output_of)
                for k, v in self.graph.outputs.items()
            }
            try:
                model = recipe.outputs_model
                outputs = field_values(validated(model.model_validate, outputs, by_name=True))
            except Exception as exc:
                # Every step succeeded; what they made is not what the recipe
                # promises, and outputs that failed their model are not reported.
                return RecipeResult(
                    name=recipe.name,
                    status="failed",
                    steps=steps,
                    error=_outputs_refused(recipe.name, exc, run_secrets(steps)),
                )
            unmade = unmade_recipe_output(
                recipe.name, recipe.outputs_model, outputs, self.session.cwd
            )
            if unmade is not None:  # a required path output no step made
                error = masked(unmade, run_secrets(steps))  # it quotes a path a tool printed
                return RecipeResult(name=recipe.name, status="failed", steps=steps, error=error)
        status: StepStatus = "cancelled" if cancelled or stopped else ("failed" if failed else "ok")
        error = failure.error if failure else ("interrupted" if cancelled else None)
        if failure is None and status == "ok" and self.completed < len(self.nodes):
            status = "failed"
            if self.session.control.stopping():
                # a stop asked for (Ctrl-C) before the teardown marks the run cancelled:
                # a nested recipe waiting at the budget returns in between
                status, error = "cancelled", "interrupted"
            elif self.session.step_failed.is_set():  # a step of another recipe of the run
                status, error = "cancelled", "stopped, as the run did after a step failed"
        return RecipeResult(
            name=recipe.name,
            status=status,
            outputs=outputs,
            steps=steps,
            error=error,
            failed_step=failed.name if failed else None,
        )


def _outputs_refused(recipe: str, exc: Exception, secrets: list[str]) -> str:
    """One line on why a recipe's outputs do not satisfy its outputs model; it
    quotes the value, in which a secret input a tool echoed is masked."""
    errors = validation_errors(exc)
    if not errors:
        return f"recipe {recipe!r}: validating its outputs raised {exception_line(exc)}"
    first = errors[0]
    got = repr(masked(first.get("input"), secrets) if secrets else first.get("input"))
    got = got if len(got) <= 80 else f"{got[:77]}..."
    field = error_field(first)
    if not field:  # a validator of the outputs model's own refused them together
        said = f"its outputs: {first.get('msg')}"
    elif first.get("type") == "missing":
        said = f"its output {field!r} is not set"
    else:
        said = f"its output {field!r} is {got}: {first.get('msg')}"
    fix = "fix the recipe's outputs model, or what set_output wires to it"
    return f"recipe {recipe!r}: {said} ({fix})"


def run_graph(
    graph: Graph, inputs: dict[str, Any], session: Session, prefix: str = ""
) -> RecipeResult:
    """Run every node of ``graph`` with the recipe ``inputs``; see the module docstring."""
    return _Wavefront(graph, dict(inputs), session, prefix).run()
