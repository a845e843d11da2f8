"""The step cache when something is off: files that cannot be read, damaged
entries, a run in another directory, scripts named by an absolute path.

The rule throughout: a wrong hit, or a crash, is worse than a miss. Tests run
as root, which reads a mode-000 file anyway, so a file that cannot be read is
simulated by making the cache's own read of it fail the way it would for a
user without permission.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi.cache as cache_module
import shinobi.file_digests as digests_module
from shinobi.backends.base import Invocation, PathUse
from shinobi.cache import FORMAT, DigestMemo, StepCache
from shinobi.config import load_config
from shinobi.file_digests import DigestStopped
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Directory, File, ParamMeta, Recipe, Wrangler
from shinobi.steps.result import RecipeResult, StepResult

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def run_cached(recipe: Recipe, cwd: Path, cache: Path, **inputs: object) -> RecipeResult:
    config = load_config({"cache.dir": str(cache)})
    return run_recipe(recipe, inputs, config=config, cwd=cwd)


def statuses(result: RecipeResult) -> list[str]:
    return [step.status for step in result.steps]


def counted(cwd: Path) -> list[str]:
    counter = cwd / "counter.txt"
    return counter.read_text().splitlines() if counter.exists() else []


def entry_files(cache: Path) -> list[Path]:
    return sorted((cache / "entries").glob("*/*.json"))


@pytest.fixture
def denied(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """Paths whose content the cache cannot read (add to the set), as with mode 000."""
    paths: set[str] = set()
    real = digests_module.hash_file

    def hash_file(path: str, stopping: Callable[[], bool] | None = None) -> str:
        if path in paths:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path, stopping)

    monkeypatch.setattr(digests_module, "hash_file", hash_file)
    yield paths


# -- 1. what cannot be read: never a hit, never a crash -----------------------


class DirIn(BaseModel):
    data: Directory


def _reads_a_directory() -> Recipe:
    cab = Cab(
        "lister",
        ["/bin/sh", "-c", 'echo run >> counter.txt; ls "$0" > /dev/null'],
        DirIn,
        field_meta={"data": ParamMeta(positional=True)},
    )
    recipe = Recipe("reads", DirIn)
    recipe.add_step("list", cab, data=recipe.inputs.data)
    return recipe


def test_an_unreadable_file_inside_an_input_directory_runs_the_step_uncached(
    tmp_path: Path, denied: set[str]
) -> None:
    table = tmp_path / "in.ms" / "SUB"
    table.mkdir(parents=True)
    (table / "rows").write_text("1")
    denied.add(str(table / "rows"))
    for _ in range(2):
        result = run_cached(_reads_a_directory(), tmp_path, tmp_path / "cache", data="in.ms")
        assert statuses(result) == ["ok"], result.steps[0].error
    assert counted(tmp_path) == ["run", "run"]
    assert entry_files(tmp_path / "cache") == []


def test_a_digest_of_anything_that_cannot_be_read_reads_as_unreadable(
    tmp_path: Path, denied: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """For a directory, the whole digest: a name recorded in a directory's
    digest would let the unreadable content change unseen."""
    ms = tmp_path / "in.ms"
    (ms / "SUB").mkdir(parents=True)
    (ms / "SUB" / "rows").write_text("1")
    (ms / "main").write_text("m")
    memo = DigestMemo(None)
    assert memo.digest(str(ms)).startswith("dir:")
    denied.add(str(ms / "main"))
    assert DigestMemo(None).digest(str(ms / "main")) == f"unreadable:{errno.EACCES}"
    assert DigestMemo(None).digest(str(ms)) == f"unreadable:{errno.EACCES}"
    denied.clear()
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if os.fspath(path) == str(ms / "SUB"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert DigestMemo(None).digest(str(ms)) == f"unreadable:{errno.EACCES}"


def test_a_link_that_points_nowhere_inside_a_directory_is_recorded_not_unreadable(
    tmp_path: Path,
) -> None:
    """A dangling link, or a cycle of links, is what it is until relinked: it
    counts by its target, and the directory can still be cached."""
    ms = tmp_path / "in.ms"
    ms.mkdir()
    (ms / "rows").write_text("1")
    (ms / "gone").symlink_to(tmp_path / "nowhere")
    (ms / "a").symlink_to(ms / "b")
    (ms / "b").symlink_to(ms / "a")
    before = DigestMemo(None).digest(str(ms))
    assert before.startswith("dir:")
    (ms / "b").unlink()
    (ms / "b").symlink_to(ms / "rows")
    assert DigestMemo(None).digest(str(ms)) not in (before, "")


class OutIn(BaseModel):
    out: Path


class OutOut(BaseModel):
    out: Path | None = None


def test_hashing_gives_up_between_chunks_once_the_run_is_stopping(tmp_path: Path) -> None:
    tree = tmp_path / "obs.ms"
    tree.mkdir()
    (tree / "table.f0").write_bytes(b"x" * (3 * 1024 * 1024))
    memo = DigestMemo(tmp_path / "memo")
    asked: list[int] = []

    def stopping() -> bool:
        asked.append(1)
        return len(asked) == 2

    with pytest.raises(DigestStopped):
        memo.digest(str(tree), stopping)
    assert len(asked) == 2  # after the second of three chunks, not at the end
    memo.save()
    assert not list((tmp_path / "memo").rglob("*.json"))  # nothing half-known remembered
    assert memo.digest(str(tree)).startswith("dir:")


def _writes(name: str = "made") -> Recipe:
    cab = Cab(
        "writer",
        ["/bin/sh", "-c", 'echo run >> counter.txt; echo made > "$0"'],
        OutIn,
        OutOut,
        {"out": ParamMeta(positional=True)},
    )
    recipe = Recipe("writes")
    recipe.add_step(name, cab, out=Path("made.txt"))
    return recipe


def test_an_output_that_cannot_be_read_is_not_stored(tmp_path: Path, denied: set[str]) -> None:
    denied.add(str(tmp_path / "made.txt"))
    for _ in range(2):
        result = run_cached(_writes(), tmp_path, tmp_path / "cache")
        assert statuses(result) == ["ok"], result.steps[0].error
    assert counted(tmp_path) == ["run", "run"]
    assert entry_files(tmp_path / "cache") == []


def test_an_output_that_cannot_be_read_at_lookup_is_a_miss(
    tmp_path: Path, denied: set[str]
) -> None:
    cache = tmp_path / "cache"
    assert statuses(run_cached(_writes(), tmp_path, cache)) == ["ok"]
    denied.add(str(tmp_path / "made.txt"))
    result = run_cached(_writes(), tmp_path, cache)
    assert statuses(result) == ["ok"], result.steps[0].error
    denied.clear()
    assert statuses(run_cached(_writes(), tmp_path, cache)) == ["cached"]
    assert counted(tmp_path) == ["run", "run"]


def test_a_damaged_memo_record_is_read_again_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memo shard is a file too: a record of the wrong shape is ignored."""
    settled = tmp_path / "settled.txt"
    settled.write_text("content")
    later = time.time() + 3600  # the memo's clock: the file has settled
    monkeypatch.setattr(digests_module, "time", SimpleNamespace(time=lambda: later))
    memo = DigestMemo(tmp_path / "memo")
    digest = memo.digest(str(settled))
    memo.save()
    (shard,) = (tmp_path / "memo").glob("*.json")
    data = json.loads(shard.read_text())
    for damaged in (5, data["entries"][str(settled)][:5], [*data["entries"][str(settled)][:5], 7]):
        data["entries"][str(settled)] = damaged
        shard.write_text(json.dumps(data))
        assert DigestMemo(tmp_path / "memo").digest(str(settled)) == digest


