"""A recipe's own path input (``src: File``) wired to a ``str`` field is refused
where it is wired, as a step's path output is: as text it would be keyed by its
name in the step cache (stale results when the file changes) and not mounted."""

from __future__ import annotations

import re

import pytest
from pydantic import BaseModel

from shinobi.graph import RecipeGraphError, build_graph
from shinobi.steps import Cab, File, ParamMeta, Recipe


class UpIn(BaseModel):
    src: str


class UpListIn(BaseModel):
    src: list[str]


class UpOut(BaseModel):
    out: File | None = None


class RI(BaseModel):
    src: File = "in.txt"
    name: str = "in.txt"


class TextOut(BaseModel):
    out: str | None = None


upper = Cab("upper", ["cat"], UpIn, UpOut, {"src": ParamMeta(positional=True)})
uppers = Cab("uppers", ["cat"], UpListIn, UpOut, {"src": ParamMeta(positional=True)})


def test_a_recipe_path_input_wired_to_a_str_input_is_refused() -> None:
    recipe = Recipe("r", RI, UpOut)
    recipe.add_step("up", upper, src=recipe.inputs.src)
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe)
    assert str(info.value) == (
        "recipe 'r', step 'up', input 'src': is declared str but wired to the recipe's path"
        " input 'src'; declare it a File (or Path), which the backend makes visible and whose"
        " content keys the step cache"
    )


def test_inside_a_list_too() -> None:
    recipe = Recipe("r", RI, UpOut)
    recipe.add_step("up", uppers, src=[recipe.inputs.src])
    with pytest.raises(RecipeGraphError, match=re.escape("is declared list[str] but wired to")):
        build_graph(recipe)


class RListIn(BaseModel):
    srcs: list[File] = []


def test_a_whole_list_of_paths_into_a_list_of_text_is_refused_too() -> None:
    """Only the items of a list literal were looked at: a ``list[File]`` wired whole
    to a ``list[str]`` input ran, its paths taken as text."""
    recipe = Recipe("r", RListIn, UpOut)
    recipe.add_step("up", uppers, src=recipe.inputs.srcs)
    with pytest.raises(RecipeGraphError, match=re.escape("is declared list[str] but wired to")):
        build_graph(recipe)


def test_a_recipe_path_input_set_as_a_str_output_is_refused() -> None:
    recipe = Recipe("r", RI, TextOut)
    recipe.set_output("out", recipe.inputs.src)
    with pytest.raises(RecipeGraphError, match=re.escape("output 'out': is declared str")):
        build_graph(recipe)


def test_a_text_input_or_a_declared_path_is_still_accepted() -> None:
    declared = Cab("upper", ["cat"], UpIn, UpOut, {"src": ParamMeta(positional=True, dtype="File")})
    recipe = Recipe("r", RI, UpOut)
    recipe.add_step("text", upper, src=recipe.inputs.name)
    recipe.add_step("path", declared, src=recipe.inputs.src)
    build_graph(recipe)
