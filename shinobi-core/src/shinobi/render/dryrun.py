"""``ninja run --dryrun``: every step as a box, in wavefront rows, nothing run.

Each box shows the resolved command line (as the chosen backend would run
it), the paths the step reads and writes, its declared footprint, and for
scatter and loops how many slices or iterations are declared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cached_property, lru_cache
from pathlib import PurePath
from typing import Any

from shinobi.graph import same_shape
from shinobi.plan import Plan, PlannedStep
from shinobi.recipe_modules import is_recipe_module
from shinobi.render.rows import wavefront_rows
from shinobi.render.shell_words import shell_join, visible
from shinobi.render.terminal_text import columns
from shinobi.steps.refs import OutputRef
from shinobi.wording import counted

__all__ = ["dryrun_lines", "guard_path", "slices_take_turns"]

WIDTH = 78
#: The widest a box grows to fit its lines; a longer line runs on past it.
MAX_WIDTH = 160

#: Paths listed in a box; ``--json`` has them all.
_PATHS_SHOWN = 6


#: :func:`columns` of a box's tag: a handful of tags ("cab · native") for
#: thousands of boxes, each with a "·" that takes the regular-expression path.
_tag_columns = lru_cache(maxsize=256)(columns)


def _box(title: str, tag: str, lines: list[str], indent: str) -> list[str]:
    """A box at least WIDTH wide that grows to its longest line, up to MAX_WIDTH.

    Command lines are never wrapped, so they can be copied and pasted as they
    are: one longer than the box runs on past its right edge, which is left
    open on that line, rather than every line being padded to its length (a
    command naming a thousand gathered files is many thousand columns).
    """
    # Nearly every box is plain ASCII without a control character: one test of its
    # title and lines run together says so, and then a line's columns are its length.
    # (ASCII text is printable unless it holds one: isprintable() is has_control() in C.)
    text = title + "".join(lines)
    plain = text.isascii() and text.isprintable()
    if plain:
        widths = list(map(len, lines))
        ends = len(title)
    else:
        title = visible(title)
        lines = [visible(line) for line in lines]
        widths = [columns(line) for line in lines]  # a wide (CJK) character takes two
        ends = columns(title)
    # the edges take one column each: "┌─ " title " " on the left, " " tag " ─┐" on the right
    ends += _tag_columns(tag) + 8
    room = MAX_WIDTH - len(indent) - 4
    widest = max(widths, default=0)
    fits = widest <= room
    if not fits:  # a line too long for any box runs on past it: it widens none
        widest = max([w for w in widths if w <= room], default=0)
    inner = max(WIDTH - len(indent) - 4, ends - 3, widest)
    left = indent + "│ "
    if plain and fits:  # every line is padded by its length: no line runs on
        body = [f"{left}{line.ljust(inner)} │" for line in lines]
    else:
        body = [
            f"{left}{line}{' ' * (inner - w)} │" if w <= inner else left + line
            for line, w in zip(lines, widths, strict=True)
        ]
    return [
        f"{indent}┌─ {title} {'─' * (inner + 4 - ends)} {tag} ─┐",  # at least one ─
        *body,
        f"{indent}└{'─' * (inner + 2)}┘",
    ]


def _command(step: PlannedStep, render: Callable[[PlannedStep], list[str] | None]) -> str | None:
    """``$ argv`` as the backend would run it, or the call of a pystep; None if neither."""
    argv = render(step)
    if argv is not None:
        return "$ " + shell_join(argv)
    if step.node.kind == "python":
        return _call(step)
    return None


def _call(step: PlannedStep) -> str:
    """A pystep as the call it makes: ``python: upper(s='a')`` (arguments shortened)."""
    fn = step.node.step.fn
    module = fn.__module__
    # a recipe file's module name (its stem and a digest of its path) adds nothing here
    name = fn.__qualname__ if is_recipe_module(module) else f"{module}.{fn.__qualname__}"
    shown = ", ".join(f"{k}={_plain(v)!r}" for k, v in step.values.items() if k in step.node.wiring)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"python: {name}({shown})"


def _plain(value: Any) -> Any:
    """``value`` with its paths as the text the function is given them as:
    ``PosixPath('img/a.fits')`` in a dry run says nothing a scientist needs."""
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, list | tuple):
        return same_shape(value, [_plain(v) for v in value])
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _details(
    step: PlannedStep,
    render: Callable[[PlannedStep], list[str] | None],
    loops: _Loops | None = None,
    kind: str | None = None,
) -> list[str]:
    """The lines of ``step``'s box; ``kind`` is its node's, when the caller has it."""
    node = step.node
    lines: list[str] = []
    if step.error:
        lines.append(f"error: {step.error}")
    if step.slices is not None:
        lines.append(
            f"scatter over {', '.join(node.scatter)}: {counted(len(step.slices), 'slice')}"
        )
        for part in step.slices[:3]:
            command = _command(part, render)
            if command:
                lines.append(f"{part.name}: {command}")
        if len(step.slices) > 3:
            lines.append(f"... and {counted(len(step.slices) - 3, 'more slice')}")
        shared = slices_take_turns(step)
        if shared is not None:  # prose, not a command: wrapped to the box
            import textwrap

            lines.extend(textwrap.wrap(shared, WIDTH - 4))
    elif node.scatter:
        lines.append(f"scatter over {', '.join(node.scatter)}: slice count known at run time")
    else:
        command = _command(step, render)
        if command:
            lines.append(command)
    if (node.kind if kind is None else kind) == "function":
        lines.append("driven by an orchestration function (it may run the tool several times)")
    touched: dict[str, None] = {}  # slices often share a path: say it once
    for use in step.paths:
        if use.mutable:
            said = f"rewrites {use.path} (in place)"
        else:
            said = f"{'reads' if use.role == 'input' else 'writes'} {use.path}"
        touched[said if use.writable else f"{said} (read-only)"] = None
    if len(touched) > _PATHS_SHOWN + 1:  # a thousand slices' paths would bury the graph
        shown = list(touched)[:_PATHS_SHOWN]
        lines += [*shown, f"... and {counted(len(touched) - _PATHS_SHOWN, 'more path')}"]
    else:
        lines += touched
    if node.resources is not None and node.resources.declared:
        lines.append(f"footprint: {node.resources.describe()}")
    if node.loop is not None:
        last = loops.last.get(node.loop) if loops is not None else None
        of = f" of up to {last}" if last else ""
        lines.append(f"loop {node.loop!r}, iteration {node.iteration}{of}")
        if node.guard is not None:
            said = loops.guard(node.guard) if loops is not None else str(node.guard)
            lines.append(
                f"skipped if {said} exists (the loop converged),"
                f" passing on {node.previous}'s outputs"
            )
    return lines


def slices_take_turns(step: PlannedStep) -> str | None:
    """Why ``step``'s slices will run one at a time (as the run will say), or None."""
    if step.slices is None or len(step.slices) < 2:
        return None
    from shinobi.offload.ordering import shared_rewritten
    from shinobi.shared_slices import compared_uses

    # a nested recipe's slice holds its steps' paths, as the run compares them
    shared = shared_rewritten([compared_uses(part) for part in step.slices])
    return None if shared is None else shared.note()


