"""``ninja compile -o DIR``: what may be written over and removed there.

An audit found a script written through a symbolic link (the file it
pointed at, outside DIR, became a script), a file of the user's named like
a script overwritten, a name someone added to the record deleted, and a
dot-named step's stale script never removed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import in_process as _ninja
from test_offload_fixtures import plan_of
from test_offload_jobs import pipe

from shinobi.offload.base import (
    WRITTEN_LIST,
    CompileOptions,
    Script,
    ScriptsInTheWay,
    Workflow,
    compile_jobs,
)

Scripts = Callable[..., Workflow]


@pytest.fixture
def scripts(tmp_path: Path) -> Scripts:
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="run")
    jobs = compile_jobs(plan_of(pipe(), {"path": "x"}), options)

    def made(*names: str) -> Workflow:
        written = [Script(name, f"{name}.sh", f"echo {name}\n") for name in names]
        return Workflow(engine="test", options=options, jobs=jobs, scripts=written)

    return made


def test_writing_again_removes_only_the_scripts_an_earlier_write_left(
    tmp_path: Path, scripts: Scripts
) -> None:
    """A step renamed since the last compile must not leave its old script to be submitted."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    scripts("make", "use").write(out)
    (out / "by-hand.sh").write_text("echo mine\n")
    again = scripts("make", "use_renamed").write(out)
    assert again.removed == [str(out / "use.sh")]
    assert sorted(p.name for p in out.iterdir()) == [
        ".ninja-scripts",
        "by-hand.sh",
        "make.sh",
        "notes.txt",
        "use_renamed.sh",
    ]


def test_a_link_named_like_a_script_stops_the_compile_before_it_writes(
    tmp_path: Path, scripts: Scripts
) -> None:
    out, precious = tmp_path / "out", tmp_path / "important.txt"
    out.mkdir()
    precious.write_text("important\n")
    (out / "use.sh").symlink_to(precious)
    with pytest.raises(ScriptsInTheWay, match="symbolic link"):
        scripts("make", "use").write(out)
    assert precious.read_text() == "important\n"
    assert sorted(p.name for p in out.iterdir()) == ["use.sh"]  # nothing written


def test_a_file_of_the_users_named_like_a_script_is_not_overwritten(
    tmp_path: Path, scripts: Scripts
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "use.sh").write_text("my own\n")
    with pytest.raises(ScriptsInTheWay, match="is not as a ninja compile left it"):
        scripts("make", "use").write(out)
    assert (out / "use.sh").read_text() == "my own\n"
    assert not (out / "make.sh").exists()


def test_a_script_edited_since_it_was_written_is_not_written_over(
    tmp_path: Path, scripts: Scripts
) -> None:
    """An edit to a script a compile still writes (a tuned #SBATCH line) was
    lost without a word when the compile ran again."""
    out = tmp_path / "out"
    scripts("make", "use").write(out)
    with (out / "use.sh").open("a") as script:
        script.write("# my edit\n")
    with pytest.raises(ScriptsInTheWay, match=r"use.sh is there already and is not as a ninja"):
        scripts("make", "use").write(out)
    assert (out / "use.sh").read_text() == "echo use\n# my edit\n"


def test_scripts_ninja_wrote_are_written_over(tmp_path: Path, scripts: Scripts) -> None:
    out = tmp_path / "out"
    scripts("make", "use").write(out)
    again = scripts("make", "use").write(out)
    assert again.removed == [] and (out / "use.sh").read_text() == "echo use\n"


def test_only_what_is_still_as_ninja_wrote_it_is_removed(tmp_path: Path, scripts: Scripts) -> None:
    out = tmp_path / "out"
    scripts("make", "edited", ".hidden").write(out)
    (out / "notes.txt").write_text("mine\n")
    with (out / WRITTEN_LIST).open("a") as record:
        record.write("notes.txt\n")  # a name added by hand
    (out / "edited.sh").write_text("echo my change\n")
    again = scripts("make").write(out)
    assert again.removed == [str(out / ".hidden.sh")]
    assert (out / "notes.txt").read_text() == "mine\n"
    assert (out / "edited.sh").read_text() == "echo my change\n"
    # what was left is said; it is then the user's: a compile of that step stops
    assert str(out / "edited.sh") in again.kept
    with pytest.raises(ScriptsInTheWay, match="is not as a ninja compile left it"):
        scripts("make", "edited").write(out)
    assert (out / "edited.sh").read_text() == "echo my change\n"


