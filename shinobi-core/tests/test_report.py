"""``ninja report``: one self-contained HTML page per run, every step in it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from shinobi.render.report_html import render_report

RECIPE = """
from pathlib import Path
from typing import Any
from pydantic import BaseModel
from shinobi.resources import Resources
from shinobi.steps import Cab, ParamMeta, Recipe

class In(BaseModel):
    names: list[str]

class StepIn(BaseModel):
    src: Path
    out: Path

class StepOut(BaseModel):
    out: Path | None = None

class SliceIn(BaseModel):
    who: str

def tool(name, script):
    return Cab(name, ["/bin/sh", "-c", script], StepIn, StepOut,
               {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)})

copy = tool("copy", 'echo copying; cat "$0" > "$1"')
fail = tool("fail", 'echo about to fail >&2; exit 3')
hello = Cab("hello", ["echo"], SliceIn, field_meta={"who": ParamMeta(positional=True)})

good = Recipe("good", In, max_workers=2)
good.add_step("make", copy, src=Path("in.txt"), out=Path("a <&> b.txt"),
              resources=Resources(cpus=2, memory="1GiB"))
good.add_step("use", copy, src=good.outputs.make.out, out=Path("c.txt"))
good.add_step("greet", hello, scatter=["who"], who=good.inputs.names)

bad = Recipe("bad", max_workers=2)
bad.add_step("make", copy, src=Path("in.txt"), out=Path("a.txt"))
bad.add_step("broken", fail, src=bad.outputs.make.out, out=Path("x.txt"))
bad.add_step("never", copy, src=bad.outputs.broken.out, out=Path("y.txt"))
"""


def ninja(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("ninja")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "shinobi.cli"]
    env = {
        **os.environ,
        "SHINOBI_CONFIG": os.devnull,
        "SHINOBI_CACHE_DIR": str(cwd / "cache"),
    }
    return subprocess.run(
        [*command, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


class Page(HTMLParser):
    """Collects ids, links and external references of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.external: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value:
                self.links.append(value)
            if name in ("src", "href") and value and re.match(r"^[a-z]+:", value):
                self.external.append(value)


def parse(path: Path) -> tuple[str, Page]:
    text = path.read_text()
    page = Page()
    page.feed(text)
    return text, page


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "recipe.py").write_text(textwrap.dedent(RECIPE))
    (tmp_path / "in.txt").write_text("data\n")
    return tmp_path


def only_run(project: Path) -> Path:
    (run_dir,) = (project / ".shinobi" / "runs").iterdir()
    return run_dir


def test_the_report_of_a_run_shows_every_step_with_its_logs(project: Path) -> None:
    run = ninja(
        project, "run", "recipe.py:good", "--names", "ann", "--names", "bob", "--provenance"
    )
    assert run.returncode == 0, run.stderr
    run_dir = only_run(project)
    made = ninja(project, "report", run_dir.name)
    assert made.returncode == 0, made.stderr
    report = Path(made.stdout.strip())
    assert report == run_dir / "report.html"
    text, page = parse(report)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    names = [s["name"] for s in manifest["steps"]]
    assert set(names) >= {"make", "use", "greet", "greet[0]", "greet[1]"}
    for step in manifest["steps"]:
        anchor = "step-" + re.sub(r"[^A-Za-z0-9._-]", "_", step["name"])
        assert anchor in page.ids
        assert f"#{anchor}" in page.links  # reachable from the timeline
        for log in step["logs"].values():
            assert log in page.links and (run_dir / log).is_file()
    assert "svg" in page.tags and "script" not in page.tags
    assert page.external == []  # nothing fetched, nothing linked off the machine
    assert "a &lt;&amp;&gt; b.txt" in text  # values are escaped
    assert "cpus=2 mem=1GiB" in text  # the declaration, next to what happened
    assert "make → use" in text  # the dependency drawn in the graph


def test_a_failed_run_reports_the_failure_and_the_step_that_never_ran(project: Path) -> None:
    run = ninja(project, "run", "recipe.py:bad", "--provenance")
    assert run.returncode == 1
    run_dir = only_run(project)
    out = project / "elsewhere" / "report.html"
    out.parent.mkdir()
    made = ninja(project, "report", str(run_dir / "manifest.json"), "-o", str(out))
    assert made.returncode == 0, made.stderr
    text, page = parse(out)
    for name in ("make", "broken", "never"):
        assert f'id="step-{name}"' in text
    assert "exited with code 3" in text
    for link in page.links:
        if not link.startswith("#"):
            assert not os.path.isabs(link) and (out.parent / link).is_file(), link


