"""The argv rules (documented in docs/cabs.md) and the paths a cab touches."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import MS, Cab, File, ParamMeta
from shinobi.steps.argv import path_uses, render_argv
from shinobi.steps.outputs import static_outputs


class In(BaseModel):
    ms: MS
    niter: int = 0
    verbose: bool = False
    quiet: bool = True
    weights: list[float] = []
    prefix: str | None = None
    extra: list[str] = []


class Out(BaseModel):
    ms: MS | None = None
    image: File | None = None


def cab(**meta: ParamMeta) -> Cab:
    return Cab("tool", "tool --fixed 'a b'", In, Out, meta)


def test_command_string_is_split_like_a_shell_without_a_shell() -> None:
    assert render_argv(cab(), {"ms": "x.ms"})[:3] == ["tool", "--fixed", "a b"]


def test_a_path_is_a_program_and_may_stand_in_an_argv_list() -> None:
    assert Cab("t", Path("/bin/true"), In, Out).command == ("/bin/true",)
    assert Cab("t", [Path("/bin/echo"), "hi"], In, Out).command == ("/bin/echo", "hi")


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["echo", 3], "has 3 (int)"),
        (None, "has None (NoneType)"),
        ("", "is empty"),
        ([], "is empty"),
        ("echo 'unbalanced", "cannot be split into words (no closing quotation)"),
    ],
)
def test_a_command_that_is_not_words_is_refused_naming_the_cab(command: Any, said: str) -> None:
    with pytest.raises(ValueError, match=rf"^cab 'bad': its command .*{re.escape(said)}"):
        Cab("bad", command, In, Out)


def test_options_in_field_order_then_positionals() -> None:
    argv = render_argv(
        cab(ms=ParamMeta(positional=True), extra=ParamMeta(positional=True)),
        {"ms": "x.ms", "niter": 5, "extra": ["e1", "e2"], "prefix": "p"},
    )
    assert argv[3:] == ["--niter", "5", "--prefix", "p", "x.ms", "e1", "e2"]


class Mode(str, Enum):  # noqa: UP042 (the users' spelling, whose str() differs)
    fast = "fast"
    slow = "slow"


class Weighting(Enum):
    natural = "natural"
    briggs = 0.5


class Modes(BaseModel):
    mode: Mode
    weighting: Weighting
    modes: list[Mode] = []
    last: Mode | None = None


def test_a_none_in_a_list_is_left_out_as_a_none_alone_is() -> None:
    class In(BaseModel):
        xs: list[str | None] = []
        ys: list[str | None] = []
        zs: list[str | None] = []
        words: list[str | None] = []

    cab = Cab(
        "c",
        "tool",
        In,
        field_meta={
            "ys": ParamMeta(list_style="repeat"),
            "zs": ParamMeta(list_style="comma"),
            "words": ParamMeta(positional=True),
        },
    )
    values = {"xs": [None], "ys": ["c", None], "zs": ["d", None], "words": ["a", None, "b"]}
    assert render_argv(cab, values) == ["tool", "--ys", "c", "--zs", "d", "a", "b"]


def test_an_enum_member_is_given_as_its_value() -> None:
    tool = Cab("tool", "tool", Modes, None, {"last": ParamMeta(positional=True, skip=False)})
    eq = Cab("tool", "tool", Modes, None, {"mode": ParamMeta(style="equals")})
    values = {"mode": Mode.slow, "weighting": Weighting.briggs, "modes": [Mode.fast, Mode.slow]}
    argv = render_argv(tool, {**values, "last": Mode.fast})
    assert argv == [
        "tool",
        "--mode",
        "slow",
        "--weighting",
        "0.5",
        "--modes",
        "fast",
        "--modes",
        "slow",
        "fast",
    ]
    assert render_argv(eq, values)[1] == "--mode=slow"


def test_none_and_false_are_omitted_true_is_a_bare_flag() -> None:
    argv = render_argv(cab(), {"ms": "m", "verbose": False, "quiet": True, "prefix": None})
    assert "--verbose" not in argv and "--prefix" not in argv
    assert argv[-1] == "--quiet" and "True" not in argv


class Gaincal(BaseModel):
    vis: MS
    selectdata: bool = True
    calwt: bool | int = True  # a bool behind a union is given the same way


def gaincal() -> Cab:
    """A key=value tool (CASA's task syntax): no prefix, every field ``key=value``."""
    keys = ("vis", "selectdata", "calwt")
    meta = {k: ParamMeta(style="equals") for k in keys}
    return Cab("gc", ["gaincal"], Gaincal, None, meta, flag_prefix="")


@pytest.mark.parametrize("value", [False, True])
def test_a_bool_given_key_equals_value_names_its_value(value: bool) -> None:
    """``calwt=False`` was left out, so CASA took its own default, True: the
    opposite of what the recipe asked."""
    argv = render_argv(gaincal(), {"vis": "a.ms", "selectdata": value, "calwt": value})
    assert argv == ["gaincal", "vis=a.ms", f"selectdata={value}", f"calwt={value}"]


def test_the_run_gives_the_tool_and_its_record_a_key_equals_false(tmp_path: Path) -> None:
    (tmp_path / "a.ms").mkdir()
    tool = Cab("gc", ["echo", "gaincal"], Gaincal, None, gaincal().field_meta, flag_prefix="")
    (step,) = run_recipe(tool, {"vis": "a.ms", "selectdata": False}, cwd=tmp_path).steps
    assert step.argv == ["echo", "gaincal", "vis=a.ms", "selectdata=False", "calwt=True"]


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (ParamMeta(), ["--weights", "1.0", "--weights", "2.5"]),
        (ParamMeta(list_style="spread"), ["--weights", "1.0", "2.5"]),
        (ParamMeta(list_style="comma"), ["--weights", "1.0,2.5"]),
        (ParamMeta(style="equals"), ["--weights=1.0", "--weights=2.5"]),
        (ParamMeta(flag="-w", list_style="comma", style="equals"), ["-w=1.0,2.5"]),
    ],
)
def test_list_styles(meta: ParamMeta, expected: list[str]) -> None:
    argv = render_argv(cab(weights=meta), {"ms": "m", "weights": [1.0, 2.5], "quiet": False})
    assert argv[3:5] == ["--ms", "m"]
    assert argv[5:] == expected


