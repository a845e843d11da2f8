"""A cab's outputs: what is known before it runs, and what it produced after.

Both sides share one rule set so a dry run, a compiled workflow and a real run
agree: a passthrough is the input's value, an ``implicit`` template is filled
from the inputs, a ``harvest`` glob is collected after the run, a wrangler
sets what it matched, and anything else falls back to the field's default.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from shinobi.backends.base import PathUse
from shinobi.harvest import anchored, harvest
from shinobi.steps.argv import Unknown, UnsetInput, format_template
from shinobi.steps.cab import Cab, OutputRule, Wrangler
from shinobi.steps.types import fields_of
from shinobi.wording import listed

__all__ = [
    "Collected",
    "LogLines",
    "OutputRefused",
    "WrangledOutput",
    "collect_outputs",
    "missing_output",
    "optional_outputs",
    "static_outputs",
    "unmade_recipe_output",
    "unmounted_text_paths",
    "unseen_output",
    "wrangle",
]


class _StaticOutput(NamedTuple):
    """An output as :func:`static_outputs` works it out: its rule, and what that needs."""

    name: str
    rule: OutputRule | None
    default: Any
    required: bool
    #: Its implicit template, else its harvest one, else None.
    template: str | None


def _static_facts(cab: Cab) -> tuple[_StaticOutput, ...]:
    """The cab's outputs with their rules (:meth:`Cab.output_rules`), in its order:
    worked out once per cab (see :meth:`Cab.kept`)."""
    specs = fields_of(cab.outputs_model)
    return tuple(
        _StaticOutput(
            name,
            rule,
            specs[name].default,
            specs[name].required,
            cab.meta(name).implicit or cab.meta(name).harvest,
        )
        for name, rule in cab.output_rules().items()
    )


class OutputRefused(ValueError):
    """An output no path can be made of before the run; ``unset``: the input left
    unset that its template names (None: another reason)."""

    def __init__(self, message: str, unset: str | None) -> None:
        super().__init__(message)
        self.unset = unset


def static_outputs(cab: Cab, step: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Outputs knowable without running; the rest are :class:`Unknown`."""
    result: dict[str, Any] = {}
    for name, rule, default, required, template in cab.kept("_static_outputs", _static_facts):
        if rule == "passthrough":
            result[name] = inputs.get(name)
        elif rule == "default":
            result[name] = default
        else:  # implicit: known now; else known once the tool ran (or never)
            try:
                value = format_template(template, inputs) if template else None
            except ValueError as exc:
                if not (isinstance(exc, UnsetInput) and not required):
                    unset = exc.field if isinstance(exc, UnsetInput) else None
                    raise OutputRefused(f"step {step!r}, output {name!r}: {exc}", unset) from None
                result[name] = default  # optional, named after no value: absent
                continue
            known = rule == "implicit" and value is not None
            result[name] = value if known else Unknown(step, name)
    return result


