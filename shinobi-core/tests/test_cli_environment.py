"""What the machine refuses (a path that is a file, a directory that is gone, a damaged
handle, a recipe file's own lookup failing) is one line and an exit status, never an
internal error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Ninja = Callable[..., subprocess.CompletedProcess[str]]

TOUCH = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    out: str = "made.txt"

touch = Cab("touch", "/bin/touch", In, field_meta={"out": ParamMeta(positional=True)})
pipe = Recipe("pipe", In)
pipe.add_step("touch", touch, out=pipe.inputs.out)
"""


def said(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("ninja: error:")]
    return line


def test_a_file_where_the_workspace_needs_a_directory(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    path = recipe_file(TOUCH)
    (tmp_path / ".shinobi").write_text("not a directory")
    proc = ninja("run", f"{path}:pipe")
    assert proc.returncode == 74
    assert "Not a directory" in said(proc)
    # the file that stands in the way, not the directory ninja asked for below it
    assert f"({tmp_path / '.shinobi'} is a file, where a directory is needed)" in said(proc)
    assert (tmp_path / ".shinobi").read_text() == "not a directory"


def test_a_workspace_linked_to_a_disk_that_is_not_there(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    """Run records moved to a bigger disk, not mounted today: an internal error (70)."""
    path = recipe_file(TOUCH)
    (tmp_path / ".shinobi").symlink_to(tmp_path / "unmounted")
    proc = ninja("run", f"{path}:pipe")
    assert proc.returncode == 74
    assert said(proc).endswith(
        f"(it is a symbolic link to {tmp_path / 'unmounted'}, which does not exist: mount or"
        " create that, or remove the link)"
    )
    # the other commands must not take the runs for none (and clean must not clean nothing)
    for command in (["runs"], ["clean", "--runs"], ["clean", "--launches"], ["logs", "last"]):
        proc = ninja(*command)
        assert proc.returncode == 74, (command, proc.stderr)
        assert "is a symbolic link to" in said(proc), command


def test_a_current_directory_that_was_removed(ninja: Ninja, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
    script += "from shinobi.cli.main import main; sys.argv = ['ninja', 'runs']; main()"
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 74
    assert "the current directory no longer exists" in said(proc)


def test_a_recipe_files_own_getattr_that_fails(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file("def __getattr__(name):\n    raise RuntimeError('no ' + name)\n")
    proc = ninja("run", f"{path}:pipe")
    assert proc.returncode == 2
    assert "looking up 'pipe' raised RuntimeError: no pipe" in said(proc)


@pytest.mark.parametrize("content", ["[]", '"handle"', "3"])
def test_a_handle_that_is_not_an_object(ninja: Ninja, tmp_path: Path, content: str) -> None:
    (tmp_path / "handle.json").write_text(content)
    for command in ("status", "cancel"):
        proc = ninja(command, "handle.json")
        assert proc.returncode == 2
        assert "is not a shinobi launch handle" in said(proc)
    assert json.loads((tmp_path / "handle.json").read_text()) == json.loads(content)


@pytest.mark.parametrize("imported", [False, True])
def test_a_module_beside_the_recipe_named_like_a_standard_one(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path, imported: bool
) -> None:
    (tmp_path / "json.py").write_text("dumps = None\n")
    source = TOUCH + ("import json\n" if imported else "")
    path = recipe_file(source)
    proc = ninja("run", f"{path}:pipe", "--json")
    if imported:  # the recipe itself took json's place: refused, naming the file
        assert proc.returncode == 2
        assert f"{tmp_path / 'json.py'} hides Python's own 'json' module" in said(proc)
    else:  # only beside it: ninja's own later imports still find the real one
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["status"] == "ok"


def test_debug_shows_the_traceback_and_keeps_the_exit_status(ninja: Ninja) -> None:
    for args in (["--debug"], []):
        proc = ninja(*args, "run", "/no/such/recipe.py:pipe")
        assert proc.returncode == 2
        assert proc.stderr.splitlines()[-1].startswith("ninja: error: recipe file")
        assert ("Traceback" in proc.stderr) == bool(args)


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "--debug"])
def test_a_fault_of_ninja_s_own_is_one_line_and_exit_70(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], debug: bool
) -> None:
    """The last resort, for an exception nothing foresaw: a traceback only when asked
    for, and 70, not the 1 of a failed step, so a script can tell ninja broke."""
    from cli_in_process import in_process

    from shinobi.config import AppConfig

    def unforeseen(self: AppConfig) -> None:
        raise KeyError("execution")

    monkeypatch.setattr(AppConfig, "effective", unforeseen)
    monkeypatch.delenv("SHINOBI_DEBUG", raising=False)
    code, out, err = in_process(capsys, *(["--debug"] if debug else []), "config", "show")
    assert (code, out) == (70, ""), err
    hint = "" if debug else "rerun with --debug for the traceback, and "
    line = f"ninja: internal error: KeyError: 'execution' ({hint}please report it)"
    if debug:
        assert err.startswith("Traceback (most recent call last):\n"), err
        assert err.count("Traceback") == 1, err
        assert "in unforeseen" in err and err.endswith(f"\n{line}\n")
    else:
        assert err == f"{line}\n"


@pytest.mark.parametrize("cause", [KeyboardInterrupt, EOFError])
def test_a_command_click_aborts_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cause: type[BaseException]
) -> None:
    """^C (or an end of input) inside a command reaches ninja as click's Abort: that
    is an interrupted command, 130 like every other, not the 1 of a failed step."""
    from cli_in_process import in_process

    from shinobi.config import AppConfig

    def interrupted(self: AppConfig) -> None:
        raise cause

    monkeypatch.setattr(AppConfig, "effective", interrupted)
    code, out, err = in_process(capsys, "config", "show")
    assert (code, out) == (130, ""), err
    assert err.endswith("ninja: aborted\n") and "Traceback" not in err, err


