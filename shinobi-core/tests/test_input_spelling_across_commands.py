"""A recipe input has one spelling in every command that takes the inputs.

Renamed only against the options of the command at hand, input ``b`` was
``--input-b`` under ``run`` (for its ``-b``) and ``--b`` under ``compile``;
an input ``submit`` was ``--submit`` under ``run``, and under ``compile``,
where ``--submit`` is compile's own, giving it submitted the job and left the
input unset, unsaid.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from cli_in_process import in_process
from test_launch_fixtures import FakeTarget, engine

from shinobi.cli.main import cli
from shinobi.cli.recipe_options import _INPUTS_KEY, RECIPE_COMMAND_OPTIONS
from shinobi.launch.index import list_launches

__all__ = ["engine"]

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab

class I(BaseModel):
    b: bool = False
    submit: bool = False
    o: str = "x"

ec = Cab(name="ec", command="/bin/echo", inputs_model=I)
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def test_the_list_holds_every_option_of_the_commands_that_take_inputs() -> None:
    ctx = click.Context(cli)
    found = set()
    for name in ("run", "compile", "graph"):
        command = cli.get_command(ctx, name)
        assert command is not None
        for param in command.params:  # not the inputs a target loaded earlier added
            if isinstance(param, click.Option) and not (param.name or "").startswith(_INPUTS_KEY):
                found.update(param.opts, param.secondary_opts)
    assert found == RECIPE_COMMAND_OPTIONS


@pytest.mark.parametrize("command", ["run", "compile", "graph"])
def test_an_input_is_spelt_alike_in_each_command(
    command: str, ninja: Ninja, tmp_path: Path
) -> None:
    (tmp_path / "names.py").write_text(RECIPE)
    shown = ninja(command, "names.py:ec", "--help")
    assert shown.returncode == 0, shown.stderr
    for option in ("--input-b", "--input-submit", "--input-o"):
        assert option in shown.stdout, (command, shown.stdout)


def test_compile_takes_the_input_named_submit_without_submitting(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "names.py").write_text(RECIPE)
    code, out, err = in_process(
        capsys, "compile", "names.py:ec", "--engine", "fake", "--input-submit", "--input-b"
    )
    assert code == 0, err
    assert "/bin/echo --b --submit" in out
    assert not list_launches()  # the input was set, and nothing was submitted


@pytest.mark.parametrize(
    "given",
    [
        ["-b", "docker", "-b", "native"],
        ["-j", "2", "--max-workers=3"],
        ["--provenance", "--no-provenance"],
    ],
)
def test_an_option_of_the_command_given_twice_is_refused(
    given: list[str], ninja: Ninja, tmp_path: Path
) -> None:
    """click kept the last value and dropped the first, unsaid (``-b docker -b
    native`` ran natively), where a recipe input given twice is refused."""
    (tmp_path / "names.py").write_text(RECIPE)
    proc = ninja("run", "names.py:ec", *given, "--dryrun")
    assert proc.returncode == 2
    assert "is given 2 times; give it once" in proc.stderr, proc.stderr


def test_a_plain_flag_twice_is_no_conflict(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "names.py").write_text(RECIPE)
    proc = ninja("run", "names.py:ec", "--dryrun", "--dry-run")
    assert proc.returncode == 0, proc.stderr
