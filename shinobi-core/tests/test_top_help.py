"""``ninja --help`` without click says, byte for byte, what click says.

:mod:`shinobi.cli.top_help` lays the top-level help out itself so that it
need not import click; these tests hold it to click's own rendering at every
width click can choose, and to the same exit status and stderr where
writing the help fails.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from shinobi.cli import main as cli_main
from shinobi.cli import top_help
from shinobi.cli.main import cli

#: Forces click to answer (top_help declines when it is set) and changes
#: nothing of the help itself.
CLICK = {"SHINOBI_DEBUG": "0"}


def _clicks_help(prog: str) -> str:
    ctx = cli.context_class(cli, info_name=prog, **cli.context_settings)
    return cli.get_help(ctx)


@pytest.mark.parametrize("prog", ["ninja", "shinobi"])
def test_the_help_is_clicks_at_every_width(prog: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """click's width is the terminal's, clamped to 50..98: every one is compared."""
    for columns in range(1, top_help.MAX_CONTENT_WIDTH + 10):
        monkeypatch.setenv("COLUMNS", str(columns))
        assert top_help.render(prog) == _clicks_help(prog), columns


def test_the_help_is_clicks_at_the_terminals_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert top_help.render("ninja") == _clicks_help("ninja")


@pytest.mark.parametrize(
    ("argv", "environ"),
    [
        (["ninja", "runs"], {}),
        (["ninja", "--help", "run"], {}),
        (["ninja", "--debug", "--help"], {}),
        (["ninja", "--version"], {}),
        (["ninja", "--help"], {"_NINJA_COMPLETE": "bash_source"}),
        (["shinobi", "-h"], {"_SHINOBI_COMPLETE": "zsh_complete"}),
        (["ninja", "--help"], {"SHINOBI_DEBUG": "1"}),
        (["ninja"], {"SHINOBI_DEBUG": ""}),
    ],
)
def test_anything_else_is_left_to_click(
    argv: list[str], environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert top_help.fast_path(argv) is None


def test_no_stream_to_write_to_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    assert top_help.fast_path(["ninja", "--help"]) is None


def test_a_translated_word_of_clicks_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    import gettext

    monkeypatch.setattr(gettext, "gettext", lambda word: word.replace("Usage:", "Aufruf:"))
    assert top_help.fast_path(["ninja", "--help"]) is None


def _ninja(args: list[str], environ: dict[str, str], **streams: object) -> tuple[int, str, str]:
    """``python -m shinobi.cli ARGS``: exit status, stdout and stderr."""
    import os

    proc = subprocess.run(
        [sys.executable, "-m", "shinobi.cli", *args],
        env={**os.environ, **environ},
        capture_output=not streams,
        text=True,
        **streams,  # type: ignore[call-overload]
    )
    return proc.returncode, proc.stdout or "", proc.stderr or ""


@pytest.mark.parametrize("args", [["--help"], ["-h"], []])
def test_the_console_script_says_what_click_says(args: list[str]) -> None:
    fast = _ninja(args, {"COLUMNS": "71"})
    assert fast == _ninja(args, {"COLUMNS": "71", **CLICK})
    assert fast[0] == (0 if args else 2)


def test_the_help_loads_neither_click_nor_pydantic() -> None:
    code = (
        "import sys\n"
        "sys.argv = ['ninja', '--help']\n"
        "from shinobi.cli.console import main\n"
        "status = main()\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('click', 'pydantic', 'stevedore')]\n"
        "print('STATUS', status, 'LOADED', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stderr == "STATUS 0 LOADED []\n"
    assert proc.stdout.startswith("Usage: ninja [OPTIONS] COMMAND [ARGS]...\n\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], []])
def test_a_full_disk_is_reported_as_click_reports_it(args: list[str]) -> None:
    for stream in ("stdout", "stderr"):
        with open("/dev/full", "w") as full:
            fast = _ninja(args, {}, **{stream: full})
            slow = _ninja(args, CLICK, **{stream: full})
        assert fast == slow, stream


def test_a_reader_gone_ends_the_help_quietly() -> None:
    import os

    for environ in ({}, CLICK):
        reader, writer = os.pipe()
        os.close(reader)
        try:
            code, _, err = _ninja(["--help"], environ, stdout=writer, stderr=subprocess.PIPE)
        finally:
            os.close(writer)
        assert (code, err) == (0, ""), environ


class _Interrupted(io.StringIO):
    def write(self, text: str) -> int:
        raise KeyboardInterrupt


def test_a_ctrl_c_while_the_help_is_written_aborts_as_with_click(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _Interrupted())
    with pytest.raises(SystemExit) as slow:
        cli_main.main(["--help"])
    said_by_click = capsys.readouterr().err
    shown = top_help.fast_path(["ninja", "--help"])
    assert shown is not None
    with pytest.raises(SystemExit) as fast:
        shown()
    assert (fast.value.code, capsys.readouterr().err) == (slow.value.code, said_by_click)
    assert said_by_click == "\nninja: aborted\n"
