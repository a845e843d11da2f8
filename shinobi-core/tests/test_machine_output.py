"""stdout for machines stays one document; an in-process pystep's prints go to its logs.

A recipe module that prints when imported, a pystep that prints in ninja's
own process, and C-level writes to descriptor 1 all used to land on ninja's
stdout, where they broke ``--json``; the pystep's output was missing from its
logs and result.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

import shinobi
from shinobi.runner import run_recipe
from shinobi.steps import Recipe, StepRef

Ninja = Callable[..., CompletedProcess[str]]

NOISY = """
import os, sys
print("hello from import")
os.write(1, b"c-level write at import\\n")
import shinobi
from shinobi.steps import Recipe, StepRef

@shinobi.pystep
def talk(x: int = 1) -> int:
    print("pystep says hi")
    print("pystep err", file=sys.stderr)
    sys.stdout.buffer.write(b"pystep bytes out\\n")
    sys.stderr.buffer.write(b"pystep bytes err\\n")
    return 2

r = Recipe(name="r", steps=[StepRef(name="t", step=talk, wiring={})])
"""


def _noisy(recipe_file: Callable[..., Path]) -> str:
    return f"{recipe_file(NOISY, 'noisy.py')}:r"


def _document(proc: CompletedProcess[str]) -> object:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # stdout is the document and nothing else


def test_run_json_keeps_stdout_for_the_document_and_the_step_keeps_its_output(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    proc = ninja("run", _noisy(recipe_file), "--json", "--no-cache")
    document = _document(proc)
    assert isinstance(document, dict) and document["status"] == "ok"
    assert "hello from import" in proc.stderr
    assert "c-level write at import" in proc.stderr
    # The pystep's prints are in its logs, not on ninja's streams.
    assert "pystep says hi" not in proc.stderr
    [run] = (tmp_path / ".shinobi" / "runs").iterdir()
    logs = ninja("logs", run.name, "t")
    assert logs.returncode == 0, logs.stderr
    assert "pystep says hi" in logs.stdout and "pystep err" in logs.stdout
    # what it wrote as bytes (sys.stdout.buffer) too
    assert "pystep bytes out" in logs.stdout and "pystep bytes err" in logs.stdout
    assert "pystep bytes" not in proc.stderr


def test_dryrun_json_and_graph_json_keep_stdout_for_the_document(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    target = _noisy(recipe_file)
    assert _document(ninja("run", target, "--dryrun", "--json"))
    assert _document(ninja("graph", target, "--format", "json"))
    assert _document(ninja("graph", target, "--format=json"))


#: A recipe that can be compiled (no pystep), noisy as NOISY.
NOISY_CAB = """
import os
print("hello from import")
os.write(1, b"c-level write at import\\n")
from shinobi.steps import Cab, Recipe, StepRef

