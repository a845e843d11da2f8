"""The venv backend against a real virtualenv with a pip-installed console script."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_venv_fixtures import HELLO, made_venv

from shinobi.backends import get_backend
from shinobi.backends.base import Backend, Invocation, RunControl
from shinobi.backends.venv import VenvBackend, VenvError, resolve_command, venv_environment
from shinobi.errors import ShinobiError
from shinobi.testing.conformance import BackendConformance
from shinobi.testing.plugin import require_backend

__all__ = ["made_venv"]

Ninja = Callable[..., subprocess.CompletedProcess[str]]


class TestVenvConformance(BackendConformance):
    backend_name = "venv"

    @pytest.fixture
    def backend(self, made_venv: Path) -> Backend:
        found = require_backend("venv", {"venv": str(made_venv)})
        assert isinstance(found, Backend)
        return found


def invocation(tmp_path: Path, *argv: str, **extra: Any) -> Invocation:
    name = extra.pop("step", "step")
    return Invocation(
        step=name,
        argv=argv,
        cwd=str(tmp_path),
        stdout_path=str(tmp_path / f"{name}.out"),
        stderr_path=str(tmp_path / f"{name}.err"),
        **extra,
    )


def report(run: Any) -> dict[str, Any]:
    assert run.returncode == 0, run.stderr
    answer: dict[str, Any] = json.loads(run.stdout)
    return answer


def test_a_bare_console_script_is_the_venv_s_own(
    made_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", "/nonexistent/poison")
    monkeypatch.setenv("PYTHONHOME", "/nonexistent/home")
    backend = VenvBackend({})
    run = backend.run(invocation(tmp_path, HELLO, "a b", venv=str(made_venv)), RunControl())
    seen = report(run)
    assert seen["prefix"] == str(made_venv)
    assert seen["argv0"] == str(made_venv / "bin" / HELLO)
    assert seen["virtual_env"] == str(made_venv)
    assert seen["pythonpath"] is None and seen["pythonhome"] is None
    assert seen["path"][0] == str(made_venv / "bin")
    assert seen["args"] == ["a b"]


def test_bare_python3_is_the_venv_s_interpreter(made_venv: Path, tmp_path: Path) -> None:
    code = "import sys, click; print(sys.prefix); print(click.__version__)"
    run = VenvBackend({"venv": str(made_venv)}).run(
        invocation(tmp_path, "python3", "-c", code), RunControl()
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(made_venv), "venv-own"]


def test_a_missing_tool_fails_loudly_instead_of_using_a_host_binary(
    made_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host_bin = tmp_path / "hostbin"
    host_bin.mkdir()
    decoy = host_bin / "shinobi-decoy"
    decoy.write_text(f"#!/bin/sh\ntouch '{tmp_path / 'decoy-ran'}'\n")
    decoy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{host_bin}{os.pathsep}{os.environ['PATH']}")
    backend = VenvBackend({"venv": str(made_venv)})
    run = backend.run(invocation(tmp_path, "shinobi-decoy"), RunControl())
    assert run.returncode == 127
    assert run.reason is not None
    assert "'shinobi-decoy' is not installed in the venv" in run.reason
    assert str(made_venv) in run.reason
    assert f"write the host's path ({decoy}) in the cab" in run.reason
    assert not (tmp_path / "decoy-ran").exists()
    nowhere = backend.run(invocation(tmp_path, "shinobi-nowhere"), RunControl()).reason or ""
    assert "nor found on this host's PATH" in nowhere and "host's path" not in nowhere
    assert "not installed in the venv" in (tmp_path / "step.err").read_text()
    # ... and the same refusal happens before anything runs.
    with pytest.raises(VenvError, match=r"step 'step': command 'shinobi-decoy' is not installed"):
        backend.prepare([invocation(tmp_path, "shinobi-decoy")])
    # A second step missing its tool is refused too, after one that has its own.
    with pytest.raises(VenvError, match=r"step 'b': command 'shinobi-decoy' is not installed"):
        backend.prepare(
            [invocation(tmp_path, HELLO, step="a"), invocation(tmp_path, "shinobi-decoy", step="b")]
        )
    # A command listed as a host command may come from the host.
    allowed = VenvBackend({"venv": str(made_venv), "venv_host_commands": ["shinobi-decoy"]})
    assert allowed.run(invocation(tmp_path, "shinobi-decoy"), RunControl()).returncode == 0
    assert (tmp_path / "decoy-ran").exists()


def test_a_command_written_as_a_path_runs_as_written(made_venv: Path, tmp_path: Path) -> None:
    run = VenvBackend({"venv": str(made_venv)}).run(
        invocation(tmp_path, "/bin/sh", "-c", 'echo "$VIRTUAL_ENV"; command -v python3'),
        RunControl(),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(made_venv), str(made_venv / "bin" / "python3")]


def test_a_command_written_as_a_relative_path_runs_as_written(
    made_venv: Path, tmp_path: Path
) -> None:
    """``./tool`` and ``scripts/tool`` name the project's own script by path: read as
    bare names they would be looked up in the venv's bin and refused as missing."""
    (tmp_path / "scripts").mkdir()
    for script in ("tool", "scripts/tool"):
        (tmp_path / script).write_text('#!/bin/sh\necho "$0 in $VIRTUAL_ENV"\n')
        (tmp_path / script).chmod(0o755)
    backend = VenvBackend({"venv": str(made_venv)})
    for command in ("./tool", "scripts/tool"):
        run = backend.run(invocation(tmp_path, command), RunControl())
        assert run.returncode == 0, run.stderr
        assert run.stdout == f"{command} in {made_venv}\n"
    assert backend.prepare([invocation(tmp_path, "./tool")]) == []


