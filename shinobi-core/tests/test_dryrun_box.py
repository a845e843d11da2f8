"""A dry run's box: every value on its line, a command that pastes, paths in a few lines."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from shinobi.render.shell_words import has_control, shell_join, visible

Ninja = Callable[..., CompletedProcess[str]]

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    note: str
    out: Path

echo = Cab("echo", "/bin/echo", In, None, {"note": ParamMeta(positional=True)})
pipe = Recipe("pipe", In)
pipe.add_step("say", echo, note=pipe.inputs.note, out=pipe.inputs.out)
"""

AWKWARD = ["/bin/echo", "two\nlines", "tab\there", "it's", "back\\slash\n", "plain", "", "\x1b[31m"]


def _bash_words(line: str) -> list[str]:
    """What bash makes of ``line`` as a command's arguments."""
    script = f'for w in {line}; do printf "%s\\0" "$w"; done'
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    return out.decode().split("\0")[:-1]


def test_a_joined_command_is_one_line_that_bash_reads_back_word_for_word() -> None:
    line = shell_join(AWKWARD)
    assert "\n" not in line and "\t" not in line and "\x1b" not in line
    assert _bash_words(line) == AWKWARD


def test_plain_words_are_quoted_as_shlex_would() -> None:
    assert shell_join(["a b", "c"]) == "'a b' c"
    assert visible("a\nb\tc") == "a\\nb\\tc"


def test_a_command_with_nothing_to_quote_is_joined_as_shlex_would() -> None:
    """shell_join's one scan of all the words at once decides as shlex.quote does per word."""
    for words in (["/bin/touch", "a.fits", "x=1,2:3@%+-"], ["a", ""], ["a", "b c"], ["é"], []):
        assert shell_join(words) == " ".join(shlex.quote(w) for w in words)
    assert has_control("a\x7fb") and not has_control("plain ünïcode")


