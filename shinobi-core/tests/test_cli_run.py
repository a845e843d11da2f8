"""``ninja run`` end to end: the demo, dry runs, and one-line errors with exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "offload_demo.py"

Ninja = Callable[..., CompletedProcess[str]]

GOOD = """
import enum
from pathlib import Path
from pydantic import BaseModel, Field
from shinobi.steps import Cab, ParamMeta, Recipe

class Speed(enum.Enum):
    fast = "quick"
    slow = "careful"

class In(BaseModel):
    out: Path = Field(description="where the file goes")
    count: int = 1
    tags: list[str] = []
    bands: list[int] = Field(default_factory=lambda: [1, 2])
    speed: Speed = Speed.fast
    fields: list[Path] = [Path("a.ms"), Path("b.ms")]

class TouchIn(BaseModel):
    out: Path

class TouchOut(BaseModel):
    out: Path | None = None

touch = Cab("touch", "/bin/touch", TouchIn, TouchOut, {"out": ParamMeta(positional=True)})
fail = Cab("fail", ["/bin/sh", "-c", "echo broken-tool >&2; exit 7"])
pipe = Recipe("pipe", In)
pipe.add_step("touch", touch, out=pipe.inputs.out)
broken = Recipe("broken", In)
broken.add_step("touch", touch, out=broken.inputs.out)
broken.add_step("fail", fail)
"""


def one_line_error(proc: CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("ninja: error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def only_line(proc: CompletedProcess[str]) -> str:
    """The error line of a run that failed before running anything: nothing else printed."""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    return one_line_error(proc)


def test_demo_runs_and_creates_the_file(ninja: Ninja, tmp_path: Path) -> None:
    target = tmp_path / "made.ms"
    proc = ninja("run", f"{DEMO}:pipe", "--target", str(target))
    assert proc.returncode == 0, proc.stderr
    assert target.exists()
    assert "ok = True" in proc.stdout


def test_demo_dryrun_shows_both_steps_and_the_edge_and_creates_nothing(
    ninja: Ninja, tmp_path: Path
) -> None:
    target = tmp_path / "dry.ms"
    proc = ninja("run", f"{DEMO}:pipe", "--target", str(target), "--dryrun")
    assert proc.returncode == 0, proc.stderr
    assert "make" in proc.stdout and "use" in proc.stdout
    assert f"/bin/touch {target}" in proc.stdout
    assert "(after make)" in proc.stdout
    assert not target.exists()
    assert not (tmp_path / ".shinobi").exists()


def test_dryrun_json_lists_the_dependency(ninja: Ninja, tmp_path: Path) -> None:
    proc = ninja("run", f"{DEMO}:pipe", "--target", "x.ms", "--dryrun", "--json")
    plan = json.loads(proc.stdout)
    use = next(s for s in plan["steps"] if s["name"] == "use")
    assert use["depends_on"] == ["make"]
    assert use["argv"] == ["/bin/cat", "x.ms"]


def test_recipe_inputs_are_typed_options_with_help(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", f"{path}:pipe", "--help")
    assert proc.returncode == 0
    assert "--out" in proc.stdout and "where the file goes" in proc.stdout
    assert "--tags" in proc.stdout
    shown = " ".join(proc.stdout.split())  # help text wraps where it likes
    assert "[default: 1 2]" in shown  # a default_factory's product, as items
    assert "[default: a.ms b.ms]" in shown  # paths as their text, not PosixPath(...)
    assert "[default: quick]" in shown  # an enum's value, as it is typed
    assert "Undefined" not in shown
    bad = ninja("run", f"{path}:pipe", "--out", "x", "--count", "many")
    assert bad.returncode == 2
    assert "many" in bad.stderr and "Traceback" not in bad.stderr


def test_list_inputs_take_the_option_repeated(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", f"{path}:pipe", "--out", "o", "--tags", "a", "--tags", "b", "--dryrun")
    assert proc.returncode == 0, proc.stderr


def test_missing_required_input_is_a_usage_error(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", f"{path}:pipe")
    assert proc.returncode == 2
    assert "--out" in one_line_error(proc)


CLASHING = """
from pydantic import BaseModel
from shinobi.steps import Cab, InputRef, ParamMeta, Recipe, StepRef

