"""``ninja compile --submit`` against the real one-node Slurm, then status/runs/logs/cancel/clean.

Every test runs the CLI as a user would, in its own directory (shared with
slurmd, being on this node) and with its own launches index.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, RECIPES, Ninja, ninja_argv
from launches import (
    queued,
    sacct_states,
    sacct_times,
    status,
    steps,
    submit,
    wait_dequeued,
    wait_final,
)

pytestmark = pytest.mark.usefixtures("slurm")


def test_offload_demo_runs_on_the_cluster(ninja: Ninja, tmp_path: Path) -> None:
    made = tmp_path / "made.ms"
    launch = submit(ninja, f"{EXAMPLES}/offload_demo.py:pipe", "--target", str(made))
    handle = tmp_path / ".shinobi" / "pipe" / "handle.json"
    assert launch["handle"] == str(handle) and handle.is_file()
    found = wait_final(ninja, str(handle))
    assert found["state"] == "completed", found["summary"]
    assert {name: s["phase"] for name, s in steps(found).items()} == {
        "make": "completed",
        "use": "completed",
    }
    assert made.exists()
    text = ninja("status", str(handle))
    assert text.returncode == 0 and "completed: 2 completed" in text.stdout
    runs = ninja("runs")
    assert launch["run_id"] in runs.stdout and "completed" in runs.stdout


def test_an_explained_submission_keeps_stdout_for_the_launch_json(
    ninja: Ninja, tmp_path: Path
) -> None:
    """``--submit --json --explain`` printed the explanation before the JSON on stdout."""
    made = tmp_path / "made.ms"
    target = f"{EXAMPLES}/offload_demo.py:pipe"
    launch = submit(ninja, target, "--target", str(made), "--explain", cwd=tmp_path)
    assert launch["run_id"] and Path(launch["handle"]).is_file()
    assert wait_final(ninja, launch["handle"], cwd=tmp_path)["state"] == "completed"


def test_in_place_rewrites_run_in_order_and_readers_together(ninja: Ninja, tmp_path: Path) -> None:
    ms = tmp_path / "obs.ms"
    launch = submit(ninja, f"{EXAMPLES}/inplace_ms.py:selfcal_ms", "--ms", str(ms))
    jobs = {job["step"]: job for job in launch["jobs"]}
    assert jobs["gaincal"]["after"] == ["flag"]
    assert jobs["applycal"]["after"] == ["gaincal"]
    assert jobs["image"]["after"] == ["applycal"] and jobs["inspect"]["after"] == ["applycal"]
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed", found["summary"]

    times = sacct_times([job["job_id"] for job in launch["jobs"]])
    start = {step: times[job["job_id"]][0] for step, job in jobs.items()}
    end = {step: times[job["job_id"]][1] for step, job in jobs.items()}
    assert start["gaincal"] >= end["flag"] and start["applycal"] >= end["gaincal"]
    assert start["image"] >= end["applycal"] and start["inspect"] >= end["applycal"]
    assert start["image"] <= end["inspect"] and start["inspect"] <= end["image"]

    history = [line.split() for line in (ms / "HISTORY").read_text().splitlines()]
    assert [(step, event) for step, event, _ in history] == [
        ("flag", "start"),
        ("flag", "end"),
        ("gaincal", "start"),
        ("gaincal", "end"),
        ("applycal", "start"),
        ("applycal", "end"),
    ]
    reports = {}
    for name in ("image", "inspect"):
        lines = (tmp_path / f"{name}-report.txt").read_text().splitlines()
        reports[name] = (float(lines[0].split()[2]), float(lines[-1].split()[2]))
        assert "applycal end" in " ".join(lines), "a reader saw the MS before applycal finished"
    (image_start, image_end), (inspect_start, inspect_end) = reports["image"], reports["inspect"]
    assert image_start < inspect_end and inspect_start < image_end, "the readers did not overlap"


def test_a_loop_stops_working_once_converged(ninja: Ninja, tmp_path: Path) -> None:
    ms, flag = tmp_path / "obs.ms", tmp_path / "converged"
    launch = submit(ninja, f"{RECIPES}/loops.py:selfcal", "--ms", str(ms), "--flag", str(flag))
    assert len(launch["jobs"]) == 15
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed", found["summary"]
    phases = {name: s["phase"] for name, s in steps(found).items()}
    for name, phase in phases.items():
        iteration = int(name.split(".")[1])
        assert phase == ("completed" if iteration <= 3 else "skipped"), (name, phase)
        if phase == "skipped":
            assert steps(found)[name]["engine_state"] == "COMPLETED"
    assert (ms / "HISTORY").read_text().count("calibrate") == 3
    shown = ninja("status", launch["handle"]).stdout
    assert "9 completed, 6 skipped" in shown and "the loop had converged" in shown


def test_a_loop_that_never_converges_is_said_so(ninja: Ninja, tmp_path: Path) -> None:
    ms, flag = tmp_path / "obs.ms", tmp_path / "converged"
    launch = submit(ninja, f"{RECIPES}/loops.py:short", "--ms", str(ms), "--flag", str(flag))
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed" and found["exit"] == 0, found["summary"]
    assert found["summary"].endswith("; loop 'cal' did not converge")
    details = {name: s["detail"] for name, s in steps(found).items() if s["detail"]}
    assert details == {
        "cal.2.assess": f"loop 'cal' ran all 2 iterations without converging (its until file"
        f" {str(flag)!r} was not written); its outputs are the last iteration's"
    }
    flag.touch()  # the same launch, had it converged: nothing to say
    again = status(ninja, launch["handle"])
    assert again["summary"] == "completed: 6 completed"


LAZY = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    out: File

class Out(BaseModel):
    out: File

lazy_cab = Cab("lazy", ["/bin/sh", "-c", "echo working", "sh"], In, Out)
lazy = Recipe("lazy", In, Out)
lazy.add_step("lazy", lazy_cab, out=lazy.inputs.out)
lazy.set_output("out", lazy.outputs.lazy.out)
"""