def test_the_step_venv_wins_over_the_configured_one(made_venv: Path, tmp_path: Path) -> None:
    backend = VenvBackend({"venv": "/nonexistent/configured"})
    run = backend.run(invocation(tmp_path, HELLO, venv=str(made_venv)), RunControl())
    assert report(run)["prefix"] == str(made_venv)
    run = backend.run(invocation(tmp_path, HELLO), RunControl())
    assert run.returncode == 127 and "/nonexistent/configured" in (run.reason or "")


def test_a_relative_venv_is_relative_to_the_step_directory(made_venv: Path) -> None:
    run = VenvBackend({}).run(
        invocation(made_venv.parent, HELLO, venv="venv", step="rel"), RunControl()
    )
    assert report(run)["prefix"] == str(made_venv)


def test_a_directory_that_is_not_a_venv_is_refused(tmp_path: Path) -> None:
    backend = VenvBackend({})
    run = backend.run(invocation(tmp_path, HELLO, venv=str(tmp_path)), RunControl())
    assert run.returncode == 127 and "is not a virtualenv" in (run.reason or "")
    with pytest.raises(ShinobiError, match="does not exist; create it with `python3 -m venv"):
        backend.prepare([invocation(tmp_path, HELLO, venv=str(tmp_path / "nope"))])


def test_the_commands_a_venv_problem_suggests_can_be_pasted_for_a_path_with_a_space(
    tmp_path: Path,
) -> None:
    """Pasting `python3 -m venv /a/no such venv` made three venvs: no, such, venv."""
    backend = VenvBackend({})
    missing = tmp_path / "no such venv"
    with pytest.raises(ShinobiError, match=f"`python3 -m venv '{missing}'`"):
        backend.prepare([invocation(tmp_path, HELLO, venv=str(missing))])
    broken = tmp_path / "ve nv"
    (broken / "bin").mkdir(parents=True)
    (broken / "bin" / "python").symlink_to(tmp_path / "gone")
    run = backend.run(invocation(tmp_path, HELLO, venv=str(broken)), RunControl())
    assert f"`python3 -m venv --clear '{broken}'`" in (run.reason or "") + run.stderr


