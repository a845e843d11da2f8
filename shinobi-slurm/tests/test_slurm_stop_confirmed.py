"""What a live audit of the Slurm step backend found (the thirteenth round).

After an interrupt, a job counts as stopped only once Slurm says it is gone:
with the controller down when Ctrl-C came, scancel failed, the wait gave up,
and ninja said every step was torn down (exit 130) while the job ran on. The
job is now cancelled again until Slurm answers, and a job never confirmed
gone is reported as possibly still running (exit 1). Also: an outage names
the step's job, and a directory no #SBATCH line can hold is refused first.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from shinobi.runner import Interrupted
from shinobi.steps.result import RecipeResult, StepResult
from shinobi_slurm import backend as slurm_backend
from shinobi_slurm.backend import SlurmBackend

DOWN = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"


def _slurm(tmp_path: Path, down_for: int) -> SlurmBackend:
    """A backend whose Slurm does not answer the first ``down_for`` squeue calls."""
    fake = tmp_path / "slurm"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{tmp_path}/calls"\n'
        'if [ "$1" = squeue ]; then\n'
        f'  n=$(grep -c ^squeue "{tmp_path}/calls")\n'
        f'  if [ "$n" -le {down_for} ]; then echo "{DOWN}" >&2; exit 1; fi\n'
        "fi\n"
        "exit 0\n"
    )
    fake.chmod(0o755)
    return SlurmBackend({"command_prefix": [str(fake)]})


def _slurm_as_is(tmp_path: Path) -> SlurmBackend:
    """A backend on the fake Slurm already written in ``tmp_path``."""
    return SlurmBackend({"command_prefix": [str(tmp_path / "slurm")]})


def _calls(tmp_path: Path, tool: str) -> int:
    return sum(1 for line in (tmp_path / "calls").read_text().splitlines() if line.startswith(tool))


def test_a_job_is_cancelled_again_until_slurm_answers_that_it_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slurm_backend, "_CANCEL_AGAIN", 0.0)
    backend = _slurm(tmp_path, down_for=3)
    assert backend._wait_gone("4242", threading.Event())
    assert _calls(tmp_path, "squeue") == 4 and _calls(tmp_path, "scancel") >= 2


def test_a_job_slurm_never_confirmed_gone_is_not_called_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slurm_backend, "CANCEL_WAIT", 1.0)
    assert not _slurm(tmp_path, down_for=1000)._wait_gone("4242", threading.Event())


def test_a_second_interrupt_ends_the_wait_at_once(tmp_path: Path) -> None:
    hurry = threading.Event()
    hurry.set()
    started = time.monotonic()
    assert not _slurm(tmp_path, down_for=1000)._wait_gone("4242", hurry)
    assert time.monotonic() - started < 5


def test_a_second_interrupt_counts_a_job_slurm_is_finishing_off_as_stopped(
    tmp_path: Path,
) -> None:
    """A job already COMPLETING after its scancel made a double Ctrl-C exit 1 with
    "may still be running", and the run was kept "not all stopped" for ever."""
    fake = tmp_path / "slurm"
    fake.write_text('#!/bin/sh\nif [ "$1" = squeue ]; then echo COMPLETING; fi\nexit 0\n')
    fake.chmod(0o755)
    hurry = threading.Event()
    hurry.set()
    assert _slurm_as_is(tmp_path)._wait_gone("4242", hurry)


def test_the_run_says_which_job_may_still_run_and_exits_1() -> None:
    step = StepResult(
        name="image",
        status="cancelled",
        returncode=-15,
        error="interrupted",
        details={"still_running": "Slurm job 4242"},
    )
    stopped = Interrupted(2, RecipeResult(name="r", status="cancelled", steps=[step]), ())
    assert stopped.exit_code == 1
    assert "stopped by SIGINT, but Slurm job 4242 may still be running" in str(stopped)
    assert "every step was torn down" not in str(stopped)


def test_an_outage_that_ends_the_wait_names_the_steps_job(tmp_path: Path) -> None:
    """'the jobs may still be running' named none: which one to scancel was a guess."""
    from shinobi.backends.base import Invocation
    from shinobi_slurm.poller import JobWatch

    watch = JobWatch("9265", 0.0, error="lost contact with Slurm for 7 s (down)")
    invocation = Invocation(step="s", argv=("true",), cwd=str(tmp_path))
    out, err = str(tmp_path / "o"), str(tmp_path / "e")
    run = _slurm(tmp_path, 0)._result(invocation, "9265", watch, (out, err), {}, stopped=False)
    assert run.returncode == 1
    # the step failed: its job must not run on beside the next run's
    assert run.reason == (
        "lost contact with Slurm for 7 s (down); cancelled this step's Slurm job 9265,"
        " so it does not run on unseen"
    )
    assert (tmp_path / "calls").read_text().splitlines() == ["scancel 9265"]
    (tmp_path / "slurm").write_text(f"#!/bin/sh\necho '{DOWN}' >&2\nexit 1\n")
    run = _slurm_as_is(tmp_path)._result(invocation, "9265", watch, (out, err), {}, stopped=False)
    assert run.reason is not None
    assert run.reason.startswith(
        "lost contact with Slurm for 7 s (down); this step's Slurm job 9265 may still be running"
        " and could not be cancelled ("
    )
    assert run.reason.endswith("`scancel 9265` before running again")


def test_a_line_break_in_the_directory_is_refused_before_any_step(tmp_path: Path) -> None:
    """It was a step's failure (exit 1), after the steps before it had run."""
    from shinobi.backends.base import Invocation
    from shinobi.errors import UsageError

    odd = tmp_path / "nl\ndir"
    odd.mkdir()
    invocation = Invocation(step="s", argv=("true",), cwd=str(odd))
    with pytest.raises(UsageError, match="line break"):
        _slurm(tmp_path, 0).prepare([invocation])
    assert not (tmp_path / "calls").exists()  # nothing asked of Slurm, nothing submitted