def test_a_job_whose_tool_made_no_output_is_not_said_to_exit_1(
    ninja: Ninja, tmp_path: Path
) -> None:
    """The job script's own output check fails the job with 1; it read as the
    tool's "exited with code 1", while the tool had exited 0."""
    (tmp_path / "lazy.py").write_text(LAZY)
    launch = submit(ninja, f"{tmp_path}/lazy.py:lazy", "--out", str(tmp_path / "never.txt"))
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "failed"
    assert steps(found)["lazy"]["detail"] == (
        f'the tool exited 0, but output "out": the tool did not create {tmp_path}/never.txt'
    )


def test_a_loop_whose_until_file_was_there_before_is_not_taken_as_converged(
    ninja: Ninja, tmp_path: Path
) -> None:
    """A flag left by an earlier run made the status call a loop that never
    converged a plain success; `ninja run` warned, as the job scripts skip nothing."""
    ms, flag = tmp_path / "obs.ms", tmp_path / "converged"
    flag.write_text("from yesterday\n")
    launch = submit(ninja, f"{RECIPES}/loops.py:short", "--ms", str(ms), "--flag", str(flag))
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed" and found["exit"] == 0, found["summary"]
    assert found["summary"].endswith("; loop 'cal' did not converge")
    flag.write_text("written now\n")  # as the loop would have, converging
    assert status(ninja, launch["handle"])["summary"] == "completed: 6 completed"


def test_the_selfcal_example_converges_at_cycle_3_on_the_cluster(
    ninja: Ninja, tmp_path: Path
) -> None:
    launch = submit(ninja, f"{EXAMPLES}/selfcal_loop.py:selfcal")
    found = wait_final(ninja, launch["handle"], timeout=600)
    assert found["state"] == "completed", found["summary"]
    for step in found["steps"]:
        parts = step["step"].split(".")
        cycle = int(parts[1]) if len(parts) == 3 else 0
        assert step["phase"] == ("skipped" if cycle > 3 else "completed"), step
    log = (tmp_path / "selfcal.log").read_text()
    assert log.count("calibrate cycle=") == 3 and "converged=yes" in log
    assert (tmp_path / "final-image.fits").exists()


def test_the_scatter_example_runs_as_job_arrays(ninja: Ninja, tmp_path: Path) -> None:
    launch = submit(ninja, f"{EXAMPLES}/scatter_demo.py:fields")
    tasks = {job["step"]: job.get("tasks") for job in launch["jobs"]}
    assert tasks == {"observe": 4, "image": 4, "mosaic": None}
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed", found["summary"]
    assert steps(found)["image"]["tasks"] == {"completed": 4}
    mosaic = json.loads((tmp_path / "mosaic.json").read_text())
    assert len(mosaic["images"]) == 4 and mosaic["overlapped"] is True


