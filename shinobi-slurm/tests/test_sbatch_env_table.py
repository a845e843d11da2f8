"""sbatch input variables newer than Slurm 22.05 are known for the options they shadow.

The table followed Slurm 22.05's man page, so a ``SBATCH_TRES_PER_TASK`` (or
``SBATCH_SEGMENT_SIZE``, ``SBATCH_TRES_BIND``, ``SBATCH_CONTAINER_ID``) of the
shell beat the ``#SBATCH`` line ``sbatch_opts`` became on Slurm 23.02 and
later without a word. The names follow the INPUT ENVIRONMENT VARIABLES of
Slurm 25.05's sbatch; on an older sbatch, which reads none of them, nothing
else changes.
"""

from __future__ import annotations

import pytest

from shinobi_slurm.sbatch import Option, input_variables, overriding_environment


@pytest.mark.parametrize(
    ("variable", "option", "value", "written"),
    [
        ("SBATCH_TRES_PER_TASK", "tres-per-task", "cpu=8", "cpu=2"),
        ("SBATCH_TRES_BIND", "tres-bind", "gres/gpu:closest", "gres/gpu:single:1"),
        ("SBATCH_SEGMENT_SIZE", "segment", "4", "2"),
        ("SBATCH_CONTAINER_ID", "container-id", "other", "mine"),
    ],
)
def test_a_newer_variable_beating_a_configured_option_is_said(
    variable: str, option: str, value: str, written: str
) -> None:
    configured = [Option(option, written)]
    jobs = [[Option("job-name", "shinobi-x"), *configured]]
    [said] = overriding_environment({variable: value}, jobs, configured)
    assert said.startswith(f"{variable}={value} in the environment overrides")
    assert f"'#SBATCH --{option}={written}'" in said and f"unset {variable}" in said
    assert overriding_environment({variable: written}, jobs, configured) == []


def test_an_abbreviated_option_still_finds_its_variable() -> None:
    configured = [Option("seg", "2")]  # sbatch takes an unambiguous start of an option
    [said] = overriding_environment({"SBATCH_SEGMENT_SIZE": "4"}, [configured], configured)
    assert said.startswith("SBATCH_SEGMENT_SIZE=4 in the environment overrides")


def test_the_newer_variables_are_among_those_a_refusal_may_blame() -> None:
    environ = {"SBATCH_TRES_PER_TASK": "cpu=8", "SBATCH_SEGMENT_SIZE": "4", "PATH": "/bin"}
    assert input_variables(environ) == {"SBATCH_TRES_PER_TASK": "cpu=8", "SBATCH_SEGMENT_SIZE": "4"}