# -- 2. a damaged entry is a miss, and `ninja cache` copes with it ------------

#: A field left out of an entry altogether.
MISSING = object()
#: Every field a lookup reads.
ENTRY_FIELDS = [
    "files",
    "globs",
    "outputs",
    "anchored",
    "returncode",
    "argv",
    "warnings",
    "created",
    "until_changed",
    "stdout",
    "host",
]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("files", 5),
        ("files", [["made.txt"]]),
        ("files", [[1, "file:00"]]),
        ("globs", [[1]]),
        ("globs", [["*.txt", 5]]),
        ("globs", [["a\0b/*", []]]),
        ("outputs", [1, 2]),
        ("outputs", [["out", "x"]]),
        ("outputs", {"out": 5}),  # JSON of the right shape that the outputs model refuses
        ("anchored", 5),
        ("anchored", [["out", 3]]),
        ("anchored", [["nosuch", None]]),
        ("warnings", 5),
        ("warnings", "text"),
        ("created", "yesterday"),
        ("created", None),
        ("returncode", "x"),
        ("stdout", 5),
        ("argv", 5),
        ("run_id", 7),
        ("until_changed", "x"),
        (None, [1, 2]),
        (None, "[" * 100_000 + "]" * 100_000),
        *[(field, MISSING) for field in ENTRY_FIELDS],
    ],
)
def test_a_damaged_entry_is_a_miss_and_is_rewritten(
    tmp_path: Path, field: str | None, value: Any
) -> None:
    cache = tmp_path / "cache"
    run_cached(_writes(), tmp_path, cache)
    (entry,) = entry_files(cache)
    if field is None:  # the whole entry
        entry.write_text(value if isinstance(value, str) else json.dumps(value))
    else:
        data = json.loads(entry.read_text())
        data[field] = value
        if value is MISSING:
            del data[field]
        entry.write_text(json.dumps(data))
    result = run_cached(_writes(), tmp_path, cache)
    assert statuses(result) == ["ok"], result.steps[0].error
    assert statuses(run_cached(_writes(), tmp_path, cache)) == ["cached"]  # rewritten
    assert counted(tmp_path) == ["run", "run"]


