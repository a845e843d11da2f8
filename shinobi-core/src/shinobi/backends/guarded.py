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
from shinobi.errors import PluginFault, ShinobiError, exception_line

__all__ = ["BackendFault", "run_backend"]

#: errno values of a machine out of descriptors: the scheduler words those itself
_EXHAUSTED = (errno.EMFILE, errno.ENFILE)


class BackendFault(PluginFault):
    """A backend's ``run()`` broke its contract: it raised, or returned no result."""


def run_backend(
    backend: Backend, invocation: Invocation, control: RunControl, chosen: str
) -> BackendRun:
    """``backend.run(invocation, control)``; a fault of the backend's own is a
    :class:`BackendFault` naming it as ``chosen`` (the name the run loaded it
    under: see the module docstring)."""
    try:
        run = backend.run(invocation, control)
    except ShinobiError:
        raise
    except OSError as exc:
        if exc.errno in _EXHAUSTED:
            raise
        raise BackendFault(_fault(backend, chosen, f"raised {exception_line(exc)}")) from exc
    except Exception as exc:
        raise BackendFault(_fault(backend, chosen, f"raised {exception_line(exc)}")) from exc
    if not isinstance(run, BackendRun):
        returned = f"returned {type(run).__name__}, not a BackendRun"
        raise BackendFault(_fault(backend, chosen, returned))
    return run


def _fault(backend: Backend, chosen: str, what: str) -> str:
    """The backend as the user chose it (a class registered under two names, or
    inheriting another's ``name``, is the one chosen), and the distribution that
    registers that name."""
    from shinobi.backends.registry import BACKENDS, blame, provider

    source = provider(BACKENDS, chosen) or _distribution(type(backend).__module__)
    return blame(BACKENDS, chosen, what, source, not_of="the step")


def _distribution(module: str) -> str:
    """The distribution that installed ``module``'s package (``shinobi-containers``),
    else the package's own name: for a backend no entry point names."""
    from importlib.metadata import packages_distributions

    top = module.partition(".")[0]
    found = packages_distributions().get(top)
    return found[0] if found else top
