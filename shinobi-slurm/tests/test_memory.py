"""A job's memory as Slurm really gave it, and the option an out-of-memory hint names.

``Resources(cpus="all")`` compiled to ``--exclusive`` alone got every CPU but
only DefMemPerCPU of memory for each (4G of an 8G node) and was killed for
memory; it now asks ``--mem=0`` too (all of the node's), unless the step or
``sbatch_opts`` says how much. The limit an out-of-memory message names is
what Slurm allocated (``AllocTRES``), not ``ReqMem`` (one CPU's share). With
``--mem-per-cpu`` in ``sbatch_opts`` the hint says to raise that, not ``--mem``
(sbatch refuses both), and keeps "per CPU".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import Ninja
from launches import steps, submit, wait_final

from shinobi.resources import Resources
from shinobi_slurm.sacct import parse_line
from shinobi_slurm.sbatch import Option, merge_options, parse_sbatch_opts, resource_options
from shinobi_slurm.states import classify


def args(options: list[Option]) -> list[str]:
    return [o.argument() for o in options]


def test_the_whole_node_is_all_of_its_memory_too() -> None:
    assert args(resource_options(Resources(cpus="all"))) == ["--exclusive", "--mem=0"]
    assert args(resource_options(Resources(cpus="all", memory="2GiB"))) == [
        "--exclusive",
        "--mem=2048M",
    ]


@pytest.mark.parametrize("configured", ["--mem=6G", "--mem-per-cpu=1G", "--mem-per-gpu=2G"])
def test_a_memory_option_of_sbatch_opts_replaces_the_whole_node_s(configured: str) -> None:
    merged = merge_options(resource_options(Resources(cpus="all")), parse_sbatch_opts([configured]))
    assert args(merged) == ["--exclusive", configured]


def _oom(req_mem: str, tres: str | None) -> str:
    fields = ["9", "9", "OUT_OF_MEMORY", "0:125", "2026", "2026", "None", req_mem, "01:00:00", "n1"]
    record = parse_line("|".join([*fields, *([tres] if tres is not None else [])]))
    assert record is not None
    return record.memory_limit or ""


def test_the_limit_is_what_slurm_allocated_not_one_cpu_s_request() -> None:
    assert _oom("512M", "billing=8,cpu=8,mem=4G,node=1") == "4G"
    assert _oom("512M", "") == "512M"  # not allocated (yet): what was asked
    assert _oom("512M", None) == "512M"  # an older line without the field


def _said(configured: bool | str, tres: str = "cpu=1,mem=64M,node=1") -> str:
    fields = ["9", "9", "OUT_OF_MEMORY", "0:125", "2026", "2026", "None", "64M", "01:00:00", "n1"]
    record = parse_line("|".join([*fields, tres]))
    assert record is not None
    return classify(record, memory_configured=configured).message or ""


def test_the_memory_option_configured_twice_is_the_one_sbatch_keeps() -> None:
    """sbatch keeps the last of an option given twice: the hint's "now 1G" would
    name a limit the jobs never had, and raising it would change nothing."""
    from shinobi_slurm.sbatch import memory_option

    assert memory_option({"sbatch_opts": ["--mem=1G", "--mem=4G"]}) == Option("mem", "4G")


def test_the_hint_names_the_memory_option_that_was_configured() -> None:
    said = _said("--mem-per-cpu=64M")
    assert "raise --mem-per-cpu (now 64M) in [backend.slurm] sbatch_opts" in said
    assert "its 64M of memory (64M per CPU)" in said
    said = _said("--mem-per-gpu=1G", "cpu=1,mem=2G,node=1")
    assert "raise --mem-per-gpu (now 1G)" in said and "its 2G of memory (1G per GPU)" in said
    assert "raise --mem (now 2G) in" in _said("--mem=2G")
    assert "raise --mem in" in _said(True)  # a launch recorded before the option was kept
    assert "declare more memory for the step" in _said(False)


@pytest.mark.usefixtures("slurm")
def test_a_whole_node_step_gets_the_node_s_memory(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "whole.py").write_text(
        "from shinobi.resources import Resources\n"
        "from shinobi.steps import Cab, Recipe, StepRef\n"
        "big = Cab(name='big', command=['/bin/sh', '-c',"
        " 'head -c 4700000000 /dev/zero | tail > /dev/null'])\n"
        "whole = Recipe(name='whole', steps=[StepRef('big', big, {},"
        " resources=Resources(cpus='all'))])\n"
    )
    launch = submit(ninja, f"{tmp_path}/whole.py:whole", "--container-runtime", "none")
    found = wait_final(ninja, launch["handle"])
    big = steps(found)["big"]
    assert big["phase"] == "completed", big["detail"]  # 4.7 GB: more than 8 x 512M
    job = launch["jobs"][0]["job_id"]
    tres = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-j", job, "-o", "AllocTRES"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "cpu=8" in tres and "mem=8G" in tres, tres


@pytest.mark.usefixtures("slurm")
def test_the_hint_under_mem_per_cpu_names_it(
    ninja: Ninja, tmp_path: Path, env: dict[str, str]
) -> None:
    config = tmp_path / "shinobi.toml"
    config.write_text('[backend.slurm]\nsbatch_opts = ["--mem-per-cpu=64M"]\n')
    recipes = Path(__file__).resolve().parent / "recipes"
    done = ninja(
        "compile",
        f"{recipes}/failing.py:hog",
        "--submit",
        "--json",
        SHINOBI_CONFIG=str(config),
    )
    assert done.returncode == 0, done.stderr
    handle = json.loads(done.stdout)["handle"]
    found = wait_final(ninja, handle)
    hog = steps(found)["hog"]
    assert hog["engine_state"] == "OUT_OF_MEMORY", hog
    assert "its 64M of memory (64M per CPU)" in hog["detail"], hog["detail"]
    assert "raise --mem-per-cpu (now 64M)" in hog["detail"], hog["detail"]
