"""``ninja status`` names what a launch's failed or cancelled job may have left half-written."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process as ninja
from pydantic import BaseModel
from test_launch_fixtures import FakeTarget, engine, launch
from test_offload_fixtures import plan_of, touch
from test_offload_jobs import body, scattered_job

from shinobi.launch.handle import LaunchHandle, LaunchJob, write_handle
from shinobi.launch.left_outputs import END_SLACK, with_left_outputs
from shinobi.launch.tracking import LaunchStatus, StepState, TaskEnd
from shinobi.offload.jobs import build_jobs
from shinobi.steps import Cab, File, OutputRef, ParamMeta, Recipe, StepRef

__all__ = ["engine"]  # the fixture, imported so pytest finds it

#: when the jobs of these tests were submitted and ended: around the files they
#: make now (a file's change time cannot be set back, and counts as a write)
SUBMITTED = time.time() - 3600
ENDED = SUBMITTED + 86400  # a day: however long the suite takes to get here


def _moment(when: float) -> str:
    """``when`` as sacct says a job's end."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(when))


def _launch(details: dict[str, Any], created: float = SUBMITTED) -> LaunchHandle:
    job = LaunchJob(step="image", job_id="7", details=details)
    return LaunchHandle(
        engine="fake", recipe="r", run_id="1", workdir="/", created=created, jobs=[job]
    )


def _written(path: Path) -> Path:
    path.write_text("part\n")
    return path


def _notes(handle: LaunchHandle, step: StepState) -> list[str]:
    return with_left_outputs(LaunchStatus(handle=handle, steps=[step])).notes


def _failed(**fields: Any) -> StepState:
    given: dict[str, Any] = {"started": "then", "finished": _moment(ENDED), **fields}
    return StepState("image", given.pop("phase", "failed"), "ran past its time limit", **given)


def test_a_failed_job_has_the_output_it_wrote_named_as_maybe_incomplete(tmp_path: Path) -> None:
    out = _written(tmp_path / "image.fits")
    notes = _notes(_launch({"writes": [str(out)]}), _failed())
    assert notes == [
        f"step 'image': it failed after writing {str(out)!r}, which is left as it is for you"
        " to look into: it may be incomplete, check it before anything uses it"
    ]


def test_a_cancelled_job_is_said_cancelled_and_an_input_it_rewrites_half_rewritten(
    tmp_path: Path,
) -> None:
    ms = _written(tmp_path / "obs.ms")
    (note,) = _notes(_launch({"rewrites": [str(ms)]}), _failed(phase="cancelled"))
    assert note.startswith(f"step 'image': it was cancelled after changing {str(ms)!r}, an input")
    assert "it may be half-rewritten" in note


@pytest.mark.parametrize(
    ("submitted", "started", "ended", "said"),  # seconds from when the file was written
    [
        (-3600, None, 3600, True),
        (30, None, 3600, False),  # an earlier launch's product, untouched since
        (-3600, 30, 3600, False),  # a job before it wrote it
        (-3600, None, -END_SLACK + 30, True),  # within the slack of its end
        (-3600, None, -END_SLACK - 60, False),  # written since the job ended
    ],
)
def test_only_what_was_stamped_while_the_job_may_have_run_is_named(
    tmp_path: Path, submitted: float, started: float | None, ended: float, said: bool
) -> None:
    out = _written(tmp_path / "image.fits")
    now = time.time()
    start = "Unknown" if started is None else _moment(now + started)
    step = _failed(started=start, finished=_moment(now + ended))
    assert bool(_notes(_launch({"writes": [str(out)]}, now + submitted), step)) is said


def test_a_directory_written_inside_counts_by_its_newest_entry(tmp_path: Path) -> None:
    """An MS is a directory whose own time may be older than the table it rewrote."""
    ms = tmp_path / "out.ms"
    (ms / "table").mkdir(parents=True)
    _written(ms / "table" / "table.f0")
    for older in (ms / "table", ms):
        os.utime(older, (SUBMITTED - 3600, SUBMITTED - 3600))
    (note,) = _notes(_launch({"writes": [str(ms)]}), _failed())
    assert f"after writing {str(ms)!r}" in note


@pytest.mark.parametrize(
    "step",
    [
        _failed(phase="completed"),
        _failed(phase="running"),
        _failed(phase="cancelled", started=None),  # cancelled before it started
        _failed(tasks={"failed": 1, "completed": 3}),  # an array: only by its tasks' paths
    ],
)
def test_a_job_that_completed_never_started_or_is_an_array_has_nothing_named(
    tmp_path: Path, step: StepState
) -> None:
    out = _written(tmp_path / "image.fits")
    assert _notes(_launch({"writes": [str(out)]}), step) == []


def _array(*ended: TaskEnd, phase: str = "failed") -> StepState:
    counts = {"completed": 4 - len(ended), **({"failed": len(ended)} if ended else {})}
    return _failed(phase=phase, tasks=counts, unfinished_tasks=ended)


