"""A line end in a mounted path.

The ``--mount`` record was quoted for ``,`` and ``"`` but not for a newline:
the CSV writer was given no line terminator, and it quotes only the
characters of its own. An input, output or working directory with a newline
in its name failed on every engine with the engine's raw parse error. A quoted
newline is read back by all four engines; a quoted ``\\r\\n`` is not (Go's
CSV reader turns it into ``\\n``), so such a path is refused before the run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from live_engines import ENGINES, copied_through, live_backend

from shinobi.backends.base import Invocation
from shinobi_containers.docker import DockerBackend
from shinobi_containers.errors import MountRefused
from shinobi_containers.mounts import Mount, mount_option, unquotable_path


@pytest.mark.parametrize("odd", ["\n", "\r", "x\n,y"])
def test_a_path_with_a_line_end_is_quoted(odd: str) -> None:
    path = f"/data/a{odd}b"
    field = f"source={path}".replace('"', '""')
    assert f'"{field}"' in mount_option(Mount(path, path))


def test_a_plain_record_has_no_line_end() -> None:
    assert mount_option(Mount("/a", "/a")) == "type=bind,source=/a,target=/a"


def test_a_carriage_return_before_a_newline_is_refused_before_the_run(tmp_path: Path) -> None:
    path = tmp_path / "a\r\nb"
    path.mkdir()
    assert unquotable_path([Mount(str(path), str(path))]) == (
        str(path),
        "holds a carriage return before a newline, which",
    )
    invocation = Invocation(step="s", argv=("true",), cwd=str(path), image="i")
    with pytest.raises(MountRefused, match="which docker cannot carry") as refused:
        DockerBackend().spec(invocation, pin=False, ahead=True)
    assert "\n" not in str(refused.value) and repr(str(path)) in str(refused.value)


def test_a_path_that_is_not_utf8_is_refused_before_the_run(tmp_path: Path) -> None:
    """The engines read the record as UTF-8 and mount U+FFFD's path, which is not there."""
    path = os.fsdecode(os.fsencode(tmp_path) + b"/lat\xe9in")
    os.mkdir(path)
    invocation = Invocation(step="s", argv=("true",), cwd=path, image="i")
    with pytest.raises(MountRefused, match="is not UTF-8") as refused:
        DockerBackend().spec(invocation, pin=False, ahead=True)
    assert "which docker cannot carry" in str(refused.value)
    assert "rename that path, or run the step on the native backend" in str(refused.value)


def test_a_command_word_that_is_not_utf8_is_refused_too(tmp_path: Path) -> None:
    """Mounted through its parent folder, the path still reaches the engine as UTF-8 text."""
    odd = os.fsdecode(b"/data/lat\xe9in/in")
    invocation = Invocation(step="s", argv=("cat", odd), cwd=str(tmp_path), image="i")
    with pytest.raises(MountRefused, match="is not UTF-8"):
        DockerBackend().spec(invocation, pin=False, ahead=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_input_output_and_working_directory_with_a_newline_work(
    engine: str, tmp_path: Path
) -> None:
    backend = live_backend(engine)
    tmp_path.chmod(0o777)
    area = tmp_path / "only\nnewline"
    area.mkdir()
    area.chmod(0o777)
    source = area / "in\nput.txt"
    source.write_text("payload\n")
    target = area / "out\ndir" / "re\nsult.txt"
    copied_through(backend, "newline", source, target, area)
