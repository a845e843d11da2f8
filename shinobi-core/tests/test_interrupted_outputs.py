"""An output an interrupted step was writing is moved aside, not left as a product.

Left at its final name, the part looked whole: a tool that appends built on
it at the next run, and the step cache stored that result.
"""

from __future__ import annotations

import json
import os
import signal
import textwrap
import time
from pathlib import Path

import pytest
from test_interrupt import start_ninja, wait_for

from shinobi.stop_window import STOP_WINDOW

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, MS, ParamMeta, Recipe

class In(BaseModel):
    out: Path
    ms: MS

class Out(BaseModel):
    product: File | None = None
    ms: MS | None = None

APPEND = 'echo part >> "$1"; echo row >> "$2/table"; touch started; sleep 60'
writer = Cab(
    "writer",
    ["/bin/sh", "-c", APPEND, "sh"],
    In,
    Out,
    {{
        "out": ParamMeta(positional=True),
        "ms": ParamMeta(positional=True, mutable=True),
        "product": ParamMeta(implicit="{{out}}"),
    }},
)
pipe = Recipe("pipe", max_workers=1)
pipe.add_step("write", writer, out=Path("{out}"), ms=Path("{ms}"))
"""


def test_a_part_written_when_stopped_is_renamed_and_an_input_rewritten_in_place_is_not(
    tmp_path: Path,
) -> None:
    out, ms = tmp_path / "product.txt", tmp_path / "obs.ms"
    ms.mkdir()
    (ms / "table").write_text("yesterday\n")
    (tmp_path / "recipe.py").write_text(textwrap.dedent(RECIPE.format(out=out, ms=ms)))
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe", "--json")
    wait_for([tmp_path / "started"], proc)
    proc.send_signal(signal.SIGINT)
    stdout, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert not out.exists()
    assert (tmp_path / "product.txt.interrupted").read_text() == "part\n"
    assert (ms / "table").read_text() == "yesterday\nrow\n"  # mutable: the user's own, in place
    (step,) = json.loads(stdout)["steps"]
    assert step["status"] == "cancelled"
    assert any("product.txt.interrupted" in w for w in step["warnings"]), step["warnings"]


def test_an_output_the_stopped_step_had_not_touched_stays(tmp_path: Path) -> None:
    out, ms = tmp_path / "product.txt", tmp_path / "obs.ms"
    ms.mkdir()
    out.write_text("yesterday's whole product\n")
    source = textwrap.dedent(RECIPE.format(out=out, ms=ms)).replace('echo part >> "$1"; ', "")
    (tmp_path / "recipe.py").write_text(source)
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe")
    wait_for([tmp_path / "started"], proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out.read_text() == "yesterday's whole product\n"
    assert not (tmp_path / "product.txt.interrupted").exists()


GLOBBING = """
from pydantic import BaseModel
import shinobi
from shinobi.steps import Cab, File, ParamMeta, Recipe

class Found(BaseModel):
    found: list[File] = []

class Made(BaseModel):
    made: File | None = None

# b starts first, then a, which finishes; b's glob *.dat also matches a's product
b = Cab("b", ["/bin/sh", "-c", "echo part > b-1.dat; touch b-started; sleep 60"], None, Found,
        {"found": ParamMeta(harvest="*.dat")})
a = Cab("a", ["/bin/sh", "-c", "while [ ! -e b-started ]; do sleep 0.02; done; echo whole > a-1.dat"],
        None, Found, {"found": ParamMeta(harvest="a-*.dat")})

@shinobi.pystep
def p() -> Made:
    import time
    from pathlib import Path
    while not Path("b-started").exists():
        time.sleep(0.02)
    Path("p.dat").write_text("whole\\n")
    return Made(made=Path("p.dat"))

pipe = Recipe("pipe", max_workers=3)
pipe.add_step("b", b)
pipe.add_step("a", a)
pipe.add_step("p", p)
"""


def test_what_other_steps_finished_is_not_set_aside_with_a_stopped_steps_glob(
    tmp_path: Path,
) -> None:
    """a's harvest and p's return matched b's ``*.dat``: both were renamed and blamed on b."""
    (tmp_path / "recipe.py").write_text(GLOBBING)
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe", "--provenance", "--no-cache")
    wait_for([tmp_path / "b-started"], proc)
    deadline = time.monotonic() + 30
    while True:  # until a and p are recorded done
        runs = list((tmp_path / ".shinobi" / "runs").glob("*/manifest.json"))
        steps = json.loads(runs[0].read_text())["steps"] if runs else []
        if {s["name"] for s in steps if s.get("status") == "ok"} >= {"a", "p"}:
            break
        assert time.monotonic() < deadline, steps
        time.sleep(0.05)
    # a's exit just before the stop would be taken back (see shinobi.stop_window)
    time.sleep(STOP_WINDOW + 0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert (tmp_path / "a-1.dat").read_text() == "whole\n"
    assert (tmp_path / "p.dat").read_text() == "whole\n"
    assert (tmp_path / "b-1.dat.interrupted").exists()


THROUGH_A_LINK = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    out: Path

class Out(BaseModel):
    {output}: File

APPEND = 'echo part >> "$0"; [ -e quick ] && exit 0; touch started; sleep 60'
writer = Cab("writer", ["/bin/sh", "-c", APPEND], In, Out,
             {{"out": ParamMeta(positional=True), {implicit}}})
pipe = Recipe("pipe")
pipe.add_step("write", writer, out=Path("img.fits"))
"""


IMPLICIT = {"image": '"image": ParamMeta(implicit="{out}")', "out": ""}


@pytest.mark.parametrize("output", ["image", "out"], ids=["implicit", "passthrough"])
def test_a_part_written_through_the_users_link_is_set_aside_on_its_disk(
    tmp_path: Path, output: str
) -> None:
    """``img.fits -> scratch/img.fits``: the link was renamed, the part kept the
    product's name on scratch, and the next run wrote a plain file in the workdir."""
    (tmp_path / "scratch").mkdir()
    link, target = tmp_path / "img.fits", tmp_path / "scratch" / "img.fits"
    link.symlink_to(target)
    (tmp_path / "recipe.py").write_text(
        textwrap.dedent(THROUGH_A_LINK.format(output=output, implicit=IMPLICIT[output]))
    )
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe", "--json", "--no-cache")
    wait_for([tmp_path / "started"], proc)
    proc.send_signal(signal.SIGINT)
    stdout, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert (tmp_path / "scratch" / "img.fits.interrupted").read_text() == "part\n"
    assert os.readlink(link) == str(target) and not target.exists()
    (step,) = json.loads(stdout)["steps"]
    assert any(f"now '{target}.interrupted'" in w for w in step["warnings"]), step["warnings"]
    (tmp_path / "quick").touch()
    proc = start_ninja(tmp_path, "run", "recipe.py:pipe", "--no-cache")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert link.is_symlink() and target.read_text() == "part\n"  # on scratch, as meant
