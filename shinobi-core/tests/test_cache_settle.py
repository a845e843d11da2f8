"""A step whose output folder later steps of the run changed is still a hit next time.

The usual radio pipeline (make an MS, flag it in place, image it), or a step
that writes its product into the folder an earlier step made, left the
earlier step's entry recording the folder as that step left it: no re-run of
the unchanged recipe ever hit it, and every run started from the top. An
in-place rewrite that is not declared safe to replay must still make the
producer run again: replayed, the rewrite would act on rewritten data.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Directory, File, ParamMeta, Recipe


class MakeIn(BaseModel):
    src: File
    ms: Directory


class MsOut(BaseModel):
    ms: Directory


class MsIn(BaseModel):
    ms: Directory


class ImageIn(BaseModel):
    ms: Directory


class ImageOut(BaseModel):
    img: File


make = Cab(
    "make",
    ["sh", "-c", 'rm -rf "$1"; mkdir -p "$1"; cp "$0" "$1/DATA"'],
    MakeIn,
    MsOut,
    {"src": ParamMeta(positional=True), "ms": ParamMeta(positional=True)},
)
image = Cab(  # its product inside the MS's folder: a file of its own there
    "image",
    ["sh", "-c", 'cat "$0/DATA" > "$0/img.txt"'],
    ImageIn,
    ImageOut,
    {"ms": ParamMeta(positional=True, writable=False), "img": ParamMeta(implicit="{ms}/img.txt")},
)


def _flagger(appends: bool, replayable: bool) -> Cab:
    write = ">>" if appends else ">"
    return Cab(
        "flag",
        ["sh", "-c", f'echo flagged {write} "$0/FLAGS"'],
        MsIn,
        MsOut,
        {"ms": ParamMeta(positional=True, mutable=True)},
        cache=True if replayable else None,
    )


def _pipeline(flag: Cab) -> Recipe:
    recipe = Recipe("pipe")
    recipe.add_step("make", make, src=Path("raw.txt"), ms=Path("obs.ms"))
    recipe.add_step("flag", flag, ms=recipe.outputs.make.ms)
    recipe.add_step("image", image, ms=recipe.outputs.flag.ms)
    return recipe


def _statuses(recipe: Recipe, tmp_path: Path) -> dict[str, str]:
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    result = run_recipe(recipe, cwd=tmp_path / "w", config=config)
    assert result.ok, result.error
    return {step.name: step.status for step in result.steps}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "raw.txt").write_text("raw\n")
    return tmp_path / "w"


def test_an_unchanged_recipe_is_a_hit_throughout(tmp_path: Path, workdir: Path) -> None:
    recipe = _pipeline(_flagger(appends=False, replayable=True))
    assert set(_statuses(recipe, tmp_path).values()) == {"ok"}
    for _ in range(2):
        assert _statuses(recipe, tmp_path) == {
            "make": "cached",
            "flag": "cached",
            "image": "cached",
        }
    (workdir / "obs.ms" / "FLAGS").unlink()  # what a replay of make would not give back
    assert set(_statuses(recipe, tmp_path).values()) == {"ok"}  # make removed img.txt too
    assert (workdir / "obs.ms" / "FLAGS").read_text() == "flagged\n"


def test_a_rewrite_not_declared_safe_to_replay_makes_the_producer_run_again(
    tmp_path: Path, workdir: Path
) -> None:
    """Flagging that appends, run on a replayed (already flagged) MS, flagged twice."""
    safe = _pipeline(_flagger(appends=False, replayable=True))
    _statuses(safe, tmp_path)  # make's entry: the MS as the safe flagger left it
    unsafe = _pipeline(_flagger(appends=True, replayable=False))
    for _ in range(2):
        assert _statuses(unsafe, tmp_path)["make"] == "ok"
        assert (workdir / "obs.ms" / "FLAGS").read_text() == "flagged\n"


def test_a_failed_run_settles_nothing(tmp_path: Path, workdir: Path) -> None:
    """The MS as a run that failed left it may be half rewritten."""
    recipe = _pipeline(_flagger(appends=False, replayable=True))
    recipe.add_step("fail", Cab("fail", ["false"]))
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    assert not run_recipe(recipe, cwd=workdir, config=config).ok
    statuses = {s.name: s.status for s in run_recipe(recipe, cwd=workdir, config=config).steps}
    assert statuses["make"] == "ok"  # as the flagger left it is not what make made
