"""``ninja compile --engine slurm`` without a cluster: the scripts, the edges, the refusals."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXAMPLES, RECIPES, Ninja


def scripts(text: str) -> dict[str, str]:
    """The printed workflow split into {job name: script}."""
    found: dict[str, str] = {}
    for part in re.split(r"^# ---- ", text, flags=re.M)[1:]:
        head, _, body = part.partition("\n")
        name = re.match(r"\S+ \((.+)\) ----$", head)
        assert name, head
        found[name.group(1)] = body
    return found


def compiled_job(ninja: Ninja, here: Path, target: str, text: str, step: str, *args: str) -> str:
    """The job script of ``step`` once ``text``, written as the file ``target`` names
    (``FILE:RECIPE``), is compiled in ``here``."""
    (here / target.split(":")[0]).write_text(text)
    done = ninja("compile", target, *args, cwd=here)
    assert done.returncode == 0, done.stderr
    return scripts(done.stdout)[step]


def run_job(script: str, here: Path) -> subprocess.CompletedProcess[str]:
    """A compiled job's script run under bash in ``here``, as Slurm's node would."""
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=here)


def dependency(script: str) -> list[str]:
    match = re.search(r"^#SBATCH --dependency=afterok:(\S+)$", script, flags=re.M)
    return [d.strip("<>") for d in match.group(1).split(":")] if match else []


def test_offload_demo_prints_two_scripts_linked_by_afterok(ninja: Ninja) -> None:
    done = ninja(
        "compile",
        f"{EXAMPLES}/offload_demo.py:pipe",
        "--target",
        "/scratch/made.ms",
        "--container-runtime",
        "none",
    )
    assert done.returncode == 0, done.stderr
    found = scripts(done.stdout)
    assert list(found) == ["make", "use"]
    assert dependency(found["make"]) == []
    assert dependency(found["use"]) == ["make"]
    assert "#SBATCH --kill-on-invalid-dep=yes" in found["use"]
    assert "\n/bin/touch /scratch/made.ms\nrc=$?\n" in found["make"]
    assert "\n/bin/cat /scratch/made.ms\nrc=$?\n" in found["use"]
    for script in found.values():
        assert script.startswith("#!/bin/bash\n")
        assert re.search(r"^#SBATCH --job-name=shinobi-\S+$", script, flags=re.M)


def test_in_place_rewrites_are_ordered_and_readers_stay_parallel(
    ninja: Ninja, tmp_path: Path
) -> None:
    ms = tmp_path / "obs.ms"
    done = ninja("compile", f"{EXAMPLES}/inplace_ms.py:selfcal_ms", "--ms", str(ms))
    assert done.returncode == 0, done.stderr
    found = scripts(done.stdout)
    assert {name: dependency(text) for name, text in found.items()} == {
        "flag": [],
        "gaincal": ["flag"],
        "applycal": ["gaincal"],
        "image": ["applycal"],
        "inspect": ["applycal"],
    }
    assert f"mutate-then-mutate on {ms}" in found["gaincal"]
    assert f"mutate-then-mutate on {ms}" in found["applycal"]
    assert f"mutate-then-read on {ms}" in found["image"]
    explained = ninja(
        "compile", f"{EXAMPLES}/inplace_ms.py:selfcal_ms", "--ms", str(ms), "--explain"
    )
    assert explained.returncode == 0, explained.stderr
    assert f"image, inspect only read {ms}: left parallel" in explained.stdout


def compile_selfcal(ninja: Ninja, tmp_path: Path, flag: Path) -> dict[str, str]:
    """The scripts of the test self-calibration loop, by job name."""
    done = ninja(
        "compile",
        f"{RECIPES}/loops.py:selfcal",
        "--ms",
        str(tmp_path / "obs.ms"),
        "--flag",
        str(flag),
        "--workdir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    return scripts(done.stdout)


def test_loop_iterations_after_the_first_start_with_the_guard(ninja: Ninja, tmp_path: Path) -> None:
    flag = tmp_path / "converged"
    found = compile_selfcal(ninja, tmp_path, flag)
    assert len(found) == 15
    guard = f"if [ -e {flag} ] && "
    for name, text in found.items():
        iteration = int(name.split(".")[1])
        assert (guard in text) == (iteration > 1), name
        if iteration > 1:
            # the guard comes before the command, and exits 0 so afterok is satisfied
            assert text.index(guard) < text.index("\nrc=$?")
            assert "  exit 0\n" in text
    # every job of a cycle waits for the whole cycle before it
    assert sorted(dependency(found["cal.2.calibrate"])) == [
        "cal.1.assess",
        "cal.1.calibrate",
        "cal.1.image",
    ]


def job_runner(found: dict[str, str]) -> Callable[[str], str]:
    """Runs a compiled job's script under bash with its command replaced by an echo."""

    def run_job(name: str) -> str:
        # the command is the line before the signal relay
        script = re.sub(r"^.*\n(?=rc=\$\?$)", f"echo RAN {name}\n", found[name], flags=re.M)
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result.stdout

    return run_job