def test_a_scatter_is_one_job_array_and_its_outputs_are_gathered(
    ninja: Ninja, tmp_path: Path
) -> None:
    for name in "abc":
        (tmp_path / name).write_text(name)
    launch = submit(
        ninja,
        f"{RECIPES}/scatter.py:fan",
        "--sources",
        "a",
        "--sources",
        "b",
        "--sources",
        "c",
        "--total",
        "total.txt",
        cwd=tmp_path,
    )
    convert = next(job for job in launch["jobs"] if job["step"] == "convert")
    assert convert["tasks"] == 3
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed", found["summary"]
    assert steps(found)["convert"]["tasks"] == {"completed": 3}
    assert (tmp_path / "total.txt").read_text().splitlines() == [
        "converted a as task 0",
        "converted b as task 1",
        "converted c as task 2",
    ]
    # ninja may have read the tasks' end from the controller's queue; accounting
    # lists a finished array as one line (``ID|COMPLETED``) until slurmdbd has
    # heard of each task, which takes longer while the controller is busy (the
    # suite's other jobs): minutes, in a CI run on two cores
    expected = [f"{convert['job_id']}_{i}|COMPLETED" for i in range(3)]
    deadline = time.monotonic() + 180
    while (tasks := _accounted(convert["job_id"])) != expected and time.monotonic() < deadline:
        time.sleep(1)
    assert tasks == expected


