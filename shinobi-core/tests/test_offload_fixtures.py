"""Small recipes for the offload tests: tools that rewrite or read one path, and a planner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shinobi.graph import build_graph
from shinobi.plan import Plan, plan_graph
from shinobi.steps import MS, Cab, ParamMeta, Recipe


class MsIn(BaseModel):
    ms: MS = Path("obs.ms")


class MsOut(BaseModel):
    ms: MS | None = None


class ColumnIn(BaseModel):
    column: Path


class PathIn(BaseModel):
    path: Path


class PathOut(BaseModel):
    path: Path | None = None


def rewriter(name: str) -> Cab:
    """Rewrites its MS in place (MUTABLE)."""
    return Cab(
        name=name,
        command=["/bin/true", name],
        inputs_model=MsIn,
        outputs_model=MsOut,
        field_meta={"ms": ParamMeta(positional=True, mutable=True)},
    )


def reader(name: str) -> Cab:
    """Only reads its MS."""
    return Cab(
        name=name,
        command=["/bin/true", name],
        inputs_model=MsIn,
        field_meta={"ms": ParamMeta(positional=True, writable=False)},
    )


def column_reader(name: str) -> Cab:
    """Reads one column directory inside an MS."""
    return Cab(
        name=name,
        command=["/bin/true", name],
        inputs_model=ColumnIn,
        field_meta={"column": ParamMeta(positional=True, writable=False)},
    )


touch = Cab(
    name="touch",
    command="/bin/touch",
    inputs_model=PathIn,
    outputs_model=PathOut,
    field_meta={"path": ParamMeta(positional=True)},
)


def plan_of(recipe: Recipe, inputs: dict[str, Any] | None = None, cwd: str = "/work") -> Plan:
    graph = build_graph(recipe)
    values = dict(recipe.inputs_model.model_validate(inputs or {}))
    return plan_graph(graph, values, cwd)