def test_empty_lists_and_skipped_fields_are_omitted() -> None:
    argv = render_argv(cab(prefix=ParamMeta(skip=True)), {"ms": "m", "weights": [], "prefix": "p"})
    assert argv == ["tool", "--fixed", "a b", "--ms", "m"]


def test_flag_prefix() -> None:
    single = Cab("t", "t", In, Out, flag_prefix="-")
    assert render_argv(single, {"ms": "m", "niter": 2}) == ["t", "-ms", "m", "-niter", "2"]


def test_values_with_shell_metacharacters_are_passed_verbatim() -> None:
    nasty = "a b'\"$(rm -rf /)`x`;|&"
    assert render_argv(cab(), {"ms": nasty})[-1] == nasty


def test_passthrough_and_implicit_outputs_are_known_statically() -> None:
    tool = Cab("tool", "tool", In, Out, {"image": ParamMeta(implicit="{prefix}-image.fits")})
    outs = static_outputs(tool, "img", {"ms": "obs.ms", "prefix": "run1"})
    assert outs == {"ms": "obs.ms", "image": "run1-image.fits"}


def test_path_uses_mark_passthrough_as_written_and_honour_writable(tmp_path: Path) -> None:
    class ReadIn(BaseModel):
        ms: MS
        cal: File

    class ReadOut(BaseModel):
        ms: MS | None = None

    tool = Cab(
        "tool",
        "tool",
        ReadIn,
        ReadOut,
        {"cal": ParamMeta(writable=False), "ms": ParamMeta(mutable=True)},
    )
    uses = path_uses(tool, {"ms": "obs.ms", "cal": "/data/cal.tbl"}, {}, str(tmp_path))
    by_field = {u.field: u for u in uses}
    assert by_field["ms"].role == "output" and by_field["ms"].mutable
    assert by_field["ms"].path == str(tmp_path / "obs.ms") and by_field["ms"].kind == "dir"
    assert by_field["cal"].role == "input" and not by_field["cal"].writable


