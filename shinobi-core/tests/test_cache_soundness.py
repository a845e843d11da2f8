"""The step cache replays a result only for the content it was made from.

Found by an audit that tried to make a run serve a wrong result:

* a script edited while a run went on: steps that started after the edit ran
  the new script, but were keyed by the script as the run first saw it, so
  undoing the edit replayed the new script's product;
* an input changed while its step ran: stored under the key of what was there
  before, replayed once the old content was back;
* a text output filled from a ``skip`` input (``label = "img-{band}"``) was not
  in the key: ``--band S`` replayed ``img-L``;
* a folder the step writes its own outputs into (``outdir``) never hit again,
  its last product counted as an input;
* an absolute path in a ``key=value`` word (every CASA-style cab) kept a
  copied project from reusing the original's results.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel

from shinobi.loaders import load_target
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Directory, File, ParamMeta, Recipe


class Src(BaseModel):
    src: File
    dst: File


class Made(BaseModel):
    dst: File | None = None


def _statuses(result: object) -> list[str]:
    return [step.status for step in result.steps]  # type: ignore[attr-defined]


def _script(path: Path, version: int) -> None:
    path.write_text(f'#!/bin/sh\necho "v{version} $(cat "$1") $$" > "$2"\n')
    path.chmod(0o755)


def test_a_step_that_ran_an_edited_script_is_keyed_by_what_it_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools").mkdir()
    _script(tmp_path / "tools" / "v.sh", 1)
    _script(tmp_path / "v3.sh", 3)
    (tmp_path / "in.txt").write_text("x")
    meta = {"src": ParamMeta(positional=True), "dst": ParamMeta(positional=True)}
    run_v = Cab("v", ["./tools/v.sh"], Src, Made, meta)
    edit = Cab("edit", ["/bin/sh", "-c", 'cp v3.sh tools/v.sh && cp "$0" "$1"'], Src, Made, meta)
    r = Recipe("r", max_workers=1)
    r.add_step("first", run_v, src=Path("in.txt"), dst=Path("a.txt"))
    r.add_step("edit", edit, src=r.outputs.first.dst, dst=Path("e.txt"))
    r.add_step("second", run_v, src=r.outputs.edit.dst, dst=Path("b.txt"))
    assert run_recipe(r).ok
    made = (tmp_path / "b.txt").read_text()
    assert made.startswith("v3 ")
    _script(tmp_path / "tools" / "v.sh", 1)  # the edit undone
    again = Recipe("again")
    again.add_step("second", run_v, src=Path("e.txt"), dst=Path("b.txt"))
    result = run_recipe(again)
    assert _statuses(result) == ["ok"], "replayed v3's product as v1's"
    assert (tmp_path / "b.txt").read_text().startswith("v1 ")


def test_an_input_changed_while_its_step_ran_is_not_stored_under_its_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.txt").write_text("niter=1000\n")
    # the tool reads its parameters, then they change (an edit while it runs)
    reads = Cab(
        "reads",
        ["/bin/sh", "-c", 'cat "$0" > "$1"; echo "niter=5000" > "$0"'],
        Src,
        Made,
        {"src": ParamMeta(positional=True), "dst": ParamMeta(positional=True)},
    )
    first = run_recipe(reads, {"src": "params.txt", "dst": "out.txt"})
    assert first.ok
    assert any("its input 'src' changed while the step ran" in w for w in first.steps[0].warnings)
    (tmp_path / "params.txt").write_text("niter=1000\n")  # back as it was
    again = run_recipe(reads, {"src": "params.txt", "dst": "out.txt"})
    assert _statuses(again) == ["ok"], "replayed a result stored under content it did not read"


def test_a_file_the_command_names_that_the_step_makes_is_its_product(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``touch done.flag``: a word that named nothing when the key was made names the
    step's product once it ran, and was warned of as "the script its command runs
    changed while the step ran", its result never cached."""
    monkeypatch.chdir(tmp_path)
    flag = Cab("flag", ["touch", "done.flag"])
    first = run_recipe(flag)
    assert first.ok and not first.steps[0].warnings
    run_recipe(flag)  # the word names a file now: keyed by it from here on
    assert _statuses(run_recipe(flag)) == ["cached"]
    # a script the command names that changes while it runs still says so
    (tmp_path / "tool.sh").write_text("#!/bin/sh\nsed -i s/v1/v2/ tool.sh  # v1\n")
    (tmp_path / "tool.sh").chmod(0o755)
    edits = run_recipe(Cab("edits", ["./tool.sh"]))
    assert any("the script its command runs changed" in w for w in edits.steps[0].warnings)


