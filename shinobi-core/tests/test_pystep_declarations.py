"""A pystep that could never run is refused where it is declared, naming what to change.

Each of these was accepted and failed only when its turn came, after the steps
before it had run: a positional-only parameter (inputs are passed by name), a
pystep local to a function that must run in another interpreter (which imports
it by its module-level name), and a type hint that cannot be resolved (left as
text, it made a model pydantic refused in words about ``size_inputs``).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import pytest

import shinobi

if TYPE_CHECKING:
    from decimal import Decimal


def positional(x: int = 1, /) -> int:
    return x


def hinted_for_checkers_only(amount: Decimal) -> int:
    return int(amount)


def test_a_positional_only_parameter_is_refused() -> None:
    with pytest.raises(TypeError) as caught:
        shinobi.pystep(positional)
    assert str(caught.value) == (
        "pystep 'positional': parameter 'x' is positional-only (before /), but a step's"
        " inputs are passed by name; drop the /"
    )


@pytest.mark.parametrize("where", [{"venv": "ve"}, {"image": "python:3.11"}])
def test_a_pystep_local_to_a_function_is_refused_where_it_must_run_elsewhere(
    where: dict[str, Any],
) -> None:
    def factory() -> Any:
        def inner(x: int = 1) -> int:
            return x

        return inner

    with pytest.raises(TypeError, match=r"pystep 'inner' is defined inside .*factory\(\), but"):
        shinobi.pystep(**where)(factory())
    shinobi.pystep(factory())  # in this process it is called as it is


def test_a_hint_that_cannot_be_resolved_is_refused_naming_it() -> None:
    with pytest.raises(TypeError) as caught:
        shinobi.pystep(hinted_for_checkers_only)
    said = str(caught.value)
    assert said.startswith(
        "pystep 'hinted_for_checkers_only': the type hint 'Decimal' of parameter 'amount'"
        " cannot be resolved (NameError: name 'Decimal' is not defined); import what it"
        " names at module level"
    ), said


def test_a_return_hint_naming_a_local_class_is_refused(tmp_path: Any) -> None:
    source = tmp_path / "local.py"
    source.write_text(
        textwrap.dedent(
            """
            from __future__ import annotations
            import shinobi
            from pydantic import BaseModel

            def build():
                class Out(BaseModel):
                    n: int

                @shinobi.pystep
                def make() -> Out:
                    return Out(n=1)
            """
        )
    )
    namespace: dict[str, Any] = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    with pytest.raises(TypeError, match="the type hint 'Out' of its return cannot be resolved"):
        namespace["build"]()


@pytest.mark.parametrize("name", ["_token", "model_config", "model_dump"])
def test_a_parameter_pydantic_keeps_for_itself_is_refused_where_declared(name: str) -> None:
    """``_token`` became a private attribute, no input: given, it was dropped; required,
    the call failed with a traceback through ninja's code."""
    namespace: dict[str, Any] = {}
    exec(f"def f({name}: int = 1) -> int:\n    return 1\n", namespace)
    with pytest.raises(TypeError, match=rf"parameter '{name}' cannot be an input"):
        shinobi.pystep(namespace["f"])


@pytest.mark.parametrize("where", ["<stdin>", "/tmp/ipykernel_999/2718.py"])
def test_a_pystep_for_another_interpreter_defined_in_no_file_is_refused(where: str) -> None:
    """Defined in a notebook cell or ``python -``, it failed only when its turn came
    ("cannot import '<stdin>'", or a FileNotFoundError), perhaps hours into a run."""
    code = compile(
        "import shinobi\n@shinobi.pystep(venv='/tmp/v')\ndef f(x: int = 1) -> int:\n    return x\n",
        where,
        "exec",
    )
    with pytest.raises(TypeError, match="which is no file, but a pystep with venv= runs in"):
        exec(code, {})