def test_a_read_only_passthrough_stays_an_input(tmp_path: Path) -> None:
    """A validator that hands its input on under the same name writes nothing:
    it must be protected like any other ``writable=False`` input."""

    class CheckIn(BaseModel):
        f: File

    class CheckOut(BaseModel):
        f: File | None = None

    check = Cab("check", "check", CheckIn, CheckOut, {"f": ParamMeta(writable=False)})
    (use,) = path_uses(check, {"f": "keep.txt"}, {}, str(tmp_path))
    assert use.role == "input" and not use.writable


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: ParamMeta(list_style="diagonal"), "list_style='diagonal' is not one of"),
        (lambda: ParamMeta(style="weird"), "style='weird' is not one of"),
        (lambda: __import__("shinobi").Wrangler("x", "explode"), "action='explode' is not one"),
        (
            lambda: Cab("tool", "tool", In, Out, {"nitre": ParamMeta(flag="-n")}),
            "field_meta names 'nitre'.*did you mean 'niter'",
        ),
        (
            lambda: Cab(
                "tool",
                "tool",
                In,
                Out,
                wranglers=[__import__("shinobi").Wrangler(r"x(\d)", "output", output="imag")],
            ),
            "sets output 'imag'.*did you mean 'image'",
        ),
    ],
)
def test_a_misdeclared_cab_is_refused_when_it_is_made(make: Any, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        make()


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"X=Y": "1"}, "'X=Y' is not a valid environment variable name"),
        ({"": "1"}, "'' is not a valid environment variable name"),
        ({"N": 3}, "environment variable 'N' = 3 is not text"),
        ({"N": "a\0b"}, "environment variable 'N' contains a NUL byte"),
    ],
)
def test_an_environment_no_process_can_take_is_refused_with_the_cab(
    env: dict[str, Any], said: str
) -> None:
    """Every backend alike: docker read X=Y=1 as X, the others refused it mid-run."""
    with pytest.raises(ValueError, match=re.escape(f"cab 'tool': env: {said}")):
        Cab("tool", "tool", env=env)


class Grouped(BaseModel):
    groups: list[list[File]] = []


def test_a_list_in_a_list_reaches_the_tool_as_json_not_python_s_repr() -> None:
    """Each inner list of paths was ``[PosixPath('a.ms'), PosixPath('b.ms')]``."""
    cab = Cab("c", "tool", Grouped)
    argv = render_argv(cab, {"groups": [[Path("a.ms"), Path("b.ms")], [Path("c.ms")]]})
    assert argv == ["tool", "--groups", '["a.ms", "b.ms"]', "--groups", '["c.ms"]']


def test_bytes_have_no_command_line_form() -> None:
    from shinobi.steps.types import wordless

    assert wordless(b"abc") == "bytes"  # str() of it is b'abc': refused, not passed on


class Loose(BaseModel):
    v: File | int = 0


def test_a_path_in_a_union_field_that_starts_with_a_dash_is_not_an_option() -> None:
    """``File | int`` given ``Path("-x")`` rendered ``-x``: ninja treats it as a path
    (it is mounted, keyed by content), and the tool took it for an option."""
    assert render_argv(Cab("c", "tool", Loose), {"v": Path("-x")}) == ["tool", "--v", "./-x"]
    assert render_argv(Cab("c", "tool", Loose), {"v": -3}) == ["tool", "--v", "-3"]
