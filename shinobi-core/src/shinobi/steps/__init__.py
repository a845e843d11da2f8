"""The building blocks of a pipeline: cabs, recipes, references and step functions."""

from __future__ import annotations

from shinobi.steps.cab import Cab, ParamMeta, Wrangler
from shinobi.steps.functions import FunctionStep, PyStep, StepContext, pystep, step
from shinobi.steps.recipe import LoopHandle, Recipe, StepRef
from shinobi.steps.refs import InputRef, OutputRef
from shinobi.steps.result import RecipeResult, StepResult
from shinobi.steps.types import MS, Directory, File

__all__ = [
    "MS",
    "Cab",
    "Directory",
    "File",
    "FunctionStep",
    "InputRef",
    "LoopHandle",
    "OutputRef",
    "ParamMeta",
    "PyStep",
    "Recipe",
    "RecipeResult",
    "StepContext",
    "StepRef",
    "StepResult",
    "Wrangler",
    "pystep",
    "step",
]