class EchoIn(BaseModel):
    msg: str

echo = Cab("echo", "/bin/echo", EchoIn, field_meta={"msg": ParamMeta(positional=True)})

class In(BaseModel):
    help: bool = False
    workdir: str

said = Recipe("said", In, steps=[StepRef("e", echo, {"msg": InputRef("workdir")})])
"""


def test_inputs_named_like_the_commands_options_get_their_own_and_errors_name_them(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    path = recipe_file(CLASHING)
    shown = ninja("run", f"{path}:said", "--help")
    assert shown.returncode == 0 and "--input-help" in shown.stdout
    assert "--input-workdir" in shown.stdout
    assert not list(tmp_path.rglob("runs")), "--help ran the recipe"
    missing = ninja("run", f"{path}:said")
    assert missing.returncode == 2
    assert "input 'workdir' (--input-workdir): Field required" in one_line_error(missing)
    ran = ninja("run", f"{path}:said", "--input-workdir", "here", "--input-help", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["steps"][0]["argv"] == ["/bin/echo", "here"]


NEGATED = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class EchoIn(BaseModel):
    msg: str = "hi"
    cache: bool = True

echo = Cab("echo", "/bin/echo", EchoIn, field_meta={"msg": ParamMeta(positional=True)})

class In(BaseModel):
    cache: bool = True

negated = Recipe("negated", In)
negated.add_step("e", echo, cache=negated.inputs.cache)
"""