@dataclass(slots=True)
class WrangledOutput:
    """What the wranglers found in a tool's output: a list output's every match."""

    values: dict[str, str | list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class LogLines:
    """The lines of a log file, read afresh each time they are gone through: a
    stream longer than ninja keeps in memory (16 MiB) is wrangled from its log,
    which has all of it, without holding it whole."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __iter__(self) -> Iterator[str]:
        with open(self.path, encoding="utf-8", errors="replace", newline=None) as fh:
            for line in fh:
                yield line.rstrip("\n")


def wrangle(cab: Cab, stdout: str | LogLines, stderr: str | LogLines) -> WrangledOutput:
    """What the cab's wranglers find in what its tool printed.

    A ``stream="both"`` wrangler reads stdout's lines, then stderr's: the two
    pipes' interleaving in time is not recorded (nor could it be for a batch
    job's or a container's logs), so an output's last match in that order wins.
    Where that took stderr's value over a different one on stdout, a warning
    says so rather than let the choice pass unseen. A list output (``list[str]``)
    gets every match instead, in that order, so no choice is made.
    """
    found = WrangledOutput()
    if not cab.wranglers:
        return found
    streams = {
        name: text.splitlines() if isinstance(text, str) else text
        for name, text in (("stdout", stdout), ("stderr", stderr))
    }
    doubts: dict[str, str | None] = {}  # output -> the warning about its value, if any
    specs = fields_of(cab.outputs_model)
    for wrangler in cab.wranglers:
        names = ("stdout", "stderr") if wrangler.stream == "both" else (wrangler.stream,)
        last: dict[str, str] = {}  # stream -> this wrangler's last value on it
        every: list[str] = []  # this wrangler's every value, for a list output
        for stream in names:
            for line in streams[stream]:
                match = wrangler.regex.search(line)
                if match is None:
                    continue
                if wrangler.action == "error":
                    found.errors.append(line.strip())
                elif wrangler.action == "warning":
                    found.warnings.append(line.strip())
                elif wrangler.output is not None:
                    value = _matched_value(match, wrangler.output)
                    if value is None:  # its value group took no part: this line says none
                        continue
                    last[stream] = value
                    every.append(value)
        if wrangler.output is None or not last:
            continue
        if specs[wrangler.output].is_list:
            before = found.values.get(wrangler.output, [])
            found.values[wrangler.output] = [*before, *every]  # another wrangler's, then its
        else:
            found.values[wrangler.output] = [last[s] for s in names if s in last][-1]
            doubts[wrangler.output] = _both_streams_doubt(wrangler, last)
    found.warnings.extend(doubt for doubt in doubts.values() if doubt is not None)
    return found


def _matched_value(match: re.Match[str], output: str) -> str | None:
    """The group named like the output when the pattern has one, else the first
    group, else the whole match; None when that group took no part in the match
    (``rms(?:: ([\\d.]+))?`` on ``rms``). Group 1 stood in for a named group that
    did not match: a wrong value, taken without a word."""
    if output in match.re.groupindex:
        return match.group(output)
    return match.group(1) if match.re.groups else match.group(0)


def _both_streams_doubt(wrangler: Wrangler, last: Mapping[str, str]) -> str | None:
    """The warning for an output wrangler that matched on both streams with different
    values: stderr's was taken only because it is read second, which may not be
    the tool's last word in time."""
    if "stdout" not in last or "stderr" not in last or last["stdout"] == last["stderr"]:
        return None
    return (
        f"output {wrangler.output!r} took {last['stderr']!r} from stderr over {last['stdout']!r}"
        f" from stdout: its wrangler {wrangler.shown} matched on both, and reads stdout's lines"
        " first, then stderr's; give the wrangler stream='stdout' or stream='stderr' to read"
        " the one that has it"
    )


class Collected(NamedTuple):
    """What :func:`collect_outputs` found after a run."""

    values: dict[str, Any]
    #: why the run did not make what it declares (each fails the step)
    problems: list[str]
    #: harvests that took in files older than the step (see :func:`_harvested`)
    leftovers: list[str]


def collect_outputs(
    cab: Cab,
    inputs: Mapping[str, Any],
    known: Mapping[str, Any],
    wrangled: WrangledOutput,
    cwd: str,
    left_over: Callable[[str], bool] | None = None,
) -> Collected:
    """The outputs of a finished run, and the problems with them (missing files).

    ``known`` is :func:`static_outputs` of the same inputs: the caller has it
    already, from building the invocation. ``left_over`` tells a path a
    harvest glob matches that was there, as it is, before the step started.
    """
    values = dict(known)
    problems: list[str] = []
    leftovers: list[str] = []
    specs = fields_of(cab.outputs_model)
    for name, spec in specs.items():
        meta = cab.meta(name)
        if meta.harvest and (pattern := _harvest_pattern(meta.harvest, inputs)) is not None:
            matches = harvest(anchored(cwd, pattern))
            shown = format_template(meta.harvest, inputs) or pattern  # as written
            matches, said = _harvested(name, shown, matches, spec.is_list, left_over)
            leftovers += [said] if said else []
            rel = [os.path.relpath(m, cwd) if not os.path.isabs(pattern) else m for m in matches]
            values[name] = rel if spec.is_list else (rel[0] if rel else spec.default)
            if not rel and spec.required:  # a required list wants one file at least
                problems.append(
                    f"output {name!r}: nothing matched its harvest pattern {shown!r} (the"
                    " tool made no such file)"
                )
        if name in wrangled.values:
            values[name] = wrangled.values[name]
        if isinstance(values.get(name), Unknown):
            unmatched = [w.shown for w in cab.wranglers if w.output == name]
            if spec.required and unmatched and name not in wrangled.values:
                problems.append(
                    f"output {name!r}: no line the tool printed matched its wrangler {unmatched[0]}"
                )
            values[name] = spec.default
        value = values.get(name)
        if not spec.promised or spec.path_kind is None or value is None:
            continue  # an optional output's known name stands, made or not: see docs/cabs.md
        for path in value if isinstance(value, list) else [value]:
            problem = _made_as_declared(spec.path_kind, os.path.join(cwd, str(path)))
            if problem is not None:
                problems.append(f"output {name!r}: {problem.format(path=str(path))}")
    return Collected(values, problems, leftovers)