def test_no_venv_anywhere_runs_natively_with_a_warning(tmp_path: Path) -> None:
    backend = VenvBackend({})
    control = RunControl()
    run = backend.run(invocation(tmp_path, "/bin/sh", "-c", "echo native"), control)
    assert run.returncode == 0 and run.stdout == "native\n"
    assert any("no venv is declared" in w and "running natively" in w for w in control.warnings)
    warnings = backend.prepare(
        [invocation(tmp_path, "true", step="a"), invocation(tmp_path, "true", step="b")]
    )
    assert len(warnings) == 1 and "steps 'a', 'b'" in warnings[0]


def test_the_cab_env_applies_and_an_outer_venv_is_deactivated(tmp_path: Path) -> None:
    base = {"PATH": "/outer/venv/bin:/usr/bin", "VIRTUAL_ENV": "/outer/venv", "PYTHONPATH": "x"}
    env = venv_environment("/my/venv", {"SHINOBI_TEST_MARKER": "1"}, base)
    assert env["PATH"] == "/my/venv/bin:/usr/bin"
    assert env["VIRTUAL_ENV"] == "/my/venv" and env["SHINOBI_TEST_MARKER"] == "1"
    assert "PYTHONPATH" not in env


def test_a_path_and_virtual_env_the_cab_declares_win_with_the_venv_first() -> None:
    base = {"PATH": "/usr/local/bin:/usr/bin", "VIRTUAL_ENV": "/outer/venv"}
    env = venv_environment("/my/venv", {"PATH": "/opt/tool/bin:/bin", "VIRTUAL_ENV": "/x"}, base)
    assert env["PATH"] == "/my/venv/bin:/opt/tool/bin:/bin"
    assert env["VIRTUAL_ENV"] == "/x"


def test_the_rule_in_one_place(made_venv: Path) -> None:
    assert resolve_command([HELLO, "x"], str(made_venv)).argv == (
        str(made_venv / "bin" / HELLO),
        "x",
    )
    assert resolve_command(["/usr/bin/env"], str(made_venv)).argv == ("/usr/bin/env",)
    assert resolve_command(["./tool"], str(made_venv)).argv == ("./tool",)
    assert resolve_command(["ls"], str(made_venv)).problem is not None
    assert resolve_command(["ls"], str(made_venv), ["ls"]).problem is None


def test_a_file_in_the_venv_bin_that_cannot_run_is_not_the_venv_s_command(
    tmp_path: Path,
) -> None:
    """A venv's bin holds files that are no programs (``activate``, a tool's
    left-over data): rewriting a bare name to one of those ran nothing, with
    "Permission denied", instead of the refusal or the allowed host command."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "sort").write_text("not a program\n")  # mode 0644
    venv = str(tmp_path / "venv")
    assert resolve_command(["sort"], venv).problem is not None
    allowed = resolve_command(["sort", "-n"], venv, ["sort"])
    assert allowed.problem is None and allowed.argv == ("sort", "-n")


def test_host_commands_given_as_one_string_name_one_command(
    made_venv: Path, tmp_path: Path
) -> None:
    """Settings handed to the backend directly (``get_backend``, a plugin) may name
    the one host command as a string: read letter by letter, "sh" allowed
    nothing."""
    backend = VenvBackend({"venv": str(made_venv), "venv_host_commands": "sh"})
    assert backend.host_commands == ("sh",)
    run = backend.run(invocation(tmp_path, "sh", "-c", "echo host"), RunControl())
    assert run.returncode == 0 and run.stdout == "host\n", run.stderr


def test_the_backend_is_registered_and_checks_its_configured_venv(made_venv: Path) -> None:
    assert isinstance(get_backend("venv", {}), VenvBackend)
    assert get_backend("venv", {"venv": str(made_venv)}).check().usable
    missing = get_backend("venv", {"venv": "/nonexistent/v"}).check()
    assert not missing.usable and "/nonexistent/v" in missing.detail


# -- through ninja ------------------------------------------------------------------

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class HelloIn(BaseModel):
    touch: str
    word: str = "hi"

class HelloOut(BaseModel):
    pass

class Inputs(BaseModel):
    target: str = "made.txt"

hello = Cab("hello", "{command}", HelloIn, HelloOut,
            {{"touch": ParamMeta(flag="--touch"), "word": ParamMeta(positional=True)}})

pipe = Recipe("pipe", Inputs)
pipe.add_step("hello", hello, touch=pipe.inputs.target{venv})
"""


