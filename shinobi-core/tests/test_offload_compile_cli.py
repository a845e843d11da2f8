"""``ninja compile`` in core, over a stand-in engine: printing, refusing, submitting, detaching."""

from __future__ import annotations

import errno
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process as ninja
from test_launch_fixtures import FakeTarget, engine

from shinobi.cli.standard_output import StdoutUnwritable
from shinobi.launch.index import list_launches

__all__ = ["engine"]

DEMO = str(Path(__file__).resolve().parents[2] / "examples" / "offload_demo.py")

REFUSED = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe, StepRef, pystep

class In(BaseModel):
    state: dict = {}

mutate = Cab(name="m", command="/bin/true", inputs_model=In,
             field_meta={"state": ParamMeta(skip=True, mutable=True)})

@pystep
def py(x: int) -> int:
    return x

bad = Recipe(name="bad", steps=[
    StepRef("m", mutate, {"state": {"a": 1}}),
    StepRef("py", py, {"x": 1}),
    StepRef("v", Cab(name="v", command="/bin/true"), {}, venv="/opt/v"),
])
"""


def test_compile_prints_the_engines_scripts(
    engine: type[FakeTarget], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ninja(
        capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--target", "/s/m.ms"
    )
    assert code == 0, err
    assert "# ---- make.sh (make) ----\n# after: \n/bin/touch /s/m.ms\n" in out
    assert "# ---- use.sh (use) ----\n# after: make\n/bin/cat /s/m.ms\n" in out


def test_a_refusal_lists_every_reason_and_exits_2(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.py").write_text(REFUSED)
    code, out, err = ninja(capsys, "compile", f"{tmp_path}/bad.py:bad", "--engine", "fake")
    assert code == 2 and out == ""
    listed = [line for line in err.splitlines() if line.startswith("  - ")]
    assert len(listed) == 3
    assert any("MUTABLE but not a path" in line for line in listed)
    assert any("@pystep" in line for line in listed)
    assert any("virtualenv" in line for line in listed)
    assert err.splitlines()[-1].startswith(
        "ninja: error: recipe 'bad' cannot be offloaded (3 reasons"
    )


UNSET = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, OutputRef, ParamMeta, Recipe, StepRef

class MaybeOut(BaseModel):
    product: Path | None = None

class TakeIn(BaseModel):
    src: Path | None = None

make = Cab(name="make", command="/bin/true", outputs_model=MaybeOut)
take = Cab(name="take", command="/bin/cat", inputs_model=TakeIn,
           field_meta={"src": ParamMeta(positional=True)})
pipe = Recipe(name="pipe", steps=[
    StepRef("make", make, {}),
    StepRef("take", take, {"src": OutputRef("make", "product")}),
])
"""