def test_a_run_dir_works_as_the_argument_and_so_does_a_unique_id_prefix(project: Path) -> None:
    assert ninja(project, "run", "recipe.py:bad", "--provenance").returncode == 1
    run_dir = only_run(project)
    assert ninja(project, "report", str(run_dir)).returncode == 0
    assert ninja(project, "report", run_dir.name[:-2]).returncode == 0


def test_an_ambiguous_prefix_or_a_missing_output_folder_is_a_one_line_error(
    project: Path,
) -> None:
    for _ in range(2):
        assert ninja(project, "run", "recipe.py:bad", "--provenance").returncode == 1
    made = ninja(project, "report", "2")  # every run id starts with the year
    assert made.returncode == 2
    assert made.stderr.count("\n") == 1 and "matches 2 runs" in made.stderr
    run_dir = sorted((project / ".shinobi" / "runs").iterdir())[0]
    nowhere = project / "no" / "such" / "dir" / "r.html"
    made = ninja(project, "report", run_dir.name, "-o", str(nowhere))
    assert made.returncode == 2 and "does not exist" in made.stderr
    assert not (project / "no").exists()
    (project / "afile").write_text("")
    made = ninja(project, "report", run_dir.name, "-o", str(project / "afile" / "r.html"))
    assert made.returncode == 2 and f"{project / 'afile'} is not a directory" in made.stderr


def test_a_run_without_a_manifest_is_a_one_line_error(project: Path) -> None:
    made = ninja(project, "report", "no-such-run")
    assert made.returncode == 2
    # no run of that id here: another project's, most likely (its provenance is not
    # what is missing)
    assert made.stderr.count("\n") == 1 and "or give --workdir" in made.stderr


def test_a_folder_that_is_no_run_is_said_to_be_none(project: Path) -> None:
    """`ninja report .` was "run '' was made without provenance", and its fix."""
    made = ninja(project, "run", "recipe.py:good", "--names", "ann")
    assert made.returncode == 0, made.stderr
    for target in (".", ".shinobi/runs", str(project.parent)):
        said = ninja(project, "report", target)
        assert said.returncode == 2 and said.stderr.count("\n") == 1, said.stderr
        assert f"{target!r} is not a run folder" in said.stderr and "`ninja runs`" in said.stderr
        assert "provenance" not in said.stderr


def test_a_run_made_without_provenance_is_said_so(project: Path) -> None:
    """It was told to "give a run id from .shinobi/runs", which is what it gave."""
    made = ninja(project, "run", "recipe.py:good", "--names", "ann")
    assert made.returncode == 0, made.stderr
    run_id = only_run(project).name
    for target in (run_id, run_id[:-2], str(only_run(project))):
        said = ninja(project, "report", target)
        assert said.returncode == 2
        assert f"run {run_id!r} was made without provenance" in said.stderr, said.stderr
        assert "--provenance" in said.stderr


def test_the_page_renders_an_interrupted_manifest_with_steps_still_running() -> None:
    manifest = {
        "format": 1,
        "run_id": "r1",
        "status": "interrupted",
        "signal": "SIGTERM",
        "started": 100.0,
        "finished": 105.0,
        "recipe": {"name": "x"},
        "graph": {"nodes": [{"name": "a", "deps": []}, {"name": "b", "deps": ["a"]}]},
        "steps": [
            {
                "name": "a",
                "status": "running",
                "started": 101.0,
                "finished": None,
                "deps": [],
                "logs": {"stdout": "logs/a.out"},
            }
        ],
    }
    html = render_report(manifest, "..")
    assert 'href="../logs/a.out"' in html
    assert 'id="step-a"' in html and 'id="step-b"' in html  # b never started: still listed
    assert "SIGTERM" in html