def test_an_entry_of_the_previous_format_is_never_a_hit(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run_cached(_writes(), tmp_path, cache)
    (entry,) = entry_files(cache)
    data = json.loads(entry.read_text())
    data["format"] = FORMAT - 1
    entry.write_text(json.dumps(data))
    assert StepCache(cache).lookup(data["key"], "made", str(tmp_path)) is None


def _damage(entry: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    data = json.loads(entry.read_text())
    changed = change(data)
    entry.write_text(changed if isinstance(changed, str) else json.dumps(data))


def _three_entries(tmp_path: Path, cache: Path) -> list[Path]:
    recipe = Recipe("three")
    for name in ("one", "two", "three"):
        cab = Cab(
            name,
            ["/bin/sh", "-c", f'echo {name} > "$0"'],
            OutIn,
            OutOut,
            {"out": ParamMeta(positional=True)},
        )
        recipe.add_step(name, cab, out=Path(f"{name}.txt"))
    assert run_cached(recipe, tmp_path, cache).ok
    return entry_files(cache)


def test_cache_ls_prune_and_rm_cope_with_damaged_and_foreign_entries(
    tmp_path: Path, ninja: Ninja
) -> None:
    cache = tmp_path / "cache"
    first, second, third = _three_entries(tmp_path, cache)
    shard = third.parent
    _damage(first, lambda d: d.update(files=5))
    second.write_bytes(b'{"format": 2, "key": "')  # torn
    older = shard / f"{'0' * 64}.json"
    older.write_text(json.dumps({**json.loads(third.read_text()), "format": FORMAT - 1}))
    newer = shard / f"{'f' * 64}.json"
    newer.write_text(json.dumps({"format": FORMAT + 1, "key": "f" * 64}))
    (shard / f"{'a' * 64}.json").write_text("[1, 2]")
    mine = shard / "mine.json"  # no key's name: not the cache's, whatever it holds
    mine.write_text("notes\n")
    at = ("--cache-dir", str(cache))

    listed = ninja("cache", "ls", *at)
    assert listed.returncode == 0, listed.stderr
    assert "unusable: damaged: files is not a list" in listed.stdout
    assert "unusable: written by a newer ninja" in listed.stdout
    assert "6 entries" in listed.stdout
    stale = ninja("cache", "ls", "--stale", "--json", *at)
    assert stale.returncode == 0, stale.stderr
    rows = {row["key"]: row for row in json.loads(stale.stdout)["entries"]}
    assert rows[third.stem] == {**rows[third.stem], "stale": False, "problem": None}
    assert rows[first.stem]["stale"] is True
    assert rows[first.stem]["problem"] == "damaged: files is not a list of [path, digest]"

    pruned = ninja("cache", "prune", *at)
    assert pruned.returncode == 0, pruned.stderr
    assert "removed 4 entries" in pruned.stdout
    # a newer ninja's is its own; a file of no key's name is nobody's entry
    assert sorted(entry_files(cache)) == sorted([third, newer, mine])

    gone = ninja("cache", "rm", "--all", *at)
    assert gone.returncode == 0, gone.stderr
    assert "removed 2 entries (1 of them damaged or from another version)" in gone.stdout
    assert entry_files(cache) == [mine]
    assert mine.read_text() == "notes\n"


def test_cache_rm_removes_a_damaged_entry_by_key_and_by_step(tmp_path: Path, ninja: Ninja) -> None:
    cache = tmp_path / "cache"
    first, second, _ = _three_entries(tmp_path, cache)
    _damage(first, lambda d: d.update(created="yesterday", globs=[[1]]))
    _damage(second, lambda d: d.update(returncode="x"))
    at = ("--cache-dir", str(cache))
    by_key = ninja("cache", "rm", first.stem[:16], *at)
    assert by_key.returncode == 0, by_key.stderr
    step = json.loads(second.read_text())["step"]
    by_step = ninja("cache", "rm", "--step", step, *at)
    assert by_step.returncode == 0, by_step.stderr
    assert not first.exists() and not second.exists() and len(entry_files(cache)) == 1


def test_cache_rm_by_step_takes_every_slice_of_a_scattered_step(
    tmp_path: Path, ninja: Ninja
) -> None:
    cache = tmp_path / "cache"
    cab = Cab(
        "w", ["/bin/sh", "-c", 'echo x > "$0"'], OutIn, OutOut, {"out": ParamMeta(positional=True)}
    )
    recipe = Recipe("scattered")
    recipe.add_step("write", cab, scatter=["out"], out=[Path(f"{i}.txt") for i in range(3)])
    recipe.add_step("write_more", cab, out=Path("more.txt"))  # a name that starts the same
    assert run_cached(recipe, tmp_path, cache).ok
    assert len(entry_files(cache)) == 4
    gone = ninja("cache", "rm", "--step", "write", "--cache-dir", str(cache))
    assert gone.returncode == 0, gone.stderr
    assert [json.loads(f.read_text())["step"] for f in entry_files(cache)] == ["write_more"]


# -- 3. an absolute output inside the project belongs to the project ----------


class SrcIn(BaseModel):
    src: File


class CopyIn(BaseModel):
    src: File
    out: Path


class CopyOut(BaseModel):
    out: File | None = None


class ProductFile(BaseModel):
    product: File | None = None


class ProductText(BaseModel):
    product: str | None = None


PRODUCTS = pytest.mark.parametrize("made", [ProductFile, ProductText], ids=["File", "str"])


def _make_and_use(made: type[BaseModel]) -> Recipe:
    """The audit's reproduction: a tool prints where it wrote, a wrangler reads it."""
    make = Cab(
        "make",
        [
            "/bin/sh",
            "-c",
            'echo made >> counter.txt; tr a-z A-Z < "$1" > product.txt;'
            ' echo "wrote $PWD/product.txt"',
            "make",
        ],
        SrcIn,
        made,
        {"src": ParamMeta(positional=True)},
        wranglers=[Wrangler(r"wrote (\S+)", "output", output="product")],
    )
    use = Cab(
        "use",
        ["/bin/sh", "-c", 'echo "used $1" >> counter.txt; cp "$1" "$2"', "use"],
        CopyIn,
        CopyOut,
        {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
    )
    recipe = Recipe("made", SrcIn)
    recipe.add_step("make", make, src=recipe.inputs.src)
    recipe.add_step("use", use, src=recipe.outputs.make.product, out=Path("final.txt"))
    return recipe


@PRODUCTS
def test_an_absolute_output_inside_the_project_is_its_own_in_another_directory(
    tmp_path: Path, made: type[BaseModel]
) -> None:
    cache = tmp_path / "cache"
    w1, w2 = tmp_path / "w1", tmp_path / "w2"
    w1.mkdir()
    (w1 / "in.txt").write_text("hello\n")
    assert run_cached(_make_and_use(made), w1, cache, src="in.txt").ok
    shutil.copytree(w1, w2)
    (w2 / "counter.txt").unlink()
    (w1 / "product.txt").write_text("w1 changed later\n")
    again = run_cached(_make_and_use(made), w2, cache, src="in.txt")
    assert again.ok, again.error
    assert again.steps[0].status == "cached"
    assert str(again.steps[0].outputs["product"]) == str(w2 / "product.txt")
    # 'use' reads the same content from its own copy: inside the project its
    # absolute path is keyed relative to it, so it is the same step and a hit
    assert [s.status for s in again.steps] == ["cached", "cached"]
    assert counted(w2) == []
    assert (w2 / "final.txt").read_text() == "HELLO\n"
    (w2 / "product.txt").write_text("tampered\n")  # what a hit would hand on: verified
    assert statuses(run_cached(_make_and_use(made), w2, cache, src="in.txt"))[0] == "ok"


def test_a_project_reached_through_a_link_hands_a_copy_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/scratch -> /lustre/scratch``: the tool printed the shell's ``$PWD``
    (the link's spelling), the entry knew only the resolved one, so the path stayed
    absolute and a copy of the project was handed the original's file."""
    cache, real, link = tmp_path / "cache", tmp_path / "real", tmp_path / "link"
    (real / "w1").mkdir(parents=True)
    link.symlink_to(real)
    (real / "w1" / "in.txt").write_text("hello\n")
    for name in ("w1", "w3"):
        if name == "w3":
            shutil.copytree(real / "w1", real / "w3", symlinks=True)
        monkeypatch.chdir(link / name)
        monkeypatch.setenv("PWD", str(link / name))  # as the shell keeps it
        result = run_cached(_make_and_use(ProductFile), link / name, cache, src="in.txt")
        assert result.ok, result.error
    assert result.steps[0].status == "cached"
    assert str(result.steps[0].outputs["product"]) == str(real / "w3" / "product.txt")


class DestIn(BaseModel):
    dest: str


def _writes_to(made: type[BaseModel]) -> Recipe:
    cab = Cab(
        "share",
        ["/bin/sh", "-c", 'echo run >> counter.txt; echo shared > "$0"; echo "wrote $0"'],
        DestIn,
        made,
        {"dest": ParamMeta(positional=True)},
        wranglers=[Wrangler(r"wrote (\S+)", "output", output="product")],
    )
    recipe = Recipe("shares", DestIn)
    recipe.add_step("share", cab, dest=recipe.inputs.dest)
    return recipe


@PRODUCTS
def test_an_absolute_output_outside_the_project_stays_and_is_verified(
    tmp_path: Path, made: type[BaseModel]
) -> None:
    cache = tmp_path / "cache"
    shared = tmp_path / "scratch" / "product.txt"
    shared.parent.mkdir()
    w1, w2 = tmp_path / "w1", tmp_path / "w2"
    w1.mkdir()
    w2.mkdir()
    assert run_cached(_writes_to(made), w1, cache, dest=str(shared)).ok
    hit = run_cached(_writes_to(made), w2, cache, dest=str(shared))
    assert statuses(hit) == ["cached"]
    assert str(hit.steps[0].outputs["product"]) == str(shared)  # legitimately shared
    shared.write_text("changed by someone\n")
    assert statuses(run_cached(_writes_to(made), w2, cache, dest=str(shared))) == ["ok"]


def test_absolute_paths_in_lists_are_reanchored_and_others_kept(tmp_path: Path) -> None:
    w1, w2, out = tmp_path / "w1", tmp_path / "w2", tmp_path / "elsewhere"
    for place in (w1, w2):
        place.mkdir()
    store = StepCache(tmp_path / "cache")
    invocation = Invocation(step="s", argv=("tool",), cwd=str(w1))
    result = StepResult(
        name="s",
        status="ok",
        outputs={
            "many": [str(w1 / "a.fits"), str(out / "b.fits"), "c.fits", 3],
            "one": w1 / "sub" / "d.fits",
            "here": str(w1),
            "text": "not a path",
        },
    )
    store.store("k" * 64, result, invocation)
    entry = json.loads(Path(store._entry_path("k" * 64)).read_text())
    assert entry["outputs"]["many"] == ["a.fits", str(out / "b.fits"), "c.fits", 3]
    hit = StepCache(tmp_path / "cache").lookup("k" * 64, "s", str(w2))
    assert hit is not None
    assert hit.outputs == {
        "many": [str(w2 / "a.fits"), str(out / "b.fits"), "c.fits", 3],
        "one": str(w2 / "sub" / "d.fits"),
        "here": str(w2),
        "text": "not a path",
    }


# -- 4. a script named by an absolute path counts by content ------------------


def _script(path: Path, version: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version} >> counter.txt\n")
    path.chmod(0o755)


@pytest.mark.parametrize("through", [None, "/bin/sh"], ids=["program", "interpreter"])
def test_an_edited_script_named_by_an_absolute_path_is_a_different_step(
    tmp_path: Path, through: str | None
) -> None:
    """As a project keeps its tools next to its recipe (``Path(__file__).parent``)."""
    tool = tmp_path / "tools" / "step.sh"
    project = tmp_path / "project"
    project.mkdir()
    _script(tool, "v1")
    recipe = Recipe("tools")
    recipe.add_step("run", Cab("run", [through, str(tool)] if through else [str(tool)]))
    cache = tmp_path / "cache"
    assert statuses(run_cached(recipe, project, cache)) == ["ok"]
    assert statuses(run_cached(recipe, project, cache)) == ["cached"]
    _script(tool, "v2")
    assert statuses(run_cached(recipe, project, cache)) == ["ok"]
    assert counted(project) == ["v1", "v2"]


def test_a_script_that_cannot_be_read_is_run_and_not_cached(
    tmp_path: Path, denied: set[str]
) -> None:
    tool = tmp_path / "tools" / "step.sh"
    _script(tool, "v1")
    denied.add(str(tool))
    recipe = Recipe("tools")
    recipe.add_step("run", Cab("run", [str(tool)]))
    project = tmp_path / "project"
    project.mkdir()
    for _ in range(2):
        assert statuses(run_cached(recipe, project, tmp_path / "cache")) == ["ok"]
    assert counted(project) == ["v1", "v1"]


def _copy_of_true(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(shutil.which("true") or "/bin/true", path)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_compiled_program_named_by_an_absolute_path_is_known_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = _copy_of_true(tmp_path / "opt" / "bin" / "tool")
    assert program.read_bytes()[:4] == b"\x7fELF"
    hashed: list[str] = []
    looked: list[str] = []
    real_hash, real_compiled = digests_module.hash_file, cache_module.is_compiled
    monkeypatch.setattr(
        digests_module, "hash_file", lambda p, stop=None: hashed.append(p) or real_hash(p, stop)
    )
    monkeypatch.setattr(cache_module, "is_compiled", lambda p: looked.append(p) or real_compiled(p))
    cab = Cab("tool", [str(program), "-v"])
    invocation = Invocation(step="s", argv=(str(program), "-v"), cwd=str(tmp_path))
    store = StepCache(tmp_path / "cache")
    keys = {store.key(cab, invocation, "native") for _ in range(3)}
    with program.open("ab") as fh:  # an upgrade: the same name, other bytes
        fh.write(b"\0")
    keys.add(StepCache(tmp_path / "cache").key(cab, invocation, "native"))
    assert len(keys) == 1 and None not in keys
    assert hashed == []
    assert looked == [str(program), str(program)]  # once per run, not once per step


def test_a_compiled_program_of_the_project_named_relatively_counts_by_content(
    tmp_path: Path,
) -> None:
    """A relative path is the project's own: a rebuilt ``bin/flagger`` reruns the step."""
    program = _copy_of_true(tmp_path / "bin" / "flagger")
    cab = Cab("flagger", ["bin/flagger"])
    invocation = Invocation(step="s", argv=("bin/flagger",), cwd=str(tmp_path))
    before = StepCache(tmp_path / "cache").key(cab, invocation, "native")
    with program.open("ab") as fh:
        fh.write(b"\0")
    assert StepCache(tmp_path / "cache").key(cab, invocation, "native") != before


def test_an_absolute_data_file_named_in_the_command_counts_by_content(tmp_path: Path) -> None:
    catalog = tmp_path / "shared" / "sky.txt"
    catalog.parent.mkdir()
    catalog.write_text("3 sources\n")
    cab = Cab("predict", ["/bin/cat", str(catalog)])
    invocation = Invocation(step="s", argv=("/bin/cat", str(catalog)), cwd=str(tmp_path))
    before = StepCache(tmp_path / "cache").key(cab, invocation, "native")
    catalog.write_text("4 sources\n")
    assert StepCache(tmp_path / "cache").key(cab, invocation, "native") != before


def test_output_paths_of_an_invocation_are_recorded_relative(tmp_path: Path) -> None:
    """Unchanged from before: a path-typed output in the project is recorded relative."""
    (tmp_path / "made.txt").write_text("made\n")
    store = StepCache(tmp_path / "cache")
    invocation = Invocation(
        step="s",
        argv=("tool",),
        cwd=str(tmp_path),
        paths=(PathUse(str(tmp_path / "made.txt"), "output", "out", "file"),),
    )
    store.store("e" * 64, StepResult(name="s", status="ok"), invocation)
    entry = json.loads(Path(store._entry_path("e" * 64)).read_text())
    assert [rel for rel, _ in entry["files"]] == ["made.txt"]


class PipeIn(BaseModel):
    source: File


def test_a_pipe_as_an_input_is_read_every_time_never_cached(tmp_path: Path) -> None:
    """A named pipe has no content to key by: what comes through it differs each time."""
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    cab = Cab(
        "reader",
        ["/bin/sh", "-c", 'echo run >> counter.txt; test -p "$0"'],
        PipeIn,
        None,
        {"source": ParamMeta(positional=True)},
    )
    recipe = Recipe("reads")
    recipe.add_step("read", cab, source=fifo)
    for _ in range(2):
        assert statuses(run_cached(recipe, tmp_path, tmp_path / "cache")) == ["ok"]
    assert counted(tmp_path) == ["run", "run"]
