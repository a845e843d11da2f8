"""``ninja run --backend slurm`` against the real cluster: interrupts, sharing, outages, limits."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, RECIPES, Ninja, ninja_argv
from launches import sacct_states, wait_dequeued

pytestmark = pytest.mark.usefixtures("slurm")

SACCT = subprocess.run(
    ["sh", "-c", "command -v sacct"], capture_output=True, text=True
).stdout.strip()


def wrapped_sacct(tmp_path: Path, fail_first: int = 0) -> tuple[dict[str, str], Path]:
    """A PATH whose sacct logs every call (and fails the first ``fail_first`` ones like a
    slurmdbd that is away), then runs the real one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "sacct-calls.log"
    script = bin_dir / "sacct"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {log}\n'
        f"n=$(wc -l < {log})\n"
        f'if [ "$n" -le {fail_first} ]; then\n'
        '  echo "sacct: error: Problem talking to the database: Connection refused" >&2\n'
        "  exit 1\n"
        "fi\n"
        f'exec {SACCT} "$@"\n'
    )
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def job_ids_of(call: str) -> set[str]:
    words = call.split()
    return set(words[words.index("-j") + 1].split(","))


def started_sleepy(
    tmp_path: Path, env: dict[str, str], recipe: str = "sleepy", *args: str
) -> tuple[subprocess.Popen[str], str]:
    """A ``ninja run --backend slurm`` of one long step, and its job once it runs."""
    marker = tmp_path / "started"
    run = subprocess.Popen(
        [
            *ninja_argv(),
            "run",
            f"{RECIPES}/sleepy.py:{recipe}",
            "--marker",
            str(marker),
            *args,
            "--backend",
            "slurm",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.1)
    mine = subprocess.run(
        ["squeue", "-h", "-o", "%i|%Z"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    jobs = [line.split("|")[0] for line in mine if line.split("|")[1] == str(tmp_path)]
    assert len(jobs) == 1, mine
    return run, jobs[0]


def interrupted(run: subprocess.Popen[str], job: str) -> str:
    """SIGINT to ``run``; its stderr once it has ended, well inside CANCEL_WAIT (a
    minute): a stop that forgot its scancel still ended the job, by the wait's own
    re-cancel a minute later, having said it was cancelled. Nothing is left behind,
    whatever the test finds."""
    run.send_signal(signal.SIGINT)
    try:
        _, stderr = run.communicate(timeout=30)
    finally:
        run.kill()
        subprocess.run(["scancel", job], check=False)
    return stderr


def test_sigint_cancels_the_job_and_leaves_nothing_queued(
    tmp_path: Path, env: dict[str, str]
) -> None:
    run, job = started_sleepy(tmp_path, env)
    jobs = [job]
    stderr = interrupted(run, job)
    assert run.returncode == 130, stderr
    assert f"cancelled Slurm job {jobs[0]}" in stderr and "scancel" in stderr
    assert "jobs on a cluster are cancelled through its scheduler" in stderr
    assert wait_dequeued(jobs) == []
    assert sacct_states(jobs) == ["CANCELLED"]


def test_a_job_stopped_while_writing_its_product_has_the_part_said_unfinished(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The job wrote part of a product on the cluster's shared disk and was
    cancelled: the part kept the product's name, and the run said nothing of it."""
    out = tmp_path / "image.fits"
    run, job = started_sleepy(tmp_path, env, "half", "--out", str(out))
    stderr = interrupted(run, job)
    assert run.returncode == 130, stderr
    assert f"was stopped after writing {str(out)!r}" in " ".join(stderr.split()), stderr
    assert out.read_text() == "part\n"  # warned of, not moved: see shinobi.dispatch


def test_ctrl_c_during_an_accounting_outage_asks_the_controller_not_accounting(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """slurmdbd away, slurmctld up: the cancelled job's end never reaches sacct, and
    ninja sat out CANCEL_WAIT (a minute) for it before asking squeue."""
    extra, _ = wrapped_sacct(tmp_path, fail_first=10**6)
    run, job = started_sleepy(tmp_path, {**env, **extra})
    stderr = interrupted(run, job)
    assert run.returncode == 130, stderr
    assert f"cancelled Slurm job {job}" in stderr
    assert "never confirmed" not in stderr  # the controller did confirm it
    assert wait_dequeued([job]) == []


def test_a_killed_ninja_leaves_its_running_jobs_named_in_the_run_folder(
    tmp_path: Path, env: dict[str, str], ninja: Ninja
) -> None:
    """SIGKILL gives ninja no chance to cancel or record anything: the ledger,
    written at submission, is what still names the job that goes on running,
    and ``ninja clean --runs`` keeps it however long the job stays quiet (asking
    Slurm whether it still runs)."""
    run, job = started_sleepy(tmp_path, env)
    run.kill()
    run.communicate(timeout=30)
    try:
        (ledger,) = (tmp_path / ".shinobi" / "runs").glob("*/slurm/jobs.tsv")
        assert ledger.read_text() == f"{job}\tsleep\n"
        queued = subprocess.run(
            ["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True, check=True
        ).stdout.split()
        assert queued == ["RUNNING"]  # still running: nobody cancelled it
        folder = ledger.parent.parent
        quiet = time.time() - 7200  # two hours without a word from the job
        for path in (folder, folder / "logs"):
            if path.exists():
                os.utime(path, (quiet, quiet))
        cleaned = ninja("clean", "--runs")
        assert cleaned.returncode == 0, cleaned.stderr
        assert ledger.exists(), "clean removed the only list of a job still running"
        said = f"slurm job {job} (listed in slurm/jobs.tsv there) still run (queued or running)"
        assert said in cleaned.stderr
    finally:
        subprocess.run(["scancel", job], check=False)
    assert wait_dequeued([job]) == []


def test_concurrent_steps_share_one_sacct_call_per_round(ninja: Ninja, tmp_path: Path) -> None:
    extra, log = wrapped_sacct(tmp_path)
    # jobs long enough to outlast four submissions to a controller slow to answer
    done = ninja(
        "run", f"{RECIPES}/sleepy.py:parallel", "--seconds", "12", "--backend", "slurm", **extra
    )
    assert done.returncode == 0, done.stderr
    calls = [job_ids_of(line) for line in log.read_text().splitlines()]
    every = set().union(*calls)
    assert len(every) == 4
    assert every in calls, "no round asked about all four running jobs at once"
    # One call a round about every job watched: the set asked grows as jobs are
    # submitted and shrinks as they end; a call per job would jump between them.
    first = calls.index(every)
    assert all(a <= b for a, b in itertools.pairwise(calls[: first + 1])), calls
    assert all(b <= a for a, b in itertools.pairwise(calls[first:])), calls


def test_a_brief_accounting_outage_does_not_fail_the_run(ninja: Ninja, tmp_path: Path) -> None:
    extra, log = wrapped_sacct(tmp_path, fail_first=3)
    made = tmp_path / "made.ms"
    done = ninja(
        "run",
        f"{EXAMPLES}/offload_demo.py:pipe",
        "--target",
        str(made),
        "--backend",
        "slurm",
        **extra,
    )
    assert done.returncode == 0, done.stderr
    assert made.exists()
    assert "cannot ask Slurm about its jobs" in done.stderr and "keep running" in done.stderr
    assert "answers again" in done.stderr
    assert len(log.read_text().splitlines()) > 3


def test_an_outage_past_its_limit_fails_the_step_and_cancels_its_job(
    ninja: Ninja, tmp_path: Path
) -> None:
    """Accounting (slurmdbd) never answers: the wait ends, and the job it can no
    longer follow is cancelled through slurmctld rather than left to run unseen."""
    extra, _ = wrapped_sacct(tmp_path, fail_first=10**6)
    done = ninja(
        "run",
        f"{RECIPES}/sleepy.py:sleepy",
        "--marker",
        str(tmp_path / "started"),
        "--backend",
        "slurm",
        SHINOBI_BACKEND_SLURM_OUTAGE_LIMIT="3",
        **extra,
    )
    assert done.returncode == 1, done.stderr
    (ledger,) = (tmp_path / ".shinobi" / "runs").glob("*/slurm/jobs.tsv")
    job = ledger.read_text().split()[0]
    assert f"cancelled this step's Slurm job {job}, so it does not run on unseen" in done.stderr
    assert "check that slurmdbd runs (`sacctmgr show cluster` answers)" in done.stderr
    assert wait_dequeued([job]) == []


def test_a_failing_step_reports_its_exit_code_and_words(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja(
        "run", f"{RECIPES}/failing.py:chain", "--marker", str(tmp_path / "m"), "--backend", "slurm"
    )
    assert done.returncode == 1
    assert "step 'boom' failed: exited with code 3: boom: the calibration diverged" in done.stderr
    assert "FAILED" in done.stderr and "Traceback" not in done.stderr


def test_a_step_over_its_memory_is_reported_out_of_memory(ninja: Ninja) -> None:
    done = ninja("run", f"{RECIPES}/failing.py:hog", "--backend", "slurm")
    assert done.returncode == 1
    assert "out of memory" in done.stderr and "OUT_OF_MEMORY" in done.stderr


def test_declared_cpus_reach_the_job_and_configured_options_win(
    ninja: Ninja, tmp_path: Path
) -> None:
    """2.5 CPUs are 3 (``--cpus-per-task`` takes whole ones): cut to 2, a step got
    less than it declared, its threads sharing fewer CPUs, and nothing said so."""
    report = tmp_path / "report.txt"
    target = f"{RECIPES}/resources.py:fractional_cpus"
    done = ninja("run", target, "--report", str(report), "--backend", "slurm")
    assert done.returncode == 0, done.stderr
    assert report.read_text().strip() == "cpus=3"
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\nsbatch_opts = ["--cpus-per-task=2"]\n')
    done = ninja("run", target, "--report", str(report), "--backend", "slurm", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert report.read_text().strip() == "cpus=2"


RETRIED = """
from pydantic import BaseModel
import shinobi
from shinobi.steps import Cab, ParamMeta, Recipe

class ShIn(BaseModel):
    script: str

class Said(BaseModel):
    said: str | None = None

sh = Cab("sh", ["/bin/sh", "-c"], ShIn, Said, {"script": ParamMeta(positional=True)},
         wranglers=[shinobi.Wrangler(r"^said (.*)$", "output", output="said")])

@shinobi.step(sh)
def retried(ctx):
    first = ctx.run(script="echo said first; echo first err >&2; exit 3")
    assert not first.ok
    second = ctx.run(script="echo second run")
    # the second job's result is its own output, not the log the first one began
    assert second.outputs.get("said") is None, second.outputs
    return second

pipe = Recipe("pipe")
pipe.add_step("retried", retried, script="echo unused")
"""


def test_a_retried_step_keeps_every_attempt_in_its_logs_and_reads_only_its_own(
    ninja: Ninja, tmp_path: Path
) -> None:
    """Each job's --output truncated the log: the failed attempt's words were lost."""
    (tmp_path / "retry.py").write_text(RETRIED)
    done = ninja("run", "retry.py:pipe", "--backend", "slurm", "--no-cache", "--json")
    assert done.returncode == 0, done.stderr
    import json

    result = json.loads(done.stdout)
    assert [s["status"] for s in result["steps"]] == ["ok"]
    logs = ninja("logs", result["run_id"], "retried")
    assert logs.stdout == (
        "==> retried stdout <==\nsaid first\nsecond run\n==> retried stderr <==\nfirst err\n"
    ), logs.stdout


KILLED = """
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

killed_cab = Cab("killed", ["/bin/sh", "-c", "kill -KILL $$"])
killed = Recipe("killed")
killed.add_step("k", killed_cab)
"""


def test_a_job_killed_outright_is_not_blamed_on_memory(ninja: Ninja, tmp_path: Path) -> None:
    """No container engine runs in a `ninja run --backend slurm` job: a SIGKILL there is
    someone's kill -9 or scancel, which was said to be "likely out of memory"."""
    (tmp_path / "killed.py").write_text(KILLED)
    done = ninja("run", f"{tmp_path}/killed.py:killed", "--backend", "slurm", "--no-cache")
    assert done.returncode == 1, done.stderr
    assert "killed by SIGKILL (signal 9)" in done.stderr
    assert "out of memory" not in done.stderr


MISSING_TOOL = """
from shinobi.steps import Cab, Recipe

missing = Recipe("missing")
missing.add_step("m", Cab("m", ["nosuchtool-on-the-nodes"]))
"""


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("nosuchtool-on-the-nodes", "(is it installed on the nodes, and on their PATH?)"),
        # a path that exists on the login host alone: the common cluster mistake
        ("/nonexistent/tool", "(does that path exist on the nodes, not only on this host?)"),
    ],
)
def test_a_tool_missing_on_the_node_is_said_so(
    ninja: Ninja, tmp_path: Path, tool: str, said: str
) -> None:
    """It read "exited with code 127: /var/lib/slurm/.../slurm_script: line 9: exec: ...:
    not found", naming Slurm's own copy of the script and nothing to do."""
    (tmp_path / "missing.py").write_text(MISSING_TOOL.replace("nosuchtool-on-the-nodes", tool))
    done = ninja("run", f"{tmp_path}/missing.py:missing", "--backend", "slurm", "--no-cache")
    assert done.returncode == 1, done.stderr
    assert f"command not found on the compute node: {tool!r} {said}" in done.stderr


NAPPING = """
from shinobi.steps import Cab, Recipe

nap = Recipe("nap")
nap.add_step("n", Cab("n", ["sleep", "1"]))
"""


def test_the_manifest_keeps_when_and_where_the_job_ran(ninja: Ninja, tmp_path: Path) -> None:
    """A step's own times run from its submission to its end being seen, queue wait
    and polling included: the job's start, end and nodes, from accounting, are
    what says how long the tool itself ran, and where."""
    import json
    from datetime import datetime

    (tmp_path / "nap.py").write_text(NAPPING)
    done = ninja("run", "nap.py:nap", "--backend", "slurm", "--no-cache", "--provenance")
    assert done.returncode == 0, done.stderr
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    (step,) = json.loads(manifest.read_text())["steps"]
    details = step["details"]
    began = datetime.fromisoformat(details["slurm_start"])
    ended = datetime.fromisoformat(details["slurm_end"])
    assert 1 <= (ended - began).total_seconds() <= 30, details
    nodes = subprocess.run(["sinfo", "-h", "-o", "%N"], capture_output=True, text=True)
    assert details["slurm_nodes"] == nodes.stdout.strip(), details


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("nosuchtool-on-the-nodes", "(is it installed on the nodes, and on their PATH?)"),
        ("/nonexistent/tool", "(does that path exist on the nodes, not only on the login host?)"),
    ],
)
def test_a_compiled_step_whose_tool_is_missing_on_the_node_is_said_so(
    ninja: Ninja, tmp_path: Path, tool: str, said: str
) -> None:
    """``ninja status`` quoted the job shell's own line (``.../slurm_script: line 9:
    ...: command not found``), where ``ninja run --backend slurm`` gives advice."""
    from launches import steps, submit, wait_final

    (tmp_path / "missing.py").write_text(MISSING_TOOL.replace("nosuchtool-on-the-nodes", tool))
    launch = submit(ninja, f"{tmp_path}/missing.py:missing")
    found = steps(wait_final(ninja, launch["run_id"], timeout=120))
    assert found["m"]["detail"] == f"command not found on the compute node: {tool!r} {said}"


DONE_THEN_STOPPED = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, Recipe

quick = Cab("quick", ["sh", "-c", "echo one >> quick.txt"])
slow = Cab("slow", ["sh", "-c", "touch slow.started; sleep 120"])
r = Recipe("r", BaseModel, max_workers=2)
r.add_step("quick", quick)
r.add_step("slow", slow)
"""


def test_a_job_slurm_completed_before_the_stop_stays_done(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The poller had not seen the job end when the stop's scancel went out: it was
    recorded cancelled and ran again next time over its product, which an appending
    tool doubled (a job on a cluster keeps what it wrote)."""
    import json

    (tmp_path / "r.py").write_text(DONE_THEN_STOPPED)
    slow_poll = {
        **env,
        "SHINOBI_BACKEND_SLURM_POLL_MIN": "60",
        "SHINOBI_BACKEND_SLURM_POLL_MAX": "60",
    }
    run = subprocess.Popen(
        [*ninja_argv(), "run", "r.py:r", "--backend", "slurm", "--provenance", "--no-cache"],
        cwd=tmp_path,
        env=slow_poll,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not ((tmp_path / "quick.txt").exists() and (tmp_path / "slow.started").exists()):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the jobs never ran"
            time.sleep(0.1)
        while (
            f"COMPLETED|{tmp_path}"
            not in subprocess.run(
                ["sacct", "-X", "-n", "-P", "-o", "State,WorkDir", "-S", "now-10minutes"],
                capture_output=True,
                text=True,
            ).stdout.splitlines()
        ):
            assert time.monotonic() < deadline, "Slurm never recorded the quick job completed"
            time.sleep(0.2)
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 130, stderr
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    steps = {s["name"]: s["status"] for s in json.loads(manifest.read_text())["steps"]}
    assert steps == {"quick": "ok", "slow": "cancelled"}, stderr
    assert (tmp_path / "quick.txt").read_text() == "one\n"
