"""``build_model`` says which model and field has a malformed spec, and what a
spec is, instead of Python's "not enough values to unpack"."""

from __future__ import annotations

import re

import pytest

from shinobi.loaders import build_model


@pytest.mark.parametrize("spec", [("str", False), "str", ("str", True, None, 1)])
def test_a_spec_that_is_no_triple_names_the_model_and_field(spec: object) -> None:
    with pytest.raises(ValueError) as info:
        build_model("In", {"x": spec})  # type: ignore[dict-item]
    assert str(info.value) == (
        "model 'In', field 'x': expected (dtype, required, default), e.g. ('File', False,"
        f" None), not {spec!r}"
    )


def test_a_triple_builds_the_model() -> None:
    model = build_model("In", {"x": ("str", False, "a"), "n": ("int", True, None)})
    assert model(n=1).x == "a"
    with pytest.raises(ValueError, match=re.escape("n\n  Field required")):
        model()


def test_an_optional_field_takes_an_explicit_none() -> None:
    """``build_model``'s own example, ``("File", False, None)``, promises None as well
    as the default: handed ``mask=None`` (no mask), it must not say "Input is not a
    valid path"."""
    model = build_model("Out", {"mask": ("File", False, None), "n": ("int", False, 3)})
    assert model(mask=None).mask is None
    assert model(n=None).n is None


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (("int", True, 5), "a required field takes no default"),  # 5 was dropped silently
        (("int", "False", None), "required must be True or False, not 'False'"),
    ],
)
def test_a_spec_that_would_be_misread_is_refused(spec: tuple[object, ...], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        build_model("Out", {"n": spec})


@pytest.mark.parametrize("field", ["_niter", "model_config", "model_x"])
def test_a_name_pydantic_keeps_for_itself_is_refused(field: str) -> None:
    """``_niter`` was dropped from the fields without a word (a recipe wiring it
    then blamed the cab), and ``model_config`` failed with a bare TypeError."""
    with pytest.raises(ValueError, match=re.escape(f"model 'In': {field!r} cannot be a field's")):
        build_model("In", {field: ("int", False, 1), "ms": ("MS", True, None)})
