"""Cab declarations that were silently misread, and the order an output
wrangler on both streams reads them in."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Wrangler
from shinobi.steps.argv import render_argv
from shinobi.steps.outputs import wrangle


class In(BaseModel):
    prefix: str
    verbose: bool = False


class Out(BaseModel):
    image: File | None = None


def test_a_field_meta_key_far_from_every_field_is_refused_naming_the_fields() -> None:
    """The audit's case: ``restored`` on a cab whose output is ``image`` was dropped,
    its implicit template with it, and the run reported ``image = None``."""
    with pytest.raises(ValueError) as caught:
        Cab("img", "img", In, Out, {"restored": ParamMeta(implicit="{prefix}-image.fits")})
    assert str(caught.value) == (
        "cab 'img': field_meta names 'restored', which is neither an input nor an output;"
        " its fields: image, prefix, verbose"
    )


def test_a_field_meta_key_near_a_field_still_gets_the_suggestion() -> None:
    with pytest.raises(ValueError, match=r"names 'imag', .*; did you mean 'image'\?$"):
        Cab("img", "img", In, Out, {"imag": ParamMeta(implicit="{prefix}-image.fits")})


def test_a_field_meta_key_on_a_cab_without_fields_says_it_has_none() -> None:
    with pytest.raises(ValueError, match=r"names 'nosuch', .*; it has no fields$"):
        Cab("tool", "tool", field_meta={"nosuch": ParamMeta(flag="-x")})


class Rms(BaseModel):
    rms: float | None = None


def rms_cab(stream: str = "both") -> Cab:
    wrangler = Wrangler(r"rms: ([\d.]+)", "output", output="rms", stream=stream)  # type: ignore[arg-type]
    return Cab("tool", "tool", outputs_model=Rms, wranglers=[wrangler])


def test_both_streams_read_stdout_first_and_a_different_stderr_value_warns() -> None:
    found = wrangle(rms_cab(), "rms: 1.5\n", "rms: 2.5\n")
    assert found.values == {"rms": "2.5"}  # the documented order: stdout's lines, then stderr's
    assert found.warnings == [
        "output 'rms' took '2.5' from stderr over '1.5' from stdout: its wrangler"
        r" r'rms: ([\d.]+)' matched on both, and reads stdout's lines first, then stderr's;"
        " give the wrangler stream='stdout' or stream='stderr' to read the one that has it"
    ]


@pytest.mark.parametrize(
    ("stream", "stdout", "stderr", "value"),
    [
        ("both", "rms: 1.5\n", "rms: 1.5\n", "1.5"),  # the same value: nothing to doubt
        ("both", "rms: 1.5\nrms: 0.5\n", "", "0.5"),  # one stream: its last line
        ("both", "", "rms: 2.5\n", "2.5"),
        ("stdout", "rms: 1.5\n", "rms: 2.5\n", "1.5"),  # the way out the warning names
        ("stderr", "rms: 1.5\n", "rms: 2.5\n", "2.5"),
    ],
)
def test_no_warning_without_two_streams_that_disagree(
    stream: str, stdout: str, stderr: str, value: str
) -> None:
    found = wrangle(rms_cab(stream), stdout, stderr)
    assert found.values == {"rms": value} and found.warnings == []


def test_a_later_wrangler_that_sets_the_output_takes_the_warning_with_it() -> None:
    """The warning is about the value the step ends with, not one a later wrangler
    replaced."""
    cab = Cab(
        "tool",
        "tool",
        outputs_model=Rms,
        wranglers=[
            Wrangler(r"rms: ([\d.]+)", "output", output="rms"),
            Wrangler(r"final rms: ([\d.]+)", "output", output="rms", stream="stdout"),
        ],
    )
    found = wrangle(cab, "rms: 1.5\nfinal rms: 0.7\n", "rms: 2.5\n")
    assert found.values == {"rms": "0.7"} and found.warnings == []


def test_the_audits_run_warns_which_value_it_took(tmp_path: Path) -> None:
    cab = Cab(
        "tool",
        ["/bin/sh", "-c", 'echo "rms: 2.5" >&2; echo "rms: 1.5"'],
        outputs_model=Rms,
        wranglers=[Wrangler(r"rms: ([\d.]+)", "output", output="rms")],
    )
    result = run_recipe(cab, cwd=tmp_path)
    assert result.ok and result.outputs == {"rms": 2.5}
    assert [w.split(":")[0] for w in result.steps[0].warnings] == [
        "output 'rms' took '2.5' from stderr over '1.5' from stdout"
    ]


class Echo(BaseModel):
    text: str = "hello"
    verbose: bool = True


@pytest.mark.parametrize(
    "meta",
    [ParamMeta(positional=True), ParamMeta(positional=True, flag="-v")],
)
def test_a_positional_bool_is_refused(meta: ParamMeta) -> None:
    """It reached the tool as the word ``True``; a flag given beside positional was
    never used either."""
    with pytest.raises(ValueError) as caught:
        Cab("echo", "echo", Echo, field_meta={"text": ParamMeta(positional=True), "verbose": meta})
    said = str(caught.value)
    assert said.startswith("cab 'echo': input 'verbose' is a bool marked positional")
    assert "ParamMeta(flag=...)" in said and "str or Literal" in said and "\n" not in said


def test_a_bool_list_marked_positional_is_refused_too() -> None:
    class Flags(BaseModel):
        flags: list[bool] = []

    with pytest.raises(ValueError, match="input 'flags' is a bool marked positional"):
        Cab("t", "t", Flags, field_meta={"flags": ParamMeta(positional=True)})


def test_a_bool_that_is_a_flag_or_skipped_is_accepted() -> None:
    cab = Cab(
        "echo",
        "echo",
        Echo,
        field_meta={"text": ParamMeta(positional=True), "verbose": ParamMeta(flag="-v")},
    )
    assert render_argv(cab, {"text": "hello", "verbose": True}) == ["echo", "-v", "hello"]
    skipped = Cab(
        "echo", "echo", Echo, field_meta={"verbose": ParamMeta(positional=True, skip=True)}
    )
    assert render_argv(skipped, {"text": "hi", "verbose": True}) == ["echo", "--text", "hi"]


def test_a_wrangler_that_is_no_regular_expression_is_said_so() -> None:
    """re's own exception is called ``error``: "raised error: missing )" read oddly."""
    with pytest.raises(ValueError, match=r"wrangler r'\(oops': not a valid regular expression"):
        Wrangler("(oops", "error")