def test_an_array_names_what_each_unfinished_task_wrote_and_no_completed_slice(
    tmp_path: Path,
) -> None:
    """A scatter over sub-bands compiled as one job array: the slice killed for
    memory while it wrote its image is named, those that completed are whole."""
    images = [_written(tmp_path / f"img-{k}.fits") for k in range(4)]
    slices = [{"writes": [str(image)]} for image in images]
    slices[1]["rewrites"] = [str(_written(tmp_path / "sb1.ms"))]
    ended = _moment(ENDED)
    step = _array(
        TaskEnd(1, "failed", "then", ended),
        TaskEnd(3, "cancelled", "then", ended),
    )
    notes = _notes(_launch({"slices": slices}), step)
    assert [note.split(":")[0] for note in notes] == [
        "step 'image[1]'",
        "step 'image[1]'",
        "step 'image[3]'",
    ]
    assert f"failed after writing {str(images[1])!r}" in notes[0]
    assert "it may be half-rewritten" in notes[1] and "sb1.ms" in notes[1]
    assert f"was cancelled after writing {str(images[3])!r}" in notes[2]


def test_an_array_task_is_judged_by_its_own_start_and_end(tmp_path: Path) -> None:
    image = _written(tmp_path / "img-0.fits")
    slices = [{"writes": [str(image)]}]
    after = _moment(time.time() + 3600)  # it started after the file was written
    before = _moment(time.time() - 3 * END_SLACK)  # it ended before the file was written
    for task in (TaskEnd(0, "failed", after, _moment(ENDED)), TaskEnd(0, "failed", None, before)):
        assert _notes(_launch({"slices": slices}), _array(task)) == []
    assert _notes(_launch({"slices": slices}), _array(TaskEnd(0, "failed", None, None)))


@pytest.mark.parametrize(
    "slices",
    [
        None,  # a handle written before arrays recorded their slices' paths
        "img.fits",  # a handle edited by hand
        [],  # fewer slices than tasks
        [None],
    ],
)
def test_an_array_without_usable_slices_has_nothing_named(slices: object) -> None:
    step = _array(TaskEnd(0, "failed", "then", _moment(ENDED)))
    assert _notes(_launch({"slices": slices}), step) == []


@pytest.mark.parametrize(
    "details",
    [
        {},  # a handle written before jobs recorded their paths
        {"writes": "image.fits"},  # a handle edited by hand
        {"writes": [None, 3, ""]},
        {"writes": ["/no/such/file"]},
    ],
)
def test_a_job_without_usable_paths_has_nothing_named(details: dict[str, Any]) -> None:
    assert _notes(_launch(details), _failed()) == []


def test_an_end_the_engine_words_otherwise_leaves_only_the_submission_as_bound(
    tmp_path: Path,
) -> None:
    out = _written(tmp_path / "image.fits")
    os.utime(out, (ENDED + 3600, ENDED + 3600))  # past its end as sacct said it, but unread
    assert _notes(_launch({"writes": [str(out)]}), _failed(finished="Unknown"))


def test_a_device_is_never_named(tmp_path: Path) -> None:
    assert _notes(_launch({"writes": [os.devnull]}), _failed()) == []


class _Src(BaseModel):
    src: File


class _Same(BaseModel):
    same: File | None = None


#: hands its input on as its output: it reads the file, a job before it made it
handing = Cab(
    name="hand",
    command="/bin/true",
    inputs_model=_Src,
    outputs_model=_Same,
    field_meta={
        "src": ParamMeta(positional=True, writable=False),
        "same": ParamMeta(implicit="{src}"),
    },
)


def test_a_job_records_its_outputs_and_the_inputs_it_rewrites_absolute() -> None:
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("cal", body, {"ms": Path("obs.ms"), "flag": Path("f")}),
            StepRef("use", touch, {"path": OutputRef("cal", "flag")}),
            StepRef("hand", handing, {"src": OutputRef("cal", "flag")}),
            StepRef("new", touch, {"path": Path("g")}),
        ],
    )
    cal, use, hand, new = build_jobs(plan_of(recipe, {}, "/w"), "/w", "run").jobs
    assert cal.left_paths("/w") == {"writes": ["/w/f"], "rewrites": ["/w/obs.ms"]}
    assert use.left_paths("/w") == {}  # the path it was handed: "cal" made it
    assert hand.left_paths("/w") == {}  # an input it only reads, named again
    assert new.left_paths("/w") == {"writes": ["/w/g"]}  # the path it was handed, new


def test_an_array_task_records_the_paths_of_its_own_slice() -> None:
    job = scattered_job(["a", "b"])
    assert [job.left_paths("/w", task) for task in (0, 1)] == [
        {"writes": ["/w/a"]},
        {"writes": ["/w/b"]},
    ]
    assert job.left_paths("/w") == {"writes": ["/w/a", "/w/b"]}  # the whole job's


def test_ninja_status_says_it_on_its_summary_line(
    engine: type[FakeTarget],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handle = launch(tmp_path, created=time.time() - 60)
    out_file = tmp_path / "made.fits"
    out_file.write_text("part\n")
    handle.jobs[0].details["writes"] = [str(out_file)]
    write_handle(handle)

    def answer(self: FakeTarget, handle: Any) -> LaunchStatus:
        steps = [StepState("make", "failed", "ran past its time limit (TIMEOUT)", started="x")]
        return LaunchStatus(handle=handle, steps=[*steps, StepState("use", "cancelled")])

    monkeypatch.setattr(FakeTarget, "_answer", answer)
    code, out, err = ninja(capsys, "status", "pipe")
    assert code == 1, err
    summary = out.splitlines()[-1]
    assert f"step 'make': it failed after writing {str(out_file)!r}" in summary
