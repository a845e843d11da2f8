"""``ninja logs RUN STEP`` of a step taken from the cache, in a run without a manifest.

The step printed nothing in that run; the logs are those of the run that ran
it, which every run that took steps from the cache records (``cached-from.json``),
whether or not it kept a provenance manifest.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process

from shinobi.local_runs import local_runs

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta

class I(BaseModel):
    msg: str = "hello from the first run"

class O(BaseModel):
    pass

say = Cab("say", ["echo"], I, O, {"msg": ParamMeta(positional=True)})
"""


def test_a_cached_step_shows_the_logs_of_the_run_that_ran_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "r.py").write_text(textwrap.dedent(RECIPE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    assert in_process(capsys, "run", "r.py:say")[0] == 0
    assert in_process(capsys, "run", "r.py:say")[0] == 0
    runs = {run.run_id: run for run in local_runs(tmp_path)}
    served = [run for run in runs.values() if (run.path / "cached-from.json").exists()]
    assert len(served) == 1 and not (served[0].path / "manifest.json").exists()
    (first,) = set(runs) - {served[0].run_id}
    code, out, err = in_process(capsys, "logs", served[0].run_id, "say")
    assert code == 0, err
    assert out.strip() == "hello from the first run"
    assert f"these are the logs of run {first}" in err


SPACED = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class I(BaseModel):
    msg: str = "hello"

say = Cab("say", ["echo"], I, None, {"msg": ParamMeta(positional=True)})
r = Recipe("r")
r.add_step("first step", say)
"""


def test_the_command_suggested_for_another_workspace_s_logs_can_be_pasted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step name with a space was not quoted: pasted, it was two arguments."""
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    for place in ("one", "two"):
        (tmp_path / place).mkdir()
        (tmp_path / place / "r.py").write_text(textwrap.dedent(SPACED))
        monkeypatch.chdir(tmp_path / place)
        assert in_process(capsys, "run", "r.py:r")[0] == 0
    (first,) = local_runs(tmp_path / "one")
    (second,) = local_runs(tmp_path / "two")
    code, _, err = in_process(capsys, "logs", second.run_id, "first step")
    assert code == 2
    assert f"`ninja logs {first.run_id} 'first step'`" in err
