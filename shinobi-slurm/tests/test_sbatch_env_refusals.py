"""An ``SBATCH_*`` variable that Slurm refuses is named in the refusal, after the
warning that it beats an ``#SBATCH`` line.

With ``SBATCH_PARTITION=gpu`` left in the shell (no such partition), the check
before submission blamed ``[backend.slurm] sbatch_opts`` (which might set no
partition, or ``debug``: "no partition 'debug': partitions here are debug"),
and the warning that the variable beats a line never printed, the refusal
ending the run first.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

import pytest
from conftest import Ninja

from shinobi_slurm.commands import SlurmCommands, SlurmError
from shinobi_slurm.sbatch import Option
from shinobi_slurm.trial import SlurmWouldRefuse, refuse_what_slurm_would

PARTITION_REFUSED = "sbatch failed: allocation failure: Invalid partition name specified"


class _Slurm(SlurmCommands):
    """sbatch refusing whatever the variables in ``bad`` ask for while they are set."""

    def __init__(self, bad: Collection[str]) -> None:
        super().__init__()
        object.__setattr__(self, "_bad", bad)

    def run(
        self,
        tool: str,
        args: Sequence[str],
        *,
        stdin: str | None = None,
        without: Collection[str] = (),
    ) -> str:
        if tool == "sinfo":
            return "debug*\n"
        if any(v in os.environ and v not in without for v in self._bad):  # type: ignore[attr-defined]
            raise SlurmError(PARTITION_REFUSED)
        return ""


def _refused(bad: Collection[str], options: list[Option]) -> str:
    with pytest.raises(SlurmWouldRefuse) as refused:
        refuse_what_slurm_would(_Slurm(bad), [("a", options)])
    return str(refused.value)


def test_the_refusal_names_the_variable_and_the_partition_it_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SBATCH_PARTITION", "gpu")
    monkeypatch.setenv("SBATCH_ACCOUNT", "lab")  # set, but not what Slurm refuses
    for options in ([], [Option("partition", "debug")]):
        said = _refused({"SBATCH_PARTITION"}, options)
        assert "no partition 'gpu': partitions here are debug" in said
        assert "SBATCH_PARTITION=gpu in the environment" in said
        assert "unset SBATCH_PARTITION" in said and "SBATCH_ACCOUNT" not in said
        assert "fix [backend.slurm] sbatch_opts" not in said and "\n" not in said


class _AlwaysRefuses(_Slurm):
    """sbatch refusing the options themselves, whatever the environment."""

    def __init__(self) -> None:
        super().__init__(())

    def run(
        self,
        tool: str,
        args: Sequence[str],
        *,
        stdin: str | None = None,
        without: Collection[str] = (),
    ) -> str:
        if tool == "sinfo":
            return "debug*\n"
        raise SlurmError(PARTITION_REFUSED)


def test_a_refusal_the_variables_do_not_cause_still_blames_the_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SBATCH_ACCOUNT", "lab")
    monkeypatch.delenv("SBATCH_PARTITION", raising=False)
    with pytest.raises(SlurmWouldRefuse) as refused:
        refuse_what_slurm_would(_AlwaysRefuses(), [("a", [Option("partition", "dbug")])])
    said = str(refused.value)
    assert "no partition 'dbug'" in said and "fix [backend.slurm] sbatch_opts" in said
    assert "SBATCH_ACCOUNT" not in said
    # a partition that exists is not said not to
    with pytest.raises(SlurmWouldRefuse) as refused:
        refuse_what_slurm_would(_AlwaysRefuses(), [("a", [Option("partition", "debug")])])
    assert "no partition" not in str(refused.value)


RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe
class ShIn(BaseModel):
    script: str
class NoOut(BaseModel):
    pass
sh = Cab("s", ["/bin/sh", "-c"], ShIn, NoOut, {"script": ParamMeta(positional=True)})
one = Recipe("one", ShIn, NoOut)
one.add_step("a", sh, script="true")
"""


def _said(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


@pytest.mark.usefixtures("slurm")
def test_run_warns_of_the_override_then_names_it_in_the_refusal(
    ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "r.py").write_text(RECIPE)
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\nsbatch_opts = ["--partition=debug"]\n')
    done = ninja(
        "run", "r.py:one", "--script", "true", "-b", "slurm", timeout=60,
        SBATCH_PARTITION="no-such-partition",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    warning, error = _said(done.stderr)
    assert "SBATCH_PARTITION=no-such-partition in the environment overrides" in warning
    assert error.startswith("ninja: error: Slurm would refuse step 'a'")
    assert "no partition 'no-such-partition'" in error and "unset SBATCH_PARTITION" in error


@pytest.mark.usefixtures("slurm")
def test_compile_submit_names_the_variable_in_the_refusal(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text(RECIPE)
    done = ninja(
        "compile", "r.py:one", "--script", "true", "--submit", timeout=60,
        SBATCH_PARTITION="no-such-partition",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    [error] = _said(done.stderr)
    assert "no partition 'no-such-partition'" in error
    assert "SBATCH_PARTITION=no-such-partition in the environment" in error
    assert "fix [backend.slurm] sbatch_opts" not in error