class _Loops:
    """What the boxes of ``plan``'s looped steps say of the plan as a whole: each
    loop's last iteration and the step that makes a guard's path. Each is found
    in one walk of the plan, when the first box asks, rather than a walk per box
    (a loop of many iterations was a walk of every step for each of its steps).
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    @cached_property
    def last(self) -> dict[str, int]:
        """How many iterations of each loop are declared (all are drawn, fewer may run)."""
        last: dict[str, int] = {}
        for node in self.plan.graph.nodes:
            if node.loop is not None and node.iteration:
                last[node.loop] = max(node.iteration, last.get(node.loop, node.iteration))
        return last

    @cached_property
    def steps(self) -> dict[str, PlannedStep]:
        """Each step by name: the first of a name, as :func:`guard_path` finds it."""
        return {step.node.name: step for step in reversed(self.plan.steps)}

    def guard(self, guard: object) -> str:
        """The guard's path and where it comes from, as far as it is known before the run."""
        path = _made(self.steps.get(guard.step), guard) if isinstance(guard, OutputRef) else None
        return f"{path} ({guard})" if path is not None else str(guard)


def guard_path(plan: Plan | None, guard: object) -> str | None:
    """The convergence path a loop's guard tests, when it is known before the run."""
    if plan is not None and isinstance(guard, OutputRef):
        return _made(next((s for s in plan.steps if s.node.name == guard.step), None), guard)
    return None


def _made(producer: PlannedStep | None, guard: OutputRef) -> str | None:
    """The path ``producer`` makes as the output ``guard`` names, if known before the run."""
    value = producer.outputs.get(guard.field) if producer is not None else None
    return str(value) if isinstance(value, str | PurePath) else None


def dryrun_lines(
    plan: Plan,
    backend_of: Callable[[PlannedStep], str],
    render_argv: Callable[[PlannedStep], list[str] | None],
    indent: str = "",
    turns_of: Callable[[Plan], Mapping[int, set[int]]] | None = None,
) -> Iterator[str]:
    """The dry-run drawing of ``plan``, line by line as it is drawn.

    ``ninja run --dryrun`` prints each batch of lines as it comes: the lines of
    100,000 steps held at once were over 100 MB (see
    :mod:`shinobi.cli.long_output`). ``turns_of`` gives the waits a run keeps
    besides the wiring, for steps that share a path one of them rewrites (see
    :mod:`shinobi.step_turns`): the rows show them as they show a dependency,
    and the step's box says so.
    """
    graph = plan.graph
    names = [node.name for node in graph.nodes]
    by_index = {s.node.index: s for s in plan.steps}
    turns = turns_of(plan) if turns_of is not None else {}
    inner = indent + "    "
    loops = _Loops(plan)
    for number, row in enumerate(wavefront_rows(graph, turns), 1):
        count = len(row.members)
        said = f": fan-out of {count}" if count > 1 else ""
        before = row.after  # most rows wait on one step: its name, nothing to join
        if len(before) == 1:
            said += f" (after {names[before[0]]})"
        elif before:
            said += f" (after {', '.join([names[i] for i in before])})"
        yield f"{indent}── row {number}{said}"
        for index in row.members:
            step = by_index[index]
            node = step.node
            kind = node.kind
            backend = backend_of(step)
            tag = f"{kind} · {backend}" if backend else kind
            if len(node.deps) > 1:
                tag = f"fan-in of {len(node.deps)} · {tag}"
            details = _details(step, render_argv, loops, kind)
            waits = turns.get(index)
            if waits:
                shared = ", ".join([names[i] for i in sorted(waits)])
                details.append(f"waits its turn after {shared}: a path they share, one rewrites")
            yield from _box(step.name, tag, details, indent)
            if step.children is not None:
                yield from dryrun_lines(step.children, backend_of, render_argv, inner, turns_of)
            if step.slices is not None:  # a scattered recipe runs once per slice: draw a few
                for part in step.slices[:3]:
                    if part.children is not None:
                        yield f"{inner}── {part.name}"
                        yield from dryrun_lines(
                            part.children, backend_of, render_argv, inner, turns_of
                        )