def test_an_output_with_no_value_before_the_run_read_by_a_later_step_is_refused(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unrefused, it compiles: the reader's job runs ``/bin/cat`` with its argument
    silently dropped, and passes having read nothing."""
    (tmp_path / "unset.py").write_text(UNSET)
    code, out, err = ninja(capsys, "compile", f"{tmp_path}/unset.py:pipe", "--engine", "fake")
    assert code == 2 and out == ""
    assert (
        "step 'take', input 'src': make.product has no value before 'make' runs"
        " (no passthrough input, no implicit template, no default)" in err
    )


def test_explain_says_why_each_edge_exists(
    engine: type[FakeTarget], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--explain")
    assert code == 0
    assert "  use:\n    after make: wired (f <- make.out)" in out


def test_submit_writes_the_handle_records_the_launch_and_detaches(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ninja(
        capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit", "--json"
    )
    assert code == 0, err
    launch = json.loads(out)
    latest = tmp_path / ".shinobi" / "pipe" / "handle.json"
    assert launch["handle"] == str(latest)
    saved = json.loads(latest.read_text())
    assert saved["state"] == "submitted" and [j["job_id"] for j in saved["jobs"]] == ["1", "2"]
    assert saved["engine"] == "fake" and saved["target"] == f"{DEMO}:pipe"
    own = tmp_path / ".shinobi" / "pipe" / saved["run_id"] / "handle.json"
    assert [e.handle for e in list_launches(tmp_path)] == [str(own)]


class _FullDisk(io.StringIO):
    """A stdout on a full disk, as ninja's own stdout refuses a write there."""

    def write(self, text: str) -> int:
        raise StdoutUnwritable(errno.ENOSPC, "No space left on device")


def test_submit_beside_a_run_going_in_the_workdir_is_warned_about(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ninja run` then `ninja compile --submit` of one recipe in one workspace: both
    wrote the same file, and the submission said nothing."""
    import os

    live = tmp_path / ".shinobi" / "live"
    live.mkdir(parents=True)
    (live / f"{os.getpid()}-abcd.20260101-000000-aaaaaa").write_text("")  # a ninja alive
    code, _, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit")
    assert code == 0, err
    assert (
        "ninja: warning: another run is going in this workdir: 20260101-000000-aaaaaa"
        f" (pid {os.getpid()}); a step of each that writes the same path"
    ) in err


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["plain", "json"])
def test_a_submitted_launch_stdout_refuses_is_on_record_and_exits_0(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    json_flag: list[str],
) -> None:
    """The jobs were handed over: a 74 would tell a wrapper that retries on it to
    submit them all again."""
    monkeypatch.setattr(sys, "stdout", _FullDisk())
    code, _, err = ninja(
        capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit", *json_flag
    )
    assert code == 0, err
    latest = tmp_path / ".shinobi" / "pipe" / "handle.json"
    run_id = json.loads(latest.read_text())["run_id"]
    assert err.endswith(
        "ninja: warning: cannot write to standard output: No space left on device; the launch"
        f" is on record in its handle, {latest} (`ninja status {run_id}`)\n"
    )


def test_an_engine_that_is_not_installed_is_named(
    engine: type[FakeTarget], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "pbs")
    assert code == 2 and "unknown offload engine 'pbs'" in err


def test_output_writes_the_scripts_into_a_new_folder_but_never_makes_its_parents(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = tmp_path / "scripts"
    code, _, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "-o", str(made))
    assert code == 0, err
    assert made.is_dir() and list(made.iterdir())
    (made / "by-hand.sh").write_text("mine\n")
    code, _, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "-o", str(made))
    assert code == 0 and "removed" not in err, err  # the same scripts: nothing is stale
    assert (made / "by-hand.sh").read_text() == "mine\n"
    typo = tmp_path / "no" / "such" / "scripts"
    code, _, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "-o", str(typo))
    assert code == 2 and "does not exist" in err
    assert not (tmp_path / "no").exists()


def test_json_without_submit_is_refused_not_ignored(
    engine: type[FakeTarget], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--json")
    assert code == 2 and out == ""
    assert "--json prints the launch, so it needs --submit" in err


def test_an_interrupt_while_a_job_is_handed_over_waits_until_it_is_on_record(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os
    import signal

    submitted: list[str] = []

    def submit(self: FakeTarget, workflow: object, handle: Any, journal: Any) -> None:
        for number, job in enumerate(handle.jobs, start=1):
            if number == 1:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the engine accepts job 1
            job.job_id = str(number)
            submitted.append(job.step)
            journal.record(job)

    monkeypatch.setattr(FakeTarget, "submit", submit)
    code, _, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit")
    assert code == 130
    assert submitted == ["make"]  # stopped after the job on the way, before the next
    assert "stopping once the job being submitted is on record" in err
    assert "1 of 2 jobs were handed to fake" in err
    (entry,) = list_launches(tmp_path)
    saved = json.loads(Path(entry.handle).read_text())
    assert [j["job_id"] for j in saved["jobs"]] == ["1", None]


def test_a_submission_refused_before_any_job_leaves_no_launch(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shinobi.errors import ShinobiError

    def submit(self: FakeTarget, workflow: object, handle: Any, journal: Any) -> None:
        raise ShinobiError("the engine refused step 'make': no such partition")

    monkeypatch.setattr(FakeTarget, "submit", submit)
    code, out, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit")
    assert code == 2 and out == ""
    assert "no such partition" in err
    assert list_launches(tmp_path) == []
    assert not list((tmp_path / ".shinobi").glob("pipe/*/handle.json"))


def test_an_index_of_launches_that_cannot_be_written_leaves_no_launch(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It said only "No such file or directory", and `ninja runs` then listed a
    launch that never submitted anything."""
    submitted: list[str] = []
    monkeypatch.setattr(FakeTarget, "submit", lambda *args: submitted.append("job"))
    (tmp_path / "state").write_text("a file where a directory is needed")
    code, out, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit")
    assert code == 74 and out == ""
    assert "cannot record the launch in ninja's index of launches" in err
    assert "nothing was submitted" in err and "XDG_STATE_HOME" in err
    assert submitted == []
    assert not list((tmp_path / ".shinobi").glob("pipe/*/handle.json"))


def test_an_engine_whose_submit_raises_is_blamed_and_leaves_no_launch(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It was "internal error: KeyError ... please report it" (exit 70), naming no plugin."""

    def submit(self: FakeTarget, workflow: object, handle: Any, journal: Any) -> None:
        raise KeyError("partition")

    monkeypatch.setattr(FakeTarget, "submit", submit)
    code, out, err = ninja(capsys, "compile", f"{DEMO}:pipe", "--engine", "fake", "--submit")
    assert code == 1 and out == "", err
    assert "offload engine 'fake' (" in err, err
    assert "raised KeyError: 'partition' in its submit(): a fault of that offload engine" in err
    assert "internal error" not in err
    assert list_launches(tmp_path) == []
