"""A finished step's result keeps the end of what it printed; its logs keep it all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.backends.streams import MAX_CAPTURE, TAIL_CAPTURE
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe, Wrangler
from shinobi.steps.result import RESULT_TAIL, joined_tail, kept_tail

#: Prints "first rms: 0.5", then about 1.2 MB of lines.
CHATTY = 'echo "first rms: 0.5"; seq 1 180000'


class Rms(BaseModel):
    rms: float | None = None


def test_a_short_text_is_kept_whole_and_a_long_one_from_a_line_start() -> None:
    assert kept_tail("a\nb\n") == "a\nb\n"
    text = "".join(f"{i}\n" for i in range(100_000))
    kept = kept_tail(text)
    marker, _, rest = kept.partition("\n")
    assert len(rest) <= RESULT_TAIL and text.endswith(rest) and rest[0] != "\n"
    assert text[len(text) - len(rest) - 1] == "\n"  # cut after a newline: whole lines
    assert marker == f"[{len(text) - len(rest)} earlier characters are in the step's logs]"


def test_the_tail_of_many_slices_is_that_of_their_join() -> None:
    parts = [f"slice {i}\n" * 5_000 for i in range(20)]
    assert joined_tail(parts) == kept_tail("".join(parts))
    assert joined_tail(["a\n", "b\n"]) == "a\nb\n"


def test_a_step_result_keeps_the_tail_while_wranglers_and_logs_see_everything(
    tmp_path: Path,
) -> None:
    cab = Cab(
        "chatty",
        ["/bin/sh", "-c", CHATTY],
        outputs_model=Rms,
        wranglers=[Wrangler(r"first rms: ([\d.]+)", "output", output="rms")],
    )
    recipe = Recipe("r")
    recipe.add_step("talk", cab)
    result = run_recipe(recipe, cwd=tmp_path, workdir=tmp_path, use_cache=False)
    assert result.ok, result.error
    (step,) = result.steps
    assert step.outputs["rms"] == 0.5  # read from the first line, a megabyte before the end
    assert len(step.stdout) < RESULT_TAIL + 100 and step.stdout.endswith("180000\n")
    assert (
        step.stdout.startswith("[") and "earlier characters are in the step's logs]" in step.stdout
    )
    (log,) = (tmp_path / ".shinobi" / "runs").glob("*/logs/talk.out")
    assert log.read_text().startswith("first rms: 0.5\n1\n2\n")


def test_a_cancelled_step_that_may_still_run_keeps_the_backend_s_hint() -> None:
    """The run's last line pointed at the step's error for how to stop a Slurm job,
    and that error said only 'interrupted'."""
    from shinobi.backends.base import BackendRun, Invocation
    from shinobi.outcome import result_of_run

    hint = "interrupted, but Slurm never confirmed that job 7 was cancelled: `scancel 7`"
    invocation = Invocation(step="s", argv=("x",), cwd="/")
    left = BackendRun(returncode=-15, cancelled=True, reason=hint, details={"still_running": "7"})
    made = result_of_run("s", left, invocation, "slurm", 0.0, 1.0, outputs={}, error=None)
    assert made.status == "cancelled" and made.error == hint
    done = BackendRun(returncode=-15, cancelled=True, reason="stopped")
    made = result_of_run("s", done, invocation, "slurm", 0.0, 1.0, outputs={}, error=None)
    assert made.error == "interrupted"


def test_only_a_stream_a_wrangler_reads_is_captured_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each running step held 16 MiB a stream in ninja whatever read it: a stream
    no wrangler reads is kept as the tail its result and failure line need."""
    from shinobi.backends import native, process

    asked: list[tuple[int, int]] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append((kwargs["stdout_capture"], kwargs["stderr_capture"]))
        return process.run_process(*args, **kwargs)

    monkeypatch.setattr(native, "run_process", spy)
    on_stdout = Wrangler(r"first rms: ([\d.]+)", "output", output="rms", stream="stdout")
    wrangled = Cab("wrangled", ["/bin/sh", "-c", CHATTY], outputs_model=Rms, wranglers=[on_stdout])
    plain = Cab("plain", ["/bin/sh", "-c", CHATTY])
    for cab in (wrangled, plain):
        recipe = Recipe("r")
        recipe.add_step("talk", cab, backend="native")
        assert run_recipe(recipe, cwd=tmp_path, workdir=tmp_path, use_cache=False).ok
    assert asked == [(MAX_CAPTURE, TAIL_CAPTURE), (TAIL_CAPTURE, TAIL_CAPTURE)]
