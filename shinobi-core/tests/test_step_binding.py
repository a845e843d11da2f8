"""``@shinobi.step(X)`` binds an orchestration function to a Cab, and only to one:
anything else is refused at the decorator, and a recipe file that does it is a
one-line load error (exit 2), not an internal error once the recipe is built."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process
from pydantic import BaseModel

import shinobi
from shinobi.steps import Cab, ParamMeta, Recipe


class EIn(BaseModel):
    msg: str = "hi"


class EOut(BaseModel):
    pass


echo = Cab("echo", ["echo"], EIn, EOut, {"msg": ParamMeta(positional=True)})


@shinobi.pystep
def shout(msg: str) -> None:
    print(msg)


@shinobi.step(echo)
def base(ctx: shinobi.StepContext) -> object:
    return ctx.run()


def _inner() -> Recipe:
    inner = Recipe("inner", EIn, EOut)
    inner.add_step("x", echo)
    return inner


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (lambda: shout, "the pystep 'shout', a step of its own: add it with recipe.add_step()"),
        (lambda: base, "the orchestration function 'base'; bind its cab: @shinobi.step(base.cab)"),
        (_inner, "the recipe 'inner'; add a nested recipe with recipe.add_step()"),
        (lambda: "echo", "'echo' (str); declare a Cab(...) for the tool and pass it"),
    ],
)
def test_anything_but_a_cab_is_refused_at_the_decorator(given: object, said: str) -> None:
    with pytest.raises(TypeError) as info:
        shinobi.step(given())  # type: ignore[operator, arg-type]
    assert str(info.value) == (
        f"@shinobi.step(...) binds an orchestration function to a Cab, but was given {said}"
    )


def test_the_decorator_without_its_cab_is_refused() -> None:
    def f(ctx: shinobi.StepContext) -> None:
        return None

    with pytest.raises(TypeError, match=r"given the function 'f'; write @shinobi.step\(CAB\)"):
        shinobi.step(f)  # type: ignore[arg-type]


def test_a_recipes_own_step_decorator_refuses_a_non_cab_too() -> None:
    recipe = Recipe("r", EIn, EOut)
    with pytest.raises(TypeError, match=r"recipe 'r': @recipe.step\(...\) binds .* the pystep"):
        recipe.step(shout, name="s")  # type: ignore[arg-type]


def test_a_recipe_file_that_binds_a_pystep_is_a_one_line_load_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe_file = tmp_path / "odd.py"
    recipe_file.write_text(
        textwrap.dedent(
            """
            from pydantic import BaseModel
            import shinobi
            from shinobi.steps import Recipe

            class I(BaseModel):
                pass

            @shinobi.pystep
            def p(msg: str) -> None:
                print(msg)

            r = Recipe("r", I, I)

            @shinobi.step(p)
            def f(ctx):
                return ctx.run(msg="over")

            r.add_step("s", f, msg="a")
            """
        )
    )
    code, _, err = in_process(capsys, "run", f"{recipe_file}:r", "--dry-run")
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.startswith(f"ninja: error: {recipe_file}:15: importing the recipe file raised")
    assert "binds an orchestration function to a Cab, but was given the pystep 'p'" in line