def test_a_recipe_path_that_is_no_file_is_said_for_what_it_is(ninja: Ninja, tmp_path: Path) -> None:
    """A FIFO (or ``<(cat r.py)``), a device and a dangling link were all said
    "does not exist; check the path", which sends the user looking for a typo."""
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "dangling.py").symlink_to("/no/such/r.py")
    cases = {
        "fifo.py": "'fifo.py' is a named pipe (FIFO), not a file ninja can import",
        "/dev/null": "'/dev/null' is a device, not a file ninja can import",
        "dangling.py": "'dangling.py' is a symbolic link to '/no/such/r.py', which does not exist",
    }
    for path, expected in cases.items():
        proc = ninja("run", f"{path}:pipe", timeout=30)
        assert proc.returncode == 2, proc.stderr
        assert expected in said(proc)


def test_a_directory_named_as_the_recipe_file(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "pipes").mkdir()
    proc = ninja("run", "pipes:pipe")
    assert proc.returncode == 2
    assert "'pipes' is a directory; name the recipe's .py file in it" in said(proc)


def test_a_cache_dir_that_does_not_exist_is_not_an_empty_cache(
    ninja: Ninja, tmp_path: Path
) -> None:
    for command in (["ls"], ["prune", "--dry-run"]):
        proc = ninja("cache", *command, "--cache-dir", str(tmp_path / "typo"))
        assert proc.returncode == 2
        assert f"there is no step cache at {tmp_path / 'typo'}" in said(proc)
    assert not (tmp_path / "typo").exists()


def test_debug_after_the_command_of_a_recipe_that_fails_to_load_says_to_put_it_first(
    ninja: Ninja,
) -> None:
    proc = ninja("run", "/no/such/recipe.py:pipe", "--debug")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    first, note = proc.stderr.splitlines()
    assert first.startswith("ninja: error: recipe file")
    assert note == (
        "ninja: note: --debug is an option of ninja itself: put it first (ninja --debug run ...)"
    )


