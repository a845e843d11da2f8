"""A path given as "" is refused wherever it is given, not taken for ".".

pydantic reads "" as ``Path(".")``. The command line refused ``--out ""``, but
a value from ``run_recipe()``, an ``add_step`` literal and a blank inside a
JSON mapping input all silently named the current directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process
from pydantic import BaseModel

from shinobi.errors import InputError, UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe

EMPTY = "an empty path names no file; give a path (use . for this directory)"


class In(BaseModel):
    target: Path = Path("t")
    targets: dict[str, Path] = {}
    names: dict[str, str] = {}
    either: str | Path = "x"


class TIn(BaseModel):
    target: Path
    note: str = ""


class Out(BaseModel):
    pass


touch = Cab("touch", ["true"], TIn, Out, {"target": ParamMeta(positional=True)})


def _pipe() -> Recipe:
    pipe = Recipe("pipe", In, Out)
    pipe.add_step("t", touch, target=pipe.inputs.target)
    return pipe


def _literal() -> Recipe:
    pipe = Recipe("lit", In, Out)
    pipe.add_step("t", touch, target="")
    return pipe


def test_an_empty_path_from_python_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        run_recipe(_pipe(), {"target": ""}, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == f"recipe 'pipe', input 'target': {EMPTY}"


def test_an_empty_path_in_a_mapping_is_refused_where_it_is(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        run_recipe(_pipe(), {"targets": {"a": "x", "b": ""}}, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == f"recipe 'pipe', input 'targets.b': {EMPTY}"


def test_empty_text_stays_text(tmp_path: Path) -> None:
    given = {"names": {"a": ""}, "either": ""}
    assert run_recipe(_pipe(), given, cwd=tmp_path, use_cache=False).ok


def test_an_empty_add_step_literal_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        run_recipe(_literal(), cwd=tmp_path, use_cache=False)
    assert str(caught.value) == f"recipe 'lit', step 't': input 'target': {EMPTY}"


def test_an_empty_literal_beside_a_run_time_value_is_refused_too(tmp_path: Path) -> None:
    class NoteOut(BaseModel):
        note: str = ""

    note = Cab("note", ["true"], Out, NoteOut)
    pipe = Recipe("late", In, Out)
    pipe.add_step("n", note)
    pipe.add_step("t", touch, target="", note=pipe.outputs.n.note)
    with pytest.raises(UsageError) as caught:
        run_recipe(pipe, cwd=tmp_path, use_cache=False)
    assert str(caught.value) == f"recipe 'late', step 't': input 'target': {EMPTY}"


def test_the_command_line_refuses_a_blank_in_a_json_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "paths.py").write_text(
        "from pathlib import Path\n"
        "from pydantic import BaseModel\n"
        "from shinobi.steps import Recipe\n"
        "class In(BaseModel):\n"
        "    targets: dict[str, Path] = {}\n"
        "class Out(BaseModel):\n"
        "    pass\n"
        "pipe = Recipe('pipe', In, Out)\n"
    )
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(capsys, "run", "paths.py:pipe", "--dryrun", "--targets", '{"a": ""}')
    assert code == 2
    assert err.strip() == f"ninja: error: recipe 'pipe', input 'targets.a' (--targets): {EMPTY}"
