"""A flag in the table form of ``sbatch_opts`` given as text is refused.

``{exclusive = "yes"}`` (meant as true) went to sbatch as ``--exclusive=yes``,
which sbatch rejects at the first submission, after ninja had started the run.
"""

from __future__ import annotations

import pytest

from shinobi.errors import ConfigError
from shinobi_slurm.sbatch import parse_sbatch_opts


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"exclusive": "yes"}, 'write exclusive = true (false leaves it out), or one of "user"'),
        ({"requeue": "1"}, "--requeue is a flag; write requeue = true (false leaves it out)"),
        ({"no_kill": 1}, "--no-kill is a flag; write no_kill = true"),
    ],
)
def test_a_flag_given_text_is_refused_naming_the_fix(table: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError, match="sbatch_opts") as caught:
        parse_sbatch_opts(table)
    assert said in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("value", ["user", "mcs", "topo"])
def test_exclusive_keeps_the_values_sbatch_gives_it(value: str) -> None:
    assert [o.argument() for o in parse_sbatch_opts({"exclusive": value})] == [
        f"--exclusive={value}"
    ]


def test_flags_as_true_and_values_as_text_stand() -> None:
    options = parse_sbatch_opts({"exclusive": True, "requeue": False, "partition": "debug"})
    assert [o.argument() for o in options] == ["--exclusive", "--partition=debug"]
