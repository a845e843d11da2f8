"""A pystep run in another interpreter hands on what it does in ninja's own.

Found by an audit of pysteps in venvs and images:

* of two pysteps one factory made (``make(2)``, ``make(3)``), the venv ran the
  first for both: they share a qualname, and the runner took the first match;
* a ``SecretStr`` output crossed as its mask: the next step got ``**********``;
* a NaN or an infinity in an untyped output (``dict``) came back as null;
* a ``BaseException`` of the user's own gave a traceback through the runner.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from test_venv_fixtures import made_venv

__all__ = ["made_venv"]

RECIPE = """
import math

from pydantic import BaseModel, SecretStr

import shinobi


def make(scale):
    @shinobi.pystep
    def inner(x: int = 10) -> int:
        return x * scale

    return inner


double = make(2)
triple = make(3)


class Out(BaseModel):
    y: int | None = None


tripled = shinobi.Recipe("tripled", outputs_model=Out)
tripled.add_step("a", triple, venv={venv!r})
tripled.set_output("y", tripled.outputs.a.result)


class Secretive(BaseModel):
    token: SecretStr
    extra: dict


@shinobi.pystep(venv={venv!r})
def secretive() -> Secretive:
    return Secretive(token="hunter2", extra={{"peak": math.inf, "rms": math.nan}})


@shinobi.pystep
def reveal(token: SecretStr, extra: dict) -> str:
    return f"{{token.get_secret_value()[::-1]}} {{extra['peak']}} {{extra['rms']}}"


class Said(BaseModel):
    said: str | None = None


chain = shinobi.Recipe("chain", outputs_model=Said)
chain.add_step("s", secretive)
chain.add_step("t", reveal, token=chain.outputs.s.token, extra=chain.outputs.s.extra)
chain.set_output("said", chain.outputs.t.result)


class Custom(BaseException):
    pass


@shinobi.pystep(venv={venv!r})
def custom() -> int:
    raise Custom("custom base")
"""


def _run(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    venv: Path,
    target: str,
) -> subprocess.CompletedProcess[str]:
    recipe_file(RECIPE.format(venv=str(venv)))
    return ninja("run", f"recipe.py:{target}", "--json", "--no-cache")


def test_the_factory_s_pystep_that_runs_is_the_one_named(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    made_venv: Path,
) -> None:
    done = _run(ninja, recipe_file, made_venv, "tripled")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["outputs"]["y"] == 30


def test_a_secret_and_a_nan_cross_as_they_are(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    made_venv: Path,
) -> None:
    done = _run(ninja, recipe_file, made_venv, "chain")
    assert done.returncode == 0, done.stderr[-2000:]
    # reversed: the run masks the secret's own text wherever it shows it
    assert json.loads(done.stdout)["outputs"]["said"] == "2retnuh inf nan"


def test_a_base_exception_of_the_user_s_is_said_as_in_ninja_s_process(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    made_venv: Path,
) -> None:
    recipe_file(RECIPE.format(venv=str(made_venv)))
    done = ninja("run", "recipe.py:custom", "--no-cache")
    assert done.returncode == 1
    assert "Custom: custom base" in done.stderr
    assert "pyrunner/runner.py" not in done.stderr, done.stderr[-2000:]
