"""Steps sharing a path one writes take turns at several workers, as compiled jobs do."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.backends.base import PathUse
from shinobi.offload.ordering import Turn, path_turns
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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


def _uses(*specs: tuple[str, str]) -> list[PathUse]:
    """PathUses from (path, how): how is 'w' (an output), 'r' (an input) or 'g' (a harvest)."""
    return [
        PathUse(path=path, role="input" if how == "r" else "output", field="f", pattern=how == "g")
        for path, how in specs
    ]


def _order(turns: list[Turn]) -> set[tuple[int, int]]:
    return {(t.before, t.after) for t in turns}


def test_writers_of_files_side_by_side_stay_parallel_and_a_reader_of_the_folder_waits(
    tmp_path: Path,
) -> None:
    """All writers into one folder a step reads were put in line, locally and compiled."""
    d = tmp_path / "d"
    turns = path_turns(
        [
            _uses((f"{d}/a.txt", "w")),
            _uses((f"{d}/b.txt", "w")),
            _uses((f"{d}/c.txt", "w")),
            _uses((str(d), "r")),
        ]
    )
    assert _order(turns) == {(0, 3), (1, 3), (2, 3)}
    assert {t.kind for t in turns} == {"mutate-then-read"}


def test_a_harvest_is_ordered_with_the_files_it_matches_only(tmp_path: Path) -> None:
    out = tmp_path / "out"
    turns = path_turns(
        [
            _uses((f"{out}/img-*.fits", "g")),  # makes out/img-1.fits, out/img-2.fits...
            _uses((f"{out}/img-1.fits", "r")),  # reads one: after the harvest
            _uses((f"{out}/notes.txt", "w")),  # another file there: no order
            _uses((f"{out}/psf-*.fits", "g")),  # another glob there: no order
            _uses((str(out), "r")),  # the whole folder: after every writer in it
        ]
    )
    assert _order(turns) == {(0, 1), (0, 4), (2, 4), (3, 4)}


def test_a_loop_s_cycles_are_not_warned_about_for_their_shared_until_file(
    tmp_path: Path,
) -> None:
    """Every cycle writes the until file by design, and the cycles are wired in turn:
    at several workers each pair of cycles was warned about."""
    from shinobi.loaders import load_target

    selfcal = load_target(f"{EXAMPLES}/selfcal_loop.py:selfcal")
    result = run_recipe(selfcal, {"ms": str(tmp_path / "obs.ms")}, cwd=tmp_path, max_workers=4)
    assert result.ok, result.error
    assert not [w for w in result.warnings if "both write" in w]