def test_doctor_finds_a_configuration_no_run_could_use(ninja: Ninja, tmp_path: Path) -> None:
    (tmp_path / "shinobi.toml").write_text('[backend]\ndefault = "kubernetes"\n')
    proc = ninja("doctor")
    assert proc.returncode == 2, proc.stderr
    assert "problem: backend.default is 'kubernetes', which cannot be used" in proc.stdout
    assert "backends:" in proc.stdout  # the rest of the check is still there
    (tmp_path / "shinobi.toml").write_text("[execution]\nmax_workerz = 4\n")
    proc = ninja("doctor", "--json")
    assert proc.returncode == 2
    (problem,) = json.loads(proc.stdout)["config"]["problems"]
    assert "max_workerz" in problem
    # a backend's own table with a key the backend does not read: `run` refuses it
    (tmp_path / "shinobi.toml").write_text("[backend.native]\nbinary = 'x'\n")
    proc = ninja("doctor", "--json")
    assert proc.returncode == 2
    (problem,) = json.loads(proc.stdout)["config"]["problems"]
    assert "'backend.native.binary'" in problem and "is not a setting of the native" in problem
    # a workdir that is not there: every run and `ninja runs` refuse it, so doctor does
    (tmp_path / "shinobi.toml").write_text("[execution]\nworkdir = 'no/such/dir'\n")
    proc = ninja("doctor", "--json")
    assert proc.returncode == 2
    (problem,) = json.loads(proc.stdout)["config"]["problems"]
    assert "execution.workdir is 'no/such/dir', which does not exist" in problem


@pytest.mark.parametrize("command", [["config", "show"], ["cache", "ls", "--stale"], ["runs"]])
def test_a_reader_that_went_away_is_no_failure(tmp_path: Path, command: list[str]) -> None:
    """`ninja config show | head -1` exited 1, which says a step failed; some
    commands exited 0 and some 1, depending on when the reader left."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "shinobi.cli", *command],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "SHINOBI_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # gone before ninja writes a word
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "rror" not in err and "Traceback" not in err, err


def test_a_project_directory_this_user_cannot_write_names_workdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only checkout said only "check the permissions there", where --workdir
    (or execution.workdir) keeps the records that were in the way elsewhere."""
    import errno

    from cli_in_process import in_process

    project, elsewhere = tmp_path / "project", tmp_path / "records"
    project.mkdir()
    elsewhere.mkdir()
    (project / "r.py").write_text(TOUCH.replace("made.txt", str(tmp_path / "made.txt")))
    monkeypatch.chdir(project)
    made = Path.mkdir

    def refused(
        self: Path, mode: int = 0o777, parents: bool = False, exist_ok: bool = False
    ) -> None:
        if self.is_relative_to(project / ".shinobi"):  # as root, no mode refuses it
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        made(self, mode, parents, exist_ok)

    monkeypatch.setattr(Path, "mkdir", refused)
    os_mkdir = os.mkdir

    def os_refused(path: Any, mode: int = 0o777, **kwargs: Any) -> None:
        if Path(path).is_relative_to(project / ".shinobi"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        os_mkdir(path, mode, **kwargs)

    monkeypatch.setattr(os, "mkdir", os_refused)  # how the records' folders are made
    code, _, err = in_process(capsys, "run", "r.py:pipe")
    assert code == 74
    assert err.startswith(f"ninja: error: Permission denied: {project / '.shinobi'}")
    assert err.endswith(
        " (check the permissions there, or keep ninja's records (.shinobi/) elsewhere with"
        " --workdir or execution.workdir)\n"
    )
    code, _, err = in_process(capsys, "run", "r.py:pipe", "--workdir", str(elsewhere))
    assert code == 0, err
    assert (elsewhere / ".shinobi" / "runs").is_dir() and (tmp_path / "made.txt").exists()