def test_wranglers_given_as_a_mapping_are_refused_with_the_form_to_use() -> None:
    """A dict of pattern to action failed later with "'str' object has no attribute"."""
    with pytest.raises(TypeError, match=r"cab 't': wranglers must be Wrangler\(\.\.\.\) objects"):
        Cab(name="t", command="echo", wranglers={"ERROR": "error"})  # type: ignore[arg-type]


class Tagged(BaseModel):
    tag: str | None = None


def test_a_named_group_that_did_not_match_gives_no_value_not_group_one() -> None:
    """``(\\w+) tag(?:=(?P<tag>\\w+))?`` on ``image tag``: the output took group 1,
    ``image``, with exit 0 and no word."""
    cab = Cab(
        "tool",
        "tool",
        outputs_model=Tagged,
        wranglers=[Wrangler(r"(\w+) tag(?:=(?P<tag>\w+))?", "output", output="tag")],
    )
    assert wrangle(cab, "image tag\n", "").values == {}
    assert wrangle(cab, "image tag=v2\nimage tag\n", "").values == {"tag": "v2"}


def test_a_line_whose_value_group_took_no_part_keeps_the_earlier_value() -> None:
    """``rms: 1.5`` then a bare ``rms``: the output became None over a good value."""
    cab = Cab(
        "tool",
        "tool",
        outputs_model=Rms,
        wranglers=[Wrangler(r"rms(?:: ([\d.]+))?", "output", output="rms")],
    )
    assert wrangle(cab, "rms: 1.5\nrms\n", "").values == {"rms": "1.5"}


class SideIn(BaseModel):
    prefix: str = "p"
    ms: str = "x.ms"


class SideOut(BaseModel):
    img: File | None = None