def _harvested(
    name: str,
    pattern: str,
    matches: list[str],
    is_list: bool,
    left_over: Callable[[str], bool] | None,
) -> tuple[list[str], str | None]:
    """The matches a harvest output takes, and what to say of those an earlier
    run (or another step) left, as they were, before this step started.

    A glob such as ``img-*.fits`` matches last week's images as well as this
    run's: a single-valued output took the first in sort order, whichever run
    made it, and a list took both runs' products as this one's. A single
    output takes what the step wrote when the older matches are set apart by
    that; a list keeps every match (a tool may leave some of its products as
    they were on purpose), said so, and the result is not cached.
    """
    if left_over is None or not matches:
        return matches, None
    old = [m for m in matches if left_over(m)]
    if not old or len(old) == len(matches):  # none, or all: the untouched check's to say
        return matches, None
    if not is_list:
        fresh = [m for m in matches if m not in old]
        return fresh, None
    earlier = listed(old, 3, lambda m: repr(os.path.basename(m)))
    return matches, (
        f"output {name!r}: its harvest pattern {pattern!r} also took {len(old)} file(s) that"
        f" were there, as they are, before the step started (an earlier run's, or another"
        f" step's?): {earlier}; remove them or narrow the pattern; this result is not cached"
    )


def _harvest_pattern(template: str, inputs: Mapping[str, Any]) -> str | None:
    """The glob a harvest ``template`` collects with ``inputs``, or None when it names
    an input that is not set: an optional output :func:`static_outputs` left absent
    (a required one it refused)."""
    try:
        return format_template(template, inputs, glob_pattern=True) or template
    except UnsetInput:
        return None


def optional_outputs(cab: Cab, uses: Iterable[PathUse], paths: Iterable[str]) -> dict[str, str]:
    """Which of ``paths`` are optional outputs of ``cab`` (field -> path).

    A step may leave an optional product unwritten (a loop's until flag, most
    iterations): one an earlier run left there is no sign of a tool failing
    quietly.
    """
    wanted = set(paths)
    specs = fields_of(cab.outputs_model)
    return {
        use.field: use.path
        for use in uses
        if use.role == "output"
        and use.path in wanted
        and use.field in specs
        and not specs[use.field].required
    }


#: What each path kind must be on disk, and how to name it.
_KINDS = {"file": (False, "a File"), "dir": (True, "a Directory"), "ms": (True, "an MS")}


def _made_as_declared(kind: str, path: str) -> str | None:
    """Why the output at ``path`` is not what its declared kind says (with a
    ``{path}`` placeholder for the path as the step named it), or None."""
    if not os.path.exists(path):
        return "the tool did not create {path!r}"
    wrong = _wrong_kind(kind, path)
    return None if wrong is None else "{path!r} " + wrong


def _wrong_kind(kind: str, path: str) -> str | None:
    """How what is at ``path`` differs from its declared kind ("is a directory, but
    the output is declared a File"), or None when it fits or is not there.

    A step that made a directory where a File was declared (or a file where
    a Directory or an MS was) has not made the product the next step reads.
    """
    try:
        is_dir = stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return None
    wanted = _KINDS.get(kind)
    if wanted is None or wanted[0] == is_dir:
        return None
    made = "a directory" if is_dir else "not a directory"
    return f"is {made}, but the output is declared {wanted[1]}"


def missing_output(
    outputs_model: Any,
    outputs: Mapping[str, Any],
    cwd: str,
    required: Collection[str] | None = None,
) -> str | None:
    """The first required path output of ``outputs`` that is not there, or not of
    its declared kind, said as an error, for outputs a step's code names rather
    than a tool's run (an orchestration function's result, a pystep's return):
    an optional one names where its product goes, made or not (docs/cabs.md).
    ``required`` names the required ones where the model's defaults do not say it.
    The kind is checked as a cab's outputs are (:func:`collect_outputs`)."""
    for field_name, spec in fields_of(outputs_model).items():
        kind = spec.path_kind
        if kind is None or not (spec.promised if required is None else field_name in required):
            continue
        value = outputs.get(field_name)
        for path in value if isinstance(value, list) else [value]:
            if not isinstance(path, str | os.PathLike):
                continue
            full = os.path.join(cwd, path)
            if not os.path.lexists(full):
                return f"output {field_name!r} names {str(path)!r}, which does not exist"
            wrong = _wrong_kind(kind, full)
            if wrong is not None:
                return f"output {field_name!r}: {str(path)!r} {wrong}"
    return None


