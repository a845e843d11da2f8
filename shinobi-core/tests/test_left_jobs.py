"""The batch jobs of a run whose ninja was killed: the next run refuses to start
beside them, and ``ninja clean --runs`` keeps their folder only while they run.

``ninja run --backend slurm`` killed with ``kill -9`` left its job running; the
next run in the workdir started the same step natively beside it, the two wrote
one file, and the run said ok and cached the mixture. Only orphan processes
were looked for. And ``clean --runs`` kept such a run's folder however long ago
its jobs had ended. The backend that listed the jobs is asked here through the
registry; a stand-in one (``batchy``) answers as each test sets.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from shinobi.backends.base import Backend, BackendRun, Invocation, RunControl
from shinobi.cli.clean import command as clean_command
from shinobi.errors import MachineRefused, ShinobiError
from shinobi.live_runs import other_runs
from shinobi.local_runs import JOBS_LEDGER, runs_root

RUN = "20260101-000000-aaaaaa"


class Batchy(Backend):
    """A batch backend whose jobs live as the test says."""

    name = "batchy"
    #: By run id, the jobs still alive; an exception: the engine does not answer.
    answer: ClassVar[dict[str, list[str]] | Exception | None] = {}
    asked: ClassVar[list[dict[str, list[str]]]] = []

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        raise AssertionError("no step runs here")

    def live_jobs(self, listed: Mapping[str, Sequence[str]]) -> dict[str, list[str]] | None:
        Batchy.asked.append({run: list(jobs) for run, jobs in listed.items()})
        if isinstance(Batchy.answer, Exception):
            raise Batchy.answer
        return Batchy.answer

    def jobs_stop_command(self, job_ids: Sequence[str]) -> str | None:
        return f"batchy-cancel {' '.join(job_ids)}"


@pytest.fixture
def batchy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[type[Batchy]]:
    from shinobi.backends import registry

    real = registry.load_plugin
    monkeypatch.setattr(
        registry,
        "load_plugin",
        lambda group, name: Batchy if name == "batchy" else real(group, name),
    )
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "no-config.toml"))
    Batchy.answer = {}
    Batchy.asked = []
    yield Batchy


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def _killed_run(workdir: Path, engine: str = "batchy", jobs: str = "7\tcalibrate\n") -> Path:
    """A run's folder and marker as a ninja killed after submitting ``jobs`` leaves them."""
    run_dir = runs_root(workdir) / RUN
    (run_dir / engine).mkdir(parents=True)
    (run_dir / engine / JOBS_LEDGER).write_text(jobs)
    (run_dir / ".running").write_text('{"recipe": "selfcal", "pid": 1, "started": 1.0}')
    live = workdir / ".shinobi" / "live"
    live.mkdir()
    (live / f"{_dead_pid()}-abcd.{RUN}").write_text("")
    return run_dir


def _markers(workdir: Path) -> list[str]:
    return os.listdir(workdir / ".shinobi" / "live")


def test_a_run_refuses_beside_a_killed_runs_jobs_and_keeps_its_marker(
    tmp_path: Path, batchy: type[Batchy]
) -> None:
    _killed_run(tmp_path, jobs="7\tcalibrate\n8\timage\n")
    batchy.answer = {RUN: ["8"]}
    with pytest.raises(MachineRefused) as refused:
        other_runs(runs_root(tmp_path))
    assert str(refused.value) == (
        "batch jobs an earlier run started here still run, though its ninja is gone (killed?):"
        f" batchy job 8 of run {RUN} (queued or running); they may write into this run's"
        " outputs: stop them (batchy-cancel 8) or wait for them to end, then run again"
    )
    assert batchy.asked == [{RUN: ["7", "8"]}]  # once, for all of them
    assert len(_markers(tmp_path)) == 1


def test_containers_are_named_as_such(
    tmp_path: Path, batchy: type[Batchy], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A docker container left running is not a batch job, nor "queued"."""
    monkeypatch.setattr(Batchy, "ledger_noun", "container")
    _killed_run(tmp_path, jobs="shinobi-1a\tcalibrate\nshinobi-2b\timage\n")
    batchy.answer = {RUN: ["shinobi-1a", "shinobi-2b"]}
    with pytest.raises(MachineRefused) as refused:
        other_runs(runs_root(tmp_path))
    assert str(refused.value).startswith(
        "containers an earlier run started here still run, though its ninja is gone (killed?):"
        f" batchy containers shinobi-1a, shinobi-2b of run {RUN} (running);"
    )


def test_once_the_jobs_have_ended_the_marker_goes(tmp_path: Path, batchy: type[Batchy]) -> None:
    _killed_run(tmp_path)
    assert other_runs(runs_root(tmp_path)) == []
    assert _markers(tmp_path) == []


@pytest.mark.parametrize(
    "answer", [ShinobiError("squeue: controller did not answer"), None], ids=["away", "cannot"]
)
def test_jobs_that_cannot_be_asked_about_are_warned_of_not_refused(
    tmp_path: Path, batchy: type[Batchy], answer: Exception | None
) -> None:
    run_dir = _killed_run(tmp_path)
    batchy.answer = answer
    (said,) = other_runs(runs_root(tmp_path))
    assert said.startswith(f"run {RUN} of this workdir ended abruptly")
    assert "whether they still run could not be asked" in said
    assert str(run_dir / "batchy" / JOBS_LEDGER) in said
    assert len(_markers(tmp_path)) == 1  # asked again next time


def test_a_normal_run_asks_no_backend(tmp_path: Path, batchy: type[Batchy]) -> None:
    _killed_run(tmp_path)
    for marker in _markers(tmp_path):
        os.unlink(tmp_path / ".shinobi" / "live" / marker)
    assert other_runs(runs_root(tmp_path)) == []
    assert batchy.asked == []


def _aged(run_dir: Path) -> None:
    then = time.time() - 3 * 86400
    for base, _, files in os.walk(run_dir):
        for path in [base, *(os.path.join(base, name) for name in files)]:
            os.utime(path, (then, then))


def _clean(workdir: Path) -> Any:
    result = CliRunner().invoke(clean_command, ["--runs", "--workdir", str(workdir)])
    assert result.exit_code == 0, result.output
    return result


def test_clean_keeps_a_killed_run_while_its_jobs_run(tmp_path: Path, batchy: type[Batchy]) -> None:
    run_dir = _killed_run(tmp_path)
    _aged(run_dir)
    batchy.answer = {RUN: ["7"]}
    result = _clean(tmp_path)
    assert run_dir.exists()
    assert (
        f"batchy job 7 (listed in batchy/{JOBS_LEDGER} there) still run (queued or running)"
        in result.output
    )
    assert "stop them (batchy-cancel 7)" in result.output


def test_clean_removes_a_killed_run_once_its_jobs_have_ended(
    tmp_path: Path, batchy: type[Batchy]
) -> None:
    run_dir = _killed_run(tmp_path)
    _aged(run_dir)
    result = _clean(tmp_path)
    assert not run_dir.exists(), result.output
    assert batchy.asked == [{RUN: ["7"]}]


def test_clean_keeps_a_killed_run_whose_jobs_cannot_be_asked_about(
    tmp_path: Path, batchy: type[Batchy]
) -> None:
    run_dir = _killed_run(tmp_path)
    _aged(run_dir)
    batchy.answer = ShinobiError("squeue: controller did not answer")
    result = _clean(tmp_path)
    assert run_dir.exists()
    assert "could not be asked about: batchy: squeue: controller did not answer" in result.output