def test_a_flag_left_by_an_earlier_run_does_not_end_a_compiled_loop(
    ninja: Ninja, tmp_path: Path
) -> None:
    flag = tmp_path / "converged"
    flag.touch()  # from yesterday's run, and the tool never removes it
    run_job = job_runner(compile_selfcal(ninja, tmp_path, flag))
    for step in ("calibrate", "assess", "image"):  # assess leaves yesterday's flag alone
        assert run_job(f"cal.1.{step}") == f"RAN cal.1.{step}\n"
    assert run_job("cal.2.calibrate") == "RAN cal.2.calibrate\n"  # not converged
    assert run_job("cal.2.assess") == "RAN cal.2.assess\n"
    flag.touch()  # assess converges: it writes the flag in iteration 2
    assert "converged before iteration 3" in run_job("cal.3.calibrate")
    assert flag.exists()  # nothing was removed


def test_a_job_of_the_converging_iteration_runs_though_its_sibling_wrote_the_flag(
    ninja: Ninja, tmp_path: Path
) -> None:
    """assess and image of iteration 3 run side by side; assess writes the flag.

    image may start after that on a busy cluster, and must still run: the loop
    converged *in* iteration 3, not before it. Iteration 4 is skipped whole.
    The scripts' own guards run here under bash, with each command replaced
    by an echo.
    """
    flag = tmp_path / "converged"
    found = compile_selfcal(ninja, tmp_path, flag)

    run_job = job_runner(found)
    assert run_job("cal.3.assess") == "RAN cal.3.assess\n"
    flag.touch()  # what assess does once the MS has been calibrated three times
    assert run_job("cal.3.image") == "RAN cal.3.image\n"
    assert "converged before iteration 4" in run_job("cal.4.calibrate")
    assert "converged before iteration 4" in run_job("cal.4.image")


def test_a_scatter_is_one_array_and_its_gatherer_waits_for_all(
    ninja: Ninja, tmp_path: Path
) -> None:
    done = ninja(
        "compile",
        f"{RECIPES}/scatter.py:fan",
        "--sources",
        "a",
        "--sources",
        "b",
        "--sources",
        "c",
        "--total",
        "total.txt",
    )
    assert done.returncode == 0, done.stderr
    found = scripts(done.stdout)
    assert "#SBATCH --array=0-2" in found["convert"]
    assert re.search(r"--output=\S+/logs/convert\[%a\]\.out", found["convert"])
    for index, source in enumerate("abc"):
        assert f"  {index}) /bin/sh -c " in found["convert"]
        assert f" convert {source} ;;" in found["convert"]
    assert dependency(found["combine"]) == ["convert"]
    assert "a.out b.out c.out" in found["combine"]


