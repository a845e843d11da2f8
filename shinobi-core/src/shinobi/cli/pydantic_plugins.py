"""Keep pydantic from scanning every installed distribution for its plugins.

pydantic looks for plugins (entry points in the ``pydantic`` group) when the
first model is built, and the module that looks imports ``importlib.metadata``
and with it ``email``, ``zipfile`` and ``csv``: about 15 ms of every ``ninja``
command here, near a tenth of a one-step ``ninja run``, for plugins a
pipeline run does not use. ninja's own process therefore answers pydantic's
question itself, with "none", before pydantic is imported. Only
``get_plugins`` is answered; anything else pydantic asks of its loader module
is taken from the real one, loaded then, so a newer pydantic that wants more
of it still gets it.

Setting ``SHINOBI_PYDANTIC_PLUGINS=1`` lets pydantic load its plugins as usual
(a validation tracer, say). A program that imports shinobi as a library is
never touched: only the ``ninja`` command calls :func:`skip_discovery`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types

#: typing.TYPE_CHECKING, without importing typing: see shinobi/__init__.py.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

__all__ = ["LOADER", "OPT_IN", "skip_discovery"]

#: The module of pydantic that discovers its plugins.
LOADER = "pydantic.plugin._loader"
#: Set to 1 to let pydantic discover and load its plugins in ``ninja``.
OPT_IN = "SHINOBI_PYDANTIC_PLUGINS"


def _no_plugins(*_args: object, **_kwargs: object) -> tuple[()]:
    """pydantic's answer when its plugins are disabled: none."""
    return ()


def _real_loader() -> types.ModuleType:
    """pydantic's own loader module, loaded from its file on first need."""
    import importlib.machinery
    import importlib.util

    package = sys.modules.get("pydantic.plugin")
    spec = importlib.machinery.PathFinder.find_spec(LOADER, getattr(package, "__path__", None))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot find {LOADER}", name=LOADER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _StandIn:
    """Finder and loader of the stand-in, for pydantic's loader module alone.

    Being found on ``sys.meta_path`` (rather than put in ``sys.modules``
    ahead of time) keeps the import system's usual order: ``pydantic`` and
    ``pydantic.plugin`` load first, and the stand-in becomes their attribute
    as the real module would.
    """

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> Any:
        if fullname != LOADER:
            return None
        import importlib.machinery

        # a loader by its methods: importlib.abc.Loader would cost 2 ms of imports
        return importlib.machinery.ModuleSpec(fullname, self)  # type: ignore[arg-type]

    def create_module(self, spec: object) -> None:
        return None  # a plain module

    def exec_module(self, module: types.ModuleType) -> None:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)  # found once: its work is done
        real: list[types.ModuleType] = []

        def __getattr__(name: str) -> Any:  # a module-level __getattr__ (PEP 562)
            if name.startswith("__"):
                raise AttributeError(name)
            if not real:
                real.append(_real_loader())
            return getattr(real[0], name)

        module.get_plugins = _no_plugins  # type: ignore[attr-defined]
        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def skip_discovery() -> None:
    """Answer pydantic's plugin lookup with "none", unless the user opted in.

    Called before pydantic is imported; once pydantic has loaded its own
    loader there is nothing left to save, and it is left alone.
    """
    if os.environ.get(OPT_IN, "").strip() in ("1", "true", "yes"):
        return
    if LOADER in sys.modules or any(isinstance(f, _StandIn) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _StandIn())
