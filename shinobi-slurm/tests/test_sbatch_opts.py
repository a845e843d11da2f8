"""One entry of a ``sbatch_opts`` list is one sbatch argument, spaces and all.

``["--export=ALL,GREETING=hello world"]`` was split at the space and refused
("'world' is not an option"), while the table form took the same value. An
entry is now one argument, as in an argv; ``"--time 02:00:00"`` (an option
that takes a value, then one word) is still read as the two, and any other
entry holding two arguments is refused, asking for ``--option=value``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import RECIPES, Ninja
from launches import steps, submit, wait_final

from shinobi.errors import ConfigError
from shinobi_slurm.sbatch import Option, batch_script, parse_sbatch_opts

EXPORT = "--export=ALL,GREETING=hello world"
CONFIG = '[backend.slurm]\nsbatch_opts = ["--export=ALL,GREETING=hello world"]\n'


def _arguments(value: object) -> list[str]:
    return [o.argument() for o in parse_sbatch_opts(value)]


def test_an_entry_with_a_space_is_one_argument_as_the_table_form_is() -> None:
    assert _arguments([EXPORT]) == [EXPORT]
    assert _arguments([EXPORT]) == _arguments({"export": "ALL,GREETING=hello world"})
    script = batch_script(parse_sbatch_opts([EXPORT]), ["true"])
    assert '#SBATCH --export="ALL,GREETING=hello world"' in script.splitlines()
    assert _arguments(["--export", "ALL,GREETING=hello world"]) == [EXPORT]


def test_an_option_and_its_one_word_value_in_one_entry_are_still_read() -> None:
    assert _arguments(["--time 02:00:00", "-p debug", "-pdebug", "-p=debug"]) == [
        "--time=02:00:00",
        "--partition=debug",
        "--partition=debug",
        "--partition=debug",  # not `--partition==debug`, a partition no cluster has
    ]
    assert _arguments("--partition=debug --time=10") == ["--partition=debug", "--time=10"]


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("--export ALL,GREETING=hello world", "write '--export=VALUE'"),
        ("--time 10 --partition=debug", "write '--time=VALUE'"),
        ("--exclusive --hold", r"takes no value\); give each argument its own entry"),
    ],
)
def test_an_entry_of_two_arguments_is_refused_saying_how_to_write_it(entry: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said) as raised:
        parse_sbatch_opts([entry])
    assert "\n" not in str(raised.value)


@pytest.mark.usefixtures("slurm")
def test_the_list_form_reaches_the_job(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "shinobi.toml").write_text(CONFIG)
    launch = submit(ninja, f"{RECIPES}/collide.py:greet", cwd=tmp_path)
    found = wait_final(ninja, launch["handle"], cwd=tmp_path)
    assert steps(found)["hello"]["phase"] == "completed", found["summary"]
    said = ninja("logs", launch["run_id"], "hello", "--stream", "stdout", cwd=tmp_path)
    assert said.stdout.strip() == "greeting: hello world", said
    ran = ninja("run", f"{RECIPES}/collide.py:greet", "--backend", "slurm", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr


def test_a_one_letter_table_key_is_its_short_option_by_its_long_name() -> None:
    """``{c = 2}`` became ``#SBATCH --c=2``, which sbatch refuses as ambiguous; ``{J = ...}``
    slipped past the refusal of -J, which ninja sets itself."""
    assert parse_sbatch_opts({"c": 2}) == [Option("cpus-per-task", "2")]
    with pytest.raises(ConfigError, match="--job-name is set by ninja"):
        parse_sbatch_opts({"J": "mine"})
    with pytest.raises(ConfigError, match="unknown short option 'Z'"):
        parse_sbatch_opts({"Z": 1})