r = Recipe(name="r", steps=[StepRef(name="t", step=Cab(name="t", command="/bin/true"), wiring={})])
"""


@pytest.mark.parametrize(
    ("args", "first_line"),
    [
        (["graph", "--format", "dot"], 'digraph "r" {'),
        (["graph", "--format", "mermaid"], "flowchart TD"),
        (["graph"], "recipe r: 1 step"),
        (["compile"], "# ---- t.sbatch (t) ----"),
        (["compile", "--explain"], "recipe 'r': 1 job, offload-eligible"),
    ],
    ids=["dot", "mermaid", "text", "compile", "compile-explain"],
)
def test_a_recipe_modules_prints_go_to_stderr_wherever_stdout_is_for_programs(
    ninja: Ninja, recipe_file: Callable[..., Path], args: list[str], first_line: str
) -> None:
    """A dot file, a mermaid block, a script or a graph piped to grep: a print at
    import made them invalid, its line first."""
    if args[0] == "compile":
        pytest.importorskip("shinobi_slurm")
    target = f"{recipe_file(NOISY_CAB, 'noisy_cab.py')}:r"
    proc = ninja(*args[:1], target, *args[1:])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == first_line
    assert "hello from import" not in proc.stdout and "c-level write" not in proc.stdout
    assert "hello from import" in proc.stderr and "c-level write at import" in proc.stderr


def test_in_process_main_gives_the_document_to_its_stdout_and_puts_stdout_back(
    recipe_file: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from shinobi.cli.main import main

    before = sys.stdout
    main(["graph", _noisy(recipe_file), "--format", "json"])
    assert sys.stdout is before
    out, err = capsys.readouterr()
    assert json.loads(out)["recipe"] == "r"
    assert "hello from import" in err
    print("stdout is back")
    assert capsys.readouterr().out == "stdout is back\n"


_meet = threading.Barrier(2, timeout=30)


@shinobi.pystep
def left(x: int = 1) -> int:
    _meet.wait()  # both steps print at the same time, on two threads
    for i in range(50):
        print(f"left {i}")
        sys.stderr.write(f"left-err {i}\n")
    return 1


@shinobi.pystep
def right(x: int = 1) -> int:
    _meet.wait()
    for i in range(50):
        print(f"right {i}")
    raise ValueError("right gave up\nwith a second line")


def test_concurrent_pysteps_each_keep_their_own_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = Recipe(
        name="both",
        steps=[
            StepRef(name="left", step=left, wiring={}),
            StepRef(name="right", step=right, wiring={}),
        ],
    )
    _meet.reset()
    result = run_recipe(recipe, cwd=tmp_path, max_workers=2, use_cache=False)
    by_name = {s.name: s for s in result.steps}
    assert by_name["left"].status == "ok" and by_name["right"].status == "failed"
    assert by_name["left"].stdout == "".join(f"left {i}\n" for i in range(50))
    assert by_name["left"].stderr == "".join(f"left-err {i}\n" for i in range(50))
    assert by_name["right"].stdout == "".join(f"right {i}\n" for i in range(50))
    assert "with a second line" in by_name["right"].stderr
    [run] = (tmp_path / ".shinobi" / "runs").iterdir()
    assert (run / "logs" / "left.out").read_text() == by_name["left"].stdout
    assert (run / "logs" / "left.err").read_text() == by_name["left"].stderr
    assert (run / "logs" / "right.out").read_text() == by_name["right"].stdout
    out, _ = capsys.readouterr()
    assert "left" not in out and "right 1" not in out
    # Outside a step, this thread's prints reach the stream as before.
    print("after the run")
    assert capsys.readouterr().out == "after the run\n"


def test_the_step_proxies_are_installed_once_and_pass_other_writes_through() -> None:
    from shinobi.backends.streams import StreamLog
    from shinobi.pystep_output import captured, install

    saved = sys.stdout, sys.stderr
    try:
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
        install()
        proxies = sys.stdout, sys.stderr
        install()
        assert (sys.stdout, sys.stderr) == proxies
        out, err = StreamLog(None, print), StreamLog(None, print)
        with captured(out, err):
            print("in the step")
            assert not sys.stdout.isatty()
        print("outside")
        assert out.text() == "in the step\n" and err.text() == ""
        assert sys.stdout.getvalue() == "outside\n"  # type: ignore[attr-defined]
    finally:
        sys.stdout, sys.stderr = saved


def test_the_binary_stream_is_routed_by_thread_even_when_kept_from_before_the_step() -> None:
    from shinobi.backends.streams import StreamLog
    from shinobi.pystep_output import captured, install

    saved = sys.stdout, sys.stderr
    try:
        real = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        sys.stdout, sys.stderr = real, io.StringIO()
        install()
        kept = sys.stdout.buffer  # taken outside any step, as a module may at import
        out, err = StreamLog(None, print), StreamLog(None, print)
        with captured(out, err):
            kept.write(b"bytes in the step\n")
            sys.stdout.buffer.write(bytearray(b"and more\n"))
            with pytest.raises(TypeError):
                kept.write("text is refused, as by a real binary stream")  # type: ignore[arg-type]
        kept.write(b"outside\n")
        kept.flush()
        assert out.text() == "bytes in the step\nand more\n"
        assert real.buffer.getvalue() == b"outside\n"  # type: ignore[attr-defined]
        with pytest.raises(AttributeError):
            sys.stderr.buffer  # noqa: B018 - a StringIO has none, and its proxy none either
    finally:
        sys.stdout, sys.stderr = saved
