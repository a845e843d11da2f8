"""A passthrough whose input and output are declared different kinds or shapes of path
is refused where the cab is made, not after the tool ran; compatible ones still work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, create_model

from shinobi.steps import MS, Cab, Directory, File, ParamMeta


def _cab(given: Any, made: Any, meta: ParamMeta | None = None) -> Cab:
    """A cab whose input and output ``out`` are typed ``given`` and ``made``."""
    inputs: type[BaseModel] = create_model("In", out=(given, ...))
    outputs: type[BaseModel] = create_model("Out", out=(made, ...))
    return Cab("mk", "touch", inputs, outputs, {"out": meta or ParamMeta(positional=True)})


@pytest.mark.parametrize(
    ("given", "made", "shown"),
    [
        (Directory, File, "declared Directory and the output File"),
        (File, Directory, "declared File and the output Directory"),
        (MS, File, "declared MS and the output File"),
        (list[File], File, "declared list[File] and the output File"),
        (File, list[File], "declared File and the output list[File]"),
        (list[File], list[Directory], "declared list[File] and the output list[Directory]"),
    ],
)
def test_a_clashing_passthrough_is_refused_where_the_cab_is_made(
    given: Any, made: Any, shown: str
) -> None:
    with pytest.raises(ValueError) as caught:
        _cab(given, made)
    message = str(caught.value)
    assert "\n" not in message
    assert "cab 'mk': the passthrough 'out'" in message
    assert shown in message
    assert "declare both the same type, or give the output another name" in message


def test_a_dtype_is_the_kind_of_a_text_input() -> None:
    with pytest.raises(ValueError, match="declared str \\(dtype Directory\\) and the output File"):
        _cab(str, File, ParamMeta(positional=True, dtype="Directory"))


def test_a_dtype_gives_a_text_input_its_shape() -> None:
    with pytest.raises(
        ValueError, match="declared list\\[str \\(dtype File\\)\\] and the output File"
    ):
        _cab(list[str], File, ParamMeta(positional=True, dtype="File"))


@pytest.mark.parametrize(
    ("given", "made"),
    [
        (File, File),
        (MS, MS),
        (Directory, MS),
        (MS, Directory),
        (Path, File),
        (File, Path),
        (list[File], list[File]),
        (list[MS], list[Directory]),
        (File | None, File | None),
        (Any, list[File]),
    ],
)
def test_a_compatible_passthrough_is_kept(given: Any, made: Any) -> None:
    assert _cab(given, made).output_rules() == {"out": "passthrough"}


def test_a_text_input_with_a_dtype_is_a_path_so_a_passthrough() -> None:
    cab = _cab(str, File, ParamMeta(positional=True, dtype="File"))
    assert cab.output_rules() == {"out": "passthrough"}