def test_an_arrays_tasks_are_counted_once_while_a_stale_range_line_lingers() -> None:
    """A 300-task array showed 179 completed and 284 pending (463) while it ran."""
    from shinobi_slurm.sacct import parse_line, without_stale_ranges
    from shinobi_slurm.states import combine_tasks

    start = "2026-01-01T00:00:00"
    lines = [f"8465_{i}|8465{i}|COMPLETED|0:0|{start}|{start}|None" for i in range(16, 195)]
    lines.append("8465_[16-299]|8465|PENDING|0:0|Unknown|Unknown|JobArrayTaskLimit")
    lines += [f"8465_{i}|8465{i}|COMPLETED|0:0|{start}|{start}|None" for i in range(16)]
    records = [r for r in map(parse_line, lines) if r is not None]
    outcome, tasks = combine_tasks(without_stale_ranges(records), 300)
    assert tasks == {"completed": 195, "pending": 105}
    assert outcome.phase == "running"


def test_a_slurm_tools_error_names_the_tool_once(tmp_path: Path) -> None:
    from shinobi_slurm.commands import SlurmCommands, SlurmError

    fake = tmp_path / "say"
    fake.write_text('#!/bin/sh\necho "$1: error: Batch job submission failed: nope" >&2\nexit 1\n')
    fake.chmod(0o755)
    with pytest.raises(SlurmError) as failed:
        SlurmCommands(prefix=(str(fake),)).run("sbatch", [])
    assert str(failed.value) == "sbatch failed: Batch job submission failed: nope"


def test_a_compiled_jobs_limit_is_named_from_the_status_query_itself() -> None:
    """`ninja status` said "more than its --mem": the value came only from an extra call."""
    from shinobi_slurm.sacct import parse_line
    from shinobi_slurm.states import classify

    start = "2026-01-01T00:00:00"
    oom = parse_line(f"12|12|OUT_OF_MEMORY|0:125|{start}|{start}|None|100M|00:05:00")
    late = parse_line(f"13|13|TIMEOUT|0:0|{start}|{start}|None|100M|00:01:00")
    assert oom is not None and late is not None
    assert "more than its 100M of memory" in (classify(oom).message or "")
    assert "time limit of 00:01:00" in (classify(late).message or "")
    old = parse_line(f"14|14|OUT_OF_MEMORY|0:125|{start}|{start}|None")  # seven fields
    assert old is not None and "its --mem" in (classify(old).message or "")
