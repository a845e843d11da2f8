"""The step cache: identical steps are not run again, and nothing stale is reused.

Every tool here appends a line to a counter file each time it really runs,
so "no process was spawned" is checked by the counter, not by trusting the
status the cache reports.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi.file_digests as digests_module
from shinobi.backends.base import Backend, BackendRun, Invocation, PathUse, RunControl
from shinobi.cache import DigestMemo, StepCache
from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe, Wrangler
from shinobi.steps.result import RecipeResult, StepResult

RECIPE = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe

class In(BaseModel):
    left: Path
    right: Path

class CopyIn(BaseModel):
    src: Path
    out: Path

class CopyOut(BaseModel):
    out: Path | None = None

class JoinIn(BaseModel):
    first: Path
    second: Path
    out: Path

class JoinOut(BaseModel):
    out: Path | None = None

SCRIPT = 'echo "$0" >> counter.txt; '
copy = Cab("copy", ["/bin/sh", "-c", SCRIPT + 'tr a-z A-Z < "$1" > "$2"', "copy"],
           CopyIn, CopyOut, {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)})
join = Cab("join", ["/bin/sh", "-c", SCRIPT + 'cat "$1" "$2" > "$3"', "join"],
           JoinIn, JoinOut, {"first": ParamMeta(positional=True),
                             "second": ParamMeta(positional=True),
                             "out": ParamMeta(positional=True)})

pipe = Recipe("pipe", In, max_workers=2)
pipe.add_step("up_left", copy, src=pipe.inputs.left, out=Path("L.txt"))
pipe.add_step("up_right", copy, src=pipe.inputs.right, out=Path("R.txt"))
pipe.add_step("joined", join, first=pipe.outputs.up_left.out,
              second=pipe.outputs.up_right.out, out=Path("joined.txt"))
"""


