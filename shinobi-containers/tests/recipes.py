"""Small recipes the live tests run through shinobi's public API and CLI."""

from __future__ import annotations

from typing import Any

from live_engines import settings_for

from shinobi.config import AppConfig
from shinobi.resources import Resources
from shinobi.steps import Cab, Recipe

#: Allocates about 400 MB in one process (tail buffers a line with no end).
MEMORY_HOG = "head -c 400000000 /dev/zero | tail > /dev/null"


def shell_cab(name: str, script: str, image: str | None) -> Cab:
    return Cab(name=name, command=["/bin/sh", "-c", script], image=image)


def one_step(name: str, script: str, image: str | None, resources: Resources | None) -> Recipe:
    recipe = Recipe(name=name)
    recipe.add_step("only", shell_cab(name, script, image), resources=resources)
    return recipe


def config_for(backend: str, **settings: Any) -> AppConfig:
    """A configuration naming only what the test needs (no user or project files)."""
    table = settings_for(backend, **settings) if backend != "native" else settings
    return AppConfig.model_validate({"backend": {backend: table}})