def test_a_record_that_is_not_a_file_stops_the_compile_before_it_writes(
    tmp_path: Path, scripts: Scripts
) -> None:
    out = tmp_path / "out"
    (out / WRITTEN_LIST).mkdir(parents=True)
    with pytest.raises(ScriptsInTheWay, match="not a regular file"):
        scripts("make").write(out)
    assert not (out / "make.sh").exists()


RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class I(BaseModel):
    out: Path

class O(BaseModel):
    out: File | None = None

touch = Cab("touch", "/bin/touch", I, O, {"out": ParamMeta(positional=True)})
r = Recipe("r")
r.add_step("a", touch, out=Path("a.txt"))
"""


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "r.py").write_text(RECIPE)
    monkeypatch.chdir(tmp_path)
    return "r.py:r"


def test_an_empty_output_directory_is_refused(
    recipe: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _ninja(capsys, "compile", recipe, "-o", "")
    assert code == 2 and "empty path" in err and err.count("\n") == 1
    assert not (tmp_path / WRITTEN_LIST).exists()


def test_a_script_nobody_edited_is_written_over_after_a_copy_or_a_touch(
    tmp_path: Path, scripts: Scripts
) -> None:
    """Size and mtime alone stopped a compile into a copied (cp -r, tar, git checkout)
    or touched directory, though every script was as ninja wrote it."""
    import os
    import shutil

    out = tmp_path / "out"
    scripts("make", "use").write(out)
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, copy_function=shutil.copy)  # new mtimes, same content
    os.utime(out / "use.sh", (1, 1))
    for directory in (out, copy):
        assert scripts("make", "use").write(directory).kept == []
    (out / "use.sh").write_text("echo mus\n")  # an edit of the same size still stops it
    with pytest.raises(ScriptsInTheWay, match="is not as a ninja compile left it"):
        scripts("make", "use").write(out)


def test_a_short_write_is_finished_or_refused_never_left_as_a_script(
    tmp_path: Path, scripts: Scripts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One os.write() that wrote part of a script (a file-size limit, a full disk)
    left a truncated script, recorded as ninja's own, and said "wrote"."""
    import errno
    import os

    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data[:3])))
    out = tmp_path / "out"
    scripts("make").write(out)
    assert (out / "make.sh").read_text() == "echo make\n"  # every byte, three at a time

    calls: list[int] = []

    def full_at_the_second(fd: int, data: bytes) -> int:
        calls.append(fd)
        if len(calls) == 2:
            real(fd, bytes(data[:4]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, bytes(data))

    monkeypatch.setattr(os, "write", full_at_the_second)
    other = tmp_path / "other"
    with pytest.raises(OSError, match="No space left") as info:
        scripts("make", "use").write(other)
    assert info.value.filename == str(other / "use.sh")  # the error names the script
    assert not (other / "use.sh").exists()  # no half script is left to be submitted
    monkeypatch.setattr(os, "write", real)
    assert scripts("make", "use").write(other).kept == []  # make.sh was recorded as ninja's


def test_a_disk_that_fills_for_good_leaves_no_script_a_retry_calls_foreign(
    tmp_path: Path, scripts: Scripts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record of what was written went on the full disk too, and failed
    quietly: after space was made, the retry called each script it had written "a
    file of yours" and stopped."""
    import errno
    import os

    real = os.write
    calls: list[int] = []

    def full_from_the_second(fd: int, data: bytes) -> int:
        calls.append(fd)
        if len(calls) >= 2:  # the second script, and the record after it
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, bytes(data))

    monkeypatch.setattr(os, "write", full_from_the_second)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="No space left"):
        scripts("make", "use").write(out)
    assert not (out / "make.sh").exists() and not (out / "use.sh").exists()
    monkeypatch.setattr(os, "write", real)  # space made
    assert [Path(p).name for p in scripts("make", "use").write(out).paths] == ["make.sh", "use.sh"]
