"""A scattered step's task files cannot be another step's: ``x[0]``, not ``x.0``.

``ninja compile`` named task 0 of a scattered ``x`` ``logs/x.0.out`` (and its
exit record ``exits/x.0``), the very files of a plain step named ``x.0``: the
task's output was lost and ``ninja logs`` showed the plain step's under
``x[0]``. Tasks are now named as ``ninja run`` names a slice (``x[0]``),
which the recipe graph refuses as a step's name beside a scattered ``x``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import RECIPES, Ninja
from launches import steps, submit, wait_final
from test_compile import scripts

from shinobi_slurm.sacct import parse_line
from shinobi_slurm.status import _exact_exit

TARGET = f"{RECIPES}/collide.py:col"


def _files(script: str) -> tuple[str, str, str]:
    output = re.search(r"^#SBATCH --output=(\S+)$", script, flags=re.M)
    error = re.search(r"^#SBATCH --error=(\S+)$", script, flags=re.M)
    kept = re.search(r'echo "\$rc" > (.+) 2>/dev/null$', script, flags=re.M)
    assert output and error and kept, script
    return output.group(1), error.group(1), kept.group(1)


def test_a_task_and_a_step_named_like_it_get_their_own_files(ninja: Ninja) -> None:
    done = ninja("compile", TARGET)
    assert done.returncode == 0, done.stderr
    found = scripts(done.stdout)
    out, err, kept = _files(found["x"])
    assert out.endswith("/logs/x[%a].out") and err.endswith("/logs/x[%a].err")
    assert kept.endswith("""/exits/x['"$SLURM_ARRAY_TASK_ID"']'""")
    plain = _files(found["x.0"])
    assert plain[0].endswith("/logs/x.0.out") and plain[2].endswith("/exits/x.0")


def test_the_exit_record_of_a_task_is_written_where_status_reads_it(
    ninja: Ninja, tmp_path: Path
) -> None:
    done = ninja("compile", TARGET)
    line = next(line for line in scripts(done.stdout)["x"].splitlines() if 'echo "$rc" >' in line)
    run_dir = line.split("mkdir -p ")[1].split(" ")[0].rsplit("/exits", 1)[0]
    subprocess.run(["bash", "-c", f"rc=255; SLURM_ARRAY_TASK_ID=1; {line.strip()}"], check=True)
    assert Path(run_dir, "exits", "x[1]").read_text().strip() == "255"
    record = parse_line(
        "9_1|91|FAILED|127:0|2026-12-02T10:00:00|2026-12-02T10:00:05|None|64M|01:00:00|n1|"
    )
    assert record is not None
    assert _exact_exit(record, f"{run_dir}/exits/x[%a]").exit_code == 255


def test_a_launch_recorded_with_the_old_task_names_still_reads_its_exit_codes(
    tmp_path: Path,
) -> None:
    (tmp_path / "x.1").write_text("200\n")
    record = parse_line(
        "9_1|91|FAILED|72:0|2026-12-02T10:00:00|2026-12-02T10:00:05|None|64M|01:00:00|n1|"
    )
    assert record is not None
    assert _exact_exit(record, str(tmp_path / "x")).exit_code == 200


@pytest.mark.usefixtures("slurm")
def test_each_task_and_the_step_named_like_one_keep_their_output(
    ninja: Ninja, tmp_path: Path
) -> None:
    launch = submit(ninja, TARGET, cwd=tmp_path)
    found = wait_final(ninja, launch["handle"], cwd=tmp_path)
    assert found["state"] == "completed", found["summary"]
    assert set(steps(found)) == {"x", "x.0"}
    shown = ninja("logs", launch["run_id"], "--stream", "stdout", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    blocks = dict(re.findall(r"^==> (\S+) stdout <==\n(.*?)$", shown.stdout, flags=re.M))
    assert blocks == {"x[0]": "task 0", "x[1]": "task 1", "x.0": "I am the plain step"}
    one = ninja("logs", launch["run_id"], "x[0]", "--stream", "stdout", cwd=tmp_path)
    assert one.stdout.strip() == "task 0"
