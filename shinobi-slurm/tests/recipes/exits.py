"""Tools that end with exit codes above 127, which Slurm's accounting keeps modulo 128.

``loud``: one step that exits 200. ``fan``: a scatter whose slices exit with the
codes given (255 is a C tool's ``exit(-1)``).
"""

from __future__ import annotations

from pydantic import BaseModel

from shinobi.steps import Cab, ParamMeta, Recipe


class CodeIn(BaseModel):
    code: int


class Codes(BaseModel):
    codes: list[int]


ends = Cab(
    name="ends",
    command=["/bin/sh", "-c", 'echo "ending with $1" >&2; exit "$1"', "ends"],
    inputs_model=CodeIn,
    field_meta={"code": ParamMeta(positional=True)},
)

loud = Recipe("loud")
loud.add_step("ends", ends, code=200)

fan = Recipe("fan", Codes)
fan.add_step("ends", ends, scatter="code", code=fan.inputs.codes)
