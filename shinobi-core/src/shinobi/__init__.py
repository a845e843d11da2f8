"""shinobi: run pipelines of command-line tools anywhere from one declaration.

The public names are loaded lazily so that ``ninja --help`` and ``import shinobi``
stay fast: nothing here imports pydantic until a recipe is actually built.
"""

from __future__ import annotations

from importlib import import_module

from shinobi import recipe_modules as _recipe_modules

#: typing.TYPE_CHECKING without importing typing (9 ms): the ``ninja`` script
#: imports this package before it can turn a Ctrl-C into one quiet line, so
#: what loads here is the window in which Ctrl-C still shows a traceback.
TYPE_CHECKING = False

__version__ = "0.1.0"

__all__ = [
    "Cab",
    "InputRef",
    "OutputRef",
    "ParamMeta",
    "Recipe",
    "Resources",
    "StepRef",
    "StepResult",
    "Wrangler",
    "__version__",
    "pystep",
    "step",
]

_LAZY = {
    "Cab": "shinobi.steps",
    "InputRef": "shinobi.steps",
    "OutputRef": "shinobi.steps",
    "ParamMeta": "shinobi.steps",
    "Recipe": "shinobi.steps",
    "StepRef": "shinobi.steps",
    "StepResult": "shinobi.steps",
    "Wrangler": "shinobi.steps",
    "pystep": "shinobi.steps",
    "step": "shinobi.steps",
    "Resources": "shinobi.resources",
}

if TYPE_CHECKING:
    from typing import Any

    from shinobi.resources import Resources
    from shinobi.steps import (
        Cab,
        InputRef,
        OutputRef,
        ParamMeta,
        Recipe,
        StepRef,
        StepResult,
        Wrangler,
        pystep,
        step,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shinobi' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


# A process that imports shinobi finds recipe modules by name: see shinobi.recipe_modules.
_recipe_modules.install()
