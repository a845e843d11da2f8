"""``ninja logs RUN STEP`` for a STEP the run has none of: the run notes its steps as
it starts, so the name is refused as no step of it, where it used to read as a
step that printed nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process as ninja
from pydantic import BaseModel

from shinobi.local_runs import STEP_LIST, local_runs
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class Text(BaseModel):
    text: str = "hello"


class Nothing(BaseModel):
    pass


class Texts(BaseModel):
    texts: list[str] = ["a", "b"]


echo = Cab("echo", "echo", Text, Nothing, field_meta={"text": ParamMeta(positional=True)})
quiet = Cab("quiet", "true", Nothing, Nothing)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(recipe: Recipe, workdir: Path) -> str:
    """The id of a finished run of ``recipe``, without provenance (no manifest)."""
    result = run_recipe(recipe, cwd=workdir, use_cache=False, provenance=False)
    assert result.ok, result.error
    (run,) = local_runs(workdir)
    assert not (run.path / "manifest.json").exists()
    return run.run_id


def _calibrate() -> Recipe:
    recipe = Recipe("r", Nothing, Nothing)
    recipe.add_step("calibrate", echo)
    recipe.add_step("silent", quiet)
    return recipe


def test_a_step_the_run_does_not_have_is_said_to_be_none_of_its_steps(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(_calibrate(), workdir)
    code, out, err = ninja(capsys, "logs", run, "nostep")
    assert code == 2 and out == ""
    assert err == f"ninja: error: run {run} has no step 'nostep' (its steps: calibrate, silent)\n"
    code, _, err = ninja(capsys, "logs", run, "calibrat")
    assert code == 2
    assert f"run {run} has no step 'calibrat'; did you mean 'calibrate'?" in err


def test_a_step_that_printed_nothing_is_still_said_to_have_none(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(_calibrate(), workdir)
    code, _, err = ninja(capsys, "logs", run, "silent")
    assert code == 2 and len(err.splitlines()) == 1
    assert f"run {run} kept no logs of a step 'silent' (a step that printed nothing" in err
    assert ninja(capsys, "logs", run, "calibrate")[:2] == (0, "hello\n")


def test_the_steps_listed_are_capped(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = Recipe("r", Nothing, Nothing)
    for k in range(12):
        recipe.add_step(f"s{k:02}", quiet)
    run = _run(recipe, workdir)
    _, _, err = ninja(capsys, "logs", run, "zzz")
    assert "(its steps: s00, s01, s02, s03, s04, s05, s06, s07 and 4 more)" in err


def test_a_nested_recipe_a_slice_and_their_steps_are_steps_of_the_run(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = Recipe("inner", Text, Nothing)
    inner.add_step("say", echo, text=inner.inputs.text)
    outer = Recipe("outer", Texts, Nothing)
    outer.add_step("sub", inner)
    outer.add_step("many", inner, scatter=["text"], text=outer.inputs.texts)
    outer.add_step("fan", echo, scatter=["text"], text=outer.inputs.texts)
    run = _run(outer, workdir)
    for step in ("sub", "sub.say", "many", "many[1]", "many[1].say", "fan", "fan[0]"):
        code, out, err = ninja(capsys, "logs", run, step)
        assert code == 0 and out, (step, err)
    code, _, err = ninja(capsys, "logs", run, "sub.nope")
    assert code == 2 and f"run {run} has no step 'sub.nope'" in err


def test_a_run_that_noted_no_steps_reads_as_before(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older ninja's run (no list of its steps): a name it has no step of cannot be
    told from a silent step, and neither is claimed."""
    run = _run(_calibrate(), workdir)
    (workdir / ".shinobi" / "runs" / run / STEP_LIST).unlink()
    code, _, err = ninja(capsys, "logs", run, "nostep")
    assert code == 2 and f"run {run} kept no logs of a step 'nostep'" in err