def ninja(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("ninja")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "shinobi.cli"]
    env = {**os.environ, "SHINOBI_CONFIG": os.devnull, "SHINOBI_CACHE_DIR": str(cache)}
    return subprocess.run(
        [*command, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


def counted(cwd: Path) -> list[str]:
    counter = cwd / "counter.txt"
    return counter.read_text().split() if counter.exists() else []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "recipe.py").write_text(textwrap.dedent(RECIPE))
    (work / "left.txt").write_text("left\n")
    (work / "right.txt").write_text("right\n")
    return work


def run(project: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = ninja(
        project,
        cache,
        "run",
        "recipe.py:pipe",
        "--left",
        "left.txt",
        "--right",
        "right.txt",
        "--json",
        *extra,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def statuses(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return {s["name"]: s["status"] for s in json.loads(proc.stdout)["steps"]}


def _why(*runs: subprocess.CompletedProcess[str]) -> str:
    """What the runs said, for a run that missed the cache (CI once saw one step
    run again and said nothing more)."""
    return "\n".join(f"{proc.stdout}\n{proc.stderr}" for proc in runs)


def outputs(project: Path) -> dict[str, bytes]:
    return {n: (project / n).read_bytes() for n in ("L.txt", "R.txt", "joined.txt")}


def test_an_unchanged_rerun_is_all_hits_and_spawns_nothing(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run(project, cache)
    assert set(statuses(first).values()) == {"ok"}
    assert sorted(counted(project)) == ["copy", "copy", "join"]
    before = outputs(project)
    second = run(project, cache)
    assert set(statuses(second).values()) == {"cached"}, _why(first, second)
    assert sorted(counted(project)) == ["copy", "copy", "join"]  # nothing ran
    assert outputs(project) == before
    assert "cached" in second.stderr


def test_changing_one_input_reruns_exactly_what_depends_on_it(
    project: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    run(project, cache)
    (project / "left.txt").write_text("changed\n")
    again = run(project, cache)
    assert statuses(again) == {"up_left": "ok", "up_right": "cached", "joined": "ok"}
    assert (project / "joined.txt").read_text() == "CHANGED\nRIGHT\n"


def test_an_input_rewritten_with_the_same_content_is_still_a_hit(
    project: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    run(project, cache)
    time.sleep(0.01)
    (project / "left.txt").write_text("left\n")  # new mtime, same bytes
    assert set(statuses(run(project, cache)).values()) == {"cached"}


def test_a_missing_or_changed_output_is_never_reused(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(project, cache)
    (project / "R.txt").unlink()
    (project / "joined.txt").write_text("tampered\n")
    again = run(project, cache)
    assert statuses(again) == {"up_left": "cached", "up_right": "ok", "joined": "ok"}
    assert (project / "joined.txt").read_text() == "LEFT\nRIGHT\n"


def test_no_cache_runs_every_step(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(project, cache)
    again = run(project, cache, "--no-cache")
    assert set(statuses(again).values()) == {"ok"}
    assert len(counted(project)) == 6


def test_a_cache_shared_between_two_places_hits_in_both(project: Path, tmp_path: Path) -> None:
    """Keys hold contents and relative argv, not where the run happened: the same
    project elsewhere (a laptop and a cluster on one shared cache) reuses results
    as long as the outputs are there too."""
    cache = tmp_path / "cache"
    first = run(project, cache)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(project, elsewhere)
    (elsewhere / "counter.txt").unlink()
    second = run(elsewhere, cache)
    assert set(statuses(second).values()) == {"cached"}, _why(first, second)
    assert counted(elsewhere) == []
    (elsewhere / "L.txt").unlink()  # not there: this place must compute it
    assert statuses(run(elsewhere, cache))["up_left"] == "ok"


def test_cache_ls_rm_and_prune(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run(project, cache)
    listed = json.loads(ninja(project, cache, "cache", "ls", "--json").stdout)
    assert sorted(e["step"] for e in listed["entries"]) == ["joined", "up_left", "up_right"]
    (project / "joined.txt").unlink()
    stale = json.loads(ninja(project, cache, "cache", "ls", "--stale", "--json").stdout)
    assert {e["step"]: e["stale"] for e in stale["entries"]}["joined"] is True
    dry = ninja(project, cache, "cache", "prune", "--dry-run")
    assert "would remove 1 entry" in dry.stdout
    pruned = ninja(project, cache, "cache", "prune")
    assert pruned.returncode == 0 and "removed 1 entry" in pruned.stdout
    key = next(e["key"] for e in listed["entries"] if e["step"] == "up_left")
    assert ninja(project, cache, "cache", "rm", key[:10]).returncode == 0
    left = json.loads(ninja(project, cache, "cache", "ls", "--json").stdout)["entries"]
    assert [e["step"] for e in left] == ["up_right"]
    assert ninja(project, cache, "cache", "rm", "--all").returncode == 0
    assert "is empty" in ninja(project, cache, "cache", "ls").stdout
    bad = ninja(project, cache, "cache", "rm", "nosuchkey")
    assert bad.returncode == 2 and bad.stderr.startswith("ninja: error:")
    assert list(cache.rglob("*.tmp")) == []


# -- in process: mutation, the memo, keys ---------------------------------------


class ImageProbe(Backend):
    """A container-like backend that resolves image tags to digests."""

    name = "probe"
    digest = "sha256:one"

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        raise AssertionError("keys are computed without running anything")

    def image_digest(self, image: str, cwd: str | None = None) -> str | None:
        self.asked.append((image, cwd))
        return self.digest

    def __init__(self) -> None:
        super().__init__({})
        self.asked: list[tuple[str, str | None]] = []


def run_cached(recipe: Recipe, tmp_path: Path, **inputs: object) -> RecipeResult:
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    return run_recipe(recipe, inputs, config=config, cwd=tmp_path)


class MsIn(BaseModel):
    ms: Path


def _mutating(cache: bool | None) -> Recipe:
    cab = Cab(
        "flag",
        ["/bin/sh", "-c", 'echo flagged >> "$0"; echo run >> counter.txt'],
        MsIn,
        field_meta={"ms": ParamMeta(positional=True, mutable=True)},
        cache=cache,
    )
    recipe = Recipe("mutate", MsIn)
    recipe.add_step("flag", cab, ms=recipe.inputs.ms)
    return recipe


def test_a_step_that_rewrites_an_input_in_place_is_not_cached(tmp_path: Path) -> None:
    (tmp_path / "data.ms").write_text("")
    for _ in range(2):
        result = run_cached(_mutating(None), tmp_path, ms="data.ms")
        assert [s.status for s in result.steps] == ["ok"]
    assert counted(tmp_path) == ["run", "run"]


def test_a_mutating_step_declared_safe_is_replayed_on_the_data_it_left(tmp_path: Path) -> None:
    """A re-run picks up after it: the data is already as the step leaves it."""
    (tmp_path / "data.ms").write_text("")
    run_cached(_mutating(True), tmp_path, ms="data.ms")
    result = run_cached(_mutating(True), tmp_path, ms="data.ms")
    assert [s.status for s in result.steps] == ["cached"]
    assert counted(tmp_path) == ["run"]
    assert (tmp_path / "data.ms").read_text() == "flagged\n"


def test_a_mutating_step_declared_safe_runs_on_data_as_it_was_before_it(tmp_path: Path) -> None:
    """Its key held the data as it was before the step, so data put back in that state
    (remade by the step before it, restored from a copy) was a hit, and the rewrite
    was skipped: the run succeeded with unflagged data."""
    (tmp_path / "data.ms").write_text("")
    run_cached(_mutating(True), tmp_path, ms="data.ms")
    (tmp_path / "data.ms").write_text("")  # back to what it was before the step
    result = run_cached(_mutating(True), tmp_path, ms="data.ms")
    assert [s.status for s in result.steps] == ["ok"]
    assert counted(tmp_path) == ["run", "run"]
    assert (tmp_path / "data.ms").read_text() == "flagged\n"


def test_a_cab_that_opts_out_runs_again_beside_a_cached_one(tmp_path: Path) -> None:
    """``Cab(cache=False)`` is for a tool whose effect is its point (a download, a
    notice sent): replayed from the cache, it quietly did nothing on the second run."""
    recipe = Recipe("fetch_then_count")
    fetch = Cab("fetch", ["/bin/sh", "-c", "echo fetch >> counter.txt"], cache=False)
    recipe.add_step("fetch", fetch)
    recipe.add_step("count", Cab("count", ["/bin/sh", "-c", "echo count >> counter.txt"]))
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["ok", "ok"]
    second = {s.name: s.status for s in run_cached(recipe, tmp_path).steps}
    assert second == {"fetch": "ok", "count": "cached"}
    assert sorted(counted(tmp_path)) == ["count", "fetch", "fetch"]


def test_a_failed_step_is_not_cached(tmp_path: Path) -> None:
    recipe = Recipe("fail")
    recipe.add_step("boom", Cab("boom", ["/bin/sh", "-c", "echo run >> counter.txt; exit 3"]))
    for _ in range(2):
        assert run_cached(recipe, tmp_path).status == "failed"
    assert counted(tmp_path) == ["run", "run"]


def _invocation(tmp_path: Path, image: str | None = None) -> Invocation:
    src = tmp_path / "in.txt"
    if not src.exists():
        src.write_text("x")
    return Invocation(
        step="s",
        argv=("tool", "in.txt"),
        cwd=str(tmp_path),
        image=image,
        paths=(PathUse(str(src), "input", "src", "file"),),
    )


def test_the_key_follows_tool_argv_inputs_image_and_backend(tmp_path: Path) -> None:
    store = StepCache(tmp_path / "cache")
    cab = Cab("tool", ["tool"])
    base = store.key(cab, _invocation(tmp_path), "native")
    assert base == store.key(cab, _invocation(tmp_path), "native")
    assert base != store.key(Cab("tool", ["tool"], version="2"), _invocation(tmp_path), "native")
    assert base != store.key(cab, _invocation(tmp_path), "venv")
    other_argv = Invocation(**{**_fields(_invocation(tmp_path)), "argv": ("tool", "-v", "in.txt")})
    assert base != store.key(cab, other_argv, "native")
    in_venvs = [
        store.key(cab, Invocation(**{**_fields(_invocation(tmp_path)), "venv": v}), "venv")
        for v in (None, "/opt/v1", "/opt/v2")
    ]
    assert len(set(in_venvs)) == 3  # no venv (run natively), and two installations
    (tmp_path / "in.txt").write_text("y")
    assert base != store.key(cab, _invocation(tmp_path), "native")
    probe = ImageProbe()
    pinned = store.key(cab, _invocation(tmp_path, "img:1"), "docker", probe)
    ImageProbe.digest = "sha256:two"  # the tag moved to another image
    moved = StepCache(tmp_path / "cache").key(cab, _invocation(tmp_path, "img:1"), "docker", probe)
    assert pinned != moved


class ToolIn(BaseModel):
    src: Path


class ToolOut(BaseModel):
    images: list[str] = []
    report: str | None = None


class ToolOutAsFiles(BaseModel):
    images: list[File] = []
    report: str | None = None


def _tool(**changed: Any) -> Cab:
    declared: dict[str, Any] = {
        "outputs_model": ToolOut,
        "field_meta": {"src": ParamMeta(positional=True), "images": ParamMeta(harvest="*.fits")},
        "wranglers": [Wrangler(r"wrote (\S+)", "output", output="report", stream="stdout")],
        "env": {"MODE": "fast"},
    }
    return Cab("tool", ["tool"], ToolIn, **{**declared, **changed})


@pytest.mark.parametrize(
    "changed",
    [
        {"env": {"MODE": "exact"}},
        {"outputs_model": ToolOutAsFiles},
        {"wranglers": [Wrangler(r"wrote (\S+)", "output", output="report", stream="stderr")]},
        {"field_meta": {"src": ParamMeta(positional=True), "images": ParamMeta(harvest="*.png")}},
        {
            "field_meta": {
                "src": ParamMeta(positional=True, writable=False),
                "images": ParamMeta(harvest="*.fits"),
            }
        },
    ],
    ids=["env", "outputs schema", "wrangler stream", "harvest glob", "writable"],
)
def test_the_key_follows_what_the_cab_declares_off_the_command_line(
    tmp_path: Path, changed: dict[str, Any]
) -> None:
    """None of these shows in the argv, so only the cab's identity tells the two
    tools apart: a cab re-declared with another environment, output schema, wrangled
    stream or harvest glob replayed what the old declaration had made."""
    store = StepCache(tmp_path / "cache")
    base = store.key(_tool(), _invocation(tmp_path), "native")
    assert base == store.key(_tool(), _invocation(tmp_path), "native")  # a fresh, equal cab
    assert base != store.key(_tool(**changed), _invocation(tmp_path), "native")


def test_a_cab_given_another_environment_runs_again(tmp_path: Path) -> None:
    """A cab's env is not on its command line: changing it between two runs
    replayed the result made under the old setting, and the tool never ran."""

    def recipe(mode: str) -> Recipe:
        tool = Cab("tool", ["/bin/sh", "-c", 'echo "$MODE" >> counter.txt'], env={"MODE": mode})
        recipe = Recipe("env")
        recipe.add_step("run", tool)
        return recipe

    run_cached(recipe("fast"), tmp_path)
    assert [s.status for s in run_cached(recipe("fast"), tmp_path).steps] == ["cached"]
    assert [s.status for s in run_cached(recipe("exact"), tmp_path).steps] == ["ok"]
    assert counted(tmp_path) == ["fast", "exact"]


def test_an_image_is_asked_about_from_the_step_s_directory(tmp_path: Path) -> None:
    """A relative image file (tools/x.sif) is the step's, wherever ninja itself runs."""
    cab = Cab("tool", ["/bin/true"])
    probe = ImageProbe()
    StepCache(tmp_path / "cache").key(cab, _invocation(tmp_path, "tools/x.sif"), "apptainer", probe)
    assert probe.asked == [("tools/x.sif", str(tmp_path))]


def _fields(invocation: Invocation) -> dict[str, object]:
    return {name: getattr(invocation, name) for name in invocation.__dataclass_fields__}


def test_unchanged_files_are_not_read_again_by_a_later_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(4096))
    _an_hour_later(monkeypatch)  # settled: not changed within the racy window
    reads: list[str] = []
    real = digests_module.hash_file
    monkeypatch.setattr(
        digests_module, "hash_file", lambda p, stop=None: reads.append(p) or real(p, stop)
    )
    first = DigestMemo(tmp_path / "memo")
    digest = first.digest(str(big))
    first.save()
    later = DigestMemo(tmp_path / "memo")  # a new run: memo from disk
    assert later.digest(str(big)) == digest
    assert reads == [str(big)]
    with big.open("r+b") as fh:  # same size, new content
        fh.write(b"\0" * 16)
    assert DigestMemo(tmp_path / "memo").digest(str(big)) != digest
    assert len(reads) == 2


def _an_hour_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo's clock an hour ahead: every file here has settled (only the clock
    can age a file: setting an old mtime makes its ctime now)."""
    later = time.time() + 3600
    monkeypatch.setattr(digests_module, "time", SimpleNamespace(time=lambda: later))


def test_an_input_rewritten_with_its_old_mtime_put_back_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cp -p``, ``rsync -t`` or ``touch -d`` over a file of the same size leave its
    path, inode, size and mtime as they were: only the ctime says the content is new.
    Without it the memo gave the old digest, and the old result was replayed."""
    _an_hour_later(monkeypatch)  # settled: the first run's digest is remembered on disk
    data = tmp_path / "data.ms"
    data.write_text("calibrated")
    os.utime(data, ns=(1_000_000_000 * 10**9, 1_000_000_000 * 10**9))  # long ago
    script = 'cat "$0" > copy.ms; echo run >> counter.txt'
    reader = Cab(
        "read", ["/bin/sh", "-c", script], MsIn, field_meta={"ms": ParamMeta(positional=True)}
    )
    recipe = Recipe("read", MsIn)
    recipe.add_step("read", reader, ms=recipe.inputs.ms)
    assert [s.status for s in run_cached(recipe, tmp_path, ms="data.ms").steps] == ["ok"]
    before = os.stat(data)
    with data.open("r+") as fh:  # in place, the same size, other content
        fh.write("CALIBRATED")
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(data)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    assert after.st_ctime_ns != before.st_ctime_ns
    result = run_cached(recipe, tmp_path, ms="data.ms")
    assert [s.status for s in result.steps] == ["ok"]
    assert counted(tmp_path) == ["run", "run"]
    assert (tmp_path / "copy.ms").read_text() == "CALIBRATED"


def test_a_file_changed_moments_ago_is_not_memoised_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = tmp_path / "fresh.txt"
    fresh.write_text("just written")
    memo = DigestMemo(tmp_path / "memo")
    memo.digest(str(fresh))
    memo.save()
    settled = tmp_path / "settled.txt"
    settled.write_text("old news")
    with monkeypatch.context() as later:
        _an_hour_later(later)
        memo.digest(str(settled))
    memo.save()
    saved = "".join(p.read_text() for p in (tmp_path / "memo").glob("*.json"))
    assert str(settled) in saved and str(fresh) not in saved


def test_a_copy_with_an_old_mtime_is_not_memoised_on_disk(tmp_path: Path) -> None:
    """``cp -p``, ``rsync -t`` and ``tar x`` give a file written just now an old
    mtime: its fresh ctime says it changed in the racy window all the same."""
    copied = tmp_path / "copied.ms"
    copied.write_bytes(b"visibilities")
    os.utime(copied, (1_000_000_000, 1_000_000_000))
    memo = DigestMemo(tmp_path / "memo")
    memo.digest(str(copied))
    memo.save()
    saved = "".join(p.read_text() for p in (tmp_path / "memo").glob("*.json"))
    assert str(copied) not in saved


def test_a_directory_digest_sees_a_change_deep_inside(tmp_path: Path) -> None:
    table = tmp_path / "t.ms"
    (table / "a" / "b").mkdir(parents=True)
    (table / "a" / "b" / "rows").write_text("1")
    memo = DigestMemo(None)
    before = memo.digest(str(table))
    (table / "a" / "b" / "rows").write_text("2")
    assert memo.digest(str(table)) != before
    (table / "a" / "new").write_text("")
    assert memo.digest(str(table)) != before


def test_a_torn_entry_is_a_miss_not_an_error(tmp_path: Path) -> None:
    store = StepCache(tmp_path / "cache")
    key = store.key(Cab("t", ["t"]), _invocation(tmp_path), "native")
    assert key is not None
    path = Path(store._entry_path(key))
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"format": 1, "key": "')
    assert store.lookup(key, "s", str(tmp_path)) is None


def test_an_edited_tool_script_is_a_different_step(tmp_path: Path) -> None:
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\necho v1 >> counter.txt\n")
    tool.chmod(0o755)
    recipe = Recipe("edit")
    recipe.add_step("run", Cab("run", ["./tool.sh"]))
    run_cached(recipe, tmp_path)
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["cached"]
    tool.write_text("#!/bin/sh\necho v2 >> counter.txt\n")
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["ok"]
    assert counted(tmp_path) == ["v1", "v2"]


@pytest.mark.parametrize(
    ("command", "script"),
    [
        (["/bin/sh", "scripts/tool.sh"], "scripts/tool.sh"),
        ("/bin/sh -e tool.sh", "tool.sh"),
        (["python3", "scripts/tool.py"], "scripts/tool.py"),
    ],
)
def test_an_edited_script_run_through_an_interpreter_is_a_different_step(
    tmp_path: Path, command: Any, script: str
) -> None:
    path = tmp_path / script
    path.parent.mkdir(exist_ok=True)
    if script.endswith(".py"):
        body = "open('counter.txt', 'a').write('{v}\\n')\n"
    else:
        body = "echo {v} >> counter.txt\n"
    path.write_text(body.format(v="v1"))
    recipe = Recipe("edit")
    recipe.add_step("run", Cab("run", command))
    run_cached(recipe, tmp_path)
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["cached"]
    path.write_text(body.format(v="v2"))
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["ok"]
    assert counted(tmp_path) == ["v1", "v2"]


class ReportOut(BaseModel):
    report: str | None = None


def test_an_output_a_wrangler_finds_is_verified_like_any_other(tmp_path: Path) -> None:
    tool = Cab(
        "reporter",
        ["/bin/sh", "-c", "echo run >> counter.txt; echo made > made.txt; echo 'wrote made.txt'"],
        outputs_model=ReportOut,
        field_meta={"report": ParamMeta(dtype="File")},
        wranglers=[Wrangler(r"wrote (\S+)", "output", output="report")],
    )
    recipe = Recipe("wrangled")
    recipe.add_step("make", tool)
    run_cached(recipe, tmp_path)
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["cached"]
    (tmp_path / "made.txt").unlink()
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["ok"]
    assert counted(tmp_path) == ["run", "run"]


def test_a_cache_dir_that_cannot_be_used_is_said_once_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    recipe = Recipe("plain")
    recipe.add_step("run", Cab("run", ["/bin/sh", "-c", "echo run >> counter.txt"]))
    config = load_config({"cache.enabled": True, "cache.dir": str(blocker)})
    result = run_recipe(recipe, cwd=tmp_path, config=config)
    assert result.ok, result.error
    assert result.warnings == [
        f"the step cache at {blocker} cannot be used (it is not a directory): this run caches"
        " nothing; set cache.dir (SHINOBI_CACHE_DIR) to a writable directory"
    ]


def test_a_project_script_keys_a_container_step_too(tmp_path: Path) -> None:
    """The working directory is mounted into the container: the script it runs is ours."""
    (tmp_path / "tools").mkdir()
    script = tmp_path / "tools" / "s.sh"
    script.write_text("echo v1\n")
    store = StepCache(tmp_path / "cache")
    cab = Cab("s", ["sh", "tools/s.sh"], image="busybox")
    first = store.key(cab, _invocation(tmp_path, "busybox"), "docker")
    script.write_text("echo v2\n")
    assert StepCache(tmp_path / "cache").key(cab, _invocation(tmp_path, "busybox"), "docker") != (
        first
    )


class PrefixIn(BaseModel):
    prefix: str = "img"


class Harvested(BaseModel):
    images: list[str] = []


def _harvesting() -> Recipe:
    tool = Cab(
        "imager",
        ["/bin/sh", "-c", 'echo run >> counter.txt; echo a > "$0-1.fits"; echo b > "$0-2.fits"'],
        PrefixIn,
        Harvested,
        {"prefix": ParamMeta(positional=True), "images": ParamMeta(harvest="{prefix}-*.fits")},
    )
    recipe = Recipe("harvest", PrefixIn)
    recipe.add_step("image", tool, prefix=recipe.inputs.prefix)
    return recipe


@pytest.mark.parametrize(
    "change",
    ["delete", "edit", "add a match"],
)
def test_harvested_outputs_of_any_type_are_checked_before_a_hit(
    tmp_path: Path, change: str
) -> None:
    run_cached(_harvesting(), tmp_path)
    assert [s.status for s in run_cached(_harvesting(), tmp_path).steps] == ["cached"]
    if change == "delete":
        (tmp_path / "img-2.fits").unlink()
    elif change == "edit":
        (tmp_path / "img-1.fits").write_text("edited by hand\n")
    else:  # a re-run would harvest it too
        (tmp_path / "img-3.fits").write_text("c\n")
    rerun = run_cached(_harvesting(), tmp_path)
    assert [s.status for s in rerun.steps] == ["ok"]
    assert counted(tmp_path) == ["run", "run"]
    if change == "add a match":
        assert rerun.steps[0].outputs["images"] == ["img-1.fits", "img-2.fits", "img-3.fits"]
    store = StepCache(tmp_path / "cache")
    assert [store.is_stale(e) for e in store.entries()] == [False]


def test_a_link_inside_a_directory_counts_by_what_it_points_to(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "sub").mkdir(parents=True)
    (shared / "table.dat").write_text("v1")
    (shared / "sub" / "rows").write_text("1")
    ms = tmp_path / "in.ms"
    ms.mkdir()
    (ms / "table.dat").symlink_to(shared / "table.dat")
    (ms / "SUB").symlink_to(shared / "sub")
    (ms / "gone").symlink_to(tmp_path / "nowhere")
    (ms / "loop").symlink_to(ms)  # must not be walked forever
    memo = DigestMemo(None)
    before = memo.digest(str(ms))
    assert memo.digest(str(ms)) == before
    (shared / "table.dat").write_text("v2")
    after_file = memo.digest(str(ms))
    assert after_file != before
    (shared / "sub" / "rows").write_text("2")
    assert memo.digest(str(ms)) not in (before, after_file)


def test_prune_removes_only_the_caches_own_unfinished_writes(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    ours = [
        root / "entries" / "ab" / ".~1a2b.3",
        root / "memo" / "h" / ".~1a2b.4",
        root / "entries" / "ab" / ".abcd.json.1.2.tmp",  # as earlier versions named them
        root / "memo" / "h" / ".7f.json.1.2.tmp",
    ]
    theirs = [root / ".notes.tmp", root / "data" / "sub" / ".draft.tmp", root / "entries" / "x.tmp"]
    old = time.time() - 7200
    for path in ours + theirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("precious")
        os.utime(path, (old, old))
    assert sorted(StepCache(root).leftovers()) == sorted(ours)


def test_an_entry_from_before_globs_were_recorded_is_rerun_and_rewritten(tmp_path: Path) -> None:
    run_cached(_harvesting(), tmp_path)
    (entry,) = (tmp_path / "cache" / "entries").glob("*/*.json")
    data = json.loads(entry.read_text())
    del data["globs"]  # as the entries of earlier versions are
    entry.write_text(json.dumps(data))
    assert [
        StepCache(tmp_path / "cache").is_stale(e) for e in StepCache(tmp_path / "cache").entries()
    ] == [True]
    assert [s.status for s in run_cached(_harvesting(), tmp_path).steps] == ["ok"]
    assert "globs" in json.loads(entry.read_text())  # the same key, rewritten in place
    assert [s.status for s in run_cached(_harvesting(), tmp_path).steps] == ["cached"]
    assert counted(tmp_path) == ["run", "run"]


class KindIn(BaseModel):
    kind: str = "image"


class KindOut(BaseModel):
    products: list[File] = []
    main: File | None = None


def _by_kind() -> Recipe:
    """The tool writes every kind; which ones are its outputs a skipped input decides."""
    tool = Cab(
        "make",
        [
            "/bin/sh",
            "-c",
            "echo run >> counter.txt; for k in image residual; do echo $k > o-$k; done",
        ],
        KindIn,
        KindOut,
        {
            "kind": ParamMeta(skip=True),
            "products": ParamMeta(harvest="*-{kind}"),
            "main": ParamMeta(implicit="o-{kind}"),
        },
    )
    recipe = Recipe("kinds", KindIn)
    recipe.add_step("make", tool, kind=recipe.inputs.kind)
    return recipe


def test_outputs_templated_from_a_skipped_input_are_part_of_the_key(tmp_path: Path) -> None:
    run_cached(_by_kind(), tmp_path, kind="image")
    second = run_cached(_by_kind(), tmp_path, kind="residual")
    assert [s.status for s in second.steps] == ["ok"]
    made = second.steps[0].outputs
    assert [str(p) for p in made["products"]] == ["o-residual"] and str(
        made["main"]
    ) == "o-residual"
    assert [s.status for s in run_cached(_by_kind(), tmp_path, kind="image").steps] == ["cached"]


class PassIn(BaseModel):
    src: File
    dst: File


class PassOut(BaseModel):
    dst: File


def test_an_output_outside_the_project_is_keyed_by_where_it_is(tmp_path: Path) -> None:
    """A copied project hits for its own outputs, not for one elsewhere it names."""
    tool = Cab(
        "copy",
        "cp",
        PassIn,
        PassOut,
        {"src": ParamMeta(positional=True), "dst": ParamMeta(positional=True)},
    )
    recipe = Recipe("copy", PassIn)
    recipe.add_step("copy", tool, src=recipe.inputs.src, dst=recipe.inputs.dst)
    first, second = tmp_path / "first", tmp_path / "second"
    for place in (first, second):
        place.mkdir()
        (place / "in.txt").write_text("same\n")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    made = str(first / "out.txt")
    assert run_recipe(recipe, {"src": "in.txt", "dst": made}, config=config, cwd=first).ok
    # the project copied, its product with it; the original's product removed
    (second / "out.txt").write_text("same\n")
    os.unlink(made)
    again = run_recipe(recipe, {"src": "in.txt", "dst": made}, config=config, cwd=second)
    assert [s.status for s in again.steps] == ["ok"]
    assert Path(made).read_text() == "same\n"


def test_a_tool_named_by_its_absolute_path_in_the_project_hits_in_a_copy(tmp_path: Path) -> None:
    """``Path(__file__).resolve().parent / "tools"`` names a different path in a copy."""

    def recipe(project: Path) -> Recipe:
        tool = Cab(
            "up",
            [str(project / "tools" / "up.sh")],
            PassIn,
            PassOut,
            {"src": ParamMeta(positional=True), "dst": ParamMeta(positional=True)},
        )
        made = Recipe("up", PassIn)
        made.add_step("up", tool, src=made.inputs.src, dst=made.inputs.dst)
        return made

    first, second = tmp_path / "first", tmp_path / "second"
    (first / "tools").mkdir(parents=True)
    script = first / "tools" / "up.sh"
    script.write_text('#!/bin/sh\necho run >> counter.txt\ntr a-z A-Z < "$1" > "$2"\n')
    script.chmod(0o755)
    (first / "in.txt").write_text("abc\n")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    inputs = {"src": "in.txt", "dst": "out.txt"}
    assert run_recipe(recipe(first), inputs, config=config, cwd=first).ok
    shutil.copytree(first, second, symlinks=True)
    again = run_recipe(recipe(second), inputs, config=config, cwd=second)
    assert [s.status for s in again.steps] == ["cached"]
    script = second / "tools" / "up.sh"
    script.write_text(script.read_text() + "# edited\n")
    edited = run_recipe(recipe(second), inputs, config=config, cwd=second)
    assert [s.status for s in edited.steps] == ["ok"]


def test_cache_commands_refuse_a_configured_cache_dir_that_is_a_file(tmp_path: Path) -> None:
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("mine\n")
    for command in (["cache", "ls"], ["cache", "prune"]):
        proc = ninja(tmp_path, a_file, *command)
        assert proc.returncode == 2, proc.stderr
        assert f"the step cache at {a_file} is not a directory" in proc.stderr
        assert "SHINOBI_CACHE_DIR" in proc.stderr
    assert a_file.read_text() == "mine\n"
    fresh = ninja(tmp_path, tmp_path / "not-made-yet", "cache", "ls")
    assert fresh.returncode == 0 and "is empty" in fresh.stdout


class SinkIn(BaseModel):
    log: str


class SinkOut(BaseModel):
    log: File | None = None


def test_a_step_whose_output_is_a_pipe_or_a_device_is_never_replayed(tmp_path: Path) -> None:
    """What it wrote is gone (a reader took it, /dev/null swallowed it): a replay writes nothing."""
    tool = Cab(
        "say",
        ["/bin/sh", "-c", 'echo run >> counter.txt; echo hi >> "$0"'],
        SinkIn,
        SinkOut,
        {"log": ParamMeta(positional=True)},
    )
    recipe = Recipe("sink", SinkIn)
    recipe.add_step("say", tool, log=recipe.inputs.log)
    (tmp_path / "sink").symlink_to(os.devnull)
    for _ in range(2):
        assert [s.status for s in run_cached(recipe, tmp_path, log="sink").steps] == ["ok"]
    assert counted(tmp_path) == ["run", "run"]


def test_a_part_an_interrupt_set_aside_is_no_harvest(tmp_path: Path) -> None:
    """``img-*`` matches ``img-1.interrupted`` too: a half-written part is no product."""
    tool = Cab(
        "imager",
        ["/bin/sh", "-c", 'echo a > "$0-1"; echo b > "$0-2"'],
        PrefixIn,
        Harvested,
        {"prefix": ParamMeta(positional=True), "images": ParamMeta(harvest="{prefix}-*")},
    )
    recipe = Recipe("harvest", PrefixIn)
    recipe.add_step("image", tool, prefix=recipe.inputs.prefix)
    (tmp_path / "img-1.interrupted").write_text("half\n")
    (tmp_path / "img-2.interrupted-2").write_text("half again\n")
    result = run_cached(recipe, tmp_path)
    assert [str(p) for p in result.steps[0].outputs["images"]] == ["img-1", "img-2"]
    assert [s.status for s in run_cached(recipe, tmp_path).steps] == ["cached"]


def test_a_large_read_for_a_digest_is_said_once_before_reading_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 6 GB input took 23 s to hash with nothing on the screen: a run that looked hung."""
    from shinobi import file_digests
    from shinobi.file_digests import DigestMemo

    monkeypatch.setattr(file_digests, "LARGE_READ", 10)
    ms = tmp_path / "obs.ms"
    ms.mkdir()
    for i in range(4):
        (ms / f"t{i}").write_text("12345")
    (tmp_path / "small.txt").write_text("1234")
    told: list[tuple[str, int]] = []
    memo = DigestMemo(None)
    memo.on_large = lambda path, read: told.append((path, read))
    memo.digest(str(tmp_path / "small.txt"))
    assert told == []
    memo.digest(str(ms))
    assert told == [(str(ms), 10)]  # once, as the second file would pass the mark
    memo.digest(str(ms))  # remembered now: nothing more to read, nothing to say
    assert len(told) == 1


def _many_files_step(tmp_path: Path, role: str) -> tuple[Invocation, list[Path]]:
    """A step with four 5-byte files as its inputs (or outputs)."""
    files = [tmp_path / f"part{i}.dat" for i in range(4)]
    for path in files:
        path.write_text("12345")
    uses = tuple(PathUse(str(path), role, f"f{i}", "file") for i, path in enumerate(files))
    return Invocation(step="s", argv=("tool",), cwd=str(tmp_path), paths=uses), files


def test_a_large_read_is_counted_over_all_of_a_steps_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty 900 MB inputs were 18 GB read in silence: each digest counted alone."""
    monkeypatch.setattr(digests_module, "LARGE_READ", 12)
    invocation, files = _many_files_step(tmp_path, "input")
    cache = StepCache(tmp_path / "cache")
    told: list[str] = []
    cache.memo.on_large = lambda path, read: told.append(path)
    assert cache.key(Cab("tool", ["tool"]), invocation, "native") is not None
    assert told == [str(files[2])]  # the third passes the mark, and is said before it is read
    other = StepCache(tmp_path / "other")  # a step of its own counts from nothing
    other.memo.on_large = cache.memo.on_large
    other.memo.digest(str(files[0]))
    assert told == [str(files[2])]


def test_a_large_read_is_counted_over_all_of_a_steps_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digests_module, "LARGE_READ", 12)
    invocation, files = _many_files_step(tmp_path, "output")
    told: list[str] = []
    cache = StepCache(tmp_path / "cache")
    cache.memo.on_large = lambda path, read: told.append(path)
    cache.store("ab" * 32, StepResult(name="s", status="ok", returncode=0), invocation, None)
    assert len(told) == 1 and told[0] in map(str, files)  # once, by the third file hashed
    cache = StepCache(tmp_path / "cache")  # another run: nothing known
    cache.memo.on_large = lambda path, read: told.append(path)
    assert cache.lookup("ab" * 32, "s", str(tmp_path)) is not None
    assert told[1:] == [str(files[2])]  # the entry's files, in their order


def test_a_large_read_names_a_directory_and_no_size_it_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 10 GB directory was said as "(1.1 GB)" and "a large file"."""
    from shinobi.file_digests import large_read_notice

    ms = tmp_path / "obs.ms"
    ms.mkdir()
    said = large_read_notice(str(ms))
    assert said.startswith(f"reading the directory {ms} for the step cache, with 1GiB or more")
    assert large_read_notice(str(tmp_path / "x.fits")).startswith(f"reading {tmp_path}/x.fits")


def test_a_large_read_by_the_cache_commands_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ninja cache ls --stale` and `prune` read a large output for 17 s without a word."""
    from click.testing import CliRunner

    from shinobi.cli.cache import group

    invocation, files = _many_files_step(tmp_path, "output")
    cache = StepCache(tmp_path / "cache")
    cache.store("ab" * 32, StepResult(name="s", status="ok", returncode=0), invocation, None)
    monkeypatch.setattr(digests_module, "LARGE_READ", 12)
    for args in (["ls", "--stale"], ["prune", "--dry-run"]):
        ran = CliRunner().invoke(group, [*args, "--cache-dir", str(tmp_path / "cache")])
        assert ran.exit_code == 0, ran.output
        assert f"ninja: reading {files[2]} for the step cache" in ran.stderr, ran.output


class AppendIn(BaseModel):
    word: str
    out: File


class AppendOut(BaseModel):
    out: File


append = Cab(
    "append",
    ["sh", "-c", 'echo "$0" >> "$1"'],
    AppendIn,
    AppendOut,
    {"word": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
)


def test_the_same_command_on_the_same_path_twice_in_one_run_runs_twice(tmp_path: Path) -> None:
    """The second acts on what the first left: serving it the first's entry lost a line."""
    recipe = Recipe("twice")
    recipe.add_step("first", append, word="x", out="log.txt")
    recipe.add_step("second", append, word="x", out=recipe.outputs.first.out)
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    result = run_recipe(recipe, cwd=tmp_path, config=config)
    assert [s.status for s in result.steps] == ["ok", "ok"]
    assert (tmp_path / "log.txt").read_text() == "x\nx\n"
    again = run_recipe(recipe, cwd=tmp_path, config=config)  # nothing changed since
    assert [s.status for s in again.steps] == ["cached", "cached"]
    assert (tmp_path / "log.txt").read_text() == "x\nx\n"


class GlobbyIn(BaseModel):
    prefix: str


class GlobbyOut(BaseModel):
    prods: list[File] = []


def test_a_harvest_of_a_prefix_with_glob_characters_finds_its_files(tmp_path: Path) -> None:
    """``o [1]/img`` is a directory, not a character class: the glob found nothing."""
    cab = Cab(
        "hv",
        [
            "/bin/sh",
            "-c",
            'mkdir -p "$(dirname "$1")"; for i in 1 2; do : > "$1-$i.fits"; done',
            "hv",
        ],
        GlobbyIn,
        GlobbyOut,
        {"prefix": ParamMeta(positional=True), "prods": ParamMeta(harvest="{prefix}-*.fits")},
    )
    recipe = Recipe("r")
    recipe.add_step("hv", cab, prefix="o [1]/img*?")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    made = ["o [1]/img*?-1.fits", "o [1]/img*?-2.fits"]
    for status in ("ok", "cached"):  # and a re-run is served it from the cache
        result = run_recipe(recipe, cwd=tmp_path, config=config)
        assert result.steps[0].status == status, result.error
        assert [str(p) for p in result.steps[0].outputs["prods"]] == made


def test_entries_a_read_only_cache_keeps_are_not_said_removed_and_exit_74(
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """prune printed 'removed KEY' for an entry still there, then exited 2 (bad usage)."""
    import errno

    from cli_in_process import in_process

    cache = tmp_path / "cache"
    run(project, cache)
    (project / "joined.txt").unlink()  # one stale entry
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(cache))
    monkeypatch.chdir(project)

    def refused(self: StepCache, entry: Any, *, as_read: bool = False) -> bool:  # read-only mount
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(StepCache, "remove", refused)
    code, out, err = in_process(capsys, "cache", "prune")
    assert code == 74, err
    assert "removed " not in out.replace("removed 0 entries", "")
    assert "could not remove 1 entry" in err and "Read-only file system" in err
    assert "writable, or as its owner" in err
    code, out, err = in_process(capsys, "cache", "rm", "--all")
    assert code == 74 and "removed 0 entries" in out


@pytest.mark.parametrize(
    ("error", "fix"),
    [
        (errno.ENOSPC, "free space there, or set"),
        (errno.EACCES, "let this user write there"),
        (errno.EROFS, "read-only file system: mount it writable, or set"),
    ],
)
def test_a_cache_that_cannot_keep_results_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, fix: str
) -> None:
    """A full cache disk turned the cache off without a word: every run ran everything.
    And the fix is the cause's: "free space there" was said for Permission denied."""
    import shinobi.cache as cache_module

    def refused(path: Any, data: bytes) -> None:
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(cache_module, "write_atomically", refused)
    recipe = Recipe("two")
    recipe.add_step("first", append, word="a", out="a.txt")
    recipe.add_step("second", append, word="b", out="b.txt")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    result = run_recipe(recipe, cwd=tmp_path, config=config)
    assert result.ok
    said = [w for w in result.warnings if "cannot keep results" in w]
    assert len(said) == 1 and os.strerror(error) in said[0], result.warnings
    assert fix in said[0] and "set cache.dir (SHINOBI_CACHE_DIR)" in said[0]
    assert ("free space" in said[0]) == (error == errno.ENOSPC)


def test_a_second_ctx_run_of_a_file_writing_cab_in_one_step_runs_again(tmp_path: Path) -> None:
    """`ctx.run(); return ctx.run()` appended once: the second call was 'cached'."""
    import shinobi

    @shinobi.step(append)
    def twice(ctx: Any) -> Any:
        ctx.run()
        return ctx.run()

    recipe = Recipe("r")
    recipe.add_step("t", twice, word="x", out="log.txt")
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    assert run_recipe(recipe, cwd=tmp_path, config=config).ok
    assert (tmp_path / "log.txt").read_text() == "x\nx\n"


def test_a_cached_re_run_with_provenance_starts_no_process_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing of a step ran, yet ninja itself started ``uname -p``: the manifest's
    platform came from ``platform.platform()``, which asks that program."""
    (tmp_path / "data.ms").write_text("")
    run_cached(_mutating(True), tmp_path, ms="data.ms")
    started: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        started.append(args)
        raise AssertionError(f"a process was started: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse)
    monkeypatch.setattr(os, "posix_spawnp", refuse)
    monkeypatch.setattr(os, "fork", refuse)
    import platform

    platform._uname_cache = None  # type: ignore[attr-defined]  # as in a fresh process
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    result = run_recipe(
        _mutating(True), {"ms": "data.ms"}, config=config, cwd=tmp_path, provenance=True
    )
    assert [s.status for s in result.steps] == ["cached"] and started == []
