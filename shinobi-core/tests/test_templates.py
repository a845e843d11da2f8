"""Output templates (implicit, harvest) filled from a step's inputs: an input that
is not set, an enum member, a positional field."""

from __future__ import annotations

import textwrap
from enum import Enum
from pathlib import Path

import pytest
from cli_in_process import in_process
from pydantic import BaseModel

from shinobi.errors import UsageError
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe


class _Unset(BaseModel):
    ms: File | None = None
    name: str | None = None
    n: int | None = None


class _Image(BaseModel):
    image: File


class _MaybeImage(BaseModel):
    image: File | None = None
    cubes: list[File] = []


def _one_step(cab: Cab) -> Recipe:
    recipe = Recipe("r")
    recipe.add_step("make", cab)
    return recipe


@pytest.mark.parametrize(
    ("template", "unset"),
    [
        ("{name}-image.fits", "name"),
        ("{ms.stem}.fits", "ms"),
        ("{ms[0]}.fits", "ms"),
        ("{n:05d}.fits", "n"),
    ],
)
def test_a_required_output_named_after_an_unset_input_is_refused(
    tmp_path: Path, template: str, unset: str
) -> None:
    cab = Cab(
        "img", ["touch", "None-image.fits"], _Unset, _Image, {"image": ParamMeta(implicit=template)}
    )
    with pytest.raises(UsageError) as info:
        run_recipe(_one_step(cab), cwd=tmp_path, use_cache=False)
    assert str(info.value) == (
        f"recipe 'r', step 'make', output 'image': cannot fill template {template!r}:"
        f" input {unset!r} is not set (give it a value)"
    )
    assert not list(tmp_path.glob("None*"))  # refused before the tool ran


def test_a_required_harvest_named_after_an_unset_input_is_refused(tmp_path: Path) -> None:
    cab = Cab("img", "true", _Unset, _Image, {"image": ParamMeta(harvest="{name}-*.fits")})
    with pytest.raises(UsageError, match=r"output 'image': .* input 'name' is not set"):
        run_recipe(_one_step(cab), cwd=tmp_path, use_cache=False)


def test_optional_outputs_named_after_an_unset_input_are_absent(tmp_path: Path) -> None:
    (tmp_path / "None-1.fits").write_text("")  # what the old glob 'None-*.fits' collected
    meta = {
        "image": ParamMeta(implicit="{ms.stem}.fits"),
        "cubes": ParamMeta(harvest="{name}-*.fits"),
    }
    cab = Cab("img", ["touch", "x-1.fits"], _Unset, _MaybeImage, meta)
    result = run_recipe(_one_step(cab), cwd=tmp_path, use_cache=False)
    assert result.ok
    assert result.steps[0].outputs == {"image": None, "cubes": []}


def test_a_template_that_names_a_missing_attribute_is_a_usage_error(tmp_path: Path) -> None:
    class In(BaseModel):
        ms: File = "obs.ms"

    cab = Cab("img", "true", In, _Image, {"image": ParamMeta(implicit="{ms.stme}.fits")})
    with pytest.raises(UsageError, match=r"output 'image': cannot fill template .*'stme'"):
        run_recipe(_one_step(cab), cwd=tmp_path, use_cache=False)


def test_the_cli_says_so_on_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe_file = tmp_path / "none_tpl.py"
    recipe_file.write_text(
        textwrap.dedent(
            """
            from pydantic import BaseModel
            from shinobi.steps import Cab, ParamMeta, File

            class ImgIn(BaseModel):
                name: str | None = None

            class ImgOut(BaseModel):
                image: File

            imager = Cab(name="imager", command=["true"], inputs_model=ImgIn,
                         outputs_model=ImgOut,
                         field_meta={"image": ParamMeta(implicit="{name}-image.fits")})
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process(capsys, "run", f"{recipe_file}:imager", "--dry-run")
    assert code == 2
    assert err.strip().splitlines() == [
        "ninja: error: recipe 'imager', step 'imager', output 'image': cannot fill template"
        " '{name}-image.fits': input 'name' is not set (give it a value)"
    ]


class Band(str, Enum):  # noqa: UP042 -- as users write it; str() of a member is "Band.S"
    L = "L"
    S = "S"


class _Banded(BaseModel):
    band: Band = Band.S


class _Products(BaseModel):
    image: File
    cubes: list[File] = []


def test_an_enum_member_fills_a_template_with_its_value_as_on_the_command_line(
    tmp_path: Path,
) -> None:
    meta = {
        "band": ParamMeta(positional=True),
        "image": ParamMeta(implicit="img-{band}.fits"),
        "cubes": ParamMeta(harvest="cube-{band}-*.fits"),
    }
    script = 'touch "img-$0.fits" "cube-$0-1.fits"'
    cab = Cab("img", ["sh", "-c", script], _Banded, _Products, meta)
    result = run_recipe(_one_step(cab), cwd=tmp_path, use_cache=False)
    assert result.ok, result.error
    assert result.steps[0].argv == ["sh", "-c", script, "S"]
    outputs = result.steps[0].outputs
    assert (str(outputs["image"]), [str(c) for c in outputs["cubes"]]) == (
        "img-S.fits",
        ["cube-S-1.fits"],
    )


@pytest.mark.parametrize("template", ["{}.fits", "{0}.fits", "{0[1]}.fits"])
@pytest.mark.parametrize("kind", ["implicit", "harvest"])
def test_a_positional_field_is_refused_where_the_cab_is_declared(kind: str, template: str) -> None:
    field = template.split("}")[0] + "}"
    with pytest.raises(ValueError) as info:
        Cab("img", "true", _Unset, _Image, {"image": ParamMeta(**{kind: template})})
    assert str(info.value) == (
        f"cab 'img', 'image': the {kind} template {template!r} has a positional field"
        f" {field}, which no input fills; name the input instead, e.g. {{ms}} (write {{{{"
        " for a literal brace)"
    )