class Band(BaseModel):
    msg: str = "hi"
    band: str = "L"


class Label(BaseModel):
    label: str | None = None


def test_a_text_output_filled_from_a_skipped_input_is_in_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    echo = Cab(
        "echo",
        ["echo"],
        Band,
        Label,
        {"band": ParamMeta(skip=True), "label": ParamMeta(implicit="img-{band}")},
    )
    assert run_recipe(echo).outputs["label"] == "img-L"
    other = run_recipe(echo, {"band": "S"})
    assert other.outputs["label"] == "img-S"
    assert run_recipe(echo, {"band": "S"}).steps[0].status == "cached"


class Into(BaseModel):
    outdir: Directory
    name: str


class Image(BaseModel):
    image: File | None = None


def test_a_step_writing_into_its_input_folder_hits_on_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "model.txt").write_text("a model the step reads\n")
    image = Cab(
        "image",
        ["/bin/sh", "-c", 'echo $$ > "$0/$1.txt"'],
        Into,
        Image,
        {
            "outdir": ParamMeta(positional=True),
            "name": ParamMeta(positional=True),
            "image": ParamMeta(implicit="{outdir}/{name}.txt"),
        },
    )
    inputs = {"outdir": "imgs", "name": "f0"}
    assert _statuses(run_recipe(image, inputs)) == ["ok"]
    assert _statuses(run_recipe(image, inputs)) == ["cached"]
    (tmp_path / "imgs" / "model.txt").write_text("another model\n")  # what it reads changed
    assert _statuses(run_recipe(image, inputs)) == ["ok"]


RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, MS, ParamMeta, Recipe

HERE = Path(__file__).resolve().parent

class In(BaseModel):
    vis: MS
    caltable: File

class Out(BaseModel):
    caltable: File | None = None

gaincal = Cab(
    "gaincal", ["/bin/sh", "-c", 'echo "$0 $$" > "${1#caltable=}"'], In, Out,
    {"vis": ParamMeta(style="equals", positional=False),
     "caltable": ParamMeta(style="equals", positional=False)},
    flag_prefix="",
)
r = Recipe("r")
r.add_step("g", gaincal, vis=HERE / "obs.ms", caltable=HERE / "cal.G")
"""


def test_a_copied_project_reuses_results_named_in_key_value_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "q1"
    (project / "obs.ms").mkdir(parents=True)
    (project / "obs.ms" / "table.dat").write_text("visibilities")
    (project / "pipe.py").write_text(textwrap.dedent(RECIPE))
    assert _run_in(project, monkeypatch) == ["ok"]
    assert _run_in(project, monkeypatch) == ["cached"]
    shutil.copytree(project, tmp_path / "q1copy", symlinks=True)
    assert _run_in(tmp_path / "q1copy", monkeypatch) == ["cached"]


def _run_in(project: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statuses of running ``r`` of ``project/pipe.py`` from ``project``."""
    monkeypatch.chdir(project)
    result = run_recipe(load_target(f"{project / 'pipe.py'}:r"))
    assert result.ok, result.error
    return _statuses(result)


PASSED_ON = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

HERE = Path(__file__).resolve().parent

class In(BaseModel):
    src: File
    note: str = "n"

class Out(BaseModel):
    src: File | None = None
    note: str | None = None

show = Cab("show", ["/bin/sh", "-c", 'cat "$0" > /dev/null'], In, Out,
           {"src": ParamMeta(positional=True), "note": ParamMeta(skip=True)})
r = Recipe("r")
r.add_step("s", show, src=HERE / "in.txt")
"""


def test_a_passthrough_path_output_keeps_a_copied_project_s_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outputs known before the run are keyed, but not a path handed back
    as it came (absolute here): a copy of the project would miss."""
    project = tmp_path / "p"
    project.mkdir()
    (project / "in.txt").write_text("data")
    (project / "pipe.py").write_text(textwrap.dedent(PASSED_ON))
    assert _run_in(project, monkeypatch) == ["ok"]
    shutil.copytree(project, tmp_path / "copy")
    assert _run_in(tmp_path / "copy", monkeypatch) == ["cached"]
