"""``ninja logs RUN ns.first``, a step inside a scattered nested recipe: it shows every
slice's log (``ns[0].first``, ``ns[1].first``), as a scattered step's name does,
where it was refused as a step that printed nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import in_process as ninja
from pydantic import BaseModel
from test_logs_stream import RUN, _finished_run

from shinobi.local_runs import local_runs
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class Text(BaseModel):
    text: str


class Texts(BaseModel):
    texts: list[str] = ["a", "b"]


class Nothing(BaseModel):
    pass


say = Cab(
    "say",
    ["sh", "-c", 'echo "$1 line"; echo "$1 eline" >&2', "sh"],
    Text,
    Nothing,
    {"text": ParamMeta(positional=True)},
    cache=False,
)


def _scattered_nested(workdir: Path) -> str:
    """The id of a finished run of a recipe that scatters a nested one (``ns``,
    whose step ``first`` prints), next to a scattered plain step (``hello``)."""
    sub = Recipe("sub", Text, Nothing)
    sub.add_step("first", say, text=sub.inputs.text)
    recipe = Recipe("p", Texts, Nothing, max_workers=2)
    recipe.add_step("hello", say, scatter=["text"], text=recipe.inputs.texts)
    recipe.add_step("ns", sub, scatter=["text"], text=recipe.inputs.texts)
    result = run_recipe(recipe, cwd=workdir, use_cache=False)
    assert result.ok, result.error
    (run,) = local_runs(workdir)
    return run.run_id


@pytest.mark.parametrize("follow", [[], ["--follow"]])
def test_a_step_of_a_scattered_nested_recipe_shows_every_slice(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    follow: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    run = _scattered_nested(tmp_path)
    code, out, err = ninja(capsys, "logs", run, "ns.first", "--stream", "stdout", *follow)
    assert (code, err) == (0, "")
    if follow:
        assert sorted(out.splitlines()) == [
            "[ns[0].first stdout] a line",
            "[ns[1].first stdout] b line",
        ]
    else:
        assert sorted(out.splitlines()) == sorted(
            ["==> ns[0].first stdout <==", "a line", "==> ns[1].first stdout <==", "b line"]
        )
    # one slice, the recipe, and a name that is near but not one, as before
    assert ninja(capsys, "logs", run, "ns[1].first", "--stream", "stderr")[:2] == (0, "b eline\n")
    assert ninja(capsys, "logs", run, "ns", "--stream", "stdout")[0] == 0
    code, _, err = ninja(capsys, "logs", run, "ns.firs")
    assert code == 2 and "has no step 'ns.firs'; did you mean 'ns.first'?" in err


def test_the_slice_names_a_nested_step_holds() -> None:
    from shinobi.cli.logs import _in_slices

    assert _in_slices("ns.first", "ns[0].first")
    assert _in_slices("ns.first", "ns[12].first.inner")
    assert _in_slices("a.b.c", "a[0].b[1].c[2]")
    assert _in_slices("ns[1].first", "ns[1].first")
    assert not _in_slices("ns[1].first", "ns[0].first")
    assert not _in_slices("ns.first", "ns[0].firsts")
    assert not _in_slices("ns.first", "nss[0].first")
    assert not _in_slices("n.s", "n[0]xs")


def test_cached_slices_of_a_nested_step_are_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A slice of ``ns.first`` taken from the step cache printed nothing in this run: it
    is named, with the run that ran it, as a scattered plain step's are."""
    run_dir = _finished_run(tmp_path, {"ns[0].first.out": b"a line\n"})
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["steps"].append(
        {
            "name": "ns[1].first",
            "status": "cached",
            "cached": True,
            "logs": {},
            "details": {"cached_from": "20260101-000000-bbbbbb"},
        }
    )
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.chdir(tmp_path)
    code, out, err = ninja(capsys, "logs", RUN, "ns.first")
    assert (code, out) == (0, "a line\n")
    assert "ns[1].first of run" in err and "taken from the step cache of run 20260101" in err


def test_a_step_named_like_one_inside_another_is_not_shown_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ninja logs RUN x`` showed the logs of a step of the recipe's own named
    ``x.y`` with x's: only a nested recipe (or a loop) holds steps ``x.inner``."""
    sub = Recipe("sub", Text, Nothing)
    sub.add_step("z", say, text="inner")
    recipe = Recipe("p", Texts, Nothing)
    recipe.add_step("x", say, text="x")
    recipe.add_step("x.y", say, text="sibling")
    recipe.add_step("n", sub, text="n")
    recipe.add_step("n.w", say, text="beside n")
    assert run_recipe(recipe, cwd=tmp_path, use_cache=False).ok
    (run,) = local_runs(tmp_path)
    monkeypatch.chdir(tmp_path)

    def shown(step: str) -> str:
        code, out, err = ninja(capsys, "logs", run.run_id, step, "--stream", "stdout")
        assert code == 0, err
        return out

    assert shown("x") == "x line\n"
    assert shown("x.y") == "sibling line\n"
    assert shown("n") == "inner line\n"  # the nested recipe's own step, not n.w
    assert shown("n.w") == "beside n line\n"