def write_recipe(tmp_path: Path, command: str, venv: Path | None = None) -> str:
    venv_arg = f", venv={str(venv)!r}" if venv else ""
    (tmp_path / "recipe.py").write_text(RECIPE.format(command=command, venv=venv_arg))
    return "recipe.py:pipe"


def test_ninja_run_with_the_venv_backend(ninja: Ninja, made_venv: Path, tmp_path: Path) -> None:
    target = write_recipe(tmp_path, HELLO)
    done = ninja("run", target, "--backend", "venv", env={"SHINOBI_BACKEND_VENV": str(made_venv)})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "made.txt").read_text() == f"made by hello_tool in {made_venv}"


def test_a_step_venv_selects_the_venv_backend(
    ninja: Ninja, made_venv: Path, tmp_path: Path
) -> None:
    target = write_recipe(tmp_path, HELLO, venv=made_venv)
    done = ninja("run", target)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "made.txt").read_text() == f"made by hello_tool in {made_venv}"


def test_ninja_refuses_a_missing_tool_before_anything_runs(
    ninja: Ninja, made_venv: Path, tmp_path: Path
) -> None:
    target = write_recipe(tmp_path, "shinobi-not-there")
    done = ninja("run", target, "--backend", "venv", env={"SHINOBI_BACKEND_VENV": str(made_venv)})
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "step 'hello': command 'shinobi-not-there' is not installed in the venv" in done.stderr
    assert not (tmp_path / ".shinobi" / "runs").exists() or not list(
        (tmp_path / ".shinobi" / "runs").glob("*/logs/hello.out")
    )


def test_a_dryrun_prints_the_plain_argv(ninja: Ninja, made_venv: Path, tmp_path: Path) -> None:
    target = write_recipe(tmp_path, HELLO)
    done = ninja(
        "run", target, "--backend", "venv", "--dryrun", env={"SHINOBI_BACKEND_VENV": str(made_venv)}
    )
    assert done.returncode == 0, done.stderr
    assert f"$ {HELLO} --touch made.txt hi" in done.stdout
    assert str(made_venv / "bin") not in done.stdout
    assert not (tmp_path / "made.txt").exists()


def test_ninja_with_no_venv_anywhere_runs_natively_and_warns_once(
    ninja: Ninja, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("SHINOBI_BACKEND_VENV", raising=False)
    (tmp_path / "fake.sh").write_text('touch "$2"\n')  # called as: fake.sh --touch FILE WORD
    target = write_recipe(tmp_path, f"/bin/sh {tmp_path / 'fake.sh'}")
    done = ninja("run", target, "--backend", "venv")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("no venv is declared") == 1
    assert "running natively" in done.stderr
    assert "(native: no venv)" in done.stderr and "(venv)" not in done.stderr  # the progress
    assert (tmp_path / "made.txt").exists()


PYSTEP_RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe, pystep

class TouchIn(BaseModel):
    out: Path

class Out(BaseModel):
    y: int | None = None

first = Cab("first", "touch", TouchIn, BaseModel, {{"out": ParamMeta(positional=True)}})

@pystep(venv={venv!r})
def late(x: int) -> Out:
    return Out(y=x)

pipe = Recipe("pipe", BaseModel)
pipe.add_step("first", first, out=Path("first-ran"))
pipe.add_step("late", late, x=1)
"""


def test_a_pystep_whose_venv_is_missing_is_refused_before_anything_runs(
    ninja: Ninja, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-venv"
    (tmp_path / "recipe.py").write_text(PYSTEP_RECIPE.format(venv=str(missing)))
    done = ninja("run", "recipe.py:pipe")
    assert done.returncode == 2, done.stderr
    assert f"step 'late': the venv '{missing}' does not exist" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "first-ran").exists()  # refused before the first step
