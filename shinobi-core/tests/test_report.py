"""``ninja report``: one self-contained HTML page per run, every step in it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

from shinobi.render.report_html import render_report

RECIPE = """
from pathlib import Path
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
        "SHINOBI_CONFIG": str(cwd / "none.toml"),
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


def test_a_run_without_a_manifest_is_a_one_line_error(project: Path) -> None:
    made = ninja(project, "report", "no-such-run")
    assert made.returncode == 2
    assert made.stderr.count("\n") == 1 and "--provenance" in made.stderr


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
