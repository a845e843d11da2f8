"""Wranglers turn a tool's output lines into outputs, errors and warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe, Wrangler


class Out(BaseModel):
    rms: float | None = None


def tool(script: str, *wranglers: Wrangler) -> Cab:
    return Cab("tool", ["/bin/sh", "-c", script], outputs_model=Out, wranglers=wranglers)


def test_an_output_is_set_from_a_matching_line(tmp_path: Path) -> None:
    cab = tool(
        "echo 'noise'; echo 'final rms: 0.25 Jy'", Wrangler(r"rms: ([\d.]+)", "output", "rms")
    )
    result = run_recipe(cab, cwd=tmp_path)
    assert result.ok and result.outputs == {"rms": 0.25}


def test_an_error_line_fails_a_step_that_exited_zero(tmp_path: Path) -> None:
    cab = tool("echo 'SEVERE: table is locked' >&2; exit 0", Wrangler(r"^SEVERE", "error"))
    result = run_recipe(cab, cwd=tmp_path)
    assert not result.ok
    assert "the tool reported an error: SEVERE: table is locked" in (result.error or "")


def test_warnings_are_recorded(tmp_path: Path) -> None:
    cab = tool("echo 'WARN: low snr'", Wrangler(r"^WARN", "warning"))
    result = run_recipe(cab, cwd=tmp_path)
    assert result.ok and result.steps[0].warnings == ["WARN: low snr"]


def test_warnings_are_shown_as_the_step_ends(tmp_path: Path) -> None:
    import io

    from shinobi.render.progress import PlainProgress

    out = io.StringIO()
    cab = tool("echo 'WARN: low snr'", Wrangler(r"^WARN", "warning"))
    assert run_recipe(cab, cwd=tmp_path, observers=[PlainProgress(out, 1)]).ok
    assert out.getvalue().splitlines()[-1].endswith("] warning: step tool: WARN: low snr")


class Required(BaseModel):
    rms: float


def test_a_required_output_no_line_matched_says_so_with_the_pattern(tmp_path: Path) -> None:
    cab = Cab(
        "tool",
        ["/bin/sh", "-c", "echo 'no rms today'"],
        outputs_model=Required,
        wranglers=[Wrangler(r"final rms: ([\d.]+)", "output", "rms")],
    )
    result = run_recipe(cab, cwd=tmp_path)
    assert not result.ok
    # the pattern as written in the recipe, its backslash not doubled by a repr
    assert (
        "output 'rms': no line the tool printed matched its wrangler r'final rms: ([\\d.]+)'"
        in (result.error or "")
    )


def test_a_value_that_does_not_fit_its_type_is_named(tmp_path: Path) -> None:
    cab = tool("echo 'final rms: low'", Wrangler(r"final rms: (\w+)", "output", "rms"))
    result = run_recipe(cab, cwd=tmp_path)
    assert not result.ok and "(got 'low')" in (result.error or "")


def test_the_group_named_like_the_output_wins_over_the_first(tmp_path: Path) -> None:
    cab = tool("echo 'final rms: 0.5'", Wrangler(r"final (rms): (?P<rms>[\d.]+)", "output", "rms"))
    assert run_recipe(cab, cwd=tmp_path).outputs == {"rms": 0.5}


LONG_TALK = (
    'echo "SEVERE: calibration table corrupt"; echo "final rms: 0.5";'
    ' head -c 20000000 /dev/zero | tr "\\0" "a" | fold -w 100'
)


class RmsOut(BaseModel):
    rms: float | None = None


@pytest.mark.parametrize("error_wrangler", [True, False])
def test_wranglers_read_a_stream_longer_than_ninja_keeps(
    tmp_path: Path, error_wrangler: bool
) -> None:
    """Only the last 16 MiB were wrangled: an error line printed before 20 MB of
    progress passed the failed step as ok, and the result line was "not printed"."""
    wranglers = [Wrangler(r"final rms: ([\d.]+)", "output", output="rms")]
    if error_wrangler:
        wranglers.append(Wrangler(r"^SEVERE", "error"))
    talker = Cab("talker", ["sh", "-c", LONG_TALK], None, RmsOut, wranglers=wranglers, cache=False)
    recipe = Recipe("r")
    recipe.add_step("t", talker)
    result = run_recipe(recipe, cwd=tmp_path, use_cache=False)
    if error_wrangler:
        assert not result.ok
        assert result.error == "the tool reported an error: SEVERE: calibration table corrupt"
    else:
        assert result.ok, result.error
        assert result.steps[0].outputs == {"rms": 0.5}
