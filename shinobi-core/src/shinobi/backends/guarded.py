"""Calling a backend's ``run()``, with what a plugin's own fault looks like to the user.

A backend is often a plugin of another distribution. One whose ``run()``
raised was reported as ninja's ``internal error``, over several lines,
naming neither the backend nor where it comes from; one that returned
nothing failed later with an ``AttributeError`` about ``None``. Either is
now one line naming the backend and its distribution, as the fault to
report to that distribution's authors. What a backend raises on purpose (a
:class:`~shinobi.errors.ShinobiError`: a refusal in its own words) and a
machine out of descriptors (said by the scheduler, with the fix) pass as
they are.
"""

from __future__ import annotations

import errno

from shinobi.backends.base import Backend, BackendRun, Invocation, RunControl
from shinobi.errors import ShinobiError, exception_line

__all__ = ["BackendFault", "run_backend"]

#: errno values of a machine out of descriptors: the scheduler words those itself
_EXHAUSTED = (errno.EMFILE, errno.ENFILE)


class BackendFault(ShinobiError):
    """A backend's ``run()`` broke its contract: it raised, or returned no result."""

    exit_code = 1


def run_backend(backend: Backend, invocation: Invocation, control: RunControl) -> BackendRun:
    """``backend.run(invocation, control)``; a fault of the backend's own is a
    :class:`BackendFault` naming it (see the module docstring)."""
    try:
        run = backend.run(invocation, control)
    except ShinobiError:
        raise
    except OSError as exc:
        if exc.errno in _EXHAUSTED:
            raise
        raise BackendFault(_fault(backend, f"raised {exception_line(exc)}")) from exc
    except Exception as exc:
        raise BackendFault(_fault(backend, f"raised {exception_line(exc)}")) from exc
    if not isinstance(run, BackendRun):
        raise BackendFault(_fault(backend, f"returned {type(run).__name__}, not a BackendRun"))
    return run


def _fault(backend: Backend, what: str) -> str:
    source = _distribution(type(backend).__module__)
    return (
        f"backend {backend.name!r} ({source}) {what}: a fault of that backend, not of the"
        f" step; report it to {source}'s authors"
    )


def _distribution(module: str) -> str:
    """The distribution that installed ``module``'s package (``shinobi-containers``),
    else the package's own name."""
    from importlib.metadata import packages_distributions

    top = module.partition(".")[0]
    found = packages_distributions().get(top)
    return found[0] if found else top
