"""A scattered step ``x`` beside a plain step named ``x.0``, and a step that greets.

``x``'s task 0 and the step ``x.0`` once shared ``logs/x.0.out`` (and
``exits/x.0``) under ``ninja compile``: the task's output was lost and shown
under the wrong step. ``greet`` prints ``$GREETING``, which ``sbatch_opts``
may set through ``--export``.
"""

from __future__ import annotations

from pydantic import BaseModel

from shinobi.steps import Cab, ParamMeta, Recipe


class TaskIn(BaseModel):
    n: int


class NoIn(BaseModel):
    pass


class NoOut(BaseModel):
    ok: bool = True


class CollideIn(BaseModel):
    ns: list[int] = [0, 1]


task = Cab(
    "task", ["/bin/sh", "-c", 'echo "task $0"'], TaskIn, NoOut, {"n": ParamMeta(positional=True)}
)
plain = Cab("plain", ["/bin/sh", "-c", 'echo "I am the plain step"'], NoIn, NoOut)
greeter = Cab("greeter", ["/bin/sh", "-c", 'echo "greeting: $GREETING"'], NoIn, NoOut)

col = Recipe("col", CollideIn, NoOut)
col.add_step("x", task, scatter=["n"], n=col.inputs.ns)
col.add_step("x.0", plain)

greet = Recipe("greet", NoIn, NoOut)
greet.add_step("hello", greeter)
