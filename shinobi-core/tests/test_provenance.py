"""Run manifests: written at the start, kept current, final for ok, failed and crashed runs."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import shinobi.provenance as provenance
from shinobi.backends.base import BackendRun, Invocation, RunControl
from shinobi.backends.native import NativeBackend
from shinobi.config import load_config
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Recipe
from shinobi.steps.result import StepResult


class FileIn(BaseModel):
    src: Path
    out: Path


class FileOut(BaseModel):
    out: Path | None = None


def copier(name: str, script: str = 'cat "$0" > "$1"') -> Cab:
    return Cab(
        name,
        ["/bin/sh", "-c", script],
        FileIn,
        FileOut,
        {"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
    )


#: A copy that prints on both streams, so its step has both log files.
TALKING_COPY = 'cat "$0" | tee "$1"; echo copied >&2'


def pipeline(second_script: str = 'cat "$0" > "$1"') -> Recipe:
    class In(BaseModel):
        src: Path

    recipe = Recipe("pipe", In, max_workers=2)
    recipe.add_step(
        "first",
        copier("copy", TALKING_COPY),
        src=recipe.inputs.src,
        out=Path("a.txt"),
        resources=Resources(cpus=1, memory="64MiB"),
    )
    recipe.add_step(
        "second", copier("copy2", second_script), src=recipe.outputs.first.out, out=Path("b.txt")
    )
    recipe.add_step("other", copier("copy"), src=recipe.inputs.src, out=Path("c.txt"))
    return recipe


def manifests(tmp_path: Path) -> list[dict[str, Any]]:
    runs = (tmp_path / ".shinobi" / "runs").iterdir()
    found = [json.loads((r / "manifest.json").read_text()) for r in runs]
    return sorted(found, key=lambda m: m["started"])  # run ids from one second do not sort


def go(tmp_path: Path, recipe: Recipe, **overrides: Any) -> Any:
    (tmp_path / "in.txt").write_text("data\n")
    config = load_config({"cache.dir": str(tmp_path / "cache"), **overrides})
    return run_recipe(recipe, {"src": "in.txt"}, config=config, cwd=tmp_path, provenance=True)


def test_a_successful_run_records_every_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_TEST_SECRET", "hunter2")
    monkeypatch.setenv("SHINOBI_TEST_VISIBLE", "shown")
    result = go(tmp_path, pipeline(), **{"provenance.env_allow": ["PATH", "SHINOBI_TEST_VIS*"]})
    assert result.ok
    (manifest,) = manifests(tmp_path)
    raw = json.dumps(manifest)
    assert "hunter2" not in raw  # only the allow-list, never the whole environment
    assert manifest["environment"]["SHINOBI_TEST_VISIBLE"] == "shown"
    assert set(manifest["environment"]) == {"PATH", "SHINOBI_TEST_VISIBLE"}
    assert manifest["status"] == "ok" and manifest["recipe"]["name"] == "pipe"
    assert manifest["inputs"] == {"src": "in.txt"}
    assert "shinobi-core" in manifest["versions"]
    assert manifest["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert manifest["host"]["hostname"]
    steps = {s["name"]: s for s in manifest["steps"]}
    assert list(steps) == ["first", "second", "other"]  # declaration order
    first = steps["first"]
    assert first["argv"] == ["/bin/sh", "-c", TALKING_COPY, "in.txt", "a.txt"]
    assert first["backend"] == "native" and first["returncode"] == 0
    assert first["resources"]["cpus"] == 1 and first["resources"]["memory"] == 64 * 1024**2
    assert first["started"] <= first["finished"]
    assert first["logs"] == {"stdout": "logs/first.out", "stderr": "logs/first.err"}
    assert steps["other"]["logs"] == {}  # a silent step leaves no log file
    assert steps["second"]["deps"] == ["first"] and steps["other"]["deps"] == []
    assert steps["second"]["started"] >= first["finished"]
    nodes = {n["name"]: n for n in manifest["graph"]["nodes"]}
    assert nodes["second"]["deps"] == ["first"]
    run_dir = tmp_path / ".shinobi" / "runs" / manifest["run_id"]
    assert [p.name for p in run_dir.iterdir() if p.name.endswith(".tmp")] == []


def test_a_failed_run_names_the_step_and_its_exit(tmp_path: Path) -> None:
    recipe = pipeline("echo broken >&2; exit 4")
    recipe.add_step("after", copier("copy3"), src=recipe.outputs.second.out, out=Path("d.txt"))
    result = go(tmp_path, recipe)
    assert not result.ok
    (manifest,) = manifests(tmp_path)
    assert manifest["status"] == "failed" and manifest["failed_step"] == "second"
    second = next(s for s in manifest["steps"] if s["name"] == "second")
    assert second["status"] == "failed" and second["returncode"] == 4
    assert "exited with code 4" in second["error"]
    # the step the failure kept from starting is in the manifest too, as not run
    after = next(s for s in manifest["steps"] if s["name"] == "after")
    assert after["status"] == "not run" and after["started"] is None
    assert [s["name"] for s in manifest["steps"]] == ["first", "second", "other", "after"]


def _disk_full_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest's last write meets a full disk (those while the run goes on are
    skipped on error by design)."""

    def full(path: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device", str(path))

    real_finish = provenance.ManifestRecorder._finish

    def finish(self: Any, *args: Any, **kwargs: Any) -> None:
        monkeypatch.setattr(provenance, "write_atomically", full)
        real_finish(self, *args, **kwargs)

    monkeypatch.setattr(provenance.ManifestRecorder, "_finish", finish)


def test_a_failed_run_whose_manifest_cannot_be_written_still_says_which_step_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _disk_full_at_the_end(monkeypatch)
    result = go(tmp_path, pipeline("echo broken >&2; exit 4"))
    assert not result.ok and result.failed_step == "second"
    assert any(
        "records could not all be written (No space left on device)" in w for w in result.warnings
    )


def test_a_write_the_disk_refuses_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """os.write says what went wrong, not where: ninja's one line named no place."""
    from shinobi.file_digests import write_atomically

    def full(fd: int, data: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError) as raised:
        write_atomically(tmp_path / "manifest.json", b"{}")
    assert raised.value.filename == str(tmp_path / "manifest.json")
    assert list(tmp_path.iterdir()) == []  # no temporary file left


def test_a_record_that_cannot_be_written_costs_the_others_nothing() -> None:
    from shinobi.records import Records

    records = Records()
    closed: list[str] = []

    def full(_result: Any) -> None:
        closed.append("manifest")
        raise OSError(28, "No space left on device")

    records.closers += [full, lambda _result: closed.append("cache origins")]
    with pytest.raises(OSError, match="No space left"):
        records.close(None)  # type: ignore[arg-type]
    assert closed == ["manifest", "cache origins"]


def test_a_successful_run_whose_manifest_cannot_be_written_says_so_and_keeps_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raised, the disk error threw away the outputs of a run whose steps all went
    well; they are kept, and the loss is said (see below)."""
    _disk_full_at_the_end(monkeypatch)
    result = go(tmp_path, pipeline())
    assert result.ok
    assert result.records_lost is not None and "No space left on device" in result.records_lost


def test_a_step_killed_by_a_signal_is_recorded_with_the_signal(tmp_path: Path) -> None:
    go(tmp_path, pipeline("kill -KILL $$"))
    (manifest,) = manifests(tmp_path)
    second = next(s for s in manifest["steps"] if s["name"] == "second")
    assert second["signal"] == signal.SIGKILL and second["signal_name"] == "SIGKILL"
    assert second["resources"] is None  # nothing declared: the post-mortem says so


def test_cached_steps_say_where_their_result_came_from(tmp_path: Path) -> None:
    go(tmp_path, pipeline())
    go(tmp_path, pipeline())
    first_run, second_run = manifests(tmp_path)
    assert {s["status"] for s in second_run["steps"]} == {"cached"}
    assert all(
        s["cached"] and s["details"]["cached_from"] == first_run["run_id"]
        for s in second_run["steps"]
    )


class FlagIn(BaseModel):
    flag: str = "done.flag"


class FlagOut(BaseModel):
    done: File | None = None


def test_a_step_a_converged_loop_skipped_is_recorded_as_skipped(tmp_path: Path) -> None:
    """The manifest's ``skipped`` is what a reader filters on (``cached`` likewise):
    a skipped step recorded with ``skipped`` false read as one that ran."""
    finish = Cab(
        "finish",
        ["/bin/sh", "-c", 'touch "$0"'],
        FlagIn,
        FlagOut,
        {"flag": ParamMeta(positional=True), "done": ParamMeta(implicit="{flag}")},
    )
    recipe = Recipe("converge", FlagIn)
    recipe.add_loop("L", finish, max_iter=2, until="done", flag=recipe.inputs.flag)
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    assert run_recipe(recipe, {}, config=config, cwd=tmp_path, provenance=True).ok
    (manifest,) = manifests(tmp_path)
    said = {s["name"]: (s["status"], s["skipped"], s["cached"]) for s in manifest["steps"]}
    assert said == {"L.1": ("ok", False, False), "L.2": ("skipped", True, False)}


def test_the_manifest_exists_before_the_first_step_starts(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    class Peek:
        def step_started(self, name: str, info: dict[str, Any]) -> None:
            runs = list((tmp_path / ".shinobi" / "runs").iterdir())
            seen.append(json.loads((runs[0] / "manifest.json").read_text()))

        def step_finished(self, result: StepResult) -> None:
            pass

        def warning(self, message: str) -> None:
            pass

    (tmp_path / "in.txt").write_text("x")
    config = load_config({"cache.enabled": False})
    run_recipe(
        pipeline(),
        {"src": "in.txt"},
        config=config,
        cwd=tmp_path,
        provenance=True,
        observers=[Peek()],
    )
    assert seen and seen[0]["status"] == "running"


def test_a_run_that_raises_leaves_a_final_manifest(tmp_path: Path) -> None:
    class Explodes:
        def step_started(self, name: str, info: dict[str, Any]) -> None:
            pass

        def step_finished(self, result: StepResult) -> None:
            raise RuntimeError("observer bug")

        def warning(self, message: str) -> None:
            pass

    (tmp_path / "in.txt").write_text("x")
    with pytest.raises(RuntimeError):
        run_recipe(
            pipeline(),
            {"src": "in.txt"},
            config=load_config({"cache.enabled": False}),
            cwd=tmp_path,
            provenance=True,
            observers=[Explodes()],
        )
    (manifest,) = manifests(tmp_path)
    assert manifest["status"] == "crashed" and "observer bug" in manifest["error"]


def test_step_events_do_not_each_rewrite_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[Path] = []
    real = provenance.write_atomically

    def counting(path: Path, data: bytes, *, fsync: bool = False) -> None:
        writes.append(path)
        real(path, data, fsync=fsync)

    monkeypatch.setattr(provenance, "write_atomically", counting)
    monkeypatch.setattr(provenance, "FLUSH_INTERVAL", 3600.0)
    monkeypatch.setattr(NativeBackend, "run", lambda self, inv, control: BackendRun(returncode=0))
    recipe = Recipe("many")
    for i in range(200):
        recipe.add_step(f"s{i}", Cab("noop", ["noop", str(i)]))
    run_recipe(recipe, config=load_config({"cache.enabled": False}), cwd=tmp_path, provenance=True)
    # at the start and at the end, and at the first step's start (at once) if the
    # flusher got to run before these 200 stubbed steps were over (on a busy machine
    # it may not: test_a_steps_start_reaches_the_manifest_at_once waits for it); no
    # timed ones between
    assert 2 <= len(writes) <= 3
    (manifest,) = manifests(tmp_path)
    assert len(manifest["steps"]) == 200


def test_a_steps_start_reaches_the_manifest_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ninja killed in the first second of its step (SIGKILL, the OOM killer) left a
    manifest saying no step had started, while the tool and its logs were there."""
    monkeypatch.setattr(provenance, "FLUSH_INTERVAL", 3600.0)
    seen: list[str] = []

    def watching(self: NativeBackend, invocation: Invocation, control: RunControl) -> BackendRun:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "running" not in seen:
            for manifest in manifests(tmp_path):
                seen.extend(s["status"] for s in manifest["steps"] if s["name"] == "long")
            time.sleep(0.02)
        return BackendRun(returncode=0)

    monkeypatch.setattr(NativeBackend, "run", watching)
    recipe = Recipe("one")
    recipe.add_step("long", Cab("long", ["sleep", "5"]))
    run_recipe(recipe, config=load_config({"cache.enabled": False}), cwd=tmp_path, provenance=True)
    assert "running" in seen  # the initial manifest lists it as pending


def test_the_image_digest_a_backend_reports_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pinned(self: NativeBackend, invocation: Invocation, control: RunControl) -> BackendRun:
        return BackendRun(returncode=0, details={"image_digest": "sha256:abc"})

    monkeypatch.setattr(NativeBackend, "run", pinned)
    recipe = Recipe("img")
    recipe.add_step("boxed", Cab("boxed", ["tool"], image="example/tool:1"))
    run_recipe(recipe, config=load_config({"cache.enabled": False}), cwd=tmp_path, provenance=True)
    (manifest,) = manifests(tmp_path)
    (step,) = manifest["steps"]
    assert (step["image"], step["image_digest"]) == ("example/tool:1", "sha256:abc")


def test_without_provenance_there_is_no_manifest(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("x")
    run_recipe(
        pipeline(), {"src": "in.txt"}, config=load_config({"cache.enabled": False}), cwd=tmp_path
    )
    runs = list((tmp_path / ".shinobi" / "runs").iterdir())
    assert not (runs[0] / "manifest.json").exists()


def started_by(ninja_pid: int) -> list[int]:
    """Processes whose teardown tag says the ninja of ``ninja_pid`` started them."""
    needle = f"SHINOBI_TEARDOWN_TAG={ninja_pid}-".encode()
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and needle in Path(f"/proc/{entry}/environ").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


def tagged(tag: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and tag.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


def test_a_ninja_killed_outright_leaves_a_manifest_that_parses(tmp_path: Path) -> None:
    tag = f"shinobi-provenance-{uuid.uuid4().hex}"
    recipe = tmp_path / "slow.py"
    recipe.write_text(
        textwrap.dedent(
            f"""
            from shinobi.steps import Cab, Recipe
            slow = Recipe("slow")
            slow.add_step("quick", Cab("quick", ["true"]))
            slow.add_step("long", Cab("long", ["sh", "-c", "sleep 300; : {tag}"]))
            """
        )
    )
    script = Path(sys.executable).with_name("ninja")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "shinobi.cli"]
    env = {
        **os.environ,
        "SHINOBI_CONFIG": os.devnull,
        "SHINOBI_CACHE_DIR": str(tmp_path / "cache"),
    }
    proc = subprocess.Popen(
        [*command, "run", f"{recipe}:slow", "--provenance"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        manifest: dict[str, Any] = {}
        while time.monotonic() < deadline:
            found = list((tmp_path / ".shinobi" / "runs").glob("*/manifest.json"))
            if found:
                manifest = json.loads(found[0].read_text())  # every version on disk parses
                if any(s["name"] == "long" and s["status"] == "running" for s in manifest["steps"]):
                    break
            time.sleep(0.05)
        proc.kill()  # no handler, no cleanup: what is on disk is all there is
        proc.wait()
    finally:
        # the step outlives a SIGKILLed ninja, by design: its shell (tagged on its
        # command line) and the sleep under it (tagged in its environment)
        for pid in {*tagged(tag), *started_by(proc.pid)}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert manifest["status"] == "running"
    steps = {s["name"]: s["status"] for s in manifest["steps"]}
    assert steps == {"quick": "ok", "long": "running"}


def _every_version_the_slow_way() -> dict[str, str]:
    """What installed_versions listed before it skipped unrelated metadata."""
    from importlib.metadata import distributions

    found: dict[str, str] = {}
    for dist in distributions():
        name = dist.metadata["Name"] or ""
        groups = {ep.group for ep in dist.entry_points}
        if name.startswith("shinobi") or any(g.startswith("shinobi.") for g in groups):
            found[name] = dist.version
    return dict(sorted(found.items()))


def test_installed_versions_lists_shinobi_names_and_plugins_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def dist(folder: str, name: str, version: str, body: str = "", eps: str = "") -> None:
        info = tmp_path / f"{folder}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n{body}"
        )
        if eps:
            (info / "entry_points.txt").write_text(eps)

    dist("shinobi_extra", "shinobi-extra", "2.0")
    dist("other_plugin", "other-plugin", "3.1", eps="[shinobi.backends]\nx = m:X\n")
    dist("mentions", "mentions", "1.0", body="Works with shinobi.\n")
    dist("unrelated", "unrelated", "1.0", eps="[console_scripts]\nu = m:main\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    versions = provenance.installed_versions()
    assert versions["shinobi-extra"] == "2.0"
    assert versions["other-plugin"] == "3.1"
    assert "mentions" not in versions and "unrelated" not in versions
    assert versions == _every_version_the_slow_way()


@pytest.mark.parametrize(
    "value",
    [
        ["/bin/sh", "-c", "x", Path("in.txt"), 3, 1.5, True, None],
        {"out": Path("a/b.txt"), "many": [Path("x"), (Path("y"), 2)], "none": None},
        {1: "a key that is not a string", "p": Path("p")},
        {"nested": {2: Path("z")}, "text": "t"},
        {"object": object.__new__(type("Opaque", (), {"__str__": lambda self: "opaque"}))},
        (Path("tuple"), ["inner"]),
    ],
    ids=["argv", "outputs", "int-key", "nested-int-key", "object", "tuple"],
)
def test_recorded_values_are_exactly_their_json_round_trip(value: Any) -> None:
    def as_text(value: Any) -> str:  # a path as its path, any other object as its str()
        return os.fspath(value) if isinstance(value, os.PathLike) else str(value)

    reference = json.loads(json.dumps(value, default=as_text))
    assert json.dumps(provenance._plain(value)) == json.dumps(reference)


def test_slices_that_never_started_are_listed_as_not_run(tmp_path: Path) -> None:
    """A run that stops at a failing slice still tells how many were planned."""
    from shinobi.steps import Cab, ParamMeta, Recipe

    class NIn(BaseModel):
        n: int

    class Ns(BaseModel):
        ns: list[int]

    check = Cab(
        "check", ["/bin/sh", "-c", '[ "$0" != 1 ]'], NIn, None, {"n": ParamMeta(positional=True)}
    )
    recipe = Recipe("r", Ns)
    recipe.add_step("check", check, scatter=["n"], n=recipe.inputs.ns)
    config = load_config({"cache.enabled": False, "provenance.enabled": True})
    result = run_recipe(recipe, {"ns": [0, 1, 2, 3]}, cwd=tmp_path, workdir=tmp_path, config=config)
    assert not result.ok
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    steps = {s["name"]: s["status"] for s in json.loads(manifest.read_text())["steps"]}
    assert steps == {
        "check": "failed",
        "check[0]": "ok",
        "check[1]": "failed",
        "check[2]": "not run",
        "check[3]": "not run",
    }


def test_slices_are_listed_in_number_order(tmp_path: Path) -> None:
    """Sorted as text, s[10] came before s[2], in the manifest and the report."""
    from shinobi.steps import Cab, ParamMeta, Recipe

    class NIn(BaseModel):
        n: int

    class Ns(BaseModel):
        ns: list[int]

    echo = Cab("echo", ["/bin/echo"], NIn, None, {"n": ParamMeta(positional=True)})
    recipe = Recipe("r", Ns)
    recipe.add_step("say", echo, scatter=["n"], n=recipe.inputs.ns)
    config = load_config({"cache.enabled": False, "provenance.enabled": True})
    result = run_recipe(
        recipe, {"ns": list(range(12))}, cwd=tmp_path, workdir=tmp_path, config=config
    )
    assert result.ok, result.error
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    names = [s["name"] for s in json.loads(manifest.read_text())["steps"]]
    assert names == ["say", *(f"say[{i}]" for i in range(12))]


def test_a_scattered_recipes_steps_keep_their_node_and_dependencies(tmp_path: Path) -> None:
    """``ns[0].second`` was recorded as a node of its own with no dependencies, where
    the graph has ``ns.second`` waiting on ``ns.first``."""

    class SubIn(BaseModel):
        src: Path
        name: str

    class Srcs(BaseModel):
        srcs: list[Path]
        names: list[str]

    sub = Recipe("sub", SubIn)
    sub.add_step("first", copier("copy"), src=sub.inputs.src, out=Path("mid.txt"))
    sub.add_step("second", copier("copy"), src=sub.outputs.first.out, out=sub.inputs.name)
    recipe = Recipe("r", Srcs)
    recipe.add_step(
        "ns", sub, scatter=["src", "name"], src=recipe.inputs.srcs, name=recipe.inputs.names
    )
    recipe.max_workers = 1  # one slice at a time: they share mid.txt
    (tmp_path / "a").write_text("a\n")
    (tmp_path / "b").write_text("b\n")
    config = load_config({"cache.enabled": False, "provenance.enabled": True})
    given = {"srcs": [tmp_path / "a", tmp_path / "b"], "names": ["A", "B"]}
    result = run_recipe(recipe, given, cwd=tmp_path, workdir=tmp_path, config=config)
    assert result.ok, result.error
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    steps = {s["name"]: s for s in json.loads(manifest.read_text())["steps"]}
    second = steps["ns[1].second"]
    assert (second["node"], second["deps"]) == ("ns.second", ["ns[1].first"])


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"format": 99}', "a run manifest of format 99, where this ninja reads format 1"),
        ('{"format": 1, "steps": 5}', "a damaged run manifest (its steps are not a list"),
        ("[1]", "not a shinobi run manifest (it has no format field)"),
    ],
)
def test_a_manifest_ninja_cannot_read_says_why(tmp_path: Path, content: str, said: str) -> None:
    from shinobi.provenance import load_manifest

    path = tmp_path / "manifest.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=re.escape(said)):
        load_manifest(path)


def test_a_secret_input_is_masked_in_the_recorded_command_line_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inputs showed '**********' while the command line beside them held the password."""
    from pydantic import BaseModel, SecretStr

    from shinobi.runner import run_recipe
    from shinobi.steps import Cab, Recipe

    class Login(BaseModel):
        user: str
        pw: SecretStr

    recipe = Recipe("login", Login)
    recipe.add_step("hello", Cab("hello", ["/bin/true"]))
    argv = ["ninja", "run", "r.py:login", "--user", "me", "--pw", "s3cret", "--x=s3cret"]
    monkeypatch.setattr(sys, "argv", argv)
    run_recipe(recipe, {"user": "me", "pw": "s3cret"}, cwd=tmp_path, provenance=True)
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    text = manifest.read_text()
    assert "s3cret" not in text
    document = json.loads(text)
    assert document["command"][-2:] == ["**********", "--x=**********"]
    assert document["inputs"]["user"] == "me"


def test_a_secret_input_reaches_the_tool_and_nothing_on_disk(tmp_path: Path) -> None:
    """The tool was handed '**********', and the cache took every secret as one."""
    from pydantic import BaseModel, SecretStr

    from shinobi.config import load_config
    from shinobi.runner import run_recipe
    from shinobi.steps import Cab, ParamMeta, Recipe

    class Login(BaseModel):
        pw: SecretStr

    said = Cab(
        "said",
        ["/bin/sh", "-c", 'echo "$1" > said.txt', "said"],
        Login,
        field_meta={"pw": ParamMeta(positional=True)},
    )
    recipe = Recipe("login", Login)
    recipe.add_step("say", said, pw=recipe.inputs.pw)
    config = load_config({"cache.dir": str(tmp_path / "cache")})
    for secret in ("s3cret", "other1"):
        result = run_recipe(recipe, {"pw": secret}, cwd=tmp_path, config=config, provenance=True)
        assert result.ok and result.steps[0].status == "ok"  # a new secret is no cache hit
        assert (tmp_path / "said.txt").read_text() == f"{secret}\n"
        assert result.steps[0].argv[-1] == "**********"
    on_disk = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "said.txt"]
    assert on_disk and not [p for p in on_disk if b"s3cret" in p.read_bytes()]


def test_a_pattern_records_a_variable_named_like_a_secret_masked() -> None:
    """``AWS_*`` recorded ``AWS_SECRET_ACCESS_KEY`` in every manifest; named in full,
    a variable is recorded as it is (the user chose it)."""
    from shinobi.provenance import allowed_environment

    env = {
        "AWS_SECRET_ACCESS_KEY": "hunter2",
        "AWS_REGION": "eu-west-1",
        "CI_API_KEY": "k",
        "KEYBOARD": "us",
        "GITHUB_TOKEN": "t",
    }
    assert allowed_environment(["AWS_*", "CI_*", "KEY*", "GITHUB_TOKEN"], env) == {
        "AWS_REGION": "eu-west-1",
        "AWS_SECRET_ACCESS_KEY": "***",
        "CI_API_KEY": "***",
        "GITHUB_TOKEN": "t",
        "KEYBOARD": "us",
    }


@pytest.mark.parametrize("pattern", ["*", "**", "?*"])
def test_a_pattern_of_every_variable_is_refused(tmp_path: Path, pattern: str) -> None:
    from shinobi.config import load_config
    from shinobi.errors import ConfigError

    with pytest.raises(ConfigError, match="names every variable"):
        load_config(
            cwd=tmp_path,
            environ={"SHINOBI_PROVENANCE_ENV_ALLOW": json.dumps(["PATH", pattern])},
        )


def test_a_run_that_went_well_keeps_its_result_when_its_manifest_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It ended with exit 74 and no outputs or --json, `ninja runs` called it
    crashed, and the report said its last step did not run: the one record asked
    for threw away the work it records. As when standard output is refused, the
    run exits with its own status (a wrapper retrying on 74 must not run it again),
    and a warning says the manifest is incomplete."""
    from cli_in_process import in_process

    from shinobi.local_runs import local_runs

    (tmp_path / "r.py").write_text(
        "from pydantic import BaseModel\n"
        "from shinobi.steps import Cab, ParamMeta, Recipe\n"
        "class O(BaseModel):\n    said: str | None = None\n"
        "import shinobi\n"
        "t = Cab('t', ['echo', 'v:made'], None, O,"
        " wranglers=[shinobi.Wrangler(r'^v:(.*)$', 'output', output='said')])\n"
        "r = Recipe('r', None, O)\nr.add_step('t', t)\nr.set_output('said', r.outputs.t.said)\n"
    )
    monkeypatch.chdir(tmp_path)
    _disk_full_at_the_end(monkeypatch)
    code, out, err = in_process(capsys, "run", "r.py:r", "--provenance", "--no-cache", "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"] == {"said": "made"}
    assert "records could not all be written (No space left on device)" in err
    (run,) = local_runs(tmp_path)
    assert run.state == "ok"
