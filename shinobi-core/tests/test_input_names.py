"""An input named after the second name of one of the command's flags.

An input ``no_provenance`` took ``ninja run``'s ``--no-provenance`` (the
negative name of ``--provenance/--no-provenance``): only the flags' first
names were checked, so it was not renamed ``--input-no-provenance`` as
``provenance`` and ``json`` are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class SayIn(BaseModel):
    word: str

class Out(BaseModel):
    pass

say = Cab("say", ["/bin/echo"], SayIn, Out, {"word": ParamMeta(positional=True)})

class In(BaseModel):
    no_provenance: str = "kept"

r = Recipe("r", In, Out)
r.add_step("say", say, word=r.inputs.no_provenance)
"""


def test_an_input_named_no_provenance_is_given_as_input_no_provenance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "np.py"
    path.write_text(RECIPE)
    code, out, err = _ninja(capsys, "run", f"{path}:r", "--help")
    assert code == 0, err
    assert "--input-no-provenance" in out, out
    assert "--no-provenance, --no_provenance" not in out, out
    code, out, err = _ninja(
        capsys, "run", f"{path}:r", "--input-no-provenance", "given", "--no-provenance", "--dryrun"
    )
    assert code == 0, err
    assert "/bin/echo given" in out, out