def unmade_recipe_output(
    recipe: str, outputs_model: Any, outputs: Mapping[str, Any], cwd: str
) -> str | None:
    """Why a finished recipe's required path output is not what it promises (a
    path that does not exist, or one of the wrong kind), said as its error; or None.

    A step's optional output names where its product goes, made or not (see
    docs/cabs.md), so ``set_output`` may hand the recipe a path no step made;
    a recipe that declares that output required promises the product, and a run
    that reported success with it would hand on a file that is not there.
    """
    said = missing_output(outputs_model, outputs, cwd)
    if said is None:
        return None
    return (
        f"recipe {recipe!r}: its {said} (set_output wires it to an output its step may leave"
        " unmade: have the step make it, or declare the recipe's output optional, `... | None"
        " = None`)"
    )


def unseen_output(
    outputs_model: Any,
    outputs: Mapping[str, Any],
    cwd: str,
    visible: Sequence[str] | None,
    engine: str,
) -> str | None:
    """The first path output of ``outputs`` that lies outside every path in
    ``visible`` (a container's mounts, see ``BackendRun.visible``), said as an
    error; or None, at once when ``visible`` is (the step saw the whole host).

    A path the step named but ninja never mounted (a ``str`` input holding a
    directory, a wrangled or returned path) was written in the container's own
    filesystem, which is thrown away: the host's file there, if any, is an
    older one, and "the tool did not create it" would be wrong too.
    """
    if visible is None:
        return None
    for field_name, spec in fields_of(outputs_model).items():
        if spec.path_kind is None:
            continue
        value = outputs.get(field_name)
        for path in value if isinstance(value, list) else [value]:
            if isinstance(path, str | os.PathLike) and not _seen(os.path.join(cwd, path), visible):
                return (
                    f"output {field_name!r} names {os.fspath(path)!r}, outside every directory"
                    f" mounted into its {engine} container: what the step wrote there stayed"
                    " in the container, where the host cannot see it; declare that location as"
                    " a path-typed input (File, Directory or Path, not str) so that it is mounted"
                )
    return None


def unmounted_text_paths(
    inputs_model: Any,
    values: Mapping[str, Any],
    cwd: str,
    visible: Sequence[str] | None,
    engine: str,
    declared_paths: Collection[str] = (),
) -> list[str]:
    """A hint for each text input (``str``, or an item of a ``list[str]``) of a step
    that failed, whose value names an existing path on this host outside ``visible``
    (a container's mounts, see ``BackendRun.visible``); none at once when ``visible``
    is None (the step saw the whole host). ``declared_paths``: the text inputs
    ``ParamMeta(dtype=...)`` declares paths, which are mounted.

    A ``str`` is never mounted, so the tool found nothing at that path in the
    container (or the image's own file) and failed in its own words ("not a
    measurement set"), with nothing to say the path was the trouble. Asked only
    on failure: one ``exists`` a text value, up to the first hint a field.
    """
    if visible is None:
        return []
    hints = []
    for name, spec in fields_of(inputs_model).items():
        if not spec.is_text or name in declared_paths:
            continue
        value = values.get(name)
        for text in value if isinstance(value, list | tuple) else [value]:
            if _unmounted_path(text, cwd, visible):
                hints.append(
                    f"input {name!r} is the text {text!r}, which names a path on this host that"
                    f" was not mounted into the {engine} container (a str is text, never"
                    f" mounted): if the tool needed that path, declare {name!r} a File,"
                    " Directory, MS or Path"
                )
                break
    return hints


def _unmounted_path(text: Any, cwd: str, visible: Sequence[str]) -> bool:
    """Whether ``text`` names an existing path (other than ``/``, more likely a
    separator than a path) that ``visible`` does not show."""
    if not isinstance(text, str) or text in ("", "/"):
        return False
    path = os.path.join(cwd, text)
    return os.path.exists(path) and not _seen(path, visible)


def _seen(path: str, visible: Sequence[str]) -> bool:
    """Whether ``path`` lies in ``visible`` both as spelled (``..`` read as the
    kernel reads it, after links) and where its links lead: a link out of a
    mount leads where the container has nothing."""
    spelled = _kernel_normpath(path)
    if not any(_under(root, spelled) for root in visible):
        return False
    if spelled in visible:  # a mount point, or a device the container has of its own
        return True
    real = os.path.realpath(spelled)
    return real == spelled or any(_under(root, real) for root in visible)


def _under(root: str, path: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


def _kernel_normpath(path: str) -> str:
    """``path`` normalised, ``link/..`` being the parent of the link's target."""
    parts = path.split("/")
    if ".." not in parts:
        return os.path.normpath(path)
    last = len(parts) - 1 - parts[::-1].index("..")
    head = os.path.realpath("/".join(parts[: last + 1]) or "/")
    return os.path.normpath("/".join([head, *parts[last + 1 :]]))
