"""Three steps rewrite one Measurement Set in place; two more only read it.

``flag``, ``gaincal`` and ``applycal`` each take the MS from the recipe input
and declare it MUTABLE; nothing wires them to each other. Run here one step
at a time, declaration order keeps them apart. Offloaded, ``ninja compile``
derives the edges itself: flag -> gaincal -> applycal (mutate-then-mutate),
then applycal -> image and applycal -> inspect (mutate-then-read), while
image and inspect, which only read the MS, stay parallel.

    ninja run examples/inplace_ms.py:selfcal_ms --ms /tmp/obs.ms
    ninja compile examples/inplace_ms.py:selfcal_ms --ms /tmp/obs.ms --explain
    ninja compile examples/inplace_ms.py:selfcal_ms --ms /tmp/obs.ms --submit

Every step records when it started and ended (``HISTORY`` inside the MS for
the writers, each reader's own report), so the order can be checked after
the fact.
"""

from pathlib import Path

from pydantic import BaseModel, Field

from shinobi.steps import MS, Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef

#: A writer: note the start, take a moment, note the end, all inside the MS.
REWRITE = (
    'mkdir -p "$1" && echo "$0 start $(date +%s.%N)" >> "$1/HISTORY"'
    ' && sleep 1 && echo "$0 end $(date +%s.%N)" >> "$1/HISTORY"'
)
#: A reader: its own report holds its start, what it read, and its end.
READ = (
    'echo "$0 start $(date +%s.%N)" > "$2" && sleep 2'
    ' && cat "$1/HISTORY" >> "$2" && echo "$0 end $(date +%s.%N)" >> "$2"'
)


class SelfcalInputs(BaseModel):
    ms: MS = Field(Path("obs.ms"), description="the Measurement Set rewritten in place")


class RewriteInputs(BaseModel):
    ms: MS


class RewriteOutputs(BaseModel):
    ms: MS | None = None


class ReadInputs(BaseModel):
    ms: MS
    report: Path


class ReadOutputs(BaseModel):
    report: Path | None = None


class SelfcalOutputs(BaseModel):
    image: Path | None = None
    inspect: Path | None = None


def rewriter(name: str) -> Cab:
    """A tool that modifies the MS it is given, in place."""
    return Cab(
        name=name,
        command=["/bin/sh", "-c", REWRITE, name],
        inputs_model=RewriteInputs,
        outputs_model=RewriteOutputs,
        field_meta={"ms": ParamMeta(positional=True, mutable=True)},
    )


def reader(name: str) -> Cab:
    """A tool that only reads the MS and writes a report of its own."""
    return Cab(
        name=name,
        command=["/bin/sh", "-c", READ, name],
        inputs_model=ReadInputs,
        outputs_model=ReadOutputs,
        field_meta={
            "ms": ParamMeta(positional=True, writable=False),
            "report": ParamMeta(positional=True),
        },
    )


selfcal_ms = Recipe(
    name="selfcal_ms",
    inputs_model=SelfcalInputs,
    outputs_model=SelfcalOutputs,
    steps=[
        StepRef(name="flag", step=rewriter("flag"), wiring={"ms": InputRef("ms")}),
        StepRef(name="gaincal", step=rewriter("gaincal"), wiring={"ms": InputRef("ms")}),
        StepRef(name="applycal", step=rewriter("applycal"), wiring={"ms": InputRef("ms")}),
        StepRef(
            name="image",
            step=reader("image"),
            wiring={"ms": InputRef("ms"), "report": Path("image-report.txt")},
        ),
        StepRef(
            name="inspect",
            step=reader("inspect"),
            wiring={"ms": InputRef("ms"), "report": Path("inspect-report.txt")},
        ),
    ],
    output_wiring={
        "image": OutputRef("image", "report"),
        "inspect": OutputRef("inspect", "report"),
    },
)
