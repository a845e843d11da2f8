"""Recipes that fail on purpose: an exit code with dependants, and a step over its memory.

``chain``: ``first`` succeeds, ``boom`` exits 3 after saying why on stderr,
``second`` and ``third`` wait on it (in a chain). ``hog``: one step that
declares 64 MiB and holds 400 MB. ``partial``: ``made`` writes its file whole,
``handed`` exits 3 on it without writing, ``own`` writes part of its own file and
exits 3. ``slices``: a scatter (one job array) whose slice on a path ending in
``b.fits`` writes part of it and exits 3; the other slices write theirs whole.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from shinobi.resources import Resources
from shinobi.steps import Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef


class ChainInputs(BaseModel):
    marker: Path


class FileIn(BaseModel):
    path: Path


class FileOut(BaseModel):
    path: Path | None = None


def _cab(name: str, script: str) -> Cab:
    return Cab(
        name=name,
        command=["/bin/sh", "-c", script, name],
        inputs_model=FileIn,
        outputs_model=FileOut,
        field_meta={"path": ParamMeta(positional=True)},
    )


first = _cab("first", 'echo first >> "$1"')
boom = _cab("boom", 'echo "boom: the calibration diverged" >&2; exit 3')
after = _cab("after", 'echo "$0" >> "$1"')

chain = Recipe(
    name="chain",
    inputs_model=ChainInputs,
    steps=[
        StepRef("first", first, {"path": InputRef("marker")}),
        StepRef("boom", boom, {"path": OutputRef("first", "path")}),
        StepRef("second", after, {"path": OutputRef("boom", "path")}),
        StepRef("third", after, {"path": OutputRef("second", "path")}),
    ],
)


class PartialInputs(BaseModel):
    made: Path
    own: Path


partial = Recipe(
    name="partial",
    inputs_model=PartialInputs,
    steps=[
        StepRef("made", _cab("whole", 'echo whole > "$1"'), {"path": InputRef("made")}),
        StepRef("handed", _cab("fails", "exit 3"), {"path": OutputRef("made", "path")}),
        StepRef("own", _cab("part", 'echo part > "$1"; exit 3'), {"path": InputRef("own")}),
    ],
)


class SlicesInputs(BaseModel):
    paths: list[Path]


slices = Recipe(
    name="slices",
    inputs_model=SlicesInputs,
    steps=[
        StepRef(
            "image",
            _cab(
                "image", 'case "$1" in *b.fits) echo part > "$1"; exit 3;; esac; echo whole > "$1"'
            ),
            {"path": InputRef("paths")},
            scatter=("path",),
        )
    ],
)

hog_cab = Cab(
    name="hog",
    command=["/bin/sh", "-c", "head -c 400000000 /dev/zero | tail > /dev/null; exit 0"],
)
hog = Recipe(
    name="hog",
    steps=[StepRef("hog", hog_cab, {}, resources=Resources(memory="64MiB"))],
)
