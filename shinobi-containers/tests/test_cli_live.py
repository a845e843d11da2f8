"""The whole flow through the ninja CLI, live: run, dry run, interrupt, pinning."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from live_engines import ENGINES, OCI_ENGINES, engine_facts, image, live_backend

from shinobi_containers.digest import sif_digest

HERE = Path(__file__).resolve().parent
NINJA = str(Path(sys.executable).parent / "ninja")
AWKWARD = "sp ace 'single' \"double\" $(touch pwned) `tick`"


def write_project(tmp_path: Path, engine: str) -> tuple[Path, str]:
    """A recipe file and a project config (the testbed's run flags; no cache) in tmp_path."""
    tag = f"shinobi-cli-{uuid.uuid4().hex[:10]}"
    text = (HERE / "cli_recipe.py.txt").read_text()
    recipe = tmp_path / "recipes.py"
    recipe.write_text(text.replace("@IMAGE@", image(engine)).replace("@TAG@", tag))
    flags = engine_facts(engine).get("run_flags") if engine in OCI_ENGINES else None
    table = f'[backend.{engine}]\nrun_flags = "{flags}"\n' if flags else ""
    (tmp_path / "shinobi.toml").write_text(f"{table}[cache]\nenabled = false\n")
    return recipe, tag


def ninja_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["SHINOBI_CONFIG"] = os.devnull
    return env


def ninja(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NINJA, *args],
        cwd=tmp_path,
        env=ninja_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def run_pipe(
    tmp_path: Path, engine: str, source: str, middle: str, target: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``ninja run recipes.py:pipe`` on ``engine``: source -> middle -> target."""
    recipes = tmp_path / "recipes.py"
    paths = ["--source", source, "--middle", middle, "--target", target]
    return ninja(tmp_path, "run", f"{recipes}:pipe", "--backend", engine, *paths, *extra)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_recipe_of_cabs_runs_through_ninja(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    write_project(tmp_path, engine)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "source.txt").write_text("payload\n")
    done = run_pipe(
        tmp_path, engine, "in/source.txt", "work/step1/middle.txt", "products/final/target.txt"
    )
    assert done.returncode == 0, done.stderr
    target = tmp_path / "products" / "final" / "target.txt"
    assert target.read_text() == "payload\ncopied\ncopied\n"
    assert target.stat().st_uid == os.getuid()
    assert "result = products/final/target.txt" in done.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_awkward_paths_survive_the_cli_mounts_and_argv(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    write_project(tmp_path, engine)
    source = tmp_path / AWKWARD / f"{AWKWARD}.txt"
    source.parent.mkdir()
    source.write_text("payload\n")
    target = tmp_path / f"out {AWKWARD}" / f"{AWKWARD} final.txt"
    done = run_pipe(
        tmp_path, engine, str(source), str(tmp_path / f"mid {AWKWARD}" / "m.txt"), str(target)
    )
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "payload\ncopied\ncopied\n"
    assert not (tmp_path / "pwned").exists()


def test_the_dry_run_prints_the_whole_engine_command(tmp_path: Path) -> None:
    recipes, _ = write_project(tmp_path, "docker")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "source.txt").write_text("x")
    args = ["run", f"{recipes}:pipe", "--backend", "docker", "--source", "in/source.txt"]
    args += ["--middle", "mid/m.txt", "--target", "out/t.txt", "--dryrun"]
    done = ninja(tmp_path, *args, "--json")
    assert done.returncode == 0, done.stderr
    steps = {s["name"]: s for s in json.loads(done.stdout)["steps"]}
    first = steps["first"]["argv"]
    assert first[:3] == ["docker", "run", "--name"] and first[3].startswith("shinobi-")
    mounts = [first[i + 1] for i, a in enumerate(first) if a == "--mount"]
    assert f"type=bind,source={tmp_path},target={tmp_path}" in mounts
    assert (
        f"type=bind,source={tmp_path}/in/source.txt,target={tmp_path}/in/source.txt,readonly"
        in mounts
    )
    assert first[-7] == image("docker") and first[-6:-3] == ["/bin/sh", "-c", first[-4]]
    assert first[-2:] == ["in/source.txt", "mid/m.txt"]
    drawn = ninja(tmp_path, *args)
    assert drawn.returncode == 0, drawn.stderr
    assert "docker run --name shinobi-" in drawn.stdout.replace("│ ", "").replace("\n", "")


def refused_target(work: Path, target: str) -> str:
    """The one error line of the docker pipe run with ``target`` as the second step's
    output, asserting the run was refused (exit 2) before its first step ran."""
    live_backend("docker")
    write_project(work, "docker")
    (work / "in").mkdir()
    (work / "in" / "source.txt").write_text("x")
    done = run_pipe(work, "docker", "in/source.txt", "mid/m.txt", target)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert not (work / "mid").exists(), "the first step ran although the run was refused"
    return lines[0]


def test_a_refused_mount_stops_the_run_before_anything_runs(tmp_path: Path) -> None:
    said = refused_target(tmp_path, f"/shinobi-no-such-top-{os.getpid()}/t.txt")
    assert "no existing parent directory" in said


def _containers(engine: str, *filters: str) -> list[str]:
    args = [engine, "ps", "-aq"]
    for item in filters:
        args += ["--filter", item]
    listed = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True)
    return listed.stdout.split()


def _processes_with(tag: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if tag.encode() in cmdline:
                found.append(int(entry))
    return found


def start_marked_run(
    engine: str, tmp_path: Path, recipe: str, streams: int
) -> tuple[subprocess.Popen[str], Path, str]:
    """``ninja run recipes.py:RECIPE --marker started`` on ``engine``, started, its
    stdout and stderr to ``streams``: (the process, the marker its step makes,
    the project's container-name tag)."""
    live_backend(engine)
    recipes, tag = write_project(tmp_path, engine)
    marker = tmp_path / "started"
    proc = subprocess.Popen(
        [NINJA, "run", f"{recipes}:{recipe}", "--backend", engine, "--marker", str(marker)],
        cwd=tmp_path,
        env=ninja_env(tmp_path),
        stdout=streams,
        stderr=streams,
        text=True,
    )
    return proc, marker, tag


def _interrupted(
    engine: str, tmp_path: Path, recipe: str, again_after: float | None = None
) -> tuple[int, str, str]:
    """``ninja run recipes.py:RECIPE`` stopped by SIGINT once its step runs (and
    by a second one ``again_after`` seconds later, within the grace):
    (exit status, stderr, the project's container-name tag)."""
    proc, marker, tag = start_marked_run(engine, tmp_path, recipe, subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if engine in OCI_ENGINES:
                running = _containers(
                    engine, "name=shinobi-", f"label=shinobi.step={recipe}", "status=running"
                )
            else:
                running = [str(p) for p in _processes_with(tag)]
            if running and marker.exists():
                break
            time.sleep(0.1)
        assert proc.poll() is None and marker.exists(), proc.communicate(timeout=5)
        proc.send_signal(signal.SIGINT)
        if again_after is not None:
            time.sleep(again_after)
            proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stderr, tag


@pytest.mark.parametrize("engine", ENGINES)
def test_sigint_during_a_container_step_exits_130_and_leaves_no_container(
    engine: str, tmp_path: Path
) -> None:
    # Only this run's containers count: one left by a ninja killed outright
    # elsewhere on the machine (SIGKILL allows no teardown) is not this test's.
    before = set(_containers(engine, "name=shinobi-")) if engine in OCI_ENGINES else set()
    code, stderr, tag = _interrupted(engine, tmp_path, "nap")
    assert code == 130, stderr
    assert stderr.strip().splitlines()[-1].startswith("ninja: error: stopped by SIGINT"), stderr
    if engine in OCI_ENGINES:
        assert set(_containers(engine, "name=shinobi-")) - before == set()
    assert _processes_with(tag) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_second_interrupt_kills_a_payload_deaf_to_sigterm(engine: str, tmp_path: Path) -> None:
    """podman: the second Ctrl-C removed the container record while conmon kept
    its payload running, and ninja said every step was torn down (an audit)."""
    before = set(_containers(engine, "name=shinobi-")) if engine in OCI_ENGINES else set()
    code, stderr, tag = _interrupted(engine, tmp_path, "deaf", again_after=1.0)
    assert code == 130, stderr
    assert "every step was torn down" in stderr
    if engine in OCI_ENGINES:
        assert set(_containers(engine, "name=shinobi-")) - before == set()
    assert _processes_with(tag) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_an_interrupted_container_step_gets_sigterm_and_its_grace(
    engine: str, tmp_path: Path
) -> None:
    """As natively: a tool that tidies up on SIGTERM (flushes its MS) gets the time.
    docker and podman removed the container with an immediate SIGKILL (an audit)."""
    code, stderr, _ = _interrupted(engine, tmp_path, "tidy")
    assert code == 130, stderr
    assert (tmp_path / "started.cleanup").read_text() == "cleaned\n", stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_provenance_runs_the_image_by_digest_and_records_it(engine: str, tmp_path: Path) -> None:
    live_backend(engine)
    write_project(tmp_path, engine)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "source.txt").write_text("x\n")
    done = run_pipe(tmp_path, engine, "in/source.txt", "m.txt", "t.txt", "--provenance")
    assert done.returncode == 0, done.stderr
    manifests = list((tmp_path / ".shinobi" / "runs").glob("*/manifest.json"))
    assert len(manifests) == 1
    text = manifests[0].read_text()
    expected = _digest_of(engine)
    assert expected in text, f"{expected} not recorded in the manifest"


def _digest_of(engine: str) -> str:
    if engine in OCI_ENGINES:
        listed = subprocess.run(
            [
                engine,
                "image",
                "inspect",
                "--format",
                "{{json .RepoDigests}}\t{{.Id}}",
                image(engine),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        digests, _, image_id = listed.stdout.strip().partition("\t")
        found = json.loads(digests) or []
        return found[0] if found else image_id
    return sif_digest(image(engine))