def test_a_bool_input_whose_no_flag_is_the_command_s_gets_its_own(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    """A bool input `cache` took --cache/--no-cache: ninja's --no-cache then set
    the input to False and left the step cache on."""
    path = recipe_file(NEGATED)
    shown = ninja("run", f"{path}:negated", "--help")
    assert shown.returncode == 0
    assert "--input-cache / --no-input-cache" in shown.stdout
    assert shown.stdout.count("--no-cache") == 1
    for _ in range(2):  # the second run would be served from the cache
        ran = ninja("run", f"{path}:negated", "--no-cache", "--json")
        assert ran.returncode == 0, ran.stderr
        (step,) = json.loads(ran.stdout)["steps"]
        assert step["status"] == "ok"
        assert step["argv"] == ["/bin/echo", "--cache", "hi"]
    ran = ninja("run", f"{path}:negated", "--no-input-cache", "--no-cache", "--json")
    assert json.loads(ran.stdout)["steps"][0]["argv"] == ["/bin/echo", "hi"]


STRUCTURED = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe, StepRef

class EchoIn(BaseModel):
    msg: str

echo = Cab("echo", "/bin/echo", EchoIn, field_meta={"msg": ParamMeta(positional=True)})

class Box(BaseModel):
    w: int

class In(BaseModel):
    d: dict[str, int] = {}
    box: Box | None = None
    pair: tuple[int, int] = (0, 0)

boxed = Recipe("boxed", In, steps=[StepRef("e", echo, {"msg": "x"})])
"""


def test_mapping_and_model_inputs_are_given_as_json(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(STRUCTURED)
    args = ["--d", '{"a": 1}', "--box", '{"w": 3}', "--pair", "1", "--pair", "2"]
    given = ninja("run", f"{path}:boxed", *args, "--json")
    assert given.returncode == 0, given.stderr  # each validated against its model
    assert json.loads(given.stdout)["status"] == "ok"
    bad = ninja("run", f"{path}:boxed", "--d", "a=1")
    assert bad.returncode == 2 and "'a=1' is not JSON" in one_line_error(bad)
    short = ninja("run", f"{path}:boxed", "--pair", "1")
    assert short.returncode == 2
    assert "option --pair takes exactly 2 values, but was given 1 ('1')" in one_line_error(short)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--out", "x", "-j", "0"], "'--max-workers' / '-j': 0 is not in the range"),
        (["--out", "x", "--bogus", "1"], "No such option '--bogus'"),
        (["--out"], "Option '--out' requires an argument"),
    ],
)
def test_a_bad_option_is_one_line_pointing_at_the_recipes_help(
    ninja: Ninja, recipe_file: Callable[..., Path], args: list[str], said: str
) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", f"{path}:pipe", *args)
    assert proc.returncode == 2
    line = only_line(proc)
    assert said in line
    assert line.endswith(f"(see 'ninja run {path}:pipe --help')")


def test_an_unknown_command_is_one_line(ninja: Ninja) -> None:
    proc = ninja("frob")
    assert proc.returncode == 2
    assert only_line(proc) == "ninja: error: No such command 'frob' (see 'ninja --help')"


def test_a_misspelt_command_is_told_the_nearest(ninja: Ninja) -> None:
    """The commands load lazily, so click had none to suggest from."""
    proc = ninja("rum")
    assert proc.returncode == 2
    assert "No such command 'rum'. Did you mean 'run'?" in only_line(proc)


@pytest.mark.parametrize(("said", "traceback"), [("false", False), ("no", False), ("yes", True)])
def test_shinobi_debug_takes_the_words_the_configuration_does(
    ninja: Ninja, recipe_file: Callable[..., Path], said: str, traceback: bool
) -> None:
    path = recipe_file("raise RuntimeError('at import')\n")
    proc = ninja("run", f"{path}:pipe", env={"SHINOBI_DEBUG": said})
    assert proc.returncode == 2
    assert ("Traceback" in proc.stderr) is traceback, proc.stderr


def test_missing_file(ninja: Ninja) -> None:
    proc = ninja("run", "nowhere.py:pipe")
    assert proc.returncode == 2
    assert "does not exist" in one_line_error(proc)


def test_a_recipe_file_named_without_its_py_is_suggested(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", f"{path.with_suffix('')}:pipe")
    assert proc.returncode == 2
    assert f"does not exist; did you mean '{path}'?" in one_line_error(proc)


def test_a_recipe_file_named_without_a_recipe_lists_what_it_defines(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", str(path))
    assert proc.returncode == 2
    said = one_line_error(proc)
    assert f"names no recipe: write {path}:NAME (recipes defined there: pipe" in said


def test_a_recipe_file_with_a_colon_in_its_name_named_alone_lists_it_too(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    """``my:demo.py`` was read as the file ``my`` and the recipe ``demo.py``."""
    path = recipe_file(GOOD)
    named = path.with_name("my:demo.py")
    path.rename(named)
    proc = ninja("run", str(named))
    assert proc.returncode == 2
    said = one_line_error(proc)
    assert f"names no recipe: write {named}:NAME (recipes defined there: pipe" in said
    assert ninja("run", f"{named}:pipe", "--help").returncode == 0


def test_missing_attribute_suggests(ninja: Ninja, recipe_file: Callable[..., Path]) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", f"{path}:pip", "--out", "x")
    assert proc.returncode == 2
    assert "did you mean 'pipe'" in one_line_error(proc)


def test_syntax_error_names_the_line(ninja: Ninja, recipe_file: Callable[..., Path]) -> None:
    path = recipe_file("x = 1\ndef broken(:\n    pass\n")
    proc = ninja("run", f"{path}:pipe")
    assert proc.returncode == 2
    assert f"{path}:2: syntax error" in one_line_error(proc)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("import sys\nsys.exit(3)\n", ":2: importing the recipe file raised SystemExit: 3"),
        ("import os\nos._exit(0)\n", ":2: importing the recipe file called os._exit(0), which"),
        ("x = {}['missing']\n", ":1: importing the recipe file raised KeyError: 'missing'"),
        # the error's first line, not all of a message on several
        (
            "raise RuntimeError('first\\nsecond')\n",
            ":1: importing the recipe file raised RuntimeError: first",
        ),
        # pydantic's first line only counts its errors: the first error is said instead
        (
            "from pydantic import BaseModel\nclass S(BaseModel):\n    n: int\nS(n='x')\n",
            ":4: importing the recipe file raised ValidationError: S: n: Input should be a valid integer",
        ),
        # pydantic's advice (arbitrary_types_allowed) is about a config a pystep has not
        (
            "import shinobi\nclass T: ...\n@shinobi.pystep\ndef f(t: T) -> None: ...\n",
            "pystep 'f': parameter 't' is annotated T, a type shinobi cannot check",
        ),
        # checked when set, not only when made: -1 left the scheduler no slot, for ever
        (
            "from shinobi import Recipe\npipe = Recipe('pipe')\npipe.max_workers = -1\n",
            ":3: importing the recipe file raised ValueError: recipe 'pipe': max_workers must be",
        ),
        ("from shinobi.steps import Cab as pipe\n", ":pipe is a type, not a Recipe"),
        ("pipe = 3\n", ":pipe is an int, not a Recipe"),
    ],
)
def test_a_recipe_file_that_fails_to_import_is_one_line(
    ninja: Ninja, recipe_file: Callable[..., Path], source: str, said: str
) -> None:
    path = recipe_file(source)
    proc = ninja("run", f"{path}:pipe")
    assert proc.returncode == 2
    assert said in only_line(proc)


def test_graph_error_exits_2(ninja: Ninja, recipe_file: Callable[..., Path]) -> None:
    path = recipe_file(
        GOOD + "\nbad = Recipe('bad', In)\nbad.add_step('t', touch, out=bad.inputs.ot)\n"
    )
    proc = ninja("run", f"{path}:bad", "--out", "x")
    assert proc.returncode == 2
    assert "did you mean 'out'" in one_line_error(proc)


def test_a_failed_step_exits_1_and_shows_its_stderr(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    path = recipe_file(GOOD)
    proc = ninja("run", f"{path}:broken", "--out", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert "step 'fail' failed: exited with code 7: broken-tool" in one_line_error(proc)


def test_unknown_backend_lists_installed_ones(ninja: Ninja) -> None:
    proc = ninja("run", f"{DEMO}:pipe", "--backend", "natve")
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert "did you mean 'native'" in line and "installed:" in line


def test_known_but_missing_plugin_names_its_distribution(ninja: Ninja) -> None:
    proc = ninja("run", f"{DEMO}:pipe", "--backend", "kubernetes")
    assert proc.returncode == 2
    assert "shinobi-k8s is planned but not implemented" in one_line_error(proc)


def test_graph_command_formats(ninja: Ninja) -> None:
    for fmt, needle in [
        ("dot", '"make" -> "use"'),
        ("mermaid", "n0 --> n1"),
        ("text", "after make: use"),
    ]:
        proc = ninja("graph", f"{DEMO}:pipe", "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert needle in proc.stdout
    data = json.loads(ninja("graph", f"{DEMO}:pipe", "--format", "json").stdout)
    assert data["nodes"][1]["depends_on"] == ["make"]


def test_json_result(ninja: Ninja, tmp_path: Path) -> None:
    proc = ninja("run", f"{DEMO}:pipe", "--target", str(tmp_path / "m"), "--json")
    result = json.loads(proc.stdout)
    assert result["status"] == "ok"
    assert [s["name"] for s in result["steps"]] == ["make", "use"]
    assert (tmp_path / ".shinobi" / "runs" / result["run_id"]).is_dir()  # for logs, report


def test_outputs_are_printed_as_paths_not_python_reprs() -> None:
    from shinobi.cli.run import _shown

    assert _shown([Path("a.fits"), Path("b.fits")]) == "[a.fits, b.fits]"
    assert _shown(Path("x.ms")) == "x.ms" and _shown(3) == "3"


def test_a_reader_that_goes_away_does_not_turn_a_good_run_into_a_failure(
    recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    """``ninja run ... | head -1`` and ``| grep -q``: the run's own status decides."""
    import os
    import subprocess
    import sys

    path = recipe_file(GOOD)
    for extra in ([], ["--json"]):
        read, write = os.pipe()
        os.close(read)  # gone before ninja prints its result
        done = subprocess.run(
            [sys.executable, "-m", "shinobi.cli", "run", f"{path}:pipe", "--out", "o", *extra],
            cwd=tmp_path,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        os.close(write)
        assert done.returncode == 0, done.stderr


NESTED_LISTS = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    groups: list[list[int]] = [[1, 2], [3]]

echo = Cab("echo", "/bin/echo", In, None, {"groups": ParamMeta(positional=True)})
pipe = Recipe("pipe", In)
pipe.add_step("say", echo, groups=pipe.inputs.groups)
"""


def test_a_list_of_lists_input_takes_each_inner_list_as_json(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(NESTED_LISTS)
    shown = ninja("run", f"{path}:pipe", "--help").stdout
    assert "[default: '[1, 2]' '[3]']" in " ".join(shown.split()), shown
    proc = ninja(
        "run", f"{path}:pipe", "--groups", "[1]", "--groups", "[2, 3]", "--dryrun", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    (step,) = json.loads(proc.stdout)["steps"]
    assert step["argv"] == ["/bin/echo", "[1]", "[2, 3]"]
    bad = ninja("run", f"{path}:pipe", "--groups", "1,2")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_mermaid_labels_show_odd_step_names_as_they_are(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    """``"`` became ``'``, ``<b>`` went to Mermaid's HTML labels, ``#35;`` read as ``#``."""
    path = recipe_file(
        """
from shinobi.steps import Cab, Recipe
pipe = Recipe("pipe")
pipe.add_step('say <b>&"hi"', Cab("a", ["/bin/true"]))
pipe.add_step("hash#35;", Cab("b", ["/bin/true"]))
"""
    )
    shown = ninja("graph", f"{path}:pipe", "--format", "mermaid").stdout
    assert 'n0["say #lt;b#gt;#amp;#quot;hi#quot;"]' in shown
    assert 'n1["hash#35;35;"]' in shown


TYPED_HELP = """
import enum
from pydantic import BaseModel, Field
from shinobi.steps import Cab, ParamMeta, Recipe

class Level(enum.IntEnum):
    low = 1
    high = 2

class In(BaseModel):
    level: Level = Level.low
    table: dict[str, int] = {}
    niter: int = Field(3, ge=1, le=10, description="iterations")

echo = Cab("echo", "/bin/echo", In, None, {"level": ParamMeta(positional=True),
                                           "table": ParamMeta(skip=True),
                                           "niter": ParamMeta(skip=True)})
pipe = Recipe("pipe", In)
pipe.add_step("say", echo, level=pipe.inputs.level, table=pipe.inputs.table)
"""


def test_help_offers_an_int_enum_s_values_bounds_and_json_where_json_is_typed(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(TYPED_HELP)
    shown = ninja("run", f"{path}:pipe", "--help").stdout
    assert "--level [1|2]" in shown and "--table JSON" in shown
    assert "iterations (at least 1, at most 10)" in " ".join(shown.split())
    proc = ninja("run", f"{path}:pipe", "--level", "2", "--dryrun", "--json")
    assert json.loads(proc.stdout)["steps"][0]["argv"] == ["/bin/echo", "2"]
    assert ninja("run", f"{path}:pipe", "--level", "3").returncode == 2


DATED_HELP = """
import datetime
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta

class In(BaseModel):
    day: datetime.date
    at: datetime.datetime | None = None
    span: datetime.timedelta = datetime.timedelta(seconds=1234567)

echo = Cab("echo", "/bin/echo", In, None, {"day": ParamMeta(positional=True),
                                           "at": ParamMeta(skip=True),
                                           "span": ParamMeta(skip=True)})
"""


def test_help_says_how_a_date_time_or_duration_input_is_written(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(DATED_HELP)
    shown = ninja("run", f"{path}:echo", "--help").stdout
    assert "--day YYYY-MM-DD" in shown
    assert "--at YYYY-MM-DDTHH:MM[:SS]" in shown and "--span SECONDS|PnDTnHnMnS" in shown
    proc = ninja("run", f"{path}:echo", "--day", "2026-12-01", "--dryrun", "--json")
    assert json.loads(proc.stdout)["steps"][0]["argv"] == ["/bin/echo", "2026-12-01"]
    for seconds in ("90", "1.5"):  # a number is seconds (pydantic refuses it as text)
        said = ninja("run", f"{path}:echo", "--day", "2026-12-01", "--span", seconds, "--json")
        assert said.returncode == 0, said.stderr
    assert "[default: 1234567]" in " ".join(shown.split())  # whole, not 1.23457e+06
    bad = ninja("run", f"{path}:echo", "--day", "01/12/2026")
    assert bad.returncode == 2 and "(write it as YYYY-MM-DD)" in one_line_error(bad)


STOPS_EARLY = """
from shinobi.steps import Cab, ParamMeta, Recipe

broken = Recipe("broken")
broken.add_step("first", Cab("first", ["/bin/sh", "-c", "exit 3"]))
broken.add_step("second", Cab("second", ["/bin/echo", "never"]))  # one worker: never starts

inner = Recipe("inner")
inner.add_step("i1", Cab("i1", ["/bin/sh", "-c", "exit 5"]))
inner.add_step("i2", Cab("i2", ["/bin/echo", "never"]))
outer = Recipe("outer")
outer.add_step("nest", inner)
outer.add_step("later", inner)

from pydantic import BaseModel

class Code(BaseModel):
    code: int

exits = Cab("exits", ["/bin/sh", "-c", 'exit "$0"'], Code, None, {"code": ParamMeta(positional=True)})
fans = Recipe("fans")
fans.add_step("each", exits, code=[0, 4, 0, 0], scatter=["code"])  # one worker: [2], [3] never start

one = Recipe("one", Code)
one.add_step("s", exits, code=one.inputs.code)
nested_fans = Recipe("nested_fans")
nested_fans.add_step("sub", one, code=[0, 4, 0], scatter=["code"])
"""


def _stopped_early(ninja: Ninja, path: Path, target: str) -> list[dict[str, Any]]:
    """The steps ``ninja run --json`` lists for a run a failure stopped."""
    ran = ninja("run", f"{path}:{target}", "--json", "-j", "1", "--no-cache")
    assert ran.returncode == 1
    steps: list[dict[str, Any]] = json.loads(ran.stdout)["steps"]
    return steps


def test_run_json_lists_the_steps_a_failure_left_unstarted_as_not_run(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    # A program reading --json saw only the steps that ended, not the whole recipe.
    steps = _stopped_early(ninja, recipe_file(STOPS_EARLY), "broken")
    assert [(s["name"], s["status"]) for s in steps] == [("first", "failed"), ("second", "not run")]
    assert steps[1] == {**steps[1], "returncode": None, "argv": None, "started": None}


def test_run_json_lists_the_slices_a_failure_left_unstarted_as_not_run(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    (step,) = _stopped_early(ninja, recipe_file(STOPS_EARLY), "fans")
    assert step["status"] == "failed"
    assert [(s["name"], s["status"], s["returncode"]) for s in step["slices"]] == [
        ("each[0]", "ok", 0),
        ("each[1]", "failed", 4),
        ("each[2]", "not run", None),
        ("each[3]", "not run", None),
    ]


def test_run_json_gives_an_unstarted_slice_of_a_nested_recipe_its_steps(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    (step,) = _stopped_early(ninja, recipe_file(STOPS_EARLY), "nested_fans")
    never = step["slices"][-1]
    assert (never["name"], never["status"]) == ("sub[2]", "not run")
    assert [(s["name"], s["status"]) for s in never["steps"]] == [("sub[2].s", "not run")]
    assert "slices" not in never  # a slice is not itself scattered


def test_run_json_lists_a_nested_recipe_s_unstarted_steps_too(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    def shown(entries: list[dict[str, Any]]) -> list[Any]:
        return [(e["name"], e["status"], shown(e.get("steps", []))) for e in entries]

    assert shown(_stopped_early(ninja, recipe_file(STOPS_EARLY), "outer")) == [
        ("nest", "failed", [("nest.i1", "failed", []), ("nest.i2", "not run", [])]),
        ("later", "not run", [("later.i1", "not run", []), ("later.i2", "not run", [])]),
    ]