def test_the_timeline_labels_only_the_steps_that_declared_resources() -> None:
    step = {"status": "ok", "started": 101.0, "finished": 102.0, "deps": []}
    manifest = {
        "format": 1,
        "run_id": "r1",
        "status": "ok",
        "started": 100.0,
        "finished": 103.0,
        "recipe": {"name": "x"},
        "graph": {"nodes": [{"name": "a", "deps": []}, {"name": "b", "deps": []}]},
        "steps": [
            {**step, "name": "a"},
            {**step, "name": "b", "resources": {"cpus": 2, "text": "2 CPUs"}},
        ],
    }
    html = render_report(manifest, "..")
    timeline = html[html.index("<svg") : html.index("</svg>")]
    assert ">undeclared</text>" not in timeline and ">2 CPUs</text>" in timeline
    assert "undeclared" in html  # the step's own table still says so


# -- what the run folder says beyond its manifest, and manifests that are odd --


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``ninja report ARGS`` in this process: exit code, stdout, stderr."""
    from shinobi.cli.main import main

    try:
        main(["report", *args])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def write_run(runs: Path, run_id: str, steps: list[dict[str, Any]], **about: Any) -> Path:
    """A run folder as ninja leaves it, its manifest saying ``about`` and ``steps``."""
    run_dir = runs / run_id
    (run_dir / "logs").mkdir(parents=True)
    manifest = {
        "format": 1,
        "run_id": run_id,
        "status": "ok",
        "started": 100.0,
        "finished": 110.0,
        "recipe": {"name": "r"},
        "graph": {"nodes": [{"name": s["name"], "deps": []} for s in steps]},
        "steps": [{"deps": [], "logs": {}, "details": {}, **s} for s in steps],
        **about,
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


def statuses(text: str) -> dict[str, str]:
    """The status badge of the run (under ``""``) and of each step, as the page shows them."""
    shown = dict(re.findall(r'<summary><b>([^<]*)</b> <span class="badge"[^>]*>([^<]*)<', text))
    run = re.search(r'<th>status</th><td><span class="badge"[^>]*>([^<]*)<', text)
    return {"": run.group(1) if run else "?", **shown}


def hrefs(text: str) -> list[str]:
    page = Page()
    page.feed(text)
    return [link for link in page.links if not link.startswith("#")]


def test_a_name_that_is_not_utf8_is_shown_escaped_in_a_utf8_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = os.fsdecode(b"bad\xff\xfename.txt")  # how a manifest holds such a name
    run_dir = write_run(
        tmp_path / ".shinobi" / "runs",
        "20260101-000000-aaaaaa",
        [{"name": "copy", "status": "ok", "argv": ["cat", name]}],
        inputs={"src": name},
        cwd=os.fsdecode(b"/data/\xe9t\xe9"),
    )
    code, _out, err = report(capsys, str(run_dir))
    assert code == 0, err
    text = (run_dir / "report.html").read_bytes().decode("utf-8")  # strict: valid UTF-8
    assert text.count("bad\\xff\\xfename.txt") == 2  # the input and the step's argv
    assert "/data/\\xe9t\\xe9" in text


def test_a_non_utf8_log_file_name_is_linked_by_its_real_bytes() -> None:
    from urllib.parse import unquote_to_bytes

    manifest = {
        "format": 1,
        "status": "ok",
        "steps": [{"name": "a", "status": "ok", "logs": {"stdout": os.fsdecode(b"logs/\xff.out")}}],
    }
    (link,) = hrefs(render_report(manifest, ""))
    assert unquote_to_bytes(link) == b"logs/\xff.out"


def test_the_report_of_a_killed_run_says_so_as_ninja_runs_does_and_links_its_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from shinobi.local_runs import ENDED_ABRUPTLY, local_runs
    from shinobi.session import safe_name

    step = "talk to me"  # a name whose log files are named otherwise
    run_dir = write_run(
        tmp_path / ".shinobi" / "runs",
        "20260101-000000-aaaaaa",
        [
            {"name": step, "status": "running", "started": 101.0},
            {"name": "after", "status": "pending"},
        ],
        status="running",  # the last manifest a SIGKILLed ninja wrote
        finished=None,
    )
    (run_dir / ".running").write_text('{"recipe": "r", "pid": 1}')  # no lock held any more
    for suffix in (".out", ".err"):
        (run_dir / "logs" / f"{safe_name(step)}{suffix}").write_text("said\n")
    assert [r.state for r in local_runs(tmp_path)] == [ENDED_ABRUPTLY]
    code, _out, err = report(capsys, "--workdir", str(tmp_path), run_dir.name)
    assert code == 0, err
    text = (run_dir / "report.html").read_text()
    # neither the run nor its step is said to be running, nor a step still to run
    assert statuses(text) == {"": ENDED_ABRUPTLY, step: "unknown", "after": "not run"}
    assert "may even still be running" in text
    assert "never recorded" in text and "last activity" in text
    assert sorted(hrefs(text)) == [f"logs/{safe_name(step)}.err", f"logs/{safe_name(step)}.out"]
    assert text.count("no log") == 1  # the step that never ran


def test_the_report_of_a_run_that_still_holds_its_lock_says_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from shinobi.local_runs import hold_run, release_run

    run_dir = write_run(
        tmp_path / ".shinobi" / "runs",
        "20260101-000000-aaaaaa",
        [{"name": "a", "status": "running", "started": 101.0}, {"name": "b", "status": "pending"}],
        status="running",
        finished=None,
    )
    held = hold_run(run_dir, "r")
    try:
        code, _out, err = report(capsys, str(run_dir))
    finally:
        release_run(held)
    assert code == 0, err
    text = (run_dir / "report.html").read_text()
    assert statuses(text) == {"": "running", "a": "running", "b": "pending"}
    assert "never recorded" not in text


def test_a_cached_step_links_the_run_it_came_from_and_that_runs_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / ".shinobi" / "runs"
    ran = write_run(runs, "20260101-000000-aaaaaa", [{"name": "up", "status": "ok"}])
    (ran / "logs" / "up.out").write_text("what it printed\n")
    gone = "20251231-000000-ffffff"  # removed since, by `ninja clean --runs`
    cached = write_run(
        runs,
        "20260101-000001-bbbbbb",
        [
            {"name": "up", "status": "cached", "cached": True},
            {"name": "down", "status": "cached", "cached": True},
        ],
    )
    manifest = json.loads((cached / "manifest.json").read_text())
    manifest["steps"][0]["details"] = {"cached_from": ran.name}
    manifest["steps"][1]["details"] = {"cached_from": gone}
    (cached / "manifest.json").write_text(json.dumps(manifest))
    out_dir = tmp_path / "elsewhere"
    out_dir.mkdir()
    for page in (cached / "report.html", out_dir / "r.html"):
        code, _out, err = report(capsys, str(cached), "-o", str(page))
        assert code == 0, err
        text = page.read_text()
        assert "cached from run <a href=" in text and f"cached from run {gone}" in text
        assert f"ninja logs {gone} down" in text and "no log" not in text
        links = hrefs(text)
        assert len(links) == 2
        assert (page.parent / links[0]).resolve() == ran
        assert (page.parent / links[1]).resolve() == ran / "logs" / "up.out"


def test_a_cached_step_links_the_logs_of_the_step_that_ran_it_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A slice served by a result another slice made (a scatter reordered) linked
    the origin run's log of its own name: another word's output."""
    runs = tmp_path / ".shinobi" / "runs"
    ran = write_run(
        runs,
        "20260101-000000-aaaaaa",
        [{"name": "sc[0]", "status": "ok"}, {"name": "sc[1]", "status": "ok"}],
    )
    (ran / "logs" / "sc[0].out").write_text("processed A\n")
    (ran / "logs" / "sc[1].out").write_text("processed B\n")
    cached = write_run(
        runs, "20260101-000001-bbbbbb", [{"name": "sc[1]", "status": "cached", "cached": True}]
    )
    manifest = json.loads((cached / "manifest.json").read_text())
    manifest["steps"][0]["details"] = {"cached_from": ran.name, "cached_step": "sc[0]"}
    (cached / "manifest.json").write_text(json.dumps(manifest))
    code, _out, err = report(capsys, str(cached))
    assert code == 0, err
    links = hrefs((cached / "report.html").read_text())
    assert (cached / links[-1]).resolve() == ran / "logs" / "sc[0].out"