def test_a_value_with_a_line_break_keeps_the_box_whole(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(RECIPE)
    proc = ninja("run", f"{path}:pipe", "--note", "first\nsecond", "--out", "o", "--dryrun")
    assert proc.returncode == 0, proc.stderr
    box = [line for line in proc.stdout.splitlines() if line.lstrip()[:1] in "┌│└"]
    assert box, proc.stdout
    assert len({len(line) for line in box}) == 1, proc.stdout
    command = next(line for line in box if "$ " in line)
    assert "$'first\\nsecond'" in command


FAN = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    name: str
    log: File

class Out(BaseModel):
    made: File | None = None

class Names(BaseModel):
    names: list[str]
    log: File

tool = Cab("tool", "/bin/true", In, Out,
           {"name": ParamMeta(positional=True), "log": ParamMeta(positional=True, mutable=True),
            "made": ParamMeta(implicit="{name}.out")})
fan = Recipe("fan", Names)
fan.add_step("each", tool, scatter=["name"], name=fan.inputs.names, log=fan.inputs.log)
"""


def test_a_big_scatter_lists_a_few_paths_and_an_in_place_input_is_rewritten(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(FAN)
    names = [arg for k in range(40) for arg in ("--names", f"n{k}")]
    proc = ninja("run", f"{path}:fan", *names, "--log", "run.log", "--dryrun")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) < 30, proc.stdout
    assert any("rewrites " in line and "run.log (in place)" in line for line in lines)
    assert not any("reads " in line and "(in place)" in line for line in lines)
    assert any("... and 35 more paths" in line for line in lines), proc.stdout


def test_a_scatter_past_three_slices_says_how_many_more_it_does_not_draw(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    """Three slices are drawn; a fourth left out without a word read as a scatter of three."""
    path = recipe_file(FAN)
    for names, more in ((["a", "b", "c"], None), (["a", "b", "c", "d"], "... and 1 more slice")):
        given = [arg for name in names for arg in ("--names", name)]
        proc = ninja("run", f"{path}:fan", *given, "--log", "run.log", "--dryrun")
        assert proc.returncode == 0, proc.stderr
        assert "each[2]: $ /bin/true c run.log" in proc.stdout
        assert "each[3]:" not in proc.stdout
        said = [line.strip("│ ") for line in proc.stdout.splitlines() if "more slice" in line]
        assert said == ([more] if more else []), proc.stdout


JOIN = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class MakeIn(BaseModel):
    out: Path

class Made(BaseModel):
    out: File | None = None

class JoinIn(BaseModel):
    first: File
    second: File
    out: Path

make = Cab("make", "/bin/touch", MakeIn, Made, {"out": ParamMeta(positional=True)})
join = Cab("join", "/bin/cat", JoinIn, Made,
           {"first": ParamMeta(positional=True, writable=False),
            "second": ParamMeta(positional=True), "out": ParamMeta(skip=True)})
pipe = Recipe("pipe")
pipe.add_step("left", make, out=Path("left.txt"))
pipe.add_step("right", make, out=Path("right.txt"))
pipe.add_step("joined", join, first=pipe.outputs.left.out, second=pipe.outputs.right.out,
              out=Path("joined.txt"))
"""


def test_a_step_fed_by_two_is_tagged_a_fan_in_and_a_read_only_input_is_marked(
    ninja: Ninja, recipe_file: Callable[..., Path], tmp_path: Path
) -> None:
    """The join waits on both branches and a container mounts ``first`` read-only: the
    box is where a reader of the plan sees either before anything runs."""
    path = recipe_file(JOIN, "join.py")
    proc = ninja("run", f"{path}:pipe", "--dryrun")
    assert proc.returncode == 0, proc.stderr
    tops = {line.split()[1]: line for line in proc.stdout.splitlines() if line.startswith("┌─")}
    assert "fan-in of 2 · cab · native" in tops["joined"], proc.stdout
    assert not any("fan-in" in tops[name] for name in ("left", "right")), proc.stdout
    said = [line.strip("│ ") for line in proc.stdout.splitlines()]
    assert f"reads {tmp_path / 'left.txt'} (read-only)" in said
    assert f"reads {tmp_path / 'right.txt'}" in said  # writable: no marker
    assert f"writes {tmp_path / 'joined.txt'}" in said


LOOPED = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    flag: str = "done.flag"

class Out(BaseModel):
    done: File | None = None

tool = Cab("tool", "/bin/true", In, Out, {"done": ParamMeta(implicit="{flag}")})
looped = Recipe("looped", In)
looped.add_loop("L", tool, max_iter=2, until="done", flag=looped.inputs.flag)
"""


def test_the_json_plan_says_what_the_boxes_say_of_loops_and_scatters(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    import json

    fan = recipe_file(FAN, "fan.py")
    proc = ninja("run", f"{fan}:fan", "--names", "a", "--log", "run.log", "--dryrun", "--json")
    (each,) = json.loads(proc.stdout)["steps"]
    assert each["scatter"] == ["name"] and len(each["slices"]) == 1
    looped = recipe_file(LOOPED, "looped.py")
    proc = ninja("run", f"{looped}:looped", "--dryrun", "--json")
    first, second = json.loads(proc.stdout)["steps"]
    assert first["loop"] == {"name": "L", "iteration": 1}
    assert second["loop"] == {"name": "L", "iteration": 2, "skipped_if_exists": "done.flag"}


PYSTEP = """
import shinobi
from shinobi import Recipe

@shinobi.pystep
def double(x: int) -> int:
    return 2 * x

pipe = Recipe("pipe")
pipe.add_step("double", double, x=2)
"""


def test_a_pystep_called_here_is_planned_on_the_backend_its_run_names(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    import json

    path = recipe_file(PYSTEP, "py.py")
    (planned,) = json.loads(ninja("run", f"{path}:pipe", "--dryrun", "--json").stdout)["steps"]
    ran = json.loads(ninja("run", f"{path}:pipe", "--json", "--no-cache").stdout)
    assert planned["backend"] == "python" == ran["steps"][0]["backend"]


LONG = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    names: list[str]

echo = Cab("echo", "/bin/echo", In, None, {"names": ParamMeta(positional=True)})
pipe = Recipe("pipe", In)
pipe.add_step("say", echo, names=pipe.inputs.names)
"""


def test_a_very_long_command_runs_past_its_box_instead_of_widening_every_line(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    path = recipe_file(LONG, "long.py")
    names = [arg for k in range(200) for arg in ("--names", f"field-{k:03d}.ms")]
    proc = ninja("run", f"{path}:pipe", *names, "--dryrun")
    assert proc.returncode == 0, proc.stderr
    box = [line for line in proc.stdout.splitlines() if line.lstrip()[:1] in "┌│└"]
    command = next(line for line in box if "$ /bin/echo" in line)
    assert command.endswith("field-199.ms")  # whole, pasteable, not cut at the edge
    assert all(len(line) <= 160 for line in box if line is not command)


SHARED = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    n: str

class Out(BaseModel):
    out: File | None = None

class Ns(BaseModel):
    ns: list[str]

tool = Cab("tool", "/bin/true", In, Out, {"n": ParamMeta(positional=True),
                                          "out": ParamMeta(implicit="same.txt")})
fan = Recipe("fan", Ns, max_workers=4)
fan.add_step("t", tool, scatter=["n"], n=fan.inputs.ns)
"""


def test_the_dry_run_says_slices_will_take_turns_as_the_run_will(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    import json

    path = recipe_file(SHARED, "shared.py")
    args = ("run", f"{path}:fan", "--ns", "a", "--ns", "b")
    text = " ".join(ninja(*args, "--dryrun").stdout.replace("│", " ").split())
    assert "slices [0] and [1] both write" in text and "Its slices run one at a time" in text
    (step,) = json.loads(ninja(*args, "--dryrun", "--json").stdout)["steps"]
    assert step["slices_take_turns"].startswith("slices [0] and [1] both write")


def test_with_workers_the_dry_run_keeps_the_turns_of_steps_sharing_a_rewritten_path(
    ninja: Ninja, tmp_path: Path
) -> None:
    """Three steps rewriting one MS in place and two readers were drawn as a fan-out
    of five, though the run (and a compiled workflow) orders them."""
    example = Path(__file__).parents[2] / "examples" / "inplace_ms.py"
    ms = str(tmp_path / "x.ms")
    args = ("run", f"{example}:selfcal_ms", "--ms", ms, "--dryrun")
    drawn = ninja(*args, "-j", "4")
    assert drawn.returncode == 0, drawn.stderr
    rows = [line for line in drawn.stdout.splitlines() if line.startswith("── ")]
    assert rows == [
        "── row 1",
        "── row 2 (after flag)",
        "── row 3 (after gaincal)",
        "── row 4: fan-out of 2 (after applycal)",
    ]
    assert "waits its turn after gaincal: a path they share, one rewrites" in drawn.stdout
    planned = ninja(*args, "-j", "4", "--json")
    steps = {s["name"]: s for s in json.loads(planned.stdout)["steps"]}
    assert steps["image"]["waits_for_turn"] == ["applycal"] and steps["image"]["depends_on"] == []
    assert "waits_for_turn" not in steps["flag"]
    looped = ninja(  # wired steps that also share a path: their turns are their wiring
        "run",
        f"{example.with_name('selfcal_loop.py')}:selfcal",
        "--ms",
        ms,
        "--dryrun",
        "-j",
        "4",
        "--json",
    )
    assert looped.returncode == 0, looped.stderr
    for step in json.loads(looped.stdout)["steps"]:
        assert not set(step.get("waits_for_turn", [])) & set(step["depends_on"]), step
    one = ninja(*args)  # one worker: the steps run one at a time, in this order, anyway
    assert "── row 1: fan-out of 5" in one.stdout and "waits its turn" not in one.stdout


TWICE = """
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    n: str

class Out(BaseModel):
    out: File | None = None

tool = Cab("tool", "/bin/true", In, Out, {"n": ParamMeta(positional=True),
                                          "out": ParamMeta(implicit="same.txt")})
inner = Recipe("inner")
inner.add_step("a", tool, n="x")
inner.add_step("b", tool, n="y")
outer = Recipe("outer")
outer.add_step("nest", inner)
"""


def test_the_dry_run_warns_of_two_steps_writing_one_output_at_one_worker(
    ninja: Ninja, recipe_file: Callable[..., Path]
) -> None:
    """docs/running.md promised the warning before the run; a dry run (and a run at
    one worker) said nothing, though the second step replaces the first's product."""
    path = recipe_file(TWICE, "twice.py")
    for target, first, second in (("inner", "a", "b"), ("outer", "nest.a", "nest.b")):
        proc = ninja("run", f"{path}:{target}", "--dryrun")
        assert proc.returncode == 0, proc.stderr
        said = f"warning: steps '{first}' and '{second}' both write"
        assert said in proc.stderr, proc.stderr
