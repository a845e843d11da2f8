"""Steps sharing a path one writes take turns at several workers, as compiled jobs do."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class WriteIn(BaseModel):
    out: File
    word: str


class WriteOut(BaseModel):
    out: File


#: Notes when it starts and ends in log.txt, around writing its word.
write = Cab(
    "write",
    [
        "/bin/sh",
        "-c",
        'echo "start $2" >> log.txt; sleep 0.3; echo "$2" > "$1"; echo "end $2" >> log.txt',
        "sh",
    ],
    WriteIn,
    WriteOut,
    {"out": ParamMeta(positional=True), "word": ParamMeta(positional=True)},
)


class CatIn(BaseModel):
    f: File


cat = Cab("cat", "/bin/cat", CatIn, None, {"f": ParamMeta(positional=True)})


def _recipe(second_out: str) -> Recipe:
    recipe = Recipe("r", max_workers=2)
    recipe.add_step("a", write, out="same.txt", word="a")
    recipe.add_step("b", write, out=second_out, word="b")
    recipe.add_step("ca", cat, f=recipe.outputs.a.out)
    return recipe


def test_steps_writing_one_output_take_turns_in_declaration_order(tmp_path: Path) -> None:
    """They raced at two workers, and the reader of a's output read whichever won;
    a compiled run orders them a, b, then the reader."""
    result = run_recipe(_recipe("same.txt"), cwd=tmp_path)
    assert result.ok, result.error
    assert (tmp_path / "log.txt").read_text().split("\n")[:4] == [
        "start a",
        "end a",
        "start b",
        "end b",
    ]
    (reader,) = [step for step in result.steps if step.name == "ca"]
    assert reader.stdout == "b\n"  # as in the compiled run: after b's write
    (said,) = result.warnings
    assert said.startswith("steps 'a' and 'b' both write ") and said.endswith(
        "so the product of 'b' replaces that of 'a': give each its own output path"
        " ('b' waits for 'a', as a compiled run orders them)"
    )


def test_steps_with_their_own_outputs_still_run_together(tmp_path: Path) -> None:
    result = run_recipe(_recipe("other.txt"), cwd=tmp_path)
    assert result.ok, result.error
    assert sorted((tmp_path / "log.txt").read_text().split("\n")[:2]) == ["start a", "start b"]
    assert result.warnings == []
