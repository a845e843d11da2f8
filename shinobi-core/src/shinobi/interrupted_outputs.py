"""Outputs an interrupted step was writing: moved aside, never left as products.

A step stopped by an interrupt may have written part of an output at its
final path. Left there, the part looks like a finished product: the next run
of a tool that appends builds on it and the step cache stores the result, a
tool that refuses to overwrite fails, a later step may read it. So an output
the interrupted step made or changed is renamed to ``NAME.interrupted``
beside it: nothing is deleted, and nothing half-written keeps a product's
name.

Only the step's own products are moved (see
:func:`shinobi.untouched_outputs.product_paths`): never an input, whether
rewritten in place (``mutable``), or there when the step started and named
again by an implicit output or matched by a ``harvest`` glob (warned about,
if the step changed it: an input rewritten in place may be half-rewritten,
and only a copy of the raw data, or a re-run of an idempotent tool, makes
it whole); and only on backends that run here. A passthrough (the path the
step was given to write) is moved when the step made it, and only warned
about when it was there before (it may be one the tool rewrites in place).
What a ``harvest`` glob matches counts file by file. A directory that was there before the step
started, and is the same directory still, may hold more than this step's
work (other steps' products, the user's files), so it stays where it is and
the step is warned about instead. An output that cannot be renamed (a mount
point, a directory ninja may not write) is warned about too. A device, FIFO
or socket, or a link to one, is never moved. Through a link the user made
(a product put on scratch), what it leads to is renamed where it lives and
the link is kept, so the next run writes there again.

A step that failed by itself (an exit code, the out-of-memory killer) has
the same outputs and inputs found, but only warned about (:func:`unfinished`):
the user debugs from what it wrote.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterable
from typing import NamedTuple

from shinobi.backends.base import PathUse
from shinobi.harvest import SET_ASIDE_SUFFIX
from shinobi.untouched_outputs import (
    MAX_ENTRIES,
    Found,
    predates,
    product_paths,
    rewritten_paths,
    signature_of,
    stamped_before,
)

__all__ = ["SUFFIX", "Aside", "left_by_job", "set_aside", "unfinished"]

SUFFIX = SET_ASIDE_SUFFIX


class Aside(NamedTuple):
    """What became of one output the step was writing when it was stopped."""

    path: str
    #: where the part now is; None: it is still where it was
    moved_to: str | None
    #: why it was not moved
    why: str = ""
    #: where ``path`` leads, when it is the user's link: the part is written there
    target: str | None = None
    #: ninja could not tell whether the step wrote it (a directory too big to compare)
    maybe: bool = False
    #: how many parts earlier interruptions set aside there are beside it
    earlier: int = 0

    def warning(self) -> str:
        """The step's warning about it, in the user's terms."""
        writing = repr(self.path)
        if self.target is not None:  # the bytes are there, not beside the link
            writing = f"{self.target!r} (through the link {self.path!r}, which is kept)"
        if self.moved_to is not None:
            kept = (
                f"; {self.earlier} part(s) earlier interruptions set aside are beside it"
                " too: delete them once you no longer need them (ninja never does)"
                if self.earlier
                else ""
            )
            return (
                f"it was stopped while writing {writing}: that part is now"
                f" {self.moved_to!r}, so that nothing takes it for a finished product{kept}"
            )
        doing = "it may have been writing" if self.maybe else "writing"
        return f"it was stopped while {doing} {writing}, {self.why}"


def set_aside(
    uses: Iterable[PathUse],
    passthroughs: Collection[str],
    before: dict[str, Found],
    started: float,
    others: Collection[str] = (),
) -> list[Aside]:
    """Rename the products of ``uses`` that the stopped step wrote: made since it
    started, or changed since ``before`` (as they were when it started) and
    stamped after ``started``. ``passthroughs``: the outputs that are paths the
    step was handed (:meth:`~shinobi.steps.cab.Cab.passthroughs`), left alone;
    ``others``: paths other steps produced, which a harvest glob may match.

    An input of the step that was there when it started (``obs.txt``, which its
    glob ``obs*`` or an implicit output matches too) is the user's, or an
    earlier step's: it stays, and is warned about. One the step was handed to
    write and made (``out: Path``, named again by an implicit output) is moved."""
    uses = tuple(uses)
    inputs = [u.path for u in uses if u.role == "input"]
    return _carry_out(_written_by(uses, passthroughs, before, started, others), started, inputs)


def unfinished(
    uses: Iterable[PathUse],
    passthroughs: Collection[str],
    before: dict[str, Found],
    started: float,
    others: Collection[str] = (),
    ended: str = "failed",
) -> list[str]:
    """The warnings of a step that failed by itself (an exit code, the
    out-of-memory killer's SIGKILL) about each output it wrote or changed, and
    each input it rewrites in place that it changed, the same as
    :func:`set_aside` finds them. Nothing is moved, the user debugs
    from what it wrote; but a part under its final name looks as finished as a
    product, and nothing said it was not.

    ``ended``: how the step ended, as the warnings say it: "failed", or "was
    stopped" for a job on another host that a stop cancelled, whose products
    are warned about rather than moved (see :mod:`shinobi.dispatch`)."""
    found = _written_by(tuple(uses), passthroughs, before, started, others)
    return [_failed_while(w, ended) for w in found]


def left_by_job(
    writes: Iterable[str],
    rewrites: Iterable[str],
    since: float,
    until: float | None,
    ended: str,
) -> list[str]:
    """The warnings about what a job no ninja watched (one of a compiled launch,
    read back by ``ninja status``) left when it ended without finishing: each of
    its outputs (``writes``), and each input it rewrites in place (``rewrites``),
    stamped while it may have run: after ``since`` (when it started, or was
    submitted where the engine does not say) and, when the engine says when it
    ended, not after ``until``.

    Nothing noted how they were before the job, so this is the clock's word
    alone, and a file server's clock may be off this host's: the warnings say
    "may", and nothing is moved. A path stamped after the job's end is left
    unsaid: something else wrote it since (a run of the step again, here)."""
    found = [
        _Written(path, how)
        for path in dict.fromkeys(writes)
        if (how := _stamped_between(path, since, until, "made"))
    ]
    found += [
        _Written(path, how, in_place=True)
        for path in dict.fromkeys(rewrites)
        if (how := _stamped_between(path, since, until, "changed"))
    ]
    return [_failed_while(w, ended) for w in found]


def _stamped_between(path: str, since: float, until: float | None, how: str) -> str | None:
    """``how`` (or "untold", for a directory too big to sign) when ``path`` is a
    file or directory last stamped between ``since`` and ``until``; else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return None  # a device, FIFO or socket holds no product (see _written)
    signature = signature_of(path)
    if signature is None:
        return "untold"
    if stamped_before(signature, since):
        return None
    if until is not None and signature[2] > until * 1e9:  # by its mtime: a chmod is no write
        return None
    return how


def _failed_while(written: _Written, ended: str) -> str:
    """Through a link, the bytes are where it leads: that place is named too."""
    target = os.path.realpath(written.path) if os.path.islink(written.path) else None
    what = repr(written.path) if target is None else f"{target!r} (through {written.path!r})"
    if written.in_place:
        return _failed_rewriting(what, written.how, ended)
    said = "left as it is for you to look into: it may be incomplete, check it before"
    said += " anything uses it"
    if written.how == "untold":
        return (
            f"it {ended}, and ninja could not tell whether it wrote into {what}"
            f" ({_TOO_BIG}), which is {said}"
        )
    return f"it {ended} after writing {what}, which is {said}"


def _failed_rewriting(what: str, how: str, ended: str) -> str:
    """The warning about an input it rewrites in place that a step which did not
    finish changed."""
    if how == "removed":
        return f"it {ended} after removing {what}, an input it rewrites in place: {_RESTORE_GONE}"
    if how == "untold":
        return (
            f"it {ended}, and ninja could not tell whether it changed {what}, an input it"
            f" rewrites in place ({_TOO_BIG}): if it did, it may be half-rewritten; {_RESTORE}"
        )
    return (
        f"it {ended} after changing {what}, an input it rewrites in place: it may be"
        f" half-rewritten; {_RESTORE}"
    )


#: why ninja could not tell whether a directory was written into
_TOO_BIG = f"more than {MAX_ENTRIES:,} entries, or unreadable"
#: what to do with an input that a step which did not finish rewrote in place
_RESTORE = (
    "restore it from a copy of the raw data before anything uses it, or run the step"
    " again if the tool is idempotent (running it twice leaves what running it once does)"
)
_RESTORE_GONE = "restore it from a copy of the raw data before running again"


class _Written(NamedTuple):
    """An output the stopped step wrote, as found before anything is moved."""

    path: str
    #: how (see :func:`_written`, and "removed": an input rewritten in place, now gone)
    how: str
    #: why it stays where it is whatever the step did; "": it is the step's to move
    kept: str = ""
    #: an input the step rewrites in place (``mutable``), not an output of its own
    in_place: bool = False


def _written_by(
    uses: tuple[PathUse, ...],
    passthroughs: Collection[str],
    before: dict[str, Found],
    started: float,
    others: Collection[str],
) -> list[_Written]:
    """Every output the step wrote: its own products, then the paths it was handed,
    then the inputs it rewrites in place."""
    return (
        _products(uses, passthroughs, before, started, others)
        + _given(uses, passthroughs, before, started)
        + _rewritten(uses, before, started)
    )


def _products(
    uses: tuple[PathUse, ...],
    passthroughs: Collection[str],
    before: dict[str, Found],
    started: float,
    others: Collection[str],
) -> list[_Written]:
    """The step's own products it wrote; an input among them is kept."""
    paths = dict.fromkeys(
        path
        for path, pattern in product_paths(uses, passthroughs)
        if pattern is None or path not in others
    )
    theirs = {u.path for u in uses if u.role == "input" and u.path in before}
    return [
        _Written(path, how, _AN_INPUT if path in theirs else "")
        for path in paths
        if (how := _written(path, before, started)) and os.path.lexists(path)
    ]


def _carry_out(found: list[_Written], started: float, inputs: Collection[str]) -> list[Aside]:
    """Set ``found`` aside, outer paths first. A directory set aside takes what
    is in it along: that is said where it now is, never renamed again inside
    (moved first, it was said at a place its directory's rename then took away)."""
    moved: dict[str, str] = {}  # path: where it went
    asides = []
    for path, how, kept, _ in sorted(found, key=lambda w: _depth(w.path)):
        carried = _carried(path, moved)
        if carried is not None:
            asides.append(Aside(path, carried))
        elif kept:
            asides.append(Aside(path, None, kept, maybe=how == "untold"))
        else:
            aside = _move(path, how, started, inputs)
            if aside.moved_to is not None:
                moved[os.path.normpath(path)] = aside.moved_to
            asides.append(aside)
    return asides


def _depth(path: str) -> int:
    return os.path.normpath(path).count(os.sep)


def _carried(path: str, moved: dict[str, str]) -> str | None:
    """Where ``path`` now is, when a directory it was in was moved; None: it was not."""
    path = os.path.normpath(path)
    for outer, to in moved.items():
        if path.startswith(outer + os.sep):
            return to + path[len(outer) :]
    return None


_AN_INPUT = (
    "which is also one of its inputs, so it is left where it is (only the step's own"
    " products are moved); it may hold a partial write: check it before running again"
)


def _given(
    uses: tuple[PathUse, ...],
    passthroughs: Collection[str],
    before: dict[str, Found],
    started: float,
) -> list[_Written]:
    """The passthrough outputs the stopped step wrote: a path it was given to
    write. One it made (nothing was there when it started) is moved aside as a
    product is; one that was there may be a file it rewrites in place, so it
    stays, and the step is warned about it: a half-written output under its
    final name, with no word of it, passed for a finished one."""
    rewritten = {u.path for u in uses if u.mutable}  # the user's, whatever names them again
    given = (
        u.path
        for u in uses
        if u.role == "output"
        and u.field in passthroughs
        and not u.pattern
        and u.path not in rewritten
    )
    found = []
    for path in dict.fromkeys(given):
        how = _written(path, before, started)
        if how is None or not os.path.lexists(path):
            continue
        # untold: it stays all the same, and is said as such
        found.append(_Written(path, how, "" if how in ("made", "untold") else _GIVEN_AND_THERE))
    return found


_GIVEN_AND_THERE = (
    "the path it was given to write, which was there before it started, so it is left"
    " where it is; it may be unfinished: check it, or run the step again"
)


def _rewritten(
    uses: tuple[PathUse, ...], before: dict[str, Found], started: float
) -> list[_Written]:
    """The inputs that a step which did not finish (stopped, or failed by itself)
    rewrites in place (``mutable``) and changed: the user's data, never moved
    (nothing else holds it), but a half-rewritten one under its own name, with
    no word of it, passed for data the step had either finished with or never
    touched."""
    found = []
    for path in rewritten_paths(uses):
        noted = before.get(path)
        if noted is None or not noted.rewritten:
            continue  # not there when it started: nothing of the user's to say
        # there when the step started, gone now (or its link left dangling)
        how = "removed" if not os.path.exists(path) else _written(path, before, started)
        if how is not None:
            found.append(_Written(path, how, _IN_PLACE.get(how, _IN_PLACE["changed"]), True))
    return found


_KEPT_INPUT = "an input it rewrites in place, so it is left where it is (an input is never moved)"
#: why an input the step rewrites in place is not moved, by how the step wrote it
_IN_PLACE = {
    "changed": f"{_KEPT_INPUT}: it may be half-rewritten; {_RESTORE}",
    "untold": (
        f"{_KEPT_INPUT}; ninja could not tell whether the step changed it ({_TOO_BIG}):"
        f" if it did, it may be half-rewritten; {_RESTORE}"
    ),
    "removed": f"an input it rewrites in place, which is now gone: {_RESTORE_GONE}",
}


def _written(path: str, before: dict[str, Found], started: float) -> str | None:
    """How the step wrote ``path`` (one of its products, or an input it rewrites
    in place) since ``started``: "made" (or made anew), "changed", "changed
    directory", "untold" (a directory too big, or unreadable, to compare: one
    it may have written); None: it did not."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # gone, or never made
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        # a device, FIFO or socket (or a link to one: a log sent to /dev/null) is
        # shared by design, holds no product, and renaming /dev/null as root
        # would break the host
        return None
    inode = st.st_ino
    found = before.get(path)
    if found is None or found.inode != inode:
        return "made"
    now = signature_of(path)
    if found.signature is None or now is None:
        return "untold"  # too big to compare: the step may well have written into it
    if now == found.signature or stamped_before(now, started):
        return None
    return "changed directory" if found.directory else "changed"


def _move(path: str, how: str, started: float, inputs: Collection[str]) -> Aside:
    """Rename what the step wrote at ``path`` aside; through the user's link (see
    :func:`_users_link`), what it leads to, where it lives."""
    target = _users_link(path, started)
    if target is not None and how != "made" and _an_input(target, inputs):
        return Aside(path, None, _AN_INPUT, target)  # the link was no way to a product
    if how in _LEFT:
        return Aside(path, None, _LEFT[how], target, maybe=how == "untold")
    where = path if target is None else target
    aside, earlier = _free_name(where + SUFFIX)
    try:
        os.rename(where, aside)
    except OSError as exc:
        return Aside(
            path,
            None,
            f"which could not be renamed aside ({exc.strerror or exc}): it is unfinished;"
            " move it away or delete it before anything uses it",
            target,
        )
    return Aside(path, aside, target=target, earlier=earlier)


def _an_input(target: str, inputs: Collection[str]) -> bool:
    """Whether ``target``, there before the step started, is one of its inputs by
    another name. What the step made is its product whatever an input names it
    (``out: Path``, the very link it was handed to write through)."""
    return target in {os.path.realpath(p) for p in inputs}


#: why a directory that was there before the step started stays where it is
_LEFT = {
    "changed directory": (
        "which was there before it started, so it is left where it is;"
        " it may hold a partial product"
    ),
    "untold": (
        "which was there before it started, so it is left where it is; ninja could not"
        f" tell whether the step wrote into it ({_TOO_BIG}), so it may be unfinished:"
        " check it before anything uses it"
    ),
}


def _users_link(path: str, started: float) -> str | None:
    """Where ``path`` leads, when it is a symbolic link that was there before the step
    started: how a user puts a big product on another disk (scratch). Renaming
    the link left the partial bytes under the product's name there, and the
    next run, finding no link, wrote the product beside it on the wrong disk.
    None: no link, or one the step made (that link is the product, and what it
    leads to may be anything: an input exposed under a new name)."""
    try:
        own = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISLNK(own.st_mode) or not predates(own, started):
        return None
    return os.path.realpath(path)


def _free_name(wanted: str) -> tuple[str, int]:
    """``wanted``, or ``wanted-2``, ``-3``...: an earlier interruption's part is kept
    too; and how many such parts there are (a few Ctrl-Cs of a step writing a
    13 GB Measurement Set can fill a scratch quota unseen)."""
    candidate, number = wanted, 1
    while os.path.lexists(candidate):
        number += 1
        candidate = f"{wanted}-{number}"
    return candidate, number - 1
