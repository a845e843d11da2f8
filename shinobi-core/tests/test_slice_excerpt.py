"""A failed scatter slice's excerpt under ``ninja run``'s error is that slice's own
stderr tail: the gathered step's stderr joins every slice's, and the other slices'
notes were shown as if the failing one had written them."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from cli_in_process import in_process

SCATTERED = """
from pydantic import BaseModel, Field
from shinobi.steps import Cab, ParamMeta, Recipe

SCRIPT = 'echo "note from spw $1" >&2; [ "$1" != 2 ] || {{ echo "spw $1: solve failed" >&2; exit 3; }}'

class In(BaseModel):
    spw: int

class Out(BaseModel):
    pass

solve = Cab("solve", ["/bin/sh", "-c", SCRIPT, "solve"], In, Out, {{"spw": ParamMeta(positional=True)}})

class PIn(BaseModel):
    spws: list[int] = Field([0, 1, 2, 3])

inner = Recipe("inner", PIn, Out, max_workers=4)
inner.add_step("solve", solve, scatter=["spw"], spw=inner.inputs.spws)

r = Recipe("r", PIn, Out)
r.add_step({step})
"""

STEPS = {
    "scattered": ('"solve", solve, scatter=["spw"], spw=r.inputs.spws', "solve"),
    "nested": ('"cal", inner, spws=r.inputs.spws', "cal"),
}


def _excerpt(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("  | ")]


@pytest.mark.parametrize("kind", sorted(STEPS))
def test_the_excerpt_is_the_failing_slices_own_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    step, name = STEPS[kind]
    (tmp_path / "sl.py").write_text(SCATTERED.format(step=step))
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(capsys, "run", "sl.py:r")
    assert code == 1, err
    assert f"ninja: error: step {name!r} failed:" in err
    assert _excerpt(err) == ["  | note from spw 2", "  | spw 2: solve failed"], err


LONG_LINE = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

class Nothing(BaseModel):
    pass

SCRIPT = 'echo early >&2; head -c 5000 /dev/zero | tr "\\\\0" x >&2; echo >&2; echo late >&2; exit 1'
r = Recipe("r")
r.add_step("spew", Cab("spew", ["/bin/sh", "-c", SCRIPT], Nothing, Nothing))
"""


def test_a_long_stderr_line_is_cut_and_the_logs_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One stderr line of 262,148 characters filled 3,300 rows under the run, and
    pushed the error that matters off the screen."""
    (tmp_path / "long.py").write_text(LONG_LINE)
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(capsys, "run", "long.py:r")
    assert code == 1, err
    (run,) = (path.name for path in (tmp_path / ".shinobi" / "runs").iterdir())
    assert _excerpt(err) == [
        "  | early",
        f"  | {'x' * 300} [... cut at 300 characters]",
        "  | late",
    ]
    assert f"  (the cut lines are whole in `ninja logs {run} spew --stream stderr`)\n" in err


def test_a_failed_run_names_its_id_and_the_logs_of_the_step(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run id was printed nowhere: its folder had to be found by its time."""
    (tmp_path / "sl.py").write_text(SCATTERED.format(step=STEPS["scattered"][0]))
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(capsys, "run", "sl.py:r")
    assert code == 1, err
    (run,) = (path.name for path in (tmp_path / ".shinobi" / "runs").iterdir())
    said = f"  run {run}: `ninja logs {run} 'solve[2]'` shows what the step printed"
    assert err.splitlines()[-2:-1] == [said]


LOGS_HINTS = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

class I(BaseModel):
    pass

loud = Cab("loud", ["/bin/sh", "-c", "echo said; exit 3"], I, I)
quiet = Cab("quiet", ["/bin/sh", "-c", "exit 3"], I, I)
dashed = Recipe("dashed", I, I)
dashed.add_step("-n", loud)
silent = Recipe("silent", I, I)
silent.add_step("q", quiet)
"""


@pytest.mark.parametrize(
    ("target", "workdir", "hint"),
    [
        ("dashed", None, "`ninja logs {run} -- -n` shows what the step printed"),
        ("dashed", "w d", "`ninja logs {run} --workdir '{root}/w d' -- -n` shows what"),
        ("silent", None, "step 'q' printed nothing"),
    ],
)
def test_the_logs_hint_works_as_printed(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    workdir: str | None,
    hint: str,
) -> None:
    """The command printed after a failure is pasted as it is: it named no
    --workdir after a run given one, a step called ``-n`` was taken for an
    option, and a step that printed nothing was pointed to logs it never had."""
    (tmp_path / "h.py").write_text(LOGS_HINTS)
    monkeypatch.chdir(tmp_path)
    extra = [] if workdir is None else ["--workdir", workdir]
    if workdir is not None:
        (tmp_path / workdir).mkdir()
    code, _, err = in_process(capsys, "run", f"h.py:{target}", *extra)
    assert code == 1, err
    (run,) = (path.name for path in (tmp_path / (workdir or ".") / ".shinobi" / "runs").iterdir())
    said = f"  run {run}: " + hint.format(run=run, root=tmp_path)
    assert said in err, err
    if target == "dashed":  # and, pasted from anywhere a --workdir reaches, shows them
        if workdir is not None:
            monkeypatch.chdir(tmp_path.parent)
        _, *command = shlex.split(err.split("`")[1])
        code, out, err = in_process(capsys, *command)
        assert code == 0 and "said" in out, err
