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


class DataIn(BaseModel):
    data: File


def _noting(name: str, script: str, data: ParamMeta) -> Cab:
    """A tool that runs ``script`` with its own name as $0 and its data as $1."""
    return Cab(name, ["/bin/sh", "-c", script, name], DataIn, None, {"data": data})


READ = ParamMeta(positional=True, writable=False)
REWRITE = ParamMeta(positional=True, mutable=True)
#: Notes its start in log.txt and leaves <its name>.started, then rewrites its data.
REWRITES = 'echo "start $0" >> log.txt; touch "$0.started" "$1"'
#: Holds on, between its start and end, until 'x' or 'rewrite' has started: until
#: 'r1' has ended and freed one of the two workers.
READS_UNTIL_ONE_STARTS = (
    'echo "start $0" >> log.txt; i=0;'
    " while [ ! -e x.started ] && [ ! -e rewrite.started ] && [ $i -lt 2000 ];"
    ' do sleep 0.01; i=$((i+1)); done; echo "end $0" >> log.txt'
)


def test_a_rewrite_in_place_waits_for_every_earlier_reader(tmp_path: Path) -> None:
    """Only a rewrite after one reader was tested: with two, it started as soon as
    the first was done and rewrote data.ms while the other still read it. A
    compiled run orders it after both."""
    recipe = Recipe("r", max_workers=2)
    recipe.add_step("r1", _noting("r1", 'echo "end $0" >> log.txt', READ), data="data.ms")
    recipe.add_step("r2", _noting("r2", READS_UNTIL_ONE_STARTS, READ), data="data.ms")
    recipe.add_step("rewrite", _noting("rewrite", REWRITES, REWRITE), data="data.ms")
    recipe.add_step("x", _noting("x", REWRITES, REWRITE), data="other.ms")  # shares nothing
    (tmp_path / "data.ms").write_text("")
    (tmp_path / "other.ms").write_text("")
    result = run_recipe(recipe, cwd=tmp_path)
    assert result.ok, result.error
    log = (tmp_path / "log.txt").read_text().splitlines()
    assert log.index("start rewrite") > log.index("end r2"), log
    assert log.index("start x") < log.index("end r2"), log  # r2 did not wait in vain


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
