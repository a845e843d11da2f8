"""``SBATCH_*`` variables of the submitter's shell may not replace the options ninja owns.

Slurm lets an input environment variable beat an ``#SBATCH`` line:
``SBATCH_ARRAY_INX=0-3`` ran every step four times, ``SBATCH_JOB_NAME`` hid a
run's jobs from ``scancel -n``, ``SBATCH_OUTPUT`` lost the logs ``ninja logs``
reads, ``SBATCH_WAIT`` made ``--submit`` wait for each job. ninja drops those
from sbatch's environment and says so, once per variable; the others (a
partition, an account, a time limit) are still honoured.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, Ninja
from launches import steps, wait_final

from shinobi_slurm.sbatch import owned_environment, parse_sbatch_opts, without_owned

OWNED = {
    "SBATCH_ARRAY_INX": "0-3",
    "SBATCH_JOB_NAME": "someone-else",
    "SBATCH_OUTPUT": "/dev/null",
    "SBATCH_ERROR": "/dev/null",
    "SBATCH_OPEN_MODE": "truncate",
    "SBATCH_WAIT": "1",
}


def test_the_variables_follow_the_options_refused_in_sbatch_opts() -> None:
    names = owned_environment()
    assert set(OWNED) <= set(names)
    assert names["SBATCH_ARRAY_INX"] == "array"
    for option in names.values():  # each is refused in sbatch_opts too
        with pytest.raises(Exception, match="sbatch_opts"):
            parse_sbatch_opts([f"--{option}=x"])


def test_owned_variables_are_dropped_with_a_warning_and_the_rest_kept() -> None:
    kept, warnings = without_owned({**OWNED, "SBATCH_PARTITION": "debug", "PATH": "/bin"})
    assert kept == {"SBATCH_PARTITION": "debug", "PATH": "/bin"}
    assert len(warnings) == len(OWNED)
    said = next(w for w in warnings if w.startswith("SBATCH_ARRAY_INX"))
    assert "--array" in said and "[backend.slurm] sbatch_opts" in said and "\n" not in said


def _names(job_ids: list[str]) -> dict[str, str]:
    """The name the controller has for each job, and whether it is an array (whose
    tasks it lists one by one). Not sacct: just after a job ends it may say "allocation"."""
    names = {}
    for job_id in job_ids:
        out = subprocess.run(
            ["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, check=True
        ).stdout
        lines = [line for line in out.splitlines() if line.strip()]
        assert len(lines) == 1 and "ArrayJobId=" not in lines[0], out
        names[job_id] = lines[0].split("JobName=", 1)[1].split()[0]
    return names


@pytest.mark.usefixtures("slurm")
def test_compile_submit_keeps_its_own_options_whatever_the_shell_says(
    ninja: Ninja, tmp_path: Path
) -> None:
    made = tmp_path / "made.ms"
    done = ninja(
        "compile",
        f"{EXAMPLES}/offload_demo.py:pipe",
        "--target",
        str(made),
        "--container-runtime",
        "none",
        "--submit",
        "--json",
        timeout=60,
        **OWNED,
    )
    assert done.returncode == 0, done.stderr
    for name in OWNED:  # said once, however many jobs were submitted
        assert done.stderr.count(f"shinobi: {name} is ignored") == 1, done.stderr
    launch = json.loads(done.stdout)
    found = wait_final(ninja, launch["handle"])
    assert found["state"] == "completed", found["summary"]
    ids = [j["job_id"] for j in launch["jobs"]]  # named as ninja named them, and no arrays
    assert _names(ids) == dict.fromkeys(ids, f"shinobi-{launch['run_id']}")
    handle = json.loads(Path(launch["handle"]).read_text())
    assert all(Path(job["stdout"]).is_file() for job in handle["jobs"])  # where logs reads
    assert set(steps(found)) == {"make", "use"}


@pytest.mark.usefixtures("slurm")
def test_run_on_slurm_keeps_its_job_name(ninja: Ninja, tmp_path: Path) -> None:
    made = tmp_path / "made.ms"
    done = ninja(
        "run",
        f"{EXAMPLES}/offload_demo.py:pipe",
        "--target",
        str(made),
        "--backend",
        "slurm",
        timeout=200,
        SBATCH_JOB_NAME="someone-else",
        SBATCH_ARRAY_INX="0-1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("shinobi: SBATCH_JOB_NAME is ignored") == 1, done.stderr
    ledgers = list((tmp_path / ".shinobi" / "runs").glob("*/slurm/jobs.tsv"))
    assert len(ledgers) == 1
    run_id = ledgers[0].parent.parent.name
    noted = [line.split("\t")[0] for line in ledgers[0].read_text().splitlines()]
    assert len(noted) == 2 and _names(noted) == dict.fromkeys(noted, f"shinobi-{run_id}")