@pytest.mark.parametrize(
    "times",
    [
        '"started": 1e400',
        '"started": 1, "finished": 1e300',
        '"started": NaN, "finished": -Infinity',
        '"started": "noon", "finished": true',
        '"steps": [{"name": "a", "status": "ok", "started": 1e300, "finished": 1e400,'
        ' "duration": Infinity}]',
    ],
)
def test_an_absurd_timestamp_is_shown_as_unknown_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], times: str
) -> None:
    (tmp_path / "manifest.json").write_text(f'{{"format": 1, "status": "ok", {times}}}')
    code, _out, err = report(capsys, str(tmp_path))
    assert code == 0, err
    assert "unknown" in (tmp_path / "report.html").read_text()


def test_dash_writes_the_page_to_stdout_with_links_from_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = write_run(
        tmp_path / ".shinobi" / "runs",
        "20260101-000000-aaaaaa",
        [{"name": "a", "status": "ok", "logs": {"stdout": "logs/a.out"}}],
    )
    (run_dir / "logs" / "a.out").write_text("hi\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = report(capsys, run_dir.name, "-o", "-")
    assert code == 0, err
    assert out.startswith("<!DOCTYPE html>") and out.endswith("</html>\n")
    assert hrefs(out) == [f".shinobi/runs/{run_dir.name}/logs/a.out"]
    assert not (tmp_path / "-").exists() and not (run_dir / "report.html").exists()


def test_log_links_stay_whole_when_the_workdir_has_url_characters_in_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from urllib.parse import unquote

    workdir = tmp_path / "run #1 ?at 100%"
    run_dir = write_run(
        workdir / ".shinobi" / "runs",
        "20260101-000000-aaaaaa",
        [{"name": "a", "status": "ok", "logs": {"stdout": "logs/a.out"}}],
    )
    (run_dir / "logs" / "a.out").write_text("hi\n")
    page = tmp_path / "out" / "r.html"
    page.parent.mkdir()
    code, _out, err = report(capsys, str(run_dir), "-o", str(page))
    assert code == 0, err
    (link,) = hrefs(page.read_text())
    assert not set("#? ") & set(link) and "%25" in link  # '%' itself is encoded too
    assert (page.parent / unquote(link)).resolve() == run_dir / "logs" / "a.out"


NON_UTF8_RECIPE = """
from pathlib import Path
from typing import Any
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    src: File

class CopyIn(BaseModel):
    src: File
    out: Path

copy = Cab("copy", ["/bin/sh", "-c", 'cat "$0" > "$1"; echo copied'], CopyIn,
           field_meta={"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)})
pipe = Recipe("pipe", In)
pipe.add_step("copy", copy, src=pipe.inputs.src, out=Path("copy.txt"))
"""


@pytest.mark.slow
def test_the_report_of_a_real_run_with_a_non_utf8_input_name(tmp_path: Path) -> None:
    (tmp_path / "recipe.py").write_text(NON_UTF8_RECIPE)
    bad = os.fsdecode(b"bad\xff\xfename.txt")
    (tmp_path / bad).write_text("bad\n")
    run = ninja(tmp_path, "run", "recipe.py:pipe", "--src", bad, "--provenance")
    assert run.returncode == 0, run.stderr
    made = ninja(tmp_path, "report", only_run(tmp_path).name)
    assert made.returncode == 0, made.stderr
    text = (only_run(tmp_path) / "report.html").read_bytes().decode("utf-8")
    assert "bad\\xff\\xfename.txt" in text


KILLED_RECIPE = """
from shinobi.steps import Cab, Recipe
nap = Recipe("nap")
nap.add_step("nap", Cab("nap", ["/bin/sh", "-c", "echo $$ > nap.pid; echo start; echo warn >&2;"
                                 " exec sleep 60"]))
nap.add_step("after", Cab("after", ["/bin/true"]))
"""


def _says_running(tmp_path: Path, step: str) -> bool:
    """Whether the run's manifest, as last written, has ``step`` running."""
    for manifest in tmp_path.glob(".shinobi/runs/*/manifest.json"):
        try:
            steps = json.loads(manifest.read_text())["steps"]
        except (ValueError, KeyError):  # caught mid-write
            continue
        if any(s.get("name") == step and s.get("status") == "running" for s in steps):
            return True
    return False


@pytest.mark.slow
def test_the_report_of_a_really_sigkilled_run_links_the_logs_of_its_unfinished_step(
    tmp_path: Path,
) -> None:
    import signal
    import time

    (tmp_path / "recipe.py").write_text(KILLED_RECIPE)
    script = Path(sys.executable).with_name("ninja")
    env = {**os.environ, "SHINOBI_CACHE_DIR": str(tmp_path / "cache")}
    going = subprocess.Popen(
        [str(script), "run", "recipe.py:nap", "--provenance", "--max-workers", "1"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pid_file = tmp_path / "nap.pid"
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.is_file() and list(tmp_path.glob(".shinobi/runs/*/logs/nap.err"))):
            assert time.monotonic() < deadline, "the nap step never started"
            time.sleep(0.1)
        while not _says_running(tmp_path, "nap"):  # the manifest's write is asynchronous
            assert time.monotonic() < deadline, "the manifest never said nap runs"
            time.sleep(0.05)
        going.kill()
        going.wait(timeout=30)
        run_dir = only_run(tmp_path)
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "running"
        made = ninja(tmp_path, "report", run_dir.name)
        assert made.returncode == 0, made.stderr
        text = (run_dir / "report.html").read_text()
        assert statuses(text) == {
            "": "ended abruptly (killed?)",
            "nap": "unknown",
            "after": "not run",
        }
        assert sorted(hrefs(text)) == ["logs/nap.err", "logs/nap.out"]
    finally:
        going.kill()
        going.wait(timeout=30)
        if pid_file.is_file():  # the step outlives its ninja: the reason the page says so
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_report_the_disk_refuses_exits_74_and_leaves_no_partial_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk left an empty report.html and exited 2, as for a typo."""
    import errno

    import shinobi.launch.handle as handle

    run_dir = write_run(
        tmp_path / ".shinobi" / "runs", "20260101-000000-aaaaaa", [{"name": "a", "status": "ok"}]
    )
    page = tmp_path / "r.html"
    code, _out, err = report(capsys, str(run_dir), "-o", str(page))
    assert code == 0, err
    assert page.stat().st_mode & 0o044 == 0o044  # readable by others, as any page
    page.unlink()

    def full(path: Path, text: str) -> None:  # as a full disk answers the write
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(handle, "atomic_write", full)
    code, _out, err = report(capsys, str(run_dir), "-o", str(page))
    assert code == 74 and not page.exists()
    assert "No space left on device; write it elsewhere with -o PATH" in err


def test_o_writes_into_a_named_pipe_and_leaves_it_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-o FIFO` replaced the pipe with a file (and `-o /dev/null` as root the
    machine's own device): the page goes into what is there."""
    import stat
    import threading

    run_dir = write_run(tmp_path / ".shinobi" / "runs", "20260101-000000-aaaaaa", [])
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _out, err = report(capsys, str(run_dir), "-o", str(fifo))
    reader.join(10)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert read and read[0].startswith(b"<!DOCTYPE html>")


def test_o_refuses_a_file_that_is_not_a_report_and_rewrites_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(tmp_path / ".shinobi" / "runs", "20260101-000000-aaaaaa", [])
    script = tmp_path / "keep.py"
    script.write_text("print('my analysis')\n")
    code, _out, err = report(capsys, str(run_dir), "-o", str(script))
    assert code == 2 and "is there already and is not a report ninja wrote" in err
    assert script.read_text() == "print('my analysis')\n"
    page = tmp_path / "page.html"
    assert report(capsys, str(run_dir), "-o", str(page))[0] == 0
    assert report(capsys, str(run_dir), "-o", str(page))[0] == 0  # its own page: rewritten


def test_an_empty_run_name_is_refused_not_read_as_the_start_of_every_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(tmp_path / ".shinobi" / "runs", "20260101-000000-aaaaaa", [])
    monkeypatch.chdir(tmp_path)
    code, _out, err = report(capsys, "")
    assert code == 2 and "the run's name is empty" in err
    assert not list(tmp_path.rglob("report.html"))


def test_a_report_written_into_a_run_folder_leaves_its_last_activity_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ninja runs` and `clean --runs` read a run's last activity from its folder:
    a report written there made a run of last week look new, and clean kept it."""
    import os

    from shinobi.local_runs import local_runs

    run_dir = write_run(tmp_path / ".shinobi" / "runs", "20260101-000000-aaaaaa", [])
    week = 1_700_000_000
    for path in (run_dir / "logs", run_dir / "manifest.json", run_dir):
        os.utime(path, (week, week))
    code, _out, err = report(capsys, str(run_dir))
    assert code == 0, err
    assert (run_dir / "report.html").is_file()
    (run,) = local_runs(tmp_path)
    assert run.modified == week
