"""Slices writing one output, at one worker.

At one worker (the default) the check of a scatter's slices was skipped, so two
slices writing the very same output replaced each other's product without a
word, where ``-j 3`` and ``--dryrun`` warned. One worker still runs them in
turn; the warning is given there too, and only the lost product is warned of.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class EchoIn(BaseModel):
    word: str
    out: File


class EchoOut(BaseModel):
    out: File


class ChangeIn(BaseModel):
    word: str
    data: File


class Words(BaseModel):
    words: list[str]
    outs: list[File]


echo = Cab(
    "echo",
    ["/bin/sh", "-c", 'echo "$0" > "$1"'],
    EchoIn,
    EchoOut,
    {"word": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)


def _run(recipe: Recipe, inputs: dict[str, object], cwd: Path) -> list[str]:
    config = load_config({"execution.max_workers": 1, "cache.enabled": False})
    result = run_recipe(recipe, inputs, cwd=cwd, config=config)
    assert result.ok, result.error
    return list(result.warnings)


def test_slices_writing_one_output_are_warned_of_at_one_worker(tmp_path: Path) -> None:
    recipe = Recipe("r", Words)
    recipe.add_step(
        "e", echo, scatter=["word", "out"], word=recipe.inputs.words, out=recipe.inputs.outs
    )
    warnings = _run(recipe, {"words": ["a", "b"], "outs": ["same.txt", "same.txt"]}, tmp_path)
    said = [w for w in warnings if "both write" in w]
    assert said, warnings
    assert f"step 'e': slices [0] and [1] both write {tmp_path / 'same.txt'}" in said[0]


def test_slices_with_their_own_outputs_are_not_warned_of(tmp_path: Path) -> None:
    recipe = Recipe("r", Words)
    recipe.add_step(
        "e", echo, scatter=["word", "out"], word=recipe.inputs.words, out=recipe.inputs.outs
    )
    assert _run(recipe, {"words": ["a", "b"], "outs": ["a.txt", "b.txt"]}, tmp_path) == []


def test_slices_changing_one_input_in_place_are_not_warned_of_at_one_worker(
    tmp_path: Path,
) -> None:
    """One worker runs them in turn anyway, and nothing is lost."""
    change = Cab(
        "change",
        ["/bin/sh", "-c", 'echo "$0" >> "$1"'],
        ChangeIn,
        None,
        {"word": ParamMeta(positional=True), "data": ParamMeta(positional=True, mutable=True)},
    )

    class In(BaseModel):
        words: list[str]
        data: File

    recipe = Recipe("r", In)
    recipe.add_step(
        "c", change, scatter=["word"], word=recipe.inputs.words, data=recipe.inputs.data
    )
    (tmp_path / "data.txt").write_text("")
    warnings = _run(recipe, {"words": ["a", "b"], "data": "data.txt"}, tmp_path)
    assert warnings == [], warnings
    assert (tmp_path / "data.txt").read_text().split() == ["a", "b"]