def test_declared_resources_and_configured_options(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja("compile", f"{RECIPES}/failing.py:hog")
    assert "#SBATCH --mem=64M" in done.stdout
    (tmp_path / "shinobi.toml").write_text(
        '[backend.slurm]\nsbatch_opts = ["--mem=1G", "-p debug"]\n'
    )
    done = ninja("compile", f"{RECIPES}/failing.py:hog")
    assert done.returncode == 0, done.stderr
    assert "#SBATCH --mem=1G" in done.stdout and "--mem=64M" not in done.stdout
    assert "#SBATCH --partition=debug" in done.stdout


def test_output_writes_one_script_per_job(ninja: Ninja, tmp_path: Path) -> None:
    out = tmp_path / "compiled"
    done = ninja("compile", f"{EXAMPLES}/offload_demo.py:pipe", "--output", str(out))
    assert done.returncode == 0, done.stderr
    scripts = sorted(p.name for p in out.iterdir() if p.name != ".ninja-scripts")
    assert scripts == ["make.sbatch", "use.sbatch"]
    # what a later compile into the same folder may remove, and nothing else
    record = (out / ".ninja-scripts").read_text().splitlines()
    assert [line.split("\t")[0] for line in record] == ["make.sbatch", "use.sbatch"]
    assert done.stdout == ""


def test_a_container_runtime_comes_from_the_containers_plugin(ninja: Ninja) -> None:
    from shinobi.backends import available_backends

    done = ninja("compile", f"{EXAMPLES}/offload_demo.py:pipe", "--container-runtime", "docker")
    if "docker" in available_backends():
        assert done.returncode == 0, done.stderr
        assert "declare no image" in done.stderr  # the demo's cabs have none
    else:
        assert done.returncode == 2
        assert "pip install ./shinobi-containers" in done.stderr
        assert "Traceback" not in done.stderr


REFUSALS = {
    "orchestrated": ["orchestration function"],
    "in_venv": ["virtualenv"],
    "mutable_object": ["MUTABLE but not a path"],
    "crossing": ["set by a wrangler"],
    "per_cycle": ["names its output 'image' per iteration"],
    "everything": [
        "orchestration function",
        "virtualenv",
        "MUTABLE but not a path",
        "set by a wrangler",
        "@pystep",
    ],
}


@pytest.mark.parametrize("recipe", sorted(REFUSALS))
def test_refusals_list_every_reason_and_exit_2(ninja: Ninja, recipe: str) -> None:
    extra = ["--path", "/tmp/x"] if recipe in ("orchestrated", "in_venv", "everything") else []
    done = ninja("compile", f"{RECIPES}/refused.py:{recipe}", *extra)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    for reason in REFUSALS[recipe]:
        assert reason in done.stderr, (reason, done.stderr)
    listed = [line for line in done.stderr.splitlines() if line.startswith("  - ")]
    assert len(listed) == len(REFUSALS[recipe])
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("ninja: error: ")


def test_explain_says_why_a_recipe_is_refused(ninja: Ninja) -> None:
    done = ninja("compile", f"{RECIPES}/refused.py:crossing", "--explain")
    assert done.returncode == 2
    assert "fix:" in done.stderr and "why:" in done.stderr


class _Cancelling:
    """The one command _abandon uses, recorded."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    def cancel(self, ids: list[str]) -> None:
        self.cancelled += ids


@pytest.mark.parametrize(
    ("never_sent", "said", "fix", "status"),
    [
        (True, "could not reach Slurm to submit step 'first'", "check that slurmctld runs", 74),
        (False, "Slurm refused step 'first'", "fix what it names (sbatch_opts", 1),
    ],
)
def test_a_failed_submission_says_whether_slurm_refused_or_was_not_reached(
    never_sent: bool, said: str, fix: str, status: int
) -> None:
    from shinobi_slurm.commands import SlurmError
    from shinobi_slurm.compile import SlurmTarget

    commands = _Cancelling()
    failure = SlurmError("sbatch failed: something", never_sent=never_sent)
    nothing = SlurmTarget._abandon(commands, {}, "first", failure)  # type: ignore[arg-type]
    assert str(nothing).startswith(said) and "nothing was submitted: " + fix in str(nothing)
    some = SlurmTarget._abandon(commands, {"a": "12"}, "first", failure)  # type: ignore[arg-type]
    assert "the 1 job(s) already submitted were cancelled: " + fix in str(some)
    assert commands.cancelled == ["12"]
    # a controller that never answered is the machine's problem (74), not the recipe's
    assert nothing.exit_code == some.exit_code == status


ENVIRONMENT_RECIPE = """
import sys
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    out: str

dump = Cab(
    "dump",
    ["/bin/sh", "-c", 'echo "$MY_VAR $PATH" > "$1"', "sh"],
    In,
    None,
    {"out": ParamMeta(positional=True)},
    env={"MY_VAR": "from the cab", "MY-DASH": "dashed", "PATH": "/opt/tool/bin"},
)
r = Recipe("r", In)
r.add_step("dump", dump, out=r.inputs.out)
"""


def test_a_cab_s_environment_reaches_its_tool_alone(ninja: Ninja, tmp_path: Path) -> None:
    """``env K=V tool``: a PATH of the cab's must not hide the job's own commands
    (a loop's guard runs stat and mkdir), and MY-DASH is no shell identifier."""
    (tmp_path / "envr.py").write_text(ENVIRONMENT_RECIPE)
    done = ninja("compile", "envr.py:r", "--out", "o.txt")
    assert done.returncode == 0, done.stderr
    script = scripts(done.stdout)["dump"]
    assert "export " not in script
    assert "\nenv -- 'MY_VAR=from the cab' MY-DASH=dashed PATH=/opt/tool/bin /bin/sh -c" in script


@pytest.mark.parametrize("odd", ["100%x", "back\\slash"])
def test_a_workdir_sbatch_would_read_as_a_pattern_is_refused(
    ninja: Ninja, tmp_path: Path, odd: str
) -> None:
    here = tmp_path / odd
    here.mkdir()
    done = ninja("compile", f"{EXAMPLES}/offload_demo.py:pipe", "--target", "x.ms", cwd=here)
    assert done.returncode == 2 and "holds a '%' or '\\'" in done.stderr


def test_a_name_that_is_not_utf8_is_refused_before_anything_is_submitted(
    ninja: Ninja, tmp_path: Path
) -> None:
    done = ninja("compile", f"{EXAMPLES}/offload_demo.py:pipe", "--target", "bad\udcff.ms")
    assert done.returncode == 2, done.stderr
    assert "not valid UTF-8" in done.stderr and "Traceback" not in done.stderr


NUL_RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class Said(BaseModel):
    msg: str

echo = Cab("echo", "/bin/echo", Said, None, {"msg": ParamMeta(positional=True)})
r = Recipe("r")
r.add_step("e", echo, msg="a\\x00b")
"""


def test_an_argument_holding_a_nul_byte_is_refused_not_written(
    ninja: Ninja, tmp_path: Path
) -> None:
    # bash reads such a script with the byte dropped: it ran echo ab, exit 0
    (tmp_path / "nul.py").write_text(NUL_RECIPE)
    done = ninja("compile", "nul.py:r", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "a job script would hold a NUL byte, which no program can be passed" in done.stderr
    assert not (tmp_path / "out").exists()


LAZY_RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class Made(BaseModel):
    image: File

class Wants(BaseModel):
    src: File

lazy = Cab("lazy", ["/bin/true"], None, Made, {"image": ParamMeta(implicit="img.fits")})
after = Cab("after", ["/bin/cat"], Wants, None, {"src": ParamMeta(positional=True)})
r = Recipe("r")
r.add_step("lazy", lazy)
r.add_step("after", after, src=r.outputs.lazy.image)
"""


def test_a_job_whose_tool_did_not_make_a_required_output_fails(
    ninja: Ninja, tmp_path: Path
) -> None:
    """As `ninja run` fails the step, so that its dependants never run on nothing."""
    (tmp_path / "lazy.py").write_text(LAZY_RECIPE)
    done = ninja("compile", "lazy.py:r")
    assert done.returncode == 0, done.stderr
    found = scripts(done.stdout)
    ran = subprocess.run(["bash", "-c", found["lazy"]], capture_output=True, text=True)
    assert ran.returncode == 1
    assert f'output "image": the tool did not create {tmp_path}/img.fits' in ran.stderr
    (tmp_path / "img.fits").touch()
    assert subprocess.run(["bash", "-c", found["lazy"]], capture_output=True).returncode == 0


HARVEST_RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    prefix: str = "img [1]"

class Made(BaseModel):
    image: File

shoot = Cab("shoot", ["/bin/true"], In, Made,
            {"prefix": ParamMeta(skip=True), "image": ParamMeta(harvest="{prefix}-*.fits")})
r = Recipe("r", In)
r.add_step("shoot", shoot, prefix=r.inputs.prefix)
"""


@pytest.mark.parametrize("prefix", ["img [1]", "a\\b"])
def test_a_job_whose_required_harvest_matched_nothing_fails(
    ninja: Ninja, tmp_path: Path, prefix: str
) -> None:
    """An audit's case: the job completed where `ninja run` fails the step. The
    folder's name (``obs [1]``) and the value's brackets or backslash are literal."""
    here = tmp_path / "obs [1]"
    here.mkdir()
    script = compiled_job(ninja, here, "shoot.py:r", HARVEST_RECIPE, "shoot", "--prefix", prefix)
    ran = run_job(script, here)
    assert ran.returncode == 1
    assert 'output "image": nothing matched its harvest pattern' in ran.stderr
    (here / "img 1-7.fits").touch()  # the value's brackets are literal, not a class
    (here / "ab-7.fits").touch()  # nor is its backslash an escape
    again = run_job(script, here)
    assert again.returncode == 1, again.stderr
    (here / f"{prefix}-7.fits").touch()
    made = run_job(script, here)
    assert made.returncode == 0, made.stderr


EXIT_RECIPE = """
from shinobi.steps import Cab, Recipe

r = Recipe("r")
r.add_step("quit", Cab("quit", ["/bin/sh", "-c", "exit 128"]))
"""

DEEP_RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class Made(BaseModel):
    image: File

shoot = Cab("shoot", ["/bin/true"], None, Made, {"image": ParamMeta(harvest="**/*.fits")})
r = Recipe("r")
r.add_step("shoot", shoot)
"""

KIND_RECIPE = """
from pydantic import BaseModel
from shinobi.steps import MS, Cab, File, ParamMeta, Recipe

class Made(BaseModel):
    ms: MS
    image: File

mk = Cab("mk", ["/bin/sh", "-c", "echo notadir > made.ms; mkdir -p img.fits"], None, Made,
         {"ms": ParamMeta(implicit="made.ms"), "image": ParamMeta(implicit="img.fits")})
r = Recipe("r")
r.add_step("mk", mk)
"""


def test_a_job_whose_tool_made_the_wrong_kind_of_output_fails(ninja: Ninja, tmp_path: Path) -> None:
    """An MS that is a plain file (and a file that is a directory) fails the job, as
    `ninja run` fails the step: the next job must not read it as the product."""
    ran = run_job(compiled_job(ninja, tmp_path, "kind.py:r", KIND_RECIPE, "mk"), tmp_path)
    assert ran.returncode == 1, ran.stderr
    assert f"{tmp_path}/made.ms is not a directory, but the output is declared" in ran.stderr
    assert f"{tmp_path}/img.fits is a directory, but the output is declared a file" in ran.stderr


def test_a_job_whose_tool_exited_128_keeps_its_code_for_status(
    ninja: Ninja, tmp_path: Path
) -> None:
    """Slurm's accounting keeps an exit code modulo 128, so a tool's 128 reads as 0;
    the job keeps every code above 127 in its exit record, 128 included."""
    ran = run_job(compiled_job(ninja, tmp_path, "exits.py:r", EXIT_RECIPE, "quit"), tmp_path)
    assert ran.returncode == 128, ran.stderr
    kept = list(tmp_path.glob(".shinobi/r/*/exits/quit"))
    assert [path.read_text() for path in kept] == ["128\n"]


def test_a_required_harvest_matching_at_any_depth_is_made(ninja: Ninja, tmp_path: Path) -> None:
    """``**`` is any depth to ninja's own harvest; bash without globstar reads it as
    ``*``, one directory, and failed a job whose tool had made the output."""
    script = compiled_job(ninja, tmp_path, "deep.py:r", DEEP_RECIPE, "shoot")
    ran = run_job(script, tmp_path)
    assert ran.returncode == 1 and "nothing matched its harvest pattern" in ran.stderr
    (tmp_path / "obs" / "spw1").mkdir(parents=True)
    (tmp_path / "obs" / "spw1" / "img.fits").touch()
    made = run_job(script, tmp_path)
    assert made.returncode == 0, made.stderr


class ArrayLimit:
    """A controller whose configuration says ``MaxArraySize = 4``."""

    def run(self, tool: str, args: list[str]) -> str:
        assert [tool, *args] == ["scontrol", "show", "config"]
        return "MaxArrayAcctHist        = 0\nMaxArraySize            = 4\nMaxBatchRequeue = 5\n"


def test_an_array_as_wide_as_max_array_size_is_not_refused() -> None:
    """MaxArraySize = 4 allows indices 0 to 3: four slices fit, a fifth does not."""
    from types import SimpleNamespace

    from shinobi.errors import UsageError
    from shinobi_slurm.compile import refuse_arrays_too_wide

    def jobs(tasks: int) -> list[SimpleNamespace]:
        return [SimpleNamespace(name="plain", tasks=None), SimpleNamespace(name="t", tasks=tasks)]

    refuse_arrays_too_wide(ArrayLimit(), jobs(4))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"step 't' scatters over 5 slices.*MaxArraySize = 4"):
        refuse_arrays_too_wide(ArrayLimit(), jobs(5))  # type: ignore[arg-type]


def test_explain_says_each_note_once(ninja: Ninja, tmp_path: Path) -> None:
    """The explanation lists the notes; they are not repeated on stderr."""
    missing = tmp_path / "nowhere" / "made.ms"
    done = ninja(
        "compile", f"{EXAMPLES}/offload_demo.py:pipe", "--target", str(missing), "--explain"
    )
    assert done.returncode == 0, done.stderr
    assert "does not exist on this host" in done.stdout
    assert "does not exist on this host" not in done.stderr


def test_logs_of_one_array_task_are_named_as_a_run_names_a_slice() -> None:
    from shinobi.errors import UsageError
    from shinobi.launch.handle import LaunchHandle, LaunchJob
    from shinobi_slurm.compile import SlurmTarget

    fan = LaunchJob(step="fan", job_id="7", stdout="/l/fan.%a.out", stderr="/l/fan.%a.err", tasks=3)
    handle = LaunchHandle(engine="slurm", recipe="r", run_id="x", workdir="/w", jobs=[fan])
    target = SlurmTarget({})
    shown = [(s.label, s.stream, s.location) for s in target.log_sources(handle, "fan[2]")]
    assert shown == [("fan[2]", "stdout", "/l/fan.2.out"), ("fan[2]", "stderr", "/l/fan.2.err")]
    assert len(target.log_sources(handle, "fan")) == 6
    for wrong in ("fan[3]", "fan[x]", "fan[1"):
        with pytest.raises(UsageError, match="has no step"):
            target.log_sources(handle, wrong)


@pytest.mark.parametrize(
    ("runtime", "noted"), [("docker", True), ("podman", True), ("apptainer", False)]
)
def test_job_limits_a_daemon_s_container_escapes_are_noted(runtime: str, noted: bool) -> None:
    """``--mem=300M`` in sbatch_opts limited the job's shell and client only: docker
    started the container in its daemon's control group, and a step using twice
    that ended "completed". Apptainer's processes are the job's own."""
    from types import SimpleNamespace

    from shinobi_slurm.compile import SlurmTarget

    target = SlurmTarget({"sbatch_opts": ["--mem=300M", "--partition=debug"]})
    jobs = SimpleNamespace(jobs=[SimpleNamespace(image="busybox", runtime=runtime)])
    said = target._limits_outside_containers(jobs)  # type: ignore[arg-type]
    assert (said is not None) is noted
    if said is not None:
        assert said.startswith(f"sbatch_opts sets --mem=300M for each job, but {runtime}")
        assert "--partition" not in said


@pytest.mark.parametrize("given", [["-c", "2"], ["-c2"], "-c 2", {"c": 2}, ["--cpus-per-task=2"]])
def test_a_cpu_limit_is_noted_in_whichever_spelling(given: object) -> None:
    """Options reach the check by their long names, the short ``-c`` too."""
    from types import SimpleNamespace

    from shinobi_slurm.compile import SlurmTarget

    target = SlurmTarget({"sbatch_opts": given})
    jobs = SimpleNamespace(jobs=[SimpleNamespace(image="busybox", runtime="docker")])
    said = target._limits_outside_containers(jobs)  # type: ignore[arg-type]
    assert said is not None and said.startswith("sbatch_opts sets --cpus-per-task=2 for each job")