@pytest.mark.parametrize(
    ("key", "meta", "said"),
    [
        ("prefix", ParamMeta(implicit="{prefix}.fits"), "sets implicit, which only outputs"),
        ("prefix", ParamMeta(harvest="{prefix}*.fits"), "sets harvest, which only outputs"),
        ("img", ParamMeta(flag="-o"), "sets flag, which only inputs"),
        ("img", ParamMeta(positional=True), "sets positional, which only inputs"),
    ],
)
def test_a_setting_of_the_other_side_is_refused_not_ignored(
    key: str, meta: ParamMeta, said: str
) -> None:
    """``implicit=`` on an input was accepted, and the output it meant to name always
    came back None."""
    with pytest.raises(ValueError, match=f"field_meta\\['{key}'\\] {said}"):
        Cab("c", "tool", SideIn, SideOut, {key: meta})


@pytest.mark.parametrize("flag", ["", "-n ", " -n"])
def test_an_empty_or_padded_flag_is_refused(flag: str) -> None:
    """``flag=""`` silently fell back to the default flag; ``"-n "`` kept its space."""
    with pytest.raises(ValueError, match="is empty or holds spaces at its ends"):
        Cab("c", "tool", SideIn, None, {"prefix": ParamMeta(flag=flag)})


def test_an_input_both_rewritten_and_never_written_is_refused_when_the_cab_is_made() -> None:
    """Only a container backend refused it, at run time."""
    with pytest.raises(ValueError, match=r"both mutable .* and writable=False"):
        Cab("c", "tool", SideIn, None, {"ms": ParamMeta(mutable=True, writable=False)})


class Worded(BaseModel):
    lit: Literal[True, False] = True
    uni: bool | int = True
    words: list[bool | str] = []


@pytest.mark.parametrize(
    ("name", "meta"),
    [
        ("lit", ParamMeta(positional=True)),
        ("uni", ParamMeta(positional=True)),
        ("words", ParamMeta()),
    ],
)
def test_a_bool_behind_a_union_or_a_literal_cannot_become_a_word(
    name: str, meta: ParamMeta
) -> None:
    """Only a plain bool was refused where it would reach the tool as the word True."""
    with pytest.raises(ValueError, match=f"input '{name}' is .* takes a bool"):
        Cab("c", "tool", Worded, None, {name: meta})


class MappedIn(BaseModel):
    x: dict[str, File] = {}


class OnePathOut(BaseModel):
    x: File | None = None


def test_a_mapping_passed_through_as_one_path_is_refused_when_the_cab_is_made() -> None:
    """Only the run refused it, after the tool's work was done."""
    with pytest.raises(ValueError, match="can never be valid: the input is a mapping or a model"):
        Cab("c", "echo", MappedIn, OnePathOut, {"x": ParamMeta(skip=True)})


class _One(BaseModel):
    x: str = "v"


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"field_meta": {"x": ParamMeta(positional=True, flag="--x")}}, "sets flag='--x'"),
        ({"field_meta": {"x": ParamMeta(positional=True, style="equals")}}, "sets style='equals'"),
        ({"flag_prefix": " "}, "flag_prefix=' ' holds spaces at its ends"),
    ],
)
def test_a_setting_the_command_line_would_drop_is_refused(
    settings: dict[str, object], said: str
) -> None:
    """A positional input's flag was dropped without a word: the tool that needed
    ``--x v`` got a bare ``v`` at the end."""
    with pytest.raises(ValueError, match=re.escape(said)):
        Cab("c", ["/bin/echo"], _One, **settings)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("meta", "said"),
    [
        (
            "-name",
            "field_meta['x'] must be a ParamMeta, not str '-name'; write ParamMeta(flag=...)",
        ),
        ({"positional": True}, "write ParamMeta(**{'positional': True})"),
    ],
)
def test_a_field_meta_that_is_no_parammeta_is_refused_saying_what_to_write(
    meta: object, said: str
) -> None:
    """It was read later as one: a bare AttributeError ('str' object has no attribute
    'implicit')."""
    with pytest.raises(TypeError, match=re.escape(said)):
        Cab("c", ["/bin/echo"], _One, field_meta={"x": meta})  # type: ignore[dict-item]