def _accounted(job_id: str) -> list[str]:
    """``ID|STATE`` of the job, or of each of its tasks, as accounting lists them."""
    listed = subprocess.run(
        ["sacct", "-X", "-P", "-n", "-j", job_id, "-o", "JobID,State"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(listed.split())


def test_a_scatter_wider_than_a_job_array_is_refused_before_submitting(
    ninja: Ninja, tmp_path: Path
) -> None:
    limit = int(
        next(
            line.split("=")[1]
            for line in subprocess.run(
                ["scontrol", "show", "config"], capture_output=True, text=True, check=True
            ).stdout.splitlines()
            if line.startswith("MaxArraySize")
        )
    )
    sources = [arg for i in range(limit + 1) for arg in ("--sources", f"s{i}")]
    done = ninja(
        "compile", f"{RECIPES}/scatter.py:fan", *sources, "--total", "t", "--submit", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"step 'convert' scatters over {limit + 1} slices" in done.stderr
    assert f"MaxArraySize = {limit}" in done.stderr and "nothing was submitted" in done.stderr
    handle = tmp_path / ".shinobi" / "fan" / "handle.json"
    jobs = json.loads(handle.read_text())["jobs"] if handle.exists() else []
    assert not [job for job in jobs if job.get("job_id")]


def test_exit_codes_above_127_are_reported_exactly(ninja: Ninja, tmp_path: Path) -> None:
    """Slurm's accounting keeps them modulo 128: 200 would read 72, 255 would read 127.
    Of an array's failed tasks the lowest-numbered is named: naming the last one
    listed ("task 2: exited with code 3") hid task 1's 255."""
    launch = submit(ninja, f"{RECIPES}/exits.py:loud", cwd=tmp_path)
    found = wait_final(ninja, launch["handle"], cwd=tmp_path)
    assert found["state"] == "failed"
    step = steps(found)["ends"]
    assert step["detail"] == "exited with code 200: ending with 200", step
    codes = ["--codes", "0", "--codes", "255", "--codes", "3"]
    launch = submit(ninja, f"{RECIPES}/exits.py:fan", *codes, cwd=tmp_path)
    found = wait_final(ninja, launch["handle"], cwd=tmp_path)
    step = steps(found)["ends"]
    assert step["phase"] == "failed" and step["tasks"] == {"completed": 1, "failed": 2}
    assert step["detail"].startswith("task 1: exited with code 255"), step


def test_a_failing_step_cancels_its_dependants_and_is_named(ninja: Ninja, tmp_path: Path) -> None:
    launch = submit(ninja, f"{RECIPES}/failing.py:chain", "--marker", str(tmp_path / "m"))
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "failed" and found["exit"] == 1
    by_step = steps(found)
    assert by_step["first"]["phase"] == "completed"
    assert by_step["boom"]["phase"] == "failed" and by_step["boom"]["exit_code"] == "3:0"
    assert by_step["boom"]["detail"] == "exited with code 3: boom: the calibration diverged"
    assert by_step["second"]["phase"] == "cancelled"
    assert by_step["second"]["detail"] == "never ran: boom did not succeed"
    assert by_step["third"]["phase"] == "cancelled"
    assert "step 'boom' failed: exited with code 3" in found["summary"]
    assert queued([job["job_id"] for job in launch["jobs"]]) == []


def test_a_step_over_its_memory_is_out_of_memory(ninja: Ninja) -> None:
    launch = submit(ninja, f"{RECIPES}/failing.py:hog")
    found = wait_final(ninja, launch["handle"])
    hog = steps(found)["hog"]
    assert hog["phase"] == "failed" and hog["engine_state"] == "OUT_OF_MEMORY"
    assert "out of memory" in hog["detail"]
    assert "OUT_OF_MEMORY" in ninja("status", launch["handle"]).stdout


def _slow_sbatch(tmp_path: Path) -> dict[str, str]:
    """PATH with an sbatch that takes a second per job: a submitter that can be caught mid-way."""
    bin_dir = tmp_path / "slow-bin"
    bin_dir.mkdir()
    real = subprocess.run(["sh", "-c", "command -v sbatch"], capture_output=True, text=True).stdout
    script = bin_dir / "sbatch"
    script.write_text(f'#!/bin/sh\nsleep 1\nexec {real.strip()} "$@"\n')
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _submitter_midway(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], Path]:
    """A ``compile --submit`` of the failing chain, caught once its first job is on
    record (sbatch slowed to a second a job); returns it and its journal."""
    target = f"{RECIPES}/failing.py:chain"
    argv = [*ninja_argv(), "compile", target, "--marker", str(tmp_path / "m"), "--submit"]
    submitter = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env={**env, **_slow_sbatch(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    journal = list((tmp_path / ".shinobi" / "chain").glob("*/submitted.jsonl"))
    deadline = time.monotonic() + 120
    while not (journal and journal[0].read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
        journal = list((tmp_path / ".shinobi" / "chain").glob("*/submitted.jsonl"))
    assert journal, "the submitter never recorded a job"
    return submitter, journal[0]


def test_killing_the_submitter_leaves_the_jobs_running(
    ninja: Ninja, tmp_path: Path, env: dict[str, str]
) -> None:
    submitter, journal_path = _submitter_midway(tmp_path, env)
    journal = [journal_path]
    submitter.send_signal(signal.SIGKILL)
    submitter.communicate()
    handle = journal[0].parent / "handle.json"
    first = json.loads(journal[0].read_text().splitlines()[0])
    found = wait_final(ninja, str(handle))
    by_step = steps(found)
    assert by_step["first"]["phase"] == "completed", "the submitted job did not go on"
    assert by_step["first"]["job_id"] == first["job_id"]
    never = [s for s in found["steps"] if s["job_id"] is None]
    assert never and all(s["detail"].startswith("never submitted") for s in never)
    shown = ninja("status", str(handle))
    assert "the submitter stopped before it finished submitting" in shown.stdout
    assert ninja("runs").stdout.count(found["run_id"]) == 1


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_submitter_stopped_by_a_signal_exits_with_that_signal_s_code(
    ninja: Ninja, tmp_path: Path, env: dict[str, str], signum: int, code: int
) -> None:
    submitter, journal = _submitter_midway(tmp_path, env)
    submitter.send_signal(signum)
    _, err = submitter.communicate(timeout=120)
    try:
        assert submitter.returncode == code, err
        assert "interrupted while submitting" in err
    finally:
        ninja("cancel", str(journal.parent / "handle.json"))


def test_submitting_again_while_the_last_launch_runs_is_warned_about(
    ninja: Ninja, tmp_path: Path
) -> None:
    first = submit(ninja, f"{RECIPES}/sleepy.py:sleepy", "--marker", str(tmp_path / "one"))
    second = None
    try:
        deadline = time.monotonic() + 300
        while status(ninja, first["run_id"])["state"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.5)
        again = ninja("compile", f"{RECIPES}/sleepy.py:sleepy", "--marker", "two", "--submit")
        assert again.returncode == 0, again.stderr
        second = again.stdout.split(" as run ")[1].split(":")[0]
        assert f"launch {first['run_id']} of sleepy still runs from this workspace" in again.stderr
        assert f"ninja cancel {first['run_id']}" in again.stderr
    finally:
        for run_id in (first["run_id"], second):
            if run_id:
                ninja("cancel", run_id)


def test_cancel_then_clean(ninja: Ninja, tmp_path: Path) -> None:
    launch = submit(ninja, f"{RECIPES}/sleepy.py:sleepy", "--marker", str(tmp_path / "started"))
    deadline = time.monotonic() + 300
    while status(ninja, launch["run_id"])["state"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    kept = ninja("clean", "--launches")
    assert kept.returncode == 1
    assert "it is running" in kept.stderr
    assert "--force" in kept.stderr and "ninja cancel" in kept.stderr
    assert Path(launch["handle"]).exists()

    cancelled = ninja("cancel", "sleepy")
    assert cancelled.returncode == 0, cancelled.stderr
    assert "scancel" in cancelled.stdout
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "cancelled"
    assert wait_dequeued([job["job_id"] for job in launch["jobs"]]) == []

    cleaned = ninja("clean", "--launches")
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"removed sleepy/{launch['run_id']}" in cleaned.stdout
    assert not Path(launch["handle"]).exists()
    assert not (tmp_path / ".shinobi" / "sleepy").exists()
    assert "no detached launches" in ninja("runs").stdout


CHAIN = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    src: File | None = None
    out: Path

class Out(BaseModel):
    out: File

# runs until the test says "go" (at most 5 minutes): still running when it is cleaned
slow = Cab("slow", ["sh", "-c", 'for i in $(seq 1500); do [ -e go ] && break; sleep 0.2; done;'
           ' echo one > "$0"'], In, Out,
           {"out": ParamMeta(positional=True), "src": ParamMeta(skip=True)})
copy = Cab("copy", ["sh", "-c", 'cat "$0" > "$1"'], In, Out,
           {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)})
chain = Recipe("chain")
chain.add_step("slow", slow, out="a.txt")
chain.add_step("copy", copy, src=chain.outputs.slow.out, out="b.txt")
"""


def test_clean_force_removes_only_the_record_of_a_running_launch(
    ninja: Ninja, tmp_path: Path
) -> None:
    """The forced clean deleted the launch's folder: a job queued behind the running
    one then failed ("could not open its --output file"), though the command said
    its jobs go on."""
    (tmp_path / "chain.py").write_text(CHAIN)
    launch = submit(ninja, f"{tmp_path}/chain.py:chain")
    ids = [j["job_id"] for j in launch["jobs"]]
    try:
        forced = ninja("clean", "--launches", "--force")
        assert forced.returncode == 0, forced.stderr
        assert "its jobs go on" in forced.stderr and "is kept" in forced.stderr
        assert not Path(launch["handle"]).exists()
        assert "no detached launches" in ninja("runs").stdout
        (tmp_path / "go").touch()
        assert wait_dequeued(ids, timeout=120) == []
        states = sacct_states(ids)
        assert states == ["COMPLETED", "COMPLETED"], states
        assert (tmp_path / "b.txt").read_text() == "one\n"
    finally:
        subprocess.run(["scancel", *ids], check=False)


def test_logs_show_and_follow_a_launch(ninja: Ninja, tmp_path: Path) -> None:
    launch = submit(ninja, f"{RECIPES}/failing.py:chain", "--marker", str(tmp_path / "m"))
    followed = ninja("logs", launch["run_id"], "--follow", "--interval", "0.5", timeout=400)
    assert followed.returncode == 0, followed.stderr
    assert "[boom stderr] boom: the calibration diverged" in followed.stdout
    one = ninja("logs", "chain", "boom", "--stream", "stderr")
    assert one.stdout.strip() == "boom: the calibration diverged"
    wrong = ninja("logs", "chain", "bom")
    assert wrong.returncode == 2 and "did you mean 'boom'" in wrong.stderr


def test_a_failing_array_task_is_named_with_what_it_said(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a")
    launch = submit(
        ninja,
        f"{RECIPES}/scatter.py:fan",
        "--sources",
        "a",
        "--sources",
        "nowhere/b",
        "--total",
        "total.txt",
    )
    found = wait_final(ninja, launch["handle"])
    by_step = steps(found)
    convert = by_step["convert"]
    assert convert["phase"] == "failed" and convert["tasks"] == {"completed": 1, "failed": 1}
    assert convert["detail"].startswith("task 1: exited with code 2: ")
    assert "nowhere/b.out" in convert["detail"]
    assert by_step["combine"]["phase"] == "cancelled"
    assert by_step["combine"]["detail"] == "never ran: convert did not succeed"


def _refusing(tmp_path: Path, *tools: str) -> str:
    """A PATH on which ``tools`` fail as they do when Slurm's daemons are away."""
    bin_dir = tmp_path / "down"
    bin_dir.mkdir(exist_ok=True)
    for tool in tools:
        stand_in = bin_dir / tool
        stand_in.write_text(
            f"#!/bin/sh\necho '{tool}: error: Problem talking to the database:"
            " Connection refused' >&2\nexit 1\n"
        )
        stand_in.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def test_cancel_while_slurm_cannot_be_asked_does_not_claim_jobs_it_could_not_see(
    ninja: Ninja, tmp_path: Path
) -> None:
    """With sacct and squeue failing, every job is "unknown" and scancel says nothing of
    ended ones: "cancelled 2 Slurm job(s)" was said of a launch that had long completed."""
    launch = submit(ninja, f"{EXAMPLES}/offload_demo.py:pipe", "--target", "m.ms")
    assert wait_final(ninja, launch["handle"])["state"] == "completed"
    done = ninja("cancel", "pipe", PATH=_refusing(tmp_path, "sacct", "squeue"))
    assert done.returncode == 0, done.stderr
    assert "cancelled" not in done.stdout
    assert "asked scancel to cancel 2 Slurm job(s)" in done.stdout
    assert "the state of 2 of them was unknown" in done.stdout


def test_status_while_accounting_is_down_asks_the_controller_s_queue(
    ninja: Ninja, tmp_path: Path
) -> None:
    """With sacct failing, status called every step unknown and exited 74, though
    squeue would have said the jobs were running; cancel said their state was unknown."""
    launch = submit(ninja, f"{EXAMPLES}/offload_demo.py:pipe", "--target", "m.ms")
    assert wait_final(ninja, launch["handle"])["state"] == "completed"  # in the queue a while
    path = _refusing(tmp_path, "sacct")
    shown = ninja("status", "pipe", "--json", PATH=path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    found = json.loads(shown.stdout)
    assert found["state"] == "completed"
    assert "could not ask Slurm's accounting" in found["summary"], found
    done = ninja("cancel", "pipe", PATH=path)
    assert done.returncode == 0 and "nothing to cancel" in done.stdout, done.stdout


def test_cancel_of_jobs_slurm_has_no_record_of_says_so(ninja: Ninja, tmp_path: Path) -> None:
    """Accounting answered, and knew none of them: cancel said it "did not answer"."""
    launch = submit(ninja, f"{EXAMPLES}/offload_demo.py:pipe", "--target", "m.ms")
    assert wait_final(ninja, launch["handle"])["state"] == "completed"
    handle = Path(launch["handle"])
    data = json.loads(handle.read_text())
    for number, job in enumerate(data["jobs"]):  # ids no Slurm here ever gave
        job["job_id"] = str(99999990 + number)
    data["created"] = time.time()
    handle.write_text(json.dumps(data))
    done = ninja("cancel", str(handle))
    assert done.returncode == 0, done.stderr
    assert "Slurm has no record of 2 of them" in done.stdout, done.stdout
    assert "did not answer" not in done.stdout


def test_a_run_and_a_launch_of_one_workspace_are_warned_of_each_other(
    ninja: Ninja, tmp_path: Path, env: dict[str, str]
) -> None:
    """`ninja compile --submit` and `ninja run` of one recipe in one workspace both
    wrote the same file, and neither said a word (the run cached the mixture)."""
    sleepy = f"{RECIPES}/sleepy.py:sleepy"
    launched = submit(ninja, sleepy, "--marker", str(tmp_path / "one"))["run_id"]
    try:
        ran = ninja("run", sleepy, "--marker", "two", "--seconds", "0")
        assert ran.returncode == 0, ran.stderr
        assert f"launch sleepy/{launched} (slurm) of this workspace is still running" in (
            ran.stderr
        )
        assert f"`ninja cancel {launched}` stops it" in ran.stderr
    finally:
        ninja("cancel", launched)
    wait_final(ninja, launched)
    quiet = ninja("run", sleepy, "--marker", "two", "--seconds", "0")
    assert quiet.returncode == 0 and "still running" not in quiet.stderr, quiet.stderr
    assert (tmp_path / ".shinobi" / "sleepy" / launched / "ended").is_file()

    going = subprocess.Popen(
        [*ninja_argv(), "run", sleepy, "--marker", "three", "--no-cache"],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    second = None
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "three").exists():
            assert going.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        again = ninja("compile", sleepy, "--marker", "four", "--seconds", "0", "--submit")
        assert again.returncode == 0, again.stderr
        second = again.stdout.split(" as run ")[1].split(":")[0]
        assert "ninja: warning: another run is going in this workdir:" in again.stderr
        assert f"(pid {going.pid})" in again.stderr
    finally:
        going.terminate()  # ninja tears its step down
        going.wait(timeout=60)
        if second:
            ninja("cancel", second)
